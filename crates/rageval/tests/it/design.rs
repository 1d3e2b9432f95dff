//! DESIGN.md's crate table against `cargo metadata`: every workspace crate has a row, and
//! its "depends on" column names exactly its normal dependencies on our crates.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use crate::repo_root;

/// `crate → our crates it depends on`, from the DESIGN.md table.
fn design_arrows() -> BTreeMap<String, BTreeSet<String>> {
    let text = std::fs::read_to_string(repo_root().join("DESIGN.md")).unwrap();
    let mut arrows = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("| `rageval")) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        let name = cells[0]
            .split('`')
            .nth(1)
            .expect("the first cell names a crate in backticks")
            .to_string();
        let depends: BTreeSet<String> = cells
            .last()
            .unwrap()
            .split('`')
            .skip(1)
            .step_by(2)
            .map(String::from)
            .collect();
        arrows.insert(name, depends);
    }
    arrows
}

/// `crate → our crates it depends on`, from `cargo metadata` (normal dependencies).
fn cargo_arrows() -> BTreeMap<String, BTreeSet<String>> {
    let output = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(repo_root())
        .output()
        .expect("cargo runs");
    assert!(output.status.success(), "{}", crate::stderr(&output));
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let mut arrows = BTreeMap::new();
    for package in metadata["packages"].as_array().unwrap() {
        let name = package["name"].as_str().unwrap().to_string();
        let depends = package["dependencies"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["kind"].is_null())
            .filter_map(|d| d["name"].as_str())
            .filter(|d| d.starts_with("rageval"))
            .map(String::from)
            .collect();
        arrows.insert(name, depends);
    }
    arrows
}

#[test]
fn design_md_arrows_match_cargo_metadata() {
    let design = design_arrows();
    let cargo = cargo_arrows();
    assert_eq!(
        design.keys().collect::<Vec<_>>(),
        cargo.keys().collect::<Vec<_>>(),
        "DESIGN.md's table and the workspace list different crates"
    );
    for (name, depends) in &cargo {
        assert_eq!(
            &design[name], depends,
            "DESIGN.md's row of {name} names other dependencies than its Cargo.toml"
        );
    }
}

/// The binary is wiring: flags to options, a call into the library, rendering. A file that
/// grows past 300 lines is holding logic that belongs in a library crate, or (in `cli/`)
/// flags of several nouns that want a file each.
#[test]
fn no_file_of_the_binary_is_over_300_lines() {
    let src = crate::repo_root().join("crates/rageval/src");
    let mut long = Vec::new();
    let mut dirs = vec![src.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let lines = std::fs::read_to_string(&path).unwrap().lines().count();
                if lines > 300 {
                    long.push(format!("{}: {lines} lines", path.display()));
                }
            }
        }
    }
    assert!(long.is_empty(), "{}", long.join("\n"));
}
