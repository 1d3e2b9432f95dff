//! Seed S4 on one machine with no network: `rageval index` builds the local index from the
//! kids-coding report text, `rageval collect --generator baseline` answers its questions
//! from that index with the judge's chat model (the "V1.0" baseline RAG), and `rageval eval`
//! scores the collected dataset with every judged metric — each cell a number, a reasoned
//! undefined or a failure with its error.
//!
//! Two judges run the same pipeline: the testkit's mock endpoint answers and judges all 20
//! questions, and the same answers are then judged by the binary's offline defaults (the
//! heuristic judge, MiniLM) — no endpoint at eval time. A small model's answers are not used
//! here: what it writes varies with the CPU (`local_models.rs` tests its plumbing with
//! assertions that hold for any answer).

use std::path::Path;

use serde_json::Value;

use crate::judged::{Endpoint, JUDGED, checked_cells, endpoint};
use crate::{rageval, repo_root, stderr, stdout};

/// Who judges the metrics (the mock answers the baseline's questions either way).
enum S4Judge {
    /// The testkit's OpenAI-compatible mock on 127.0.0.1 (`--judge-base-url`, `--judge-model`).
    MockEndpoint,
    /// No judge flags at eval time: the binary's offline defaults.
    OfflineDefaults,
}

/// The judge flags for `collect` and for `eval`, and the mock serving them when there is
/// one.
fn judge_flags(judge: &S4Judge) -> (Option<Endpoint>, Vec<String>, Vec<String>) {
    match judge {
        S4Judge::MockEndpoint => {
            let mock = endpoint(rageval_testkit::MockConfig::default());
            let flags = mock.flags();
            (Some(mock), flags.clone(), flags)
        }
        S4Judge::OfflineDefaults => {
            let mock = endpoint(rageval_testkit::MockConfig::default());
            let flags = mock.flags();
            (Some(mock), flags, Vec::new())
        }
    }
}

fn run(dir: &Path, args: &[&str], flags: &[String]) -> std::process::Output {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(flags.iter().map(String::as_str));
    rageval(dir, &all)
}

/// `rageval collect QUESTIONS` with the baseline RAG over the local index `index`.
pub fn baseline_collect<'a>(questions: &'a str, index: &'a str) -> Vec<&'a str> {
    vec![
        "collect",
        questions,
        "--retriever",
        "local",
        "--index",
        index,
        "--generator",
        "baseline",
    ]
}

fn says(text: String, needle: &str) {
    assert!(text.contains(needle), "{needle:?} not in: {text}");
}

#[test]
fn s4_index_collect_eval_on_the_mock_endpoint() {
    if crate::skip_without_shared("s4_index_collect_eval_on_the_mock_endpoint") {
        return;
    }
    s4_index_collect_eval(&S4Judge::MockEndpoint, 20);
}

#[test]
fn s4_index_collect_eval_on_the_offline_defaults() {
    if crate::skip_without_shared("s4_index_collect_eval_on_the_offline_defaults") {
        return;
    }
    s4_index_collect_eval(&S4Judge::OfflineDefaults, 20);
}

