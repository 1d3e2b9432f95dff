//! `rageval eval` with model-judged metrics: the heuristic judge alone (`--judge heuristic`,
//! no model) on the FiQA and kids-coding (Chinese) sets, and an OpenAI-compatible endpoint (the testkit mock) that
//! answers well, with some garbage, or only garbage. Every cell must be a number, an
//! undefined with its reason, or a failure with its error.

use std::collections::HashSet;
use std::fs;
use std::path::Path;

use rageval_testkit::{MockConfig, MockServer};
use serde_json::Value;

use crate::{rageval, repo_root, stderr};

/// `eval examples/fiqa-30.jsonl --metrics faithfulness,context_recall --out OUT`, then
/// `flags` (the endpoint's, and any more).
pub fn fiqa_judged_args(out: &str, flags: &[String]) -> Vec<String> {
    let data = repo_root().join("examples/fiqa-30.jsonl");
    let mut args = vec![
        "eval".to_owned(),
        data.to_str().unwrap().to_owned(),
        "--metrics".into(),
        "faithfulness,context_recall".into(),
        "--out".into(),
        out.to_owned(),
    ];
    args.extend_from_slice(flags);
    args
}

/// A mock endpoint served by its own runtime while the test blocks on the binary.
pub struct Endpoint {
    pub mock: MockServer,
    _runtime: tokio::runtime::Runtime,
}

pub fn endpoint(config: MockConfig) -> Endpoint {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mock = runtime.block_on(MockServer::start(config)).unwrap();
    Endpoint {
        mock,
        _runtime: runtime,
    }
}

