//! `rageval eval` end to end: run directories, summaries, and bad input.

use std::fs;

use serde_json::Value;

use crate::{rageval, repo_root, stderr, stdout};

fn read_json(path: &std::path::Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

#[test]
fn scores_the_fiqa_example_into_a_complete_run() {
    let dir = tempfile::tempdir().unwrap();
    let data = repo_root().join("examples/fiqa-30.jsonl");
    let out = dir.path().join("run");
    let output = rageval(
        dir.path(),
        &[
            "eval",
            data.to_str().unwrap(),
            "--metrics",
            "bleu,rouge_l,exact_match,id_mrr",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));

    let summary = read_json(&out.join("summary.json"));
    assert_eq!(summary["samples"], 30);
    let rouge = &summary["metrics"]["rouge_l"];
    assert_eq!(rouge["n"], 30);
    assert_eq!(rouge["n_scored"], 30);
    let mean = rouge["mean"].as_f64().unwrap();
    let ci = rouge["ci95"].as_array().unwrap();
    assert!(ci[0].as_f64().unwrap() <= mean && mean <= ci[1].as_f64().unwrap());
    // The FiQA rows have no context ids: every id metric is undefined, with the reason.
    let mrr = &summary["metrics"]["id_mrr"];
    assert_eq!(mrr["n_undefined"], 30);
    assert_eq!(mrr["mean"], Value::Null);
    assert_eq!(
        mrr["undefined_reasons"]["sample has no retrieved_context_ids"],
        30
    );

    let manifest = read_json(&out.join("manifest.json"));
    assert_eq!(manifest["status"], "complete");
    assert_eq!(manifest["dataset"]["samples"], 30);
    assert_eq!(manifest["dataset"]["sha256"].as_str().unwrap().len(), 64);

    let journal = fs::read_to_string(out.join("results.jsonl")).unwrap();
    let lines: Vec<Value> = journal
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 30 * 4);
    // The journal's mean equals the summary's.
    let journal_mean = lines
        .iter()
        .filter(|l| l["metric"] == "rouge_l")
        .map(|l| l["value"].as_f64().unwrap())
        .sum::<f64>()
        / 30.0;
    assert!((journal_mean - mean).abs() < 1e-12);

    let table = stdout(&output);
    assert!(table.starts_with("metric"), "{table}");
    assert!(table.contains("rouge_l"), "{table}");
}

#[test]
fn picks_the_metrics_the_first_sample_and_the_heuristic_judge_allow() {
    let dir = tempfile::tempdir().unwrap();
    let data = repo_root().join("examples/fiqa-30.jsonl");
    let output = rageval(
        dir.path(),
        &["eval", data.to_str().unwrap(), "--judge", "heuristic"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let summary = read_json(&dir.path().join("runs/fiqa-30/summary.json"));
    let order: Vec<&str> = summary["metric_order"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        order.contains(&"bleu") && order.contains(&"chrf") && order.contains(&"faithfulness"),
        "{order:?}"
    );
    // No context ids; no writing model or embedder with the heuristic judge alone.
    for absent in ["id_mrr", "answer_relevance", "semantic_similarity"] {
        assert!(!order.contains(&absent), "{order:?}");
    }
    // The support-verdict figures were measured on faithfulness: they do not vouch for
    // metrics that judge the answer against a reference, so those are named, not run (the
    // rule the reports' judge lines follow).
    for unmeasured in ["answer_correctness", "noise_sensitivity", "context_recall"] {
        assert!(!order.contains(&unmeasured), "{order:?}");
        assert!(
            stderr(&output).contains(&format!(
                "{unmeasured} (support_verdicts: agreement with people unmeasured for this metric)"
            )),
            "{}",
            stderr(&output)
        );
    }
}

#[test]
fn bad_input_names_the_line_and_leaves_no_run_behind() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data.jsonl");
    fs::write(
        &data,
        "{\"id\": \"a\", \"question\": \"q1\", \"response\": \"x\", \"reference\": \"x\"}\n\
         {\"id\": \"b\", \"question\": \"q2\", \"response\": \"y\", \"reference\": \"y\"}\n\
         {\"id\": \"a\", \"question\": \"q3\", \"response\": \"z\", \"reference\": \"z\"}\n",
    )
    .unwrap();
    let out = dir.path().join("run");
    let output = rageval(
        dir.path(),
        &[
            "eval",
            "data.jsonl",
            "--metrics",
            "exact_match",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(err.contains("data.jsonl:3"), "{err}");
    assert!(err.contains("`id`"), "{err}");
    assert!(!out.exists(), "a partial run was left behind");
}

#[test]
fn rerunning_resumes_and_a_run_over_other_data_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = repo_root().join("examples/fiqa-30.jsonl");
    let args = [
        "eval",
        data.to_str().unwrap(),
        "--metrics",
        "chrf",
        "--out",
        "run",
    ];
    assert!(rageval(dir.path(), &args).status.success());
    let again = rageval(dir.path(), &args);
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(stderr(&again).contains("resuming"), "{}", stderr(&again));
    let journal = fs::read_to_string(dir.path().join("run/results.jsonl")).unwrap();
    assert_eq!(journal.lines().count(), 30);

    let other = dir.path().join("other.jsonl");
    fs::write(
        &other,
        "{\"question\": \"q\", \"response\": \"a\", \"reference\": \"a\"}\n",
    )
    .unwrap();
    let refused = rageval(
        dir.path(),
        &["eval", "other.jsonl", "--metrics", "chrf", "--out", "run"],
    );
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused).contains("other data")
            && stderr(&refused).contains("hint: pass --overwrite"),
        "{}",
        stderr(&refused)
    );
    let mut overwrite = args.to_vec();
    overwrite.push("--overwrite");
    assert!(rageval(dir.path(), &overwrite).status.success());
}

#[test]
fn unknown_metrics_are_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let data = repo_root().join("examples/fiqa-30.jsonl");
    let output = rageval(
        dir.path(),
        &[
            "eval",
            data.to_str().unwrap(),
            "--metrics",
            "rouge_ll",
            "--out",
            "run",
        ],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("did you mean `rouge_l`?"));
    assert!(!dir.path().join("run").exists());
}

#[test]
fn chinese_answers_are_scored() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("zh.jsonl");
    fs::write(
        &data,
        "{\"question\": \"少儿编程的发展动力是什么？\", \"response\": \"政策和技术推动了少儿编程的发展\", \
          \"reference\": \"政策、经济、社会和技术等多维因素推动其快速发展\"}\n",
    )
    .unwrap();
    let output = rageval(
        dir.path(),
        &[
            "eval",
            "zh.jsonl",
            "--metrics",
            "rouge1,chrf",
            "--out",
            "run",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let summary = read_json(&dir.path().join("run/summary.json"));
    for metric in ["rouge1", "chrf"] {
        let mean = summary["metrics"][metric]["mean"].as_f64().unwrap();
        assert!(mean > 0.0 && mean < 1.0, "{metric}: {mean}");
    }
}

#[test]
fn show_settings_prints_the_resolved_settings_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data = repo_root().join("examples/fiqa-30.jsonl");
    let output = rageval(
        dir.path(),
        &[
            "eval",
            data.to_str().unwrap(),
            "--show-settings",
            "--seed",
            "7",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let settings: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(settings["settings"]["seed"], 7);
    assert_eq!(settings["out"], "runs/fiqa-30");
    assert!(!dir.path().join("runs").exists());
}
