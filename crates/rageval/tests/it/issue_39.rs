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

/// Item 10: `--max-calls` and `--max-cost` help on `rank`, `reference` and `testset` said
/// "`eval` then keeps its finished cells"; each command's help now says what each keeps.
#[test]
fn regression_issue_39_cap_help_says_what_each_command_keeps() {
    let dir = tempfile::tempdir().unwrap();
    for command in ["rank", "reference", "testset", "collect", "eval"] {
        let output = rageval(dir.path(), &[command, "--help"]);
        assert!(output.status.success(), "{command}: {}", stderr(&output));
        let help = crate::stdout(&output);
        assert!(!help.contains("`eval` then keeps"), "{command}: {help}");
        assert!(
            help.contains("rank, reference: questions; testset: items; collect: records"),
            "{command}: {help}"
        );
    }
}
