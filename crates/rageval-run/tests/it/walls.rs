//! The wall between the two halves of this crate, which are its two folders: the engine
//! (`src/engine/`: the loop, cells, resume, identity, sessions and their ending, judge
//! routing, scoring, the question loop, batch passes, plans, results, reports) never names
//! the commands (`src/commands/`: eval, judge-check, rank, reference, pipeline, calibrate,
//! merge, testset); commands use the engine and each other. A helper a command and the
//! engine both need moves down into the engine.
//!
//! `lib.rs` declares the two halves and nothing else, and re-exports nothing from the
//! commands (an engine file could otherwise reach a command as `crate::X`). Comments are not
//! read: a doc link to a command says where to look, it is not a dependency.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The folder of the engine half.
const ENGINE: &str = "engine";
/// The folder of the command half.
const COMMANDS: &str = "commands";

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The modules `file` declares (`mod x;` / `pub mod x;` / `pub(crate) mod x;`).
fn declared_modules(file: &Path) -> Vec<String> {
    let code = std::fs::read_to_string(file).unwrap();
    code.lines()
        .filter_map(|line| {
            let rest = without_visibility(line.trim()).strip_prefix("mod ")?;
            Some(rest.strip_suffix(';')?.to_owned())
        })
        .collect()
}

/// `text` without a leading `pub`, `pub(crate)`, `pub(super)` or `pub(in …)`.
fn without_visibility(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("pub") else {
        return text;
    };
    let rest = match rest.strip_prefix('(') {
        Some(inner) => inner.split_once(')').map_or(rest, |(_, after)| after),
        None => rest,
    };
    rest.strip_prefix(' ').unwrap_or(text)
}

/// Every `.rs` file under `dir`.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    assert!(!files.is_empty(), "{} has no source files", dir.display());
    files.sort();
    files
}

/// `code` with its `//` comments (doc comments included) left out.
fn without_comments(code: &str) -> String {
    code.lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether `c` may be part of an identifier.
fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The text of the `{…}` group `text` opens with, read to its matching `}` (groups nest:
/// `{engine::{cells::{Cells, Key}, judges}, commands::eval}`), without the outer braces.
fn group(text: &str) -> &str {
    let mut depth = 0;
    for (at, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return &text[1..at];
                }
            }
            _ => {}
        }
    }
    &text[1.min(text.len())..]
}

