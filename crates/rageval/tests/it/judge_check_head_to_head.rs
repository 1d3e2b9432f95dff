//! `rageval judge-check --head-to-head`: the pairwise judge measured against pairwise human
//! labels with the testkit mock — a judge that always names the first seat flips every pair
//! and agrees only on the tie labels; one that follows the GOOD marker agrees on all; both
//! seat orders are asked (two requests per pair, none again on a rerun), a dry run sends
//! nothing, and `compare` of the two runs gives the paired difference in agreement.

use std::fs;
use std::path::Path;

use rageval_testkit::MockConfig;
use serde_json::{Value, json};

use crate::judge_check::read_json;
use crate::judged::{Endpoint, endpoint};
use crate::pairwise::prefers_good;
use crate::{rageval, stderr, stdout};

/// The labels: `(id, preferred)`; the preferred answer carries GOOD, a tie's neither.
const LABELS: [(&str, &str); 5] = [
    ("p1", "a"),
    ("p2", "b"),
    ("p3", "tie"),
    ("p4", "a"),
    ("p5", "tie"),
];

fn write_labels(dir: &Path) -> String {
    let mut lines = String::new();
    for (id, preferred) in LABELS {
        let answer = |side: &str| {
            let marker = if preferred == side { "GOOD" } else { "plain" };
            format!("{marker} answer {side} to {id}")
        };
        let sample = |side: &str| {
            json!({
                "question": format!("What does item {id} ask?"),
                "contexts": [format!("passage of {id} {side}")],
                "answer": answer(side),
            })
        };
        let line = json!({"id": id, "a": sample("a"), "b": sample("b"), "preferred": preferred});
        lines.push_str(&format!("{line}\n"));
    }
    let path = dir.join("pairs.jsonl");
    fs::write(&path, lines).unwrap();
    path.display().to_string()
}

/// Runs `rageval judge-check ARGS` in `dir` against `server`.
pub(crate) fn judge_check(server: &Endpoint, dir: &Path, args: &[&str]) -> std::process::Output {
    let mut all = vec!["judge-check"];
    all.extend(args);
    let flags = server.flags();
    all.extend(flags.iter().map(String::as_str));
    rageval(dir, &all)
}

fn agreement(run: &Path) -> Value {
    read_json(&run.join("agreement.json"))
}

fn value(agreement: &Value, figure: &str) -> f64 {
    agreement["figures"][figure]["value"]
        .as_f64()
        .unwrap_or_else(|| panic!("no {figure} in {agreement}"))
}

/// The mock fills the winner enum with its first value, "A": every pair flips, every
/// result is a tie, so the judge agrees exactly on the tie labels (2 of 5).
#[test]
fn a_judge_that_always_names_the_first_seat_flips_every_pair_and_agrees_on_the_ties() {
    let dir = tempfile::tempdir().unwrap();
    let labels = write_labels(dir.path());
    let server = endpoint(MockConfig::default());
    let args = [labels.as_str(), "--head-to-head", "--out", "first"];
    let output = judge_check(&server, dir.path(), &args);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        server.mock.stats().chat_requests,
        2 * LABELS.len() as u64,
        "both seat orders of every pair"
    );
    let run = dir.path().join("first");
    let agreement = agreement(&run);
    assert_eq!(value(&agreement, "head_to_head_accuracy"), 0.4);
    assert_eq!(value(&agreement, "head_to_head_accuracy_non_tie"), 0.0);
    assert_eq!(value(&agreement, "position_flip_rate"), 1.0);
    assert_eq!(
        agreement["figures"]["position_flip_rate"]["ci95"]["low"],
        1.0
    );
    assert_eq!(agreement["counts"]["flipped"], 5);
    assert_eq!(agreement["counts"]["judge_tie"], 5);
    assert_eq!(agreement["verdicts"][0]["scores"], json!([1.0, 1.0]));
    assert_eq!(agreement["verdicts"][2]["result"], "agree");
    let text = stdout(&output);
    assert!(text.contains("position_flip_rate"), "{text}");
    assert!(text.contains("both seat orders"), "{text}");
    let manifest = read_json(&run.join("manifest.json"));
    assert_eq!(manifest["metrics"][0]["name"], "head_to_head");
    // Each order's reason is in the results, under its sample.
    let results = fs::read_to_string(run.join("results.jsonl")).unwrap();
    assert!(results.contains("\"p1/b\"") && results.contains("preferred_seat"));
    let report = fs::read_to_string(run.join("report.md")).unwrap();
    assert!(report.contains("`position_flip_rate`"), "{report}");

    // The same command again re-measures the complete run: nothing is asked.
    let again = judge_check(&server, dir.path(), &args);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(server.mock.stats().chat_requests, 2 * LABELS.len() as u64);
}

