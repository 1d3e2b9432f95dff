//! Rubric metrics of one's own (`[[metric]]` in rageval.toml): listed and explained, judged
//! end to end against the mock, replayed from the cache on a rerun, judged again when the
//! rubric's text changes, and never scored by the heuristic judge.

use std::fs;
use std::path::Path;

use rageval_testkit::MockConfig;

use crate::judged::{checked_cells, endpoint};
use crate::{rageval, stderr, stdout};

const RUBRICS: &str = r#"
[[metric]]
name = "cites_policy"
summary = "the answer names the policy it relies on"
criterion = { en = "The answer names the policy number it relies on.", zh = "回答写出了所依据的政策编号。" }
reads = ["question", "answer"]
scale = "pass_fail"

[[metric.examples]]
answer = "Refunds within 30 days (policy 7)."
grade = "pass"
reason = "names policy 7"

[[metric]]
name = "grounded_tone"
criterion = "The answer keeps to what the passages say, in a calm tone."
reads = ["contexts", "answer"]
scale = "1-5"
"#;

fn dataset(dir: &Path) {
    let rows = [
        r#"{"id": "a", "question": "Can I get a refund?", "answer": "Yes, within 30 days (policy 7).", "contexts": ["Policy 7: refunds within 30 days."]}"#,
        r#"{"id": "b", "question": "Is shipping free?", "answer": "Yes.", "contexts": ["Shipping is free above 50 euros."]}"#,
        r#"{"id": "c", "question": "退货要多久？", "answer": "七天内可以退货。", "contexts": ["政策 3：七天内可退货。"]}"#,
    ];
    fs::write(dir.join("data.jsonl"), rows.join("\n")).unwrap();
    fs::write(dir.join("rageval.toml"), RUBRICS).unwrap();
}

#[test]
fn rubric_metrics_are_listed_and_explained() {
    let dir = tempfile::tempdir().unwrap();
    dataset(dir.path());
    let list = rageval(dir.path(), &["metrics"]);
    assert!(list.status.success(), "{}", stderr(&list));
    let listed = stdout(&list);
    assert!(
        listed.contains("cites_policy — the answer names the policy it relies on"),
        "{listed}"
    );
    assert!(listed.contains("grounded_tone"), "{listed}");
    let explained = rageval(dir.path(), &["metrics", "explain", "cites_policy"]);
    assert!(explained.status.success(), "{}", stderr(&explained));
    let text = stdout(&explained);
    assert!(text.contains("inputs:   question, response"), "{text}");
    assert!(
        text.contains("The answer names the policy number it relies on."),
        "{text}"
    );
    assert!(text.contains("pass = 1, fail = 0"), "{text}");
    assert!(text.contains("rageval.toml:2"), "{text}");
}

#[test]
fn a_rubric_runs_against_the_mock_hits_the_cache_and_misses_it_when_edited() {
    let dir = tempfile::tempdir().unwrap();
    dataset(dir.path());
    let endpoint = endpoint(MockConfig::default());
    let metrics = ["data.jsonl", "--metrics", "cites_policy,grounded_tone"];
    let run = |out: &str| {
        let mut args = metrics.to_vec();
        args.extend(["--out", out]);
        endpoint.eval(dir.path(), &args)
    };

    let first = run("first");
    assert!(first.status.success(), "{}", stderr(&first));
    let cells = checked_cells(&dir.path().join("first"), 3, 2);
    for cell in &cells {
        assert_eq!(cell["status"], "score", "{cell}");
        let value = cell["value"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&value), "{cell}");
    }
    let asked = endpoint.mock.stats().chat_requests;
    assert!(asked >= 6, "one call per cell at least, got {asked}");

    // The same rubrics again, into a new run directory: every answer from the cache.
    endpoint.mock.reset();
    let again = run("again");
    assert!(again.status.success(), "{}", stderr(&again));
    checked_cells(&dir.path().join("again"), 3, 2);
    assert_eq!(endpoint.mock.stats().requests, 0, "a rerun asks nothing");

    // One rubric's text edited: its cells are judged again, the other's still replayed.
    let edited = RUBRICS.replace("in a calm tone", "in a calm, plain tone");
    fs::write(dir.path().join("rageval.toml"), edited).unwrap();
    endpoint.mock.reset();
    let after_edit = run("edited");
    assert!(after_edit.status.success(), "{}", stderr(&after_edit));
    checked_cells(&dir.path().join("edited"), 3, 2);
    let asked_again = endpoint.mock.stats().chat_requests;
    assert_eq!(
        asked_again, 3,
        "only the edited rubric's three cells are asked"
    );

    // The first run directory was judged on the old text: it is not resumed as if the same.
    let resumed = run("first");
    assert_eq!(resumed.status.code(), Some(2), "{}", stderr(&resumed));
    assert!(
        stderr(&resumed).contains("metric:grounded_tone"),
        "{}",
        stderr(&resumed)
    );
}

