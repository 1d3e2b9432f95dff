//! `rageval judge-check`: end to end on CI-sized subsets of each shared set with the offline
//! heuristic judge and the mock endpoint; the reported accuracy against a hand count on a
//! labelled file with ties; bad labels; `--repeat`; `report` and `compare` on its runs.

use std::fs;
use std::path::{Path, PathBuf};

use rageval_testkit::MockConfig;
use serde_json::Value;

use crate::judged::endpoint;
use crate::{rageval, repo_root, stderr, stdout};

fn shared(file: &str) -> PathBuf {
    repo_root().join("../shared/validation").join(file)
}

pub(crate) fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

/// Runs judge-check in `dir` and returns the run's agreement.json (panics on failure).
fn check(dir: &Path, args: &[&str]) -> Value {
    let mut all = vec!["judge-check"];
    all.extend(args);
    let output = rageval(dir, &all);
    assert!(output.status.success(), "{}", stderr(&output));
    let out = args
        .iter()
        .position(|a| *a == "--out")
        .map(|i| args[i + 1])
        .unwrap();
    let run = dir.join(out);
    let manifest = read_json(&run.join("manifest.json"));
    assert_eq!(manifest["status"], "complete");
    assert_eq!(manifest["command"], "judge-check");
    assert!(run.join("summary.json").is_file() && run.join("report.html").is_file());
    read_json(&run.join("agreement.json"))
}

fn figure(agreement: &Value, name: &str) -> f64 {
    agreement["figures"][name]["value"]
        .as_f64()
        .unwrap_or_else(|| panic!("no {name} in {agreement}"))
}

/// Runs judge-check on a shared set: `(file under shared/validation, format, metric,
/// --samples)` into the run directory `out`, with `extra` flags.
fn check_set(dir: &Path, set: (&str, &str, &str, &str), out: &str, extra: &[&str]) -> Value {
    let (file, format, metric, samples) = set;
    let path = shared(file);
    let mut args = vec![
        path.to_str().unwrap(),
        "--format",
        format,
        "--metric",
        metric,
        "--samples",
        samples,
        "--out",
        out,
    ];
    args.extend(extra);
    check(dir, &args)
}

/// Writes `labels.jsonl` into `dir`: four pairs of answers about one context, which the
/// heuristic faithfulness judge gets two right (`right`, `right-b`), one tied (`tie`) and
/// one wrong (`wrong`: the person preferred the invented answer).
pub fn write_curie_pairs(dir: &Path) {
    let context = "Marie Curie won the Nobel Prize in Physics in 1903 and in Chemistry in 1911.";
    let pair = |id: &str, a: &str, b: &str, preferred: &str| {
        serde_json::json!({
            "id": id,
            "a": {"question": "What did Marie Curie win?", "contexts": [context], "answer": a},
            "b": {"question": "What did Marie Curie win?", "contexts": [context], "answer": b},
            "preferred": preferred,
        })
        .to_string()
    };
    let grounded = "Marie Curie won the Nobel Prize in Chemistry in 1911.";
    let invented = "Pierre Boulez composed twelve symphonies for orchestras in Vienna.";
    let lines = [
        pair("right", grounded, invented, "a"),
        pair("right-b", invented, grounded, "b"),
        pair("tie", grounded, grounded, "a"),
        pair("wrong", grounded, invented, "b"),
    ];
    fs::write(dir.join("labels.jsonl"), lines.join("\n")).unwrap();
}

#[test]
fn reported_pairwise_accuracy_equals_a_hand_count_with_ties() {
    let dir = tempfile::tempdir().unwrap();
    write_curie_pairs(dir.path());
    let agreement = check(
        dir.path(),
        &["labels.jsonl", "--metric", "faithfulness", "--out", "run"],
    );
    // Hand count from the journal's scores: a point when the preferred side scored higher,
    // half on equal scores.
    let journal = fs::read_to_string(dir.path().join("run/results.jsonl")).unwrap();
    let score = |id: &str| -> f64 {
        journal
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|l| l["sample_id"] == id)
            .and_then(|l| l["value"].as_f64())
            .unwrap()
    };
    let mut points = 0.0;
    let mut ties = 0;
    for (id, preferred) in [
        ("right", "a"),
        ("right-b", "b"),
        ("tie", "a"),
        ("wrong", "b"),
    ] {
        let other = if preferred == "a" { "b" } else { "a" };
        let (p, o) = (
            score(&format!("{id}/{preferred}")),
            score(&format!("{id}/{other}")),
        );
        if p > o {
            points += 1.0;
        } else if p == o {
            points += 0.5;
            ties += 1;
        }
    }
    let hand = points / 4.0;
    assert_eq!(figure(&agreement, "pairwise_accuracy"), hand);
    assert_eq!(agreement["counts"]["tie"], ties);
    // The heuristic separates a grounded answer from an invented one, so the count is the
    // designed one: two right, one tie, one wrong.
    assert_eq!(hand, 0.625);
    assert_eq!(ties, 1);
    let ci = &agreement["figures"]["pairwise_accuracy"]["ci95"];
    assert!(ci["low"].as_f64().unwrap() <= hand && hand <= ci["high"].as_f64().unwrap());
}

