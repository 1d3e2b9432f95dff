//! `rageval eval --format openinference|langfuse`: a trace export scored as a dataset, the
//! traces without a retriever span named on stderr.

use crate::judged::checked_cells;
use crate::{rageval, repo_root, stderr};

#[test]
fn trace_exports_are_scored_and_skipped_traces_are_named() {
    let fixtures = repo_root().join("crates/rageval-core/tests/fixtures/datasets/traces");
    for (file, format, skipped) in [
        (
            "phoenix_spans.jsonl",
            "openinference",
            "c4d5e6f708194a2bb3c4d5e6f7081920",
        ),
        ("langfuse_traces.json", "langfuse", "lf-trace-003"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let data = fixtures.join(file);
        let output = rageval(
            dir.path(),
            &[
                "eval",
                data.to_str().unwrap(),
                "--format",
                format,
                "--metrics",
                "context_relevance",
                "--judge",
                "heuristic",
                "--out",
                "run",
            ],
        );
        assert!(output.status.success(), "{}", stderr(&output));
        let err = stderr(&output);
        assert!(
            err.contains(&format!(
                "note: 1 traces skipped, they have no retriever span: {skipped}"
            )),
            "{err}"
        );
        checked_cells(&dir.path().join("run"), 2, 1);
    }
}
