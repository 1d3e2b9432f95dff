//! Calibrated means from a few human labels (`eval --labels`, `rageval calibrate`): the
//! `calibrated` block in summary.json with the PPI++ mean beside the labels-only and
//! judge-only means, labels for samples the run does not have reported, never dropped.

use std::fs;

use serde_json::Value;

use crate::{rageval, repo_root, stderr, stdout};

fn labels(dir: &std::path::Path) -> std::path::PathBuf {
    let mut text = String::new();
    for i in 1..=12 {
        text.push_str(&format!(
            "{{\"id\": \"{i}\", \"label\": {}, \"metric\": \"faithfulness\"}}\n",
            i % 3 != 0
        ));
    }
    text.push_str("{\"id\": \"nope\", \"label\": true, \"metric\": \"faithfulness\"}\n");
    let path = dir.join("labels.jsonl");
    fs::write(&path, text).unwrap();
    path
}

#[test]
fn eval_with_labels_and_calibrate_write_the_calibrated_block() {
    let dir = tempfile::tempdir().unwrap();
    let labels = labels(dir.path());
    let data = repo_root().join("examples/fiqa-30.jsonl");
    let output = rageval(
        dir.path(),
        &[
            "eval",
            data.to_str().unwrap(),
            "--metrics",
            "faithfulness,rouge_l",
            "--judge",
            "heuristic",
            "--out",
            "run",
            "--labels",
            labels.to_str().unwrap(),
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("calibrated with human labels (PPI++"),
        "{}",
        stdout(&output)
    );
    let said = stderr(&output);
    assert!(
        said.contains("1 labels in") && said.contains("(id nope)"),
        "{said}"
    );
    assert!(said.contains("note: no labels for rouge_l"), "{said}");
    let summary: Value =
        serde_json::from_str(&fs::read_to_string(dir.path().join("run/summary.json")).unwrap())
            .unwrap();
    let block = &summary["calibrated"]["faithfulness"];
    assert_eq!(block["method"], "ppi++");
    assert_eq!(block["n_labels"], 12);
    let mean = block["mean"].as_f64().unwrap();
    let (low, high) = (
        block["ci95"]["low"].as_f64().unwrap(),
        block["ci95"]["high"].as_f64().unwrap(),
    );
    assert!(low <= mean && mean <= high, "{block}");
    assert_eq!(block["labels_only"]["mean"].as_f64().unwrap(), 8.0 / 12.0);
    // The judge-only mean is the summary's mean of the same cells.
    let judged = summary["metrics"]["faithfulness"]["mean"].as_f64().unwrap();
    assert!((block["judge_only"]["mean"].as_f64().unwrap() - judged).abs() < 1e-12);
    assert!(summary["calibrated"]["rouge_l"].is_null());

    // `calibrate` on the finished run writes the same block again.
    let again = rageval(
        dir.path(),
        &["calibrate", "run", "--labels", labels.to_str().unwrap()],
    );
    assert!(again.status.success(), "{}", stderr(&again));
    let rewritten: Value =
        serde_json::from_str(&fs::read_to_string(dir.path().join("run/summary.json")).unwrap())
            .unwrap();
    assert_eq!(rewritten["calibrated"], summary["calibrated"]);

    // A labels line that is not a label names its line.
    fs::write(
        dir.path().join("bad.jsonl"),
        "{\"id\": \"1\", \"label\": \"yes\"}\n",
    )
    .unwrap();
    let bad = rageval(dir.path(), &["calibrate", "run", "--labels", "bad.jsonl"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("bad.jsonl:1"), "{}", stderr(&bad));
}
