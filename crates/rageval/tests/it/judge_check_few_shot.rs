//! `rageval judge-check --few-shot N`: labels drawn as a rubric's worked examples are shown
//! to the judge in every call (read from the mock's requests) and left out of the measure,
//! the output says which; a resume with another draw is refused, naming it.

use std::fs;
use std::path::Path;
use std::sync::{Arc, Mutex};

use rageval_testkit::{MockConfig, Reply};
use serde_json::{Value, json};

use crate::judge_check::read_json;
use crate::judge_check_head_to_head::judge_check;
use crate::judged::endpoint;
use crate::{stderr, stdout};

/// Six binary labels, good and bad in turn; each answer says its own item's id.
fn write_labels(dir: &Path) -> String {
    let mut lines = String::new();
    for i in 1..=6 {
        let line = json!({
            "id": format!("b{i}"),
            "question": format!("What is asked in item {i}?"),
            "answer": format!("MARK-b{i} is the answer"),
            "label": i % 2 == 1,
        });
        lines.push_str(&format!("{line}\n"));
    }
    fs::write(dir.join("labels.jsonl"), lines).unwrap();
    fs::write(
        dir.join("rubrics.toml"),
        "[[metric]]\nname = \"kind\"\ncriterion = \"The answer is kind.\"\n\
         reads = [\"question\", \"answer\"]\nscale = \"pass_fail\"\n",
    )
    .unwrap();
    "labels.jsonl".into()
}

/// A mock that answers as it does without a script and keeps every request's messages.
fn recording() -> (MockConfig, Arc<Mutex<Vec<String>>>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&log);
    let script = Arc::new(move |body: &Value| {
        kept.lock().unwrap().push(body["messages"].to_string());
        Reply::Schema
    });
    let config = MockConfig {
        script: Some(script),
        ..MockConfig::default()
    };
    (config, log)
}

#[test]
fn drawn_labels_are_shown_as_examples_and_left_out_of_the_measure() {
    let dir = tempfile::tempdir().unwrap();
    let labels = write_labels(dir.path());
    let (config, log) = recording();
    let server = endpoint(config);
    let args = [
        labels.as_str(),
        "--metric",
        "kind",
        "--metric-file",
        "rubrics.toml",
        "--few-shot",
        "2",
        "--seed",
        "7",
        "--out",
        "fs",
    ];
    let output = judge_check(&server, dir.path(), &args);
    assert!(output.status.success(), "{}", stderr(&output));
    let run = dir.path().join("fs");
    let manifest = read_json(&run.join("manifest.json"));
    let drawn: Vec<String> = manifest["settings"]["few_shot"]["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|id| id.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(drawn.len(), 2);
    // Stratified: one good (odd) and one bad (even) label.
    let odd = |id: &String| id[1..].parse::<u32>().unwrap() % 2 == 1;
    assert_eq!(drawn.iter().filter(|id| odd(id)).count(), 1, "{drawn:?}");

    // The other four are measured, and only they are judged.
    let agreement = read_json(&run.join("agreement.json"));
    assert_eq!(agreement["items"], 4);
    let measured: Vec<&str> = agreement["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["id"].as_str().unwrap())
        .collect();
    assert_eq!(measured.len(), 4);
    for id in &drawn {
        assert!(
            !measured.contains(&id.as_str()),
            "{id} measured: {measured:?}"
        );
    }
    let results = fs::read_to_string(run.join("results.jsonl")).unwrap();
    assert_eq!(results.lines().count(), 4);
    let requests = log.lock().unwrap().clone();
    assert_eq!(requests.len(), 4, "one call per measured label");
    for request in &requests {
        for id in &drawn {
            assert!(
                request.contains(&format!("MARK-{id}")),
                "{id} not shown in {request}"
            );
        }
    }

    // Every output says so.
    let said = format!(
        "2 labels drawn as few-shot examples (ids {}); agreement on the other 4",
        drawn.join(", ")
    );
    assert!(stdout(&output).contains(&said), "{}", stdout(&output));
    let report = fs::read_to_string(run.join("report.md")).unwrap();
    assert!(report.contains(&said), "{report}");
    let summary = read_json(&run.join("summary.json"));
    assert_eq!(summary["notes"]["few_shot"], json!(said));

    // Another draw is another run: refused, naming the draw.
    let mut other = args.to_vec();
    other[6] = "3";
    let refused = judge_check(&server, dir.path(), &other);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("few-shot draw"),
        "{}",
        stderr(&refused)
    );
    // The same draw again re-measures without asking anything.
    let again = judge_check(&server, dir.path(), &args);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(log.lock().unwrap().len(), 4);
}

#[test]
fn few_shot_needs_a_rubric_metric_and_labels_left_to_measure() {
    let dir = tempfile::tempdir().unwrap();
    let labels = write_labels(dir.path());
    let server = endpoint(MockConfig::default());
    for (metric, n, said) in [
        ("faithfulness", "2", "is not one"),
        ("kind", "6", "at least one must be left"),
    ] {
        let output = judge_check(
            &server,
            dir.path(),
            &[
                &labels,
                "--metric",
                metric,
                "--metric-file",
                "rubrics.toml",
                "--few-shot",
                n,
                "--out",
                "x",
            ],
        );
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert!(stderr(&output).contains(said), "{}", stderr(&output));
    }
    assert_eq!(server.mock.stats().requests, 0);
}
