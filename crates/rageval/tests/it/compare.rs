//! `rageval compare` end to end: outputs, a found difference, and refused runs.

use std::fs;

use serde_json::Value;

use crate::{rageval, stderr, stdout};
use rageval_report::testing::{scores, write_run};

#[test]
fn compares_two_runs_and_writes_every_output() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    write_run(&a, "d1", &scores(0.0));
    write_run(&b, "d1", &scores(0.1));
    let (html, md, json) = (
        dir.path().join("cmp.html"),
        dir.path().join("cmp.md"),
        dir.path().join("cmp.json"),
    );
    let output = rageval(
        dir.path(),
        &[
            "compare",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--html",
            html.to_str().unwrap(),
            "--markdown",
            md.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
            "--permutations",
            "999",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let out = stdout(&output);
    assert!(
        // Runs written without judge accounts show no judge calls and no cost.
        out.contains("| a | 0.6000 | 0.9000 | — | — |\n| b | 0.7000 | 0.9000 | — | — |"),
        "{out}"
    );
    assert!(out.contains("| `faithfulness` | 40 | 0.6000 | 0.7000 | +0.1000 | [+0.1000, +0.1000] | 0.0010 | higher |"), "{out}");
    assert!(out.contains("| `context_recall` | 39 |"));
    assert_eq!(fs::read_to_string(&md).unwrap(), out);
    assert!(
        fs::read_to_string(&html)
            .unwrap()
            .contains("<h2>a → b</h2>")
    );
    let numbers: Value = serde_json::from_slice(&fs::read(&json).unwrap()).unwrap();
    let delta = &numbers["pairs"][0]["deltas"][0];
    assert_eq!(delta["metric"], "faithfulness");
    assert!(delta["ci95"][0].as_f64().unwrap() > 0.0);
}

#[test]
fn runs_over_different_datasets_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    write_run(&a, "d1", &scores(0.0));
    write_run(&b, "d2", &scores(0.0));
    let output = rageval(
        dir.path(),
        &["compare", a.to_str().unwrap(), b.to_str().unwrap()],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("are over different datasets (sha256 d1 vs d2)"));
    // One run is a usage error.
    let output = rageval(dir.path(), &["compare", a.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
}
