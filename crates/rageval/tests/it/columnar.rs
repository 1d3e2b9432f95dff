//! Columnar datasets end to end: a Parquet file as another tool writes it scores exactly as
//! the same rows in JSON Lines do.

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::{rageval, repo_root, stderr};

/// The journal's lines, sorted by sample and metric (cells finish in any order).
fn results(run: &Path) -> Vec<Value> {
    let text = fs::read_to_string(run.join("results.jsonl")).unwrap();
    let mut lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    lines.sort_by_key(|line| (line["sample_id"].to_string(), line["metric"].to_string()));
    lines
}

/// The fixture is written by pyarrow with `compression="zstd"`, polars' default codec
/// (`tests/fixtures/parquet/make_zstd.py` says how): its rows are the first ten of the FiQA
/// example, and every cell and every mean equals the JSONL run's.
#[test]
fn a_zstd_parquet_file_written_by_pyarrow_scores_as_its_jsonl() {
    let dir = tempfile::tempdir().unwrap();
    let parquet = repo_root().join("crates/rageval/tests/fixtures/parquet/fiqa-10.zstd.parquet");
    let jsonl = dir.path().join("fiqa-10.jsonl");
    let rows: Vec<String> = fs::read_to_string(repo_root().join("examples/fiqa-30.jsonl"))
        .unwrap()
        .lines()
        .take(10)
        .map(|line| format!("{line}\n"))
        .collect();
    fs::write(&jsonl, rows.concat()).unwrap();
    let metrics = "bleu,rouge_l,exact_match,levenshtein,chrf";
    for (data, out) in [(&parquet, "parquet"), (&jsonl, "jsonl")] {
        let output = rageval(
            dir.path(),
            &[
                "eval",
                data.to_str().unwrap(),
                "--metrics",
                metrics,
                "--out",
                out,
            ],
        );
        assert!(output.status.success(), "{out}: {}", stderr(&output));
    }
    let (from_parquet, from_jsonl) = (
        results(&dir.path().join("parquet")),
        results(&dir.path().join("jsonl")),
    );
    assert_eq!(from_parquet.len(), 10 * 5);
    assert_eq!(from_parquet, from_jsonl);
    let summary = |run: &str| -> Value {
        serde_json::from_slice(&fs::read(dir.path().join(run).join("summary.json")).unwrap())
            .unwrap()
    };
    assert_eq!(summary("parquet")["metrics"], summary("jsonl")["metrics"]);
}
