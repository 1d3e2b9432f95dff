//! Issue 39, the workflows' last 5%: what a user reads at the end of a command, pinned
//! with the filters of [`crate::snapshots`]. Each test is named after its item.

use crate::snapshots::{transcript, with_filters};
use crate::{rageval, repo_root, stderr};

fn fiqa() -> String {
    repo_root()
        .join("examples/fiqa-30.jsonl")
        .display()
        .to_string()
}

/// Item 12: `eval --no-reports` ended with a dangling `wrote ` line, and a run of
/// model-free metrics printed `judge: 0 model calls, $0.000000` about a judge it never needed.
#[test]
fn regression_issue_39_no_reports_and_model_free_metrics_end_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let output = rageval(
        dir.path(),
        &[
            "eval",
            &fiqa(),
            "--metrics",
            "bleu,rouge_l",
            "--samples",
            "5",
            "--no-reports",
            "--out",
            "run",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    with_filters(dir.path(), || {
        insta::assert_snapshot!("issue_39_no_reports_model_free", transcript(&output));
    });
}