#[test]
fn wikieval_pairs_with_the_heuristic_judge_and_report_and_compare_work_on_the_runs() {
    if crate::skip_without_shared(
        "wikieval_pairs_with_the_heuristic_judge_and_report_and_compare_work_on_the_runs",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = shared("wikieval/WikiEval_samples_10.jsonl");
    let data = data.to_str().unwrap();
    for (metric, out) in [
        ("faithfulness", "faith"),
        ("answer_relevance:rubric", "answer"),
        ("context_relevance", "context"),
    ] {
        let agreement = check(
            dir.path(),
            &[
                data,
                "--format",
                "wikieval",
                "--metric",
                metric,
                "--samples",
                "4",
                "--out",
                out,
            ],
        );
        assert_eq!(agreement["items"], 4, "{metric}");
        let accuracy = figure(&agreement, "pairwise_accuracy");
        assert!((0.0..=1.0).contains(&accuracy), "{metric}: {accuracy}");
        assert_eq!(agreement["verdicts"].as_array().unwrap().len(), 4);
    }
    let report = rageval(dir.path(), &["report", "faith"]);
    assert!(report.status.success(), "{}", stderr(&report));
    // The reports lead with the agreement, figure by figure as agreement.json holds it.
    let faith = read_json(&dir.path().join("faith/agreement.json"));
    let accuracy = &faith["figures"]["pairwise_accuracy"];
    let (value, interval) = (
        format!("{:.4}", accuracy["value"].as_f64().unwrap()),
        format!(
            "[{:.4}, {:.4}]",
            accuracy["ci95"]["low"].as_f64().unwrap(),
            accuracy["ci95"]["high"].as_f64().unwrap()
        ),
    );
    let row = format!("| `pairwise_accuracy` | {value} | {interval} |");
    let markdown = fs::read_to_string(dir.path().join("faith/report.md")).unwrap();
    let agreement_at = markdown.find("## Agreement with the human labels").unwrap();
    assert!(agreement_at < markdown.find("| metric | mean").unwrap());
    assert!(markdown.contains(&row), "{row} not in\n{markdown}");
    let counts = &faith["counts"];
    assert!(markdown.contains(&format!(
        "Counts: agree {} · disagree {} · tie {} · unscored {}.",
        counts["agree"], counts["disagree"], counts["tie"], faith["unscored"]
    )));
    let html = fs::read_to_string(dir.path().join("faith/report.html")).unwrap();
    assert!(html.find("id=\"agreement\"").unwrap() < html.find("id=\"summary\"").unwrap());
    let again = check(
        dir.path(),
        &[
            data,
            "--format",
            "wikieval",
            "--metric",
            "faithfulness",
            "--samples",
            "4",
            "--out",
            "faith2",
        ],
    );
    assert_eq!(
        again["figures"],
        read_json(&dir.path().join("faith/agreement.json"))["figures"]
    );
    let compare = rageval(dir.path(), &["compare", "faith", "faith2"]);
    assert!(compare.status.success(), "{}", stderr(&compare));
    let side_by_side =
        format!("| `pairwise_accuracy` | {value} {interval} | {value} {interval} | +0.0000 |");
    assert!(stdout(&compare).contains("Agreement with the pairwise labels"));
    assert!(
        stdout(&compare).contains(&side_by_side),
        "{side_by_side} not in\n{}",
        stdout(&compare)
    );
}

#[test]
fn binary_sets_report_balanced_accuracy_and_auroc() {
    if crate::skip_without_shared("binary_sets_report_balanced_accuracy_and_auroc") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (file, format, metric, samples, out) in [
        ("rgb/zh_refine.json", "rgb", "context_relevance", "2", "rgb"),
        (
            "dureader-2.0-demo-zh/search.dev.slim.jsonl",
            "dureader",
            "context_relevance",
            "4",
            "dureader",
        ),
        (
            "uhgeval-zh/dataset_uhgeval_concise.jsonl",
            "uhgeval",
            "faithfulness",
            "6",
            "uhgeval",
        ),
    ] {
        let agreement = check_set(dir.path(), (file, format, metric, samples), out, &[]);
        assert_eq!(agreement["shape"], "binary", "{format}");
        for name in ["auroc", "balanced_accuracy", "accuracy"] {
            let value = figure(&agreement, name);
            assert!((0.0..=1.0).contains(&value), "{format} {name} {value}");
        }
        assert!(agreement["counts"]["positive"].as_u64().unwrap() > 0);
        assert!(agreement["counts"]["negative"].as_u64().unwrap() > 0);
    }
}

#[test]
fn cranfield_grades_give_rank_correlations_within_queries() {
    if crate::skip_without_shared("cranfield_grades_give_rank_correlations_within_queries") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let set = ("cranfield", "cranfield", "context_relevance", "3");
    let agreement = check_set(dir.path(), set, "cran", &[]);
    assert_eq!(agreement["shape"], "graded");
    assert_eq!(agreement["counts"]["groups"], 3);
    for name in ["spearman", "kendall_tau_b"] {
        let value = figure(&agreement, name);
        assert!((-1.0..=1.0).contains(&value), "{name} {value}");
    }
}

#[test]
fn bad_labels_exit_2_naming_line_and_field_and_leave_no_run() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("labels.jsonl"),
        "{\"question\": \"q\", \"label\": true}\n{\"question\": \"q\", \"label\": \"yes\"}\n",
    )
    .unwrap();
    let output = rageval(
        dir.path(),
        &[
            "judge-check",
            "labels.jsonl",
            "--metric",
            "context_relevance",
            "--out",
            "run",
        ],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("labels.jsonl:2"),
        "{}",
        stderr(&output)
    );
    assert!(!dir.path().join("run").exists());
}

