//! Seed S4's version table end to end: two versions of the baseline RAG over the same 20
//! questions (`examples/kids-coding-zh-20.json`) — V1.0 retrieves the top 3 chunks of the
//! kids-coding report, V1.1 the top 5 — each collected (`collect --generator baseline`
//! over the local index) and scored with S4's five metrics (`eval`), the testkit's mock
//! endpoint answering and judging; then `compare V1.0 V1.1`. The two collected datasets
//! differ (contexts, answers, hashes): the comparison pairs the questions, says how the
//! datasets differ, and writes the version table as a sheet and as the report.
//!
//! Every number checked here is one the runs' own files hold (summary means, paired
//! deltas); none depends on what a model writes.

use std::fs;
use std::path::PathBuf;

use rageval_report::testing::calamine::{Data, Reader, Xlsx, open_workbook};
use serde_json::Value;

use crate::judged::endpoint;
use crate::s4_pipeline::baseline_collect;
use crate::{rageval, repo_root, stderr, stdout};

/// Seed S4's five metrics, then two model-free ones whose scores move with the answers
/// (the mock's answers are drawn from each prompt, so the two versions' answers differ).
const S4_METRICS: &str = "context_recall,context_relevance,faithfulness,answer_relevance,\
                          answer_correctness,rouge_l,chrf";

/// The kids-coding report's text that the index is built from, where this checkout has it.
fn report_text() -> Option<PathBuf> {
    let path = repo_root()
        .join("../shared/validation/ai-learn-kids-coding-zh/report_text_reconstructed.txt");
    path.is_file().then_some(path)
}

fn json(path: &std::path::Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

#[test]
fn s4_version_table_from_top_3_and_top_5_retrieval() {
    let Some(text) = report_text() else {
        eprintln!(
            "skipped: the kids-coding report text (../shared/validation/ai-learn-kids-coding-zh/) \
             is not beside this checkout"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mock = endpoint(rageval_testkit::MockConfig::default());
    let flags = mock.flags();
    // `judged` adds the mock's flags (collect and eval call the model; compare does not).
    let run = |args: &[&str], judged: bool| {
        let mut all: Vec<&str> = args.to_vec();
        if judged {
            all.extend(flags.iter().map(String::as_str));
        }
        let output = rageval(dir.path(), &all);
        assert!(output.status.success(), "{args:?}: {}", stderr(&output));
        output
    };
    let index = rageval(
        dir.path(),
        &["index", text.to_str().unwrap(), "--out", "kids.index"],
    );
    assert!(index.status.success(), "{}", stderr(&index));

    let questions = repo_root().join("examples/kids-coding-zh-20.json");
    for (version, k) in [("V1.0", "3"), ("V1.1", "5")] {
        let data = format!("{version}.jsonl");
        let mut collect = baseline_collect(questions.to_str().unwrap(), "kids.index");
        collect.extend(["-k", k, "--out", &data]);
        run(&collect, true);
        let out = format!("runs/{version}");
        run(
            &["eval", &data, "--metrics", S4_METRICS, "--out", &out],
            true,
        );
    }

    let output = run(
        &[
            "compare",
            "runs/V1.0",
            "runs/V1.1",
            "--xlsx",
            "versions.xlsx",
            "--json",
            "compare.json",
            "--html",
            "compare.html",
        ],
        false,
    );
    let report = stdout(&output);
    // Two collected datasets: never refused, the questions paired one to one.
    assert!(
        report.contains("V1.0 and V1.1: 20 of 20 questions paired (20 by id), overlap 1.00."),
        "{report}"
    );
    assert!(
        report.contains("20 different contexts, 0 different references."),
        "{report}"
    );
    let comparison = json(&dir.path().join("compare.json"));
    let pairing = &comparison["pairs"][0]["pairing"];
    assert_eq!(pairing["questions_known"], true);
    assert_eq!(pairing["same_dataset"], false);
    assert_eq!(pairing["differences"]["compared"], 20);
    assert_eq!(pairing["differences"]["contexts"], 20);

    // The version table's means are each run's, its Δ the paired difference, and a
    // direction word appears only where the interval excludes zero and p < 0.05.
    let summaries =
        ["V1.0", "V1.1"].map(|v| json(&dir.path().join("runs").join(v).join("summary.json")));
    let metrics: Vec<&str> = S4_METRICS.split(',').collect();
    let deltas = comparison["pairs"][0]["deltas"].as_array().unwrap();
    let mut workbook: Xlsx<_> = open_workbook(dir.path().join("versions.xlsx")).unwrap();
    let sheet = workbook.worksheet_range("versions").unwrap();
    let cell = |r: u32, c: u32| sheet.get_value((r, c)).cloned().unwrap_or(Data::Empty);
    assert_eq!(cell(1, 0), Data::String("V1.0".into()));
    assert_eq!(cell(2, 0), Data::String("V1.1".into()));
    for (index, metric) in metrics.iter().enumerate() {
        let column = 2 + 6 * index as u32;
        assert_eq!(cell(0, column), Data::String((*metric).into()));
        for (row, summary) in (1u32..).zip(&summaries) {
            let mean = &summary["metrics"][metric]["mean"];
            match cell(row, column) {
                Data::Float(value) => assert_eq!(Some(value), mean.as_f64(), "{metric}"),
                Data::Empty => assert!(mean.is_null(), "{metric}"),
                other => panic!("{metric}: {other:?}"),
            }
        }
        let delta = deltas.iter().find(|d| d["metric"] == *metric).unwrap();
        let counted = delta["n_paired"].as_u64().unwrap() + delta["n_unpaired"].as_u64().unwrap();
        assert!(counted <= 20, "{metric}: {delta}");
        let reading = delta["reading"].as_str().unwrap();
        if let Some(value) = delta["delta"].as_f64() {
            assert_eq!(cell(2, column + 1), Data::Float(value), "{metric}");
            let [low, high] = [0, 1].map(|i| delta["ci95"][i].as_f64().unwrap());
            let p = delta["p_value"].as_f64().unwrap();
            let clear = (low > 0.0 || high < 0.0) && p < 0.05;
            let expected = match (clear, value > 0.0) {
                (true, true) => "higher",
                (true, false) => "lower",
                (false, _) => "no_clear_difference",
            };
            assert_eq!(
                reading, expected,
                "{metric}: Δ {value} [{low}, {high}] p {p}"
            );
            assert_eq!(
                cell(2, column + 5),
                Data::String(reading.replace('_', " ")),
                "{metric}"
            );
        }
    }
    // The answers differ, so the lexical scores move: the Δ path is exercised.
    let moved = deltas
        .iter()
        .filter(|d| d["delta"].as_f64().is_some_and(|v| v != 0.0))
        .count();
    assert!(moved > 0, "{report}");
    let html = fs::read_to_string(dir.path().join("compare.html")).unwrap();
    assert!(html.contains("<h2>Versions</h2>"));

    // Each run's workbook lists the questions in its dataset's order, with their texts.
    let collected = fs::read_to_string(dir.path().join("V1.1.jsonl")).unwrap();
    let first: Value = serde_json::from_str(collected.lines().next().unwrap()).unwrap();
    let first_question = first["question"].as_str().unwrap().to_string();
    let mut run_book: Xlsx<_> = open_workbook(dir.path().join("runs/V1.1/results.xlsx")).unwrap();
    let samples = run_book.worksheet_range("samples").unwrap();
    assert_eq!(
        samples.get_value((1, 1)),
        Some(&Data::String(first_question))
    );
    let contexts = samples.get_value((1, 5)).unwrap().to_string();
    assert!(contexts.starts_with("[0] (id "), "{contexts}");
}
