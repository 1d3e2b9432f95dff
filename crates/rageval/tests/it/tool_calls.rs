//! `tool_argument_correctness_judged` end to end through the testkit mock (issue 37): its
//! `tool_argument_meaning` calls go through the engine's planning path, so the dry run
//! plans exactly the calls the run makes, a cap stops resumably (exit 3) and the resumed
//! run asks at most the plan; a judge that answers only garbage halts the run (exit 4).
//! And a Langfuse export's tool observations scored with the heuristic judge.

use std::fs;
use std::path::{Path, PathBuf};

use rageval_testkit::MockConfig;
use serde_json::{Value, json};

use crate::conversations::planned_capped_resumed_on;
use crate::judged::{checked_cells, endpoint};
use crate::stderr;
use crate::traces::{fixtures, heuristic_eval};

/// Sixteen samples, each with one web_search call expected and one made whose query is
/// reworded (one judge call each), and in every fourth sample a second pair whose only
/// argument agrees once normalised (no call): sixteen calls in all.
fn write_data(dir: &Path) -> PathBuf {
    let text: String = (1..=16)
        .map(|i| {
            let mut expected = vec![json!({"name": "web_search",
                "arguments": {"query": format!("capital of country {i}")}})];
            let mut made = vec![json!({"name": "web_search",
                "arguments": {"query": format!("country {i} capital city")}})];
            if i % 4 == 0 {
                expected.push(json!({"name": "get_time", "arguments": {"zone": "UTC"}}));
                made.push(json!({"name": "get_time", "arguments": {"zone": "utc"}}));
            }
            let row = json!({"id": format!("s{i}"), "question": "What is the capital?",
                "answer": "The capital.", "reference_tool_calls": expected,
                "tool_calls": made});
            format!("{row}\n")
        })
        .collect();
    let path = dir.join("tools.jsonl");
    fs::write(&path, text).unwrap();
    path
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

/// Sixteen calls planned, made, capped at five and resumed.
#[test]
fn judged_tool_arguments_are_planned_capped_and_resumed() {
    let summary =
        planned_capped_resumed_on(write_data, "tool_argument_correctness_judged", 16, "5");
    assert_eq!(
        summary["metrics"]["tool_argument_correctness_judged"]["n_scored"], 16,
        "{summary}"
    );
}

#[test]
fn a_judge_answering_only_garbage_halts_judged_tool_arguments() {
    let endpoint = endpoint(MockConfig {
        garbage_rate: 1.0,
        ..MockConfig::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let data = write_data(dir.path());
    let output = endpoint.eval(
        dir.path(),
        &[
            data.to_str().unwrap(),
            "--metrics",
            "tool_argument_correctness_judged,tool_selection",
            "--out",
            "run",
            "--no-cache",
        ],
    );
    assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("unusable answers in a row"),
        "{}",
        stderr(&output)
    );
    let manifest = read_json(&dir.path().join("run/manifest.json"));
    assert_ne!(manifest["status"], "complete", "{manifest}");
}

/// A Langfuse export's tool observations scored through the binary with the heuristic
/// judge (`langfuse_tools.json`): in `lf-tools-1` three calls made against two expected,
/// any order, 2 · 2 ÷ (2 + 3) = 0.8, their arguments equal once normalised (no judge call
/// needed) → 1; in `lf-tools-2` the generation's two calls against one expected, 2 · 1 ÷
/// (1 + 2) = 2/3, arguments equal → 1.
#[test]
fn langfuse_tool_observations_are_scored_with_the_judged_variant() {
    let dir = tempfile::tempdir().unwrap();
    let output = heuristic_eval(
        dir.path(),
        &fixtures().join("langfuse_tools.json"),
        "langfuse",
        "tool_selection,tool_argument_correctness_judged",
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let cells = checked_cells(&dir.path().join("run"), 2, 2);
    let value = |id: &str, metric: &str| -> f64 {
        cells
            .iter()
            .find(|c| c["sample_id"] == id && c["metric"] == metric)
            .and_then(|c| c["value"].as_f64())
            .unwrap_or_else(|| panic!("no score {id} {metric}"))
    };
    assert_eq!(value("lf-tools-1", "tool_selection"), 0.8);
    assert!((value("lf-tools-2", "tool_selection") - 2.0 / 3.0).abs() < 1e-12);
    for id in ["lf-tools-1", "lf-tools-2"] {
        assert_eq!(value(id, "tool_argument_correctness_judged"), 1.0, "{id}");
    }
}