#[test]
fn the_mock_endpoint_answers_and_repeats_bypass_the_cache() {
    if crate::skip_without_shared("the_mock_endpoint_answers_and_repeats_bypass_the_cache") {
        return;
    }
    let endpoint = endpoint(MockConfig {
        seed: 5,
        ..MockConfig::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let data = shared("wikieval/WikiEval_samples_10.jsonl");
    let mut args = vec![
        "judge-check".to_string(),
        data.to_str().unwrap().into(),
        "--format".into(),
        "wikieval".into(),
        "--metric".into(),
        "faithfulness".into(),
        "--samples".into(),
        "2".into(),
        "--out".into(),
        "once".into(),
    ];
    args.extend(endpoint.flags());
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = rageval(dir.path(), &refs);
    assert!(output.status.success(), "{}", stderr(&output));
    let once = endpoint.mock.stats().chat_requests;
    assert!(once > 0);
    assert!(stdout(&output).contains("pairwise_accuracy"));
    // The same run again with three repeats: the first pass is served by the cache, the two
    // repeats reach the endpoint.
    let mut repeated: Vec<&str> = refs.clone();
    let at = repeated.iter().position(|a| *a == "once").unwrap();
    repeated[at] = "thrice";
    repeated.extend(["--repeat", "3"]);
    let output = rageval(dir.path(), &repeated);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(endpoint.mock.stats().chat_requests, once * 3);
    let agreement = read_json(&dir.path().join("thrice/agreement.json"));
    let stability = &agreement["stability"];
    assert_eq!(stability["repeats"], 3);
    assert_eq!(stability["figures_by_repeat"].as_array().unwrap().len(), 3);
    // The mock answers the same request the same way.
    assert_eq!(stability["stable_sample_share"], 1.0);
}

#[test]
fn every_shared_set_runs_against_the_mock_endpoint() {
    if crate::skip_without_shared("every_shared_set_runs_against_the_mock_endpoint") {
        return;
    }
    let endpoint = endpoint(MockConfig {
        seed: 11,
        ..MockConfig::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let flags = endpoint.flags();
    for (file, format, metric, samples) in [
        (
            "wikieval/WikiEval_samples_10.jsonl",
            "wikieval",
            "context_relevance",
            "2",
        ),
        (
            "uhgeval-zh/dataset_uhgeval_concise.jsonl",
            "uhgeval",
            "faithfulness",
            "1",
        ),
        ("rgb/en_fact.json", "rgb", "context_relevance", "1"),
        (
            "dureader-2.0-demo-zh/search.dev.slim.jsonl",
            "dureader",
            "context_relevance",
            "2",
        ),
        ("cranfield", "cranfield", "context_relevance", "1"),
    ] {
        let extra: Vec<&str> = flags.iter().map(String::as_str).collect();
        let agreement = check_set(dir.path(), (file, format, metric, samples), format, &extra);
        assert_eq!(agreement["unscored"], 0, "{format}: {agreement}");
        let manifest = read_json(&dir.path().join(format).join("manifest.json"));
        assert_eq!(
            manifest["settings"]["judge"]["kind"], "endpoint",
            "{format}"
        );
    }
    assert!(endpoint.mock.stats().chat_requests > 0);
}