#[test]
fn the_heuristic_judge_never_scores_a_rubric() {
    let dir = tempfile::tempdir().unwrap();
    dataset(dir.path());
    let output = rageval(
        dir.path(),
        &[
            "eval",
            "data.jsonl",
            "--metrics",
            "cites_policy",
            "--judge",
            "heuristic",
            "--out",
            "run",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    for cell in checked_cells(&dir.path().join("run"), 3, 1) {
        assert_eq!(cell["status"], "undefined", "{cell}");
        let reason = cell["reason"].as_str().unwrap();
        assert!(reason.contains("needs a chat model"), "{reason}");
    }
}

#[test]
fn a_bad_rubric_names_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    dataset(dir.path());
    let bad = dir.path().join("rubrics.toml");
    fs::write(
        &bad,
        "[[metric]]\nname = \"x\"\ncriterion = \"c\"\nreads = [\"answer\"]\nscale = \"1-10\"\n",
    )
    .unwrap();
    let output = rageval(
        dir.path(),
        &["metrics", "--metric-file", bad.to_str().unwrap()],
    );
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(
        err.contains("rubrics.toml:5: field `metric[1].scale`: unknown scale `1-10`"),
        "{err}"
    );
}

#[test]
fn judge_check_measures_a_rubric_with_repeats() {
    let dir = tempfile::tempdir().unwrap();
    dataset(dir.path());
    crate::judge_check::write_curie_pairs(dir.path());
    let endpoint = endpoint(MockConfig::default());
    let mut args: Vec<String> = [
        "judge-check",
        "labels.jsonl",
        "--metric",
        "grounded_tone",
        "--repeat",
        "2",
        "--out",
        "check",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(endpoint.flags());
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = rageval(dir.path(), &refs);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("pairwise_accuracy"));
    let agreement: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.path().join("check/agreement.json")).unwrap())
            .unwrap();
    assert_eq!(agreement["stability"]["repeats"], 2);
}

#[test]
fn calibrate_takes_a_rubric_by_its_name() {
    let dir = tempfile::tempdir().unwrap();
    dataset(dir.path());
    let endpoint = endpoint(MockConfig::default());
    let output = endpoint.eval(
        dir.path(),
        &["data.jsonl", "--metrics", "cites_policy", "--out", "run"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let labels = [
        r#"{"id": "a", "metric": "cites_policy", "label": true}"#,
        r#"{"id": "b", "metric": "cites_policy", "label": false}"#,
        r#"{"id": "c", "metric": "cites_policy", "label": false}"#,
    ];
    fs::write(dir.path().join("labels.jsonl"), labels.join("\n")).unwrap();
    let calibrated = rageval(
        dir.path(),
        &["calibrate", "run", "--labels", "labels.jsonl"],
    );
    assert!(calibrated.status.success(), "{}", stderr(&calibrated));
    let summary: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.path().join("run/summary.json")).unwrap()).unwrap();
    let block = &summary["calibrated"]["cites_policy"];
    assert_eq!(block["n_labels"], 3, "{summary}");
    assert_eq!(block["labels_only"]["mean"].as_f64().unwrap(), 1.0 / 3.0);
}