/// The pipeline over the first `questions` questions of the kids-coding set.
fn s4_index_collect_eval(judge: &S4Judge, questions: usize) {
    let kids = repo_root().join("../shared/validation/ai-learn-kids-coding-zh");
    let dir = tempfile::tempdir().unwrap();
    let (mock, collect_flags, flags) = judge_flags(judge);

    let text = kids.join("report_text_reconstructed.txt");
    let index = run(
        dir.path(),
        &["index", text.to_str().unwrap(), "--out", "kids.index"],
        &[],
    );
    assert!(index.status.success(), "{}", stderr(&index));

    let file = kids.join("qa_test_20.json");
    let count = questions.to_string();
    let mut collect_args = baseline_collect(file.to_str().unwrap(), "kids.index");
    collect_args.extend(["--out", "data.jsonl", "--samples", &count]);
    let collected = run(dir.path(), &collect_args, &collect_flags);
    assert!(collected.status.success(), "{}", stderr(&collected));
    says(
        stdout(&collected),
        &format!("{questions} questions, 0 already there, {questions} written, 0 failed"),
    );
    says(
        stderr(&collected),
        "answers by baseline rag (answer_from_contexts by ",
    );
    if let Some(mock) = &mock {
        assert_eq!(
            mock.mock.stats().chat_requests,
            questions as u64,
            "one answer per question"
        );
    }
    let data = std::fs::read_to_string(dir.path().join("data.jsonl")).unwrap();
    let records: Vec<Value> = data
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), questions);
    for record in &records {
        assert!(!record["answer"].as_str().unwrap().trim().is_empty());
        assert!(!record["reference"].as_array().unwrap().is_empty());
        // The local retriever's default k is 5; a chat model whose window cannot hold them
        // all answers from the best ones, and the record says how many it left out.
        let contexts = record["contexts"].as_array().unwrap();
        let left_out = record["collected"]["generation"]["contexts_left_out"]["count"]
            .as_u64()
            .unwrap_or(0) as usize;
        assert!(!contexts.is_empty(), "{record}");
        assert_eq!(contexts.len() + left_out, 5, "{record}");
        for context in contexts {
            assert!(context["id"].as_str().unwrap().contains("report_text"));
            assert!(context["score"].as_f64().unwrap() > 0.0);
        }
        assert!(
            record["collected"]["generation"]["template"]
                .as_str()
                .unwrap()
                .starts_with("answer_from_contexts.zh@"),
            "{record}"
        );
    }

    let metrics = format!("{JUDGED},rouge_l,chrf");
    let eval = run(
        dir.path(),
        &["eval", "data.jsonl", "--metrics", &metrics, "--out", "run"],
        &flags,
    );
    assert!(eval.status.success(), "{}", stderr(&eval));
    let cells = checked_cells(
        &dir.path().join("run"),
        questions,
        metrics.split(',').count(),
    );
    for metric in ["rouge_l", "chrf", "faithfulness", "context_recall"] {
        let scored = cells
            .iter()
            .filter(|c| c["metric"] == metric && c["status"] == "score")
            .count();
        assert_eq!(scored, questions, "{metric}");
    }
}

/// Regression: `collect --generator baseline` took a judge cap for bad input and exited 2;
/// every other judged command stops resumably with 3.
#[test]
fn a_judge_cap_stops_the_baseline_resumably() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("doc.txt"),
        "Scratch is a block language for children.\n\nPython is taught from age ten.\n\n\
         Robotics kits cost about 500 yuan.\n",
    )
    .unwrap();
    let questions: String = (0..4)
        .map(|i| {
            format!(
                "{}\n",
                serde_json::json!({"id": format!("q{i}"), "question": format!("What is taught at step {i}?"),
                    "reference": "Python."})
            )
        })
        .collect();
    std::fs::write(dir.path().join("questions.jsonl"), questions).unwrap();
    let index = rageval(dir.path(), &["index", "doc.txt", "--out", "doc.index"]);
    assert!(index.status.success(), "{}", stderr(&index));
    let mock = endpoint(rageval_testkit::MockConfig::default());
    let flags = mock.flags();
    let mut args = baseline_collect("questions.jsonl", "doc.index");
    args.extend([
        "--out",
        "data.jsonl",
        "--concurrency",
        "1",
        "--max-calls",
        "2",
    ]);
    let capped = run(dir.path(), &args, &flags);
    assert_eq!(capped.status.code(), Some(3), "{}", stderr(&capped));
    says(
        stderr(&capped),
        "stopped: budget exhausted: max calls 2 reached",
    );
    let kept = std::fs::read_to_string(dir.path().join("data.jsonl")).unwrap();
    assert_eq!(kept.lines().count(), 2, "{kept}");
    // The same command without the cap asks the rest; its progress counts the baseline's
    // model calls (it said "0 model calls" while the judge answered).
    let mut args: Vec<&str> = args[..args.len() - 2].to_vec();
    args.push("--progress");
    let rest = run(dir.path(), &args, &flags);
    assert!(rest.status.success(), "{}", stderr(&rest));
    says(
        stdout(&rest),
        "4 questions, 2 already there, 2 written, 0 failed",
    );
    says(stderr(&rest), "collecting 2/2, 0 failed, 2 model calls");
}
