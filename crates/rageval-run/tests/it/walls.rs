//! The wall between the engine and the commands inside this crate: engine modules (the
//! loop, cells, resume, identity, sessions, judge routing, scoring, batch passes, plans,
//! results, reports) never name a command module (`eval`, `judge_check`, `rank`,
//! `reference`, `pipeline`, `calibrate`, `merge`, `testset`, `watch`); commands use the engine and
//! each other.
//! A helper a command and the engine both need moves down into the engine.
//!
//! Every module of `lib.rs` is in one of the two lists, so a new module is placed on
//! purpose. Comments are not read: a doc link to a command says where to look, it is not a
//! dependency.

use std::path::{Path, PathBuf};

const ENGINE: &[&str] = &[
    "batch", "budget", "cells", "ended", "error", "forecast", "identity", "judges", "observe",
    "plan", "reports", "results", "resume", "rubrics", "score", "session", "shard", "shell",
    "units", "words",
];

const COMMANDS: &[&str] = &[
    "calibrate",
    "eval",
    "judge_check",
    "merge",
    "pipeline",
    "rank",
    "reference",
    "testset",
    "watch",
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The modules `lib.rs` declares (`mod x;` / `pub mod x;`).
fn declared_modules() -> Vec<String> {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    lib.lines()
        .filter_map(|line| {
            let line = line.trim();
            let rest = line
                .strip_prefix("pub mod ")
                .or(line.strip_prefix("mod "))?;
            Some(rest.strip_suffix(';')?.to_owned())
        })
        .collect()
}

/// The source files of module `name`: `name.rs`, or every `.rs` file under `name/`.
fn files_of(name: &str) -> Vec<PathBuf> {
    let file = src().join(format!("{name}.rs"));
    if file.is_file() {
        return vec![file];
    }
    let mut files = Vec::new();
    let mut dirs = vec![src().join(name)];
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
    assert!(!files.is_empty(), "module {name} has no source files");
    files
}

/// The command modules `code` (comments left out) names through `crate::` or, from a
/// top-level file, `super::`, including inside `use crate::{…}` groups.
fn commands_named(code: &str) -> Vec<&'static str> {
    let code: String = code
        .lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let mut named = Vec::new();
    for command in COMMANDS {
        let direct = ["crate::", "super::"].iter().any(|prefix| {
            code.match_indices(&format!("{prefix}{command}"))
                .any(|(at, found)| {
                    let next = code[at + found.len()..].chars().next();
                    !next.is_some_and(|c| c.is_alphanumeric() || c == '_')
                })
        });
        let grouped = code.match_indices("crate::{").any(|(at, _)| {
            let group = &code[at + "crate::{".len()..];
            let group = &group[..group.find('}').unwrap_or(group.len())];
            group
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|word| word == *command)
        });
        if direct || grouped {
            named.push(*command);
        }
    }
    named
}

/// What `find` says of each source file of `modules`, each finding after its file's path.
fn findings(modules: &[&str], find: impl Fn(&str) -> Vec<String>) -> Vec<String> {
    let mut found = Vec::new();
    for module in modules {
        for file in files_of(module) {
            let code = std::fs::read_to_string(&file).unwrap();
            let name = file
                .strip_prefix(src())
                .unwrap_or(&file)
                .display()
                .to_string();
            found.extend(
                find(&code)
                    .into_iter()
                    .map(|finding| format!("{name} {finding}")),
            );
        }
    }
    found
}

#[test]
fn every_module_is_engine_or_command() {
    let declared = declared_modules();
    for module in &declared {
        let engine = ENGINE.contains(&module.as_str());
        let command = COMMANDS.contains(&module.as_str());
        assert!(
            engine != command,
            "module `{module}` must be in exactly one of ENGINE and COMMANDS in {}",
            file!()
        );
    }
    for listed in ENGINE.iter().chain(COMMANDS) {
        assert!(
            declared.iter().any(|m| m == listed),
            "`{listed}` is listed in {} but lib.rs declares no such module",
            file!()
        );
    }
}

#[test]
fn no_engine_file_names_a_command_module() {
    let crossings = findings(ENGINE, |code| {
        commands_named(code)
            .into_iter()
            .map(|command| format!("names `{command}`"))
            .collect()
    });
    assert!(
        crossings.is_empty(),
        "engine files reach up into commands (move the helper down into the engine):\n{}",
        crossings.join("\n")
    );
}

#[test]
fn the_wall_check_sees_every_way_of_naming_a_command() {
    assert_eq!(commands_named("use crate::eval::budget;"), ["eval"]);
    assert_eq!(commands_named("use crate::{cells, rank::plan};"), ["rank"]);
    assert_eq!(
        commands_named("let x = super::merge::refused();"),
        ["merge"]
    );
    assert!(commands_named("use crate::evaluation;").is_empty());
    assert!(commands_named("//! see [`crate::merge`]").is_empty());
    assert!(commands_named("use crate::{cells, resume};").is_empty());
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
        let signature = [
            "fn ",
            "pub fn ",
            "pub(crate) fn ",
            "pub(super) fn ",
            "async fn ",
        ]
        .iter()
        .chain(&["pub async fn ", "pub(crate) async fn "])
        .any(|prefix| body.starts_with(prefix));
        if !signature || body.ends_with(';') {
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
    let modules: Vec<&str> = ENGINE
        .iter()
        .chain(COMMANDS)
        .chain(&["lib"])
        .copied()
        .collect();
    let long = findings(&modules, |code| {
        long_functions(code, 100)
            .into_iter()
            .map(|(line, length)| format!("line {line}: {length} lines"))
            .collect()
    });
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
}