/// The planned-calls figure of the dry run's table row `label`.
pub fn planned(table: &str, label: &str) -> u64 {
    let row = table
        .lines()
        .find(|l| l.starts_with(label))
        .unwrap_or_else(|| panic!("no row {label} in {table}"));
    row[label.len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

impl Endpoint {
    /// Runs `rageval eval ARGS` in `dir` against this endpoint.
    pub fn eval(&self, dir: &Path, args: &[&str]) -> std::process::Output {
        let flags = self.flags();
        let mut all: Vec<&str> = vec!["eval"];
        all.extend(args);
        all.extend(flags.iter().map(String::as_str));
        rageval(dir, &all)
    }

    /// Runs `rageval eval ARGS --dry-run` in `dir` against this endpoint, which must
    /// succeed having sent no request, and returns its table.
    pub fn dry_run(&self, dir: &Path, args: &[&str]) -> String {
        let before = self.mock.stats().requests;
        let dry = self.eval(dir, &[args, &["--dry-run"]].concat());
        assert!(dry.status.success(), "{}", stderr(&dry));
        assert_eq!(
            self.mock.stats().requests,
            before,
            "a dry run sent a request"
        );
        crate::stdout(&dry)
    }

    /// The flags that point `rageval eval` at this endpoint.
    pub fn flags(&self) -> Vec<String> {
        [
            "--judge-base-url",
            &self.mock.base_url,
            "--judge-model",
            "mock-chat",
            "--judge-embedding-model",
            "mock-embed",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }
}

/// The journal's lines, checked: one per sample × metric, each a finite score, a reasoned
/// undefined or a failure with its error.
pub fn checked_cells(run: &Path, samples: usize, metrics: usize) -> Vec<Value> {
    let journal = fs::read_to_string(run.join("results.jsonl")).unwrap();
    let lines: Vec<Value> = journal
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), samples * metrics, "one line per cell");
    let mut cells = HashSet::new();
    for line in &lines {
        let cell = (line["sample_id"].to_string(), line["metric"].to_string());
        assert!(cells.insert(cell), "a cell written twice: {line}");
        match line["status"].as_str().unwrap() {
            "score" => assert!(line["value"].as_f64().unwrap().is_finite(), "{line}"),
            "undefined" => assert!(!line["reason"].as_str().unwrap().is_empty(), "{line}"),
            "failed" => assert!(!line["error"].as_str().unwrap().is_empty(), "{line}"),
            other => panic!("unknown status {other}: {line}"),
        }
    }
    lines
}

fn count(lines: &[Value], metric: &str, status: &str) -> usize {
    lines
        .iter()
        .filter(|l| l["metric"] == metric && l["status"] == status)
        .count()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

pub const JUDGED: &str = "context_precision,context_precision_strict,useful_context_precision,\
                      context_recall,context_relevance,faithfulness,answer_relevance,\
                      answer_relevance:rubric,answer_correctness,semantic_similarity,\
                      context_entity_recall,noise_sensitivity";

#[test]
fn heuristic_judge_scores_fiqa_and_explains_what_it_cannot_judge() {
    let dir = tempfile::tempdir().unwrap();
    let data = repo_root().join("examples/fiqa-30.jsonl");
    let output = rageval(
        dir.path(),
        &[
            "eval",
            data.to_str().unwrap(),
            "--metrics",
            JUDGED,
            "--judge",
            "heuristic",
            "--out",
            "run",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(err.contains("judge: support_verdicts: heuristic"), "{err}");
    assert!(err.contains("note: semantic_similarity will fail"), "{err}");
    let lines = checked_cells(&dir.path().join("run"), 30, 12);
    for metric in [
        "context_precision",
        "context_recall",
        "faithfulness",
        "noise_sensitivity",
    ] {
        assert_eq!(count(&lines, metric, "score"), 30, "{metric}");
    }
    // What needs a writing model or an embedder fails, saying why.
    assert_eq!(count(&lines, "answer_relevance", "failed"), 30);
    assert_eq!(count(&lines, "semantic_similarity", "failed"), 30);
    let failure = lines
        .iter()
        .find(|l| l["metric"] == "context_entity_recall")
        .unwrap();
    assert!(
        failure["error"]
            .as_str()
            .unwrap()
            .contains("no judge can answer it"),
        "{failure}"
    );
    let manifest = read_json(&dir.path().join("run/manifest.json"));
    assert_eq!(manifest["settings"]["judge"]["kind"], "heuristic");
}

/// The S4 article's Chinese test set (shared/validation/ai-learn-kids-coding-zh) with its
/// gold answer as the response and its gold chunk as the only context.
pub fn kids_coding_dataset(dir: &Path) -> std::path::PathBuf {
    let source = repo_root().join("../shared/validation/ai-learn-kids-coding-zh/qa_test_100.jsonl");
    let text = fs::read_to_string(source).unwrap();
    let rows: Vec<String> = text
        .lines()
        .take(20)
        .map(|line| {
            let row: Value = serde_json::from_str(line).unwrap();
            serde_json::json!({
                "question": row["question"],
                "response": row["answer"],
                "reference": row["answer"],
                "retrieved_contexts": [row["context"]],
            })
            .to_string()
        })
        .collect();
    let path = dir.join("kids.jsonl");
    fs::write(&path, rows.join("\n") + "\n").unwrap();
    path
}

#[test]
fn kids_coding_chinese_set_runs_on_the_heuristic_judge() {
    if crate::skip_without_shared("kids_coding_chinese_set_runs_on_the_heuristic_judge") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = kids_coding_dataset(dir.path());
    let output = rageval(
        dir.path(),
        &[
            "eval",
            data.to_str().unwrap(),
            "--metrics",
            JUDGED,
            "--judge",
            "heuristic",
            "--out",
            "run",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let lines = checked_cells(&dir.path().join("run"), 20, 12);
    let summary = read_json(&dir.path().join("run/summary.json"));
    // The response is the reference itself: every reference statement is supported by it
    // (jieba-tokenised overlap), so answer correctness is 1 on every sample.
    assert_eq!(count(&lines, "answer_correctness", "score"), 20);
    assert_eq!(summary["metrics"]["answer_correctness"]["mean"], 1.0);
    // The gold chunk holds the answer. The Chinese relevance threshold chosen on the
    // development half of RGB, DuReader and the kids-coding set itself (0.60 of the
    // question's content words, heuristic v3) finds 12 of these 20 chunks relevant (v2's
    // 0.75, chosen without this set, found 5; v1's 0.50 found 15): pinned here so that any
    // change of it shows.
    let relevance = summary["metrics"]["context_relevance"]["mean"]
        .as_f64()
        .unwrap();
    assert!((relevance - 0.6).abs() < 1e-9, "{relevance}");
    for metric in ["faithfulness", "context_recall", "context_precision"] {
        assert_eq!(summary["metrics"][metric]["n_scored"], 20, "{metric}");
    }

    // The example file has questions and references only: every cell says what is missing.
    let example = repo_root().join("examples/kids-coding-zh-20.json");
    let output = rageval(
        dir.path(),
        &[
            "eval",
            example.to_str().unwrap(),
            "--metrics",
            JUDGED,
            "--judge",
            "heuristic",
            "--out",
            "example",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let lines = checked_cells(&dir.path().join("example"), 20, 12);
    assert!(lines.iter().all(|l| l["status"] == "undefined"));
}

#[test]
fn an_endpoint_with_ten_percent_garbage_still_scores_every_cell() {
    let endpoint = endpoint(MockConfig {
        garbage_rate: 0.1,
        seed: 3,
        embedding_dim: 16,
        ..MockConfig::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let data = repo_root().join("examples/fiqa-30.jsonl");
    let output = endpoint.eval(
        dir.path(),
        &[
            data.to_str().unwrap(),
            "--metrics",
            "context_precision,context_recall,faithfulness,answer_relevancy",
            "--out",
            "run",
            "--no-cache",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let lines = checked_cells(&dir.path().join("run"), 30, 4);
    assert!(
        lines.iter().all(|l| l["status"] == "score"),
        "a cell was lost"
    );
    assert!(endpoint.mock.stats().faults.garbage > 0);
    let manifest = read_json(&dir.path().join("run/manifest.json"));
    let judge = &manifest["settings"]["judge"];
    assert_eq!(judge["kind"], "endpoint");
    assert!(judge["stats"]["attempts"].as_u64().unwrap() > 0, "{judge}");
    assert!(judge["stats"]["rungs"].is_object(), "{judge}");
}

#[test]
fn an_endpoint_that_only_answers_garbage_halts_the_run_early() {
    let endpoint = endpoint(MockConfig {
        garbage_rate: 1.0,
        ..MockConfig::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let data = repo_root().join("examples/fiqa-30.jsonl");
    let output = endpoint.eval(
        dir.path(),
        &[
            data.to_str().unwrap(),
            "--metrics",
            "faithfulness,rouge_l",
            "--out",
            "run",
        ],
    );
    // A judge whose answers are never usable is a judge that cannot serve the run: it is
    // halted after a dozen unusable answers, exit 4, resumable — not after every request.
    assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
    let text = stderr(&output);
    assert!(text.contains("unusable answers in a row"), "{text}");
    assert!(
        text.contains("does not match its schema") || text.contains("not parse"),
        "{text}"
    );
    let requests = endpoint.mock.stats().chat_requests;
    assert!(requests <= 60, "{requests} requests before the halt");
    let manifest = read_json(&dir.path().join("run/manifest.json"));
    assert_ne!(manifest["status"], "complete", "{manifest}");
}