/// A judge that follows the GOOD marker, whatever the seat, agrees on every label, flips
/// none; `compare` of the two runs gives the paired difference in agreement (+3 items of 5).
#[test]
fn a_judge_that_follows_the_better_answer_agrees_on_all_and_compare_pairs_the_two_runs() {
    let dir = tempfile::tempdir().unwrap();
    let labels = write_labels(dir.path());
    let good = endpoint(prefers_good());
    let output = judge_check(
        &good,
        dir.path(),
        &[labels.as_str(), "--head-to-head", "--out", "good"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let agreement = agreement(&dir.path().join("good"));
    assert_eq!(value(&agreement, "head_to_head_accuracy"), 1.0);
    assert_eq!(value(&agreement, "head_to_head_accuracy_non_tie"), 1.0);
    assert_eq!(value(&agreement, "position_flip_rate"), 0.0);
    assert_eq!(agreement["verdicts"][1]["scores"], json!([0.0, 1.0]));

    // A rubric's criterion judges instead of the built-in one: its own metric name.
    fs::write(
        dir.path().join("rubrics.toml"),
        "[[metric]]\nname = \"kind\"\ncriterion = \"The answer is kind.\"\n\
         reads = [\"answer\"]\nscale = \"pass_fail\"\n",
    )
    .unwrap();
    let args = [
        labels.as_str(),
        "--head-to-head",
        "--criterion",
        "kind",
        "--metric-file",
        "rubrics.toml",
        "--out",
        "kind",
    ];
    let output = judge_check(&good, dir.path(), &args);
    assert!(output.status.success(), "{}", stderr(&output));
    let manifest = read_json(&dir.path().join("kind/manifest.json"));
    assert_eq!(manifest["metrics"][0]["name"], "head_to_head:kind");
    assert_eq!(good.mock.stats().chat_requests, 4 * LABELS.len() as u64);

    // Another judge under the same model name: the cache must not answer for it.
    let first = endpoint(MockConfig::default());
    let output = judge_check(
        &first,
        dir.path(),
        &[
            labels.as_str(),
            "--head-to-head",
            "--out",
            "first",
            "--no-cache",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let compare = rageval(
        dir.path(),
        &[
            "compare",
            "first",
            "good",
            "--json",
            "compare.json",
            "--xlsx",
            "compare.xlsx",
        ],
    );
    assert!(compare.status.success(), "{}", stderr(&compare));
    assert!(stdout(&compare).contains("head_to_head_accuracy"));
    let text = fs::read_to_string(dir.path().join("compare.json")).unwrap();
    let json: Value = serde_json::from_str(&text).unwrap();
    let difference = find_key(&json, "agreement")
        .map(|agreement| &agreement["paired"])
        .filter(|paired| paired.is_object())
        .unwrap_or_else(|| panic!("no paired difference in {text}"));
    let value = difference["difference"].as_f64().unwrap();
    assert!((value - 0.6).abs() < 1e-9, "{difference}");
    assert_eq!(difference["candidate_better"], 3, "{difference}");

    // The workbook carries the same paired difference on its own sheet.
    let mut workbook: calamine::Xlsx<_> =
        calamine::open_workbook(dir.path().join("compare.xlsx")).unwrap();
    let sheet = calamine::Reader::worksheet_range(&mut workbook, "agreement").unwrap();
    let at = |c: u32| sheet.get_value((1, c)).cloned();
    assert_eq!(at(0), Some(calamine::Data::String("first".into())));
    assert_eq!(at(1), Some(calamine::Data::String("good".into())));
    match at(5) {
        Some(calamine::Data::Float(d)) => assert!((d - 0.6).abs() < 1e-9, "{d}"),
        other => panic!("difference cell: {other:?}"),
    }
    assert_eq!(at(11), Some(calamine::Data::Float(3.0)));
}

/// The first value under `key` anywhere in `value`.
fn find_key<'v>(value: &'v Value, key: &str) -> Option<&'v Value> {
    match value {
        Value::Object(map) => map
            .get(key)
            .filter(|v| !v.is_null())
            .or_else(|| map.values().find_map(|v| find_key(v, key))),
        Value::Array(items) => items.iter().find_map(|v| find_key(v, key)),
        _ => None,
    }
}

/// A dry run counts two calls per pair and sends nothing; binary labels and the heuristic
/// judge are refused before anything is asked.
#[test]
fn a_dry_run_counts_both_orders_and_the_wrong_labels_or_judge_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let labels = write_labels(dir.path());
    let server = endpoint(MockConfig::default());
    let output = judge_check(
        &server,
        dir.path(),
        &[
            labels.as_str(),
            "--head-to-head",
            "--out",
            "dry",
            "--dry-run",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(server.mock.stats().requests, 0);
    assert!(!dir.path().join("dry").exists());
    let text = stdout(&output);
    assert!(text.contains("compare_answers"), "{text}");
    assert!(text.contains(&(2 * LABELS.len()).to_string()), "{text}");

    let binary = dir.path().join("binary.jsonl");
    fs::write(&binary, "{\"answer\": \"x\", \"label\": true}\n").unwrap();
    let output = judge_check(
        &server,
        dir.path(),
        &[binary.to_str().unwrap(), "--head-to-head", "--out", "b"],
    );
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("judges pairs"),
        "{}",
        stderr(&output)
    );

    let heuristic = rageval(
        dir.path(),
        &["judge-check", &labels, "--head-to-head", "--out", "h"],
    );
    assert_eq!(heuristic.status.code(), Some(2), "{}", stderr(&heuristic));
    assert_eq!(server.mock.stats().requests, 0);
}
