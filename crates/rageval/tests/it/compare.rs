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
        out.contains(
            "| a | 0.6000 | 0.9000 | — | — |\n| b | 0.7000 · Δ +0.1000 [+0.1000, +0.1000] p \
             0.0010 higher | 0.9000 · Δ +0.0000 [+0.0000, +0.0000] p 1.0000 no clear \
             difference | — | — |"
        ),
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
fn runs_over_different_datasets_compare_question_by_question() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c) = (
        dir.path().join("a"),
        dir.path().join("b"),
        dir.path().join("c"),
    );
    write_run(&a, "d1", &scores(0.0));
    write_run(&b, "d2", &scores(0.0));
    // `c` lacks the last question.
    let mut fewer = scores(0.05);
    fewer.retain(|(id, _, _)| id != "q39");
    write_run(&c, "d3", &fewer);
    let output = rageval(
        dir.path(),
        &["compare", a.to_str().unwrap(), b.to_str().unwrap()],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("a and b: 40 of 40 questions paired (40 by id)"));
    // The datasets (`data.jsonl` in the manifests) are not there: ids alone pair.
    assert!(stderr(&output).contains("its samples pair by id alone"));

    let output = rageval(
        dir.path(),
        &["compare", a.to_str().unwrap(), c.to_str().unwrap()],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("share 39 of 40 questions"),
        "{}",
        stderr(&output)
    );
    let xlsx = dir.path().join("versions.xlsx");
    let output = rageval(
        dir.path(),
        &[
            "compare",
            a.to_str().unwrap(),
            c.to_str().unwrap(),
            "--common",
            "--xlsx",
            xlsx.to_str().unwrap(),
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("Only the 39 questions every run holds are compared"));
    assert!(xlsx.is_file());
    let output = rageval(
        dir.path(),
        &[
            "compare",
            a.to_str().unwrap(),
            c.to_str().unwrap(),
            "--min-overlap",
            "0.95",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let output = rageval(
        dir.path(),
        &[
            "compare",
            a.to_str().unwrap(),
            c.to_str().unwrap(),
            "--min-overlap",
            "2",
        ],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("not a share between 0 and 1"));
    // One run is a usage error.
    let output = rageval(dir.path(), &["compare", a.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
}