/// The first segment of each item of a group's text at its own level: `a` and `b` of
/// `a::{x, y}, b`.
fn group_heads(inner: &str) -> Vec<&str> {
    let mut heads = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (at, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                heads.push(&inner[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    heads.push(&inner[start..]);
    heads
        .into_iter()
        .map(|item| {
            let item = item.trim();
            let end = item.find(|c: char| !is_ident(c)).unwrap_or(item.len());
            &item[..end]
        })
        .filter(|head| !head.is_empty())
        .collect()
}

/// Whether `code` (comments left out) names the command half through a path from the
/// crate root: `crate::commands`, `super::super::commands` (any number of `super`), or a
/// `crate::{…}` / `super::{…}` group holding `commands` at its first level, however deep
/// the groups inside it nest.
fn names_commands(code: &str) -> bool {
    let code = without_comments(code);
    for prefix in ["crate::", "super::"] {
        for (at, _) in code.match_indices(prefix) {
            if code[..at].chars().next_back().is_some_and(is_ident) {
                continue;
            }
            let mut rest = &code[at + prefix.len()..];
            while let Some(after) = rest.strip_prefix("super::") {
                rest = after;
            }
            let named = match rest.strip_prefix('{') {
                Some(_) => group_heads(group(rest)).contains(&COMMANDS),
                None => {
                    let end = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
                    &rest[..end] == COMMANDS
                }
            };
            if named {
                return true;
            }
        }
    }
    false
}

/// Whether a re-export of `lib` (a `pub use` statement, to its `;`) names the commands.
fn reexports_commands(lib: &str) -> bool {
    let code = without_comments(lib);
    code.split(';').any(|statement| {
        let statement = statement.trim();
        let reexport = without_visibility(statement) != statement
            && without_visibility(statement).starts_with("use ");
        reexport
            && statement
                .split(|c: char| !is_ident(c))
                .any(|word| word == COMMANDS)
    })
}

#[test]
fn the_crate_is_the_engine_and_the_commands() {
    assert_eq!(
        declared_modules(&src().join("lib.rs")),
        [COMMANDS, ENGINE],
        "lib.rs declares the two halves and no other module"
    );
    let entries: BTreeSet<String> = std::fs::read_dir(src())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        entries,
        [COMMANDS, ENGINE, "lib.rs"].map(String::from).into(),
        "src/ holds lib.rs and the two halves' folders, nothing else"
    );
    for half in [ENGINE, COMMANDS] {
        assert!(
            !declared_modules(&src().join(half).join("mod.rs")).is_empty(),
            "{half}/mod.rs declares its modules"
        );
    }
}

#[test]
fn no_engine_file_names_the_commands() {
    let crossings: Vec<String> = files_under(&src().join(ENGINE))
        .into_iter()
        .filter(|file| names_commands(&std::fs::read_to_string(file).unwrap()))
        .map(|file| {
            file.strip_prefix(src())
                .unwrap_or(&file)
                .display()
                .to_string()
        })
        .collect();
    assert!(
        crossings.is_empty(),
        "engine files reach up into the commands (move the helper down into the engine):\n{}",
        crossings.join("\n")
    );
}

#[test]
fn lib_re_exports_nothing_from_the_commands() {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    assert!(
        !reexports_commands(&lib),
        "lib.rs re-exports a command item: an engine file could name it as `crate::X`"
    );
}

#[test]
fn the_wall_check_sees_every_way_of_naming_a_command() {
    assert!(names_commands("use crate::commands::eval::budget;"));
    assert!(names_commands(
        "use crate::{engine::cells, commands::rank::plan};"
    ));
    assert!(names_commands(
        "use crate::{\n    engine::{cells::{Cells, SampleKey}, judges},\n    commands::eval,\n};"
    ));
    assert!(names_commands(
        "let x = super::super::commands::merge::refused();"
    ));
    assert!(names_commands("use super::super::{commands, engine};"));
    assert!(!names_commands("use crate::engine::commands_of;"));
    assert!(!names_commands("//! see [`crate::commands::merge`]"));
    assert!(!names_commands("use crate::{engine::{cells, resume}};"));
    assert!(!names_commands(
        "use crate::engine::{judges::{self, Stop}, score};"
    ));
    assert!(!names_commands("let x = my_crate::commands::run();"));

    assert!(reexports_commands("pub use commands::eval::EvalOptions;"));
    assert!(reexports_commands(
        "pub use crate::{engine::Stop, commands::rank};"
    ));
    assert!(reexports_commands("pub(crate) use self::commands::merge;"));
    assert!(!reexports_commands(
        "pub use engine::ended::{Ended, Stopped};"
    ));
    assert!(!reexports_commands("pub mod commands;\npub mod engine;"));
}

/// Whether a line (indentation removed) opens a function: any visibility, then `const`,
/// `async` or `unsafe` in any order, then `fn `.
fn opens_function(body: &str) -> bool {
    let mut rest = without_visibility(body);
    loop {
        let next = ["const ", "async ", "unsafe "]
            .iter()
            .find_map(|qualifier| rest.strip_prefix(qualifier));
        match next {
            Some(after) => rest = after,
            None => return rest.starts_with("fn "),
        }
    }
}

/// The functions of `code` longer than `limit` lines, as `(first line, lines)`: a function
/// runs from its `fn` line to the first line holding only `}` at the same indentation,
/// which is where rustfmt puts its end.
fn long_functions(code: &str, limit: usize) -> Vec<(usize, usize)> {
    let lines: Vec<&str> = code.lines().collect();
    let mut long = Vec::new();
    for (start, line) in lines.iter().enumerate() {
        let body = line.trim_start();
        let indent = &line[..line.len() - body.len()];
        if !opens_function(body) || body.ends_with(';') {
            continue;
        }
        let close = format!("{indent}}}");
        if let Some(end) = lines[start..].iter().position(|l| *l == close) {
            if end + 1 > limit {
                long.push((start + 1, end + 1));
            }
        }
    }
    long
}

#[test]
fn no_function_in_the_crate_is_over_100_lines() {
    let long: Vec<String> = files_under(&src())
        .into_iter()
        .flat_map(|file| {
            let code = std::fs::read_to_string(&file).unwrap();
            let name = file
                .strip_prefix(src())
                .unwrap_or(&file)
                .display()
                .to_string();
            long_functions(&code, 100)
                .into_iter()
                .map(move |(line, length)| format!("{name} line {line}: {length} lines"))
        })
        .collect();
    assert!(
        long.is_empty(),
        "functions over 100 lines (split them):\n{}",
        long.join("\n")
    );
}

#[test]
fn the_length_check_measures_a_function_from_fn_to_its_closing_brace() {
    let code = "fn short() {\n    one();\n}\n\nimpl X {\n    pub fn longer() {\n        a();\n        b();\n    }\n}\n";
    assert_eq!(long_functions(code, 3), [(6, 4)]);
    assert!(long_functions(code, 4).is_empty());
    for opening in [
        "pub(super) async fn f() {",
        "const fn f() {",
        "pub const fn f() {",
        "pub(crate) async unsafe fn f() {",
        "async fn f() {",
    ] {
        let code = format!("{opening}\n    a();\n    b();\n}}\n");
        assert_eq!(long_functions(&code, 3), [(1, 4)], "{opening}");
    }
    assert!(!opens_function("let fn_name = 1;"));
    assert!(!opens_function("pub use fn_table;"));
}
