//! Run directories written by released versions still resume: each fixture under
//! `tests/fixtures/` is a run an earlier binary stopped part way (its README says which
//! version and how), copied into a temporary directory and continued by the binary under
//! test.

use std::fs;
use std::path::Path;

use rageval_testkit::MockConfig;
use serde_json::Value;

use crate::judged::{Endpoint, checked_cells, endpoint};
use crate::stderr;

/// `eval` over four samples with `--top-k 5`, stopped by its cap after four of its eight
/// cells by rageval 0.1.0, whose identity spelled the cut-off `"Some(5)"`.
const EVAL_TOP_K: &str = "tests/fixtures/eval-top-k-0.1.0";

/// Copies the fixture's dataset and run directory into `dir`.
fn copy_fixture(fixture: &str, dir: &Path) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join(fixture);
    fs::copy(from.join("data.jsonl"), dir.join("data.jsonl")).unwrap();
    fs::create_dir(dir.join("run")).unwrap();
    for entry in fs::read_dir(from.join("run")).unwrap() {
        let entry = entry.unwrap();
        fs::copy(entry.path(), dir.join("run").join(entry.file_name())).unwrap();
    }
}

/// The fixture's command, at `mock`, with `top_k` as its `--top-k` (none: no flag).
fn eval_top_k(dir: &Path, mock: &Endpoint, top_k: Option<&str>) -> std::process::Output {
    let mut args = vec![
        "data.jsonl",
        "--out",
        "run",
        "--metrics",
        "faithfulness,context_precision",
        "--no-cache",
        "--concurrency",
        "1",
    ];
    if let Some(k) = top_k {
        args.extend(["--top-k", k]);
    }
    mock.eval(dir, &args)
}

fn journal(run: &Path) -> Vec<Value> {
    fs::read_to_string(run.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn an_eval_run_stopped_by_rageval_0_1_0_with_top_k_resumes() {
    let dir = tempfile::tempdir().unwrap();
    copy_fixture(EVAL_TOP_K, dir.path());
    let run = dir.path().join("run");
    let before = journal(&run);
    assert_eq!(before.len(), 4, "the fixture holds four of its eight cells");

    let mock = endpoint(MockConfig::default());
    let output = eval_top_k(dir.path(), &mock, Some("5"));
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("4 finished cells kept"),
        "{}",
        stderr(&output)
    );
    let after = checked_cells(&run, 4, 2);
    assert_eq!(
        after[..4],
        before[..],
        "the released session's cells are kept"
    );
    for cell in &after[4..] {
        assert_eq!(cell["evidence"]["details"]["top_k"], 5, "{cell}");
    }
    // The manifest now keeps the identity as this version writes it: the number.
    let manifest: Value =
        serde_json::from_str(&fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["settings"]["identity"]["settings"]["top_k"], "5");
    assert_eq!(manifest["settings"]["top_k"], 5);
}

#[test]
fn the_released_run_with_another_top_k_is_refused_saying_so() {
    let dir = tempfile::tempdir().unwrap();
    copy_fixture(EVAL_TOP_K, dir.path());
    let mock = endpoint(MockConfig::default());
    for (other, now) in [(Some("3"), "3"), (None, "all")] {
        let output = eval_top_k(dir.path(), &mock, other);
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        let why = format!("cannot resume the run in run: its top_k was 5, now {now}\n");
        assert!(stderr(&output).contains(&why), "{}", stderr(&output));
    }
    assert_eq!(
        journal(&dir.path().join("run")).len(),
        4,
        "nothing was scored"
    );
}
