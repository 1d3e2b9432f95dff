//! A finished run over three traced samples (ids in the dataset's metadata) and one sample
//! of plain data, for the writers to read.

use std::path::Path;

use rageval_core::{Evidence, Outcome, Verdict, VerdictTarget};
use rageval_report::sha256_bytes;

/// The dataset: three samples read from traces, one without trace ids.
pub const DATASET: &str = concat!(
    r#"{"id": "t1", "question": "Q1?", "trace_id": "7f3a0c11e2b94d0a8c5e6b2f1d4a9e01", "span_id": "a1b2c3d4e5f60001"}"#,
    "\n",
    r#"{"id": "t2", "question": "Q2?", "trace_id": "0b9e44d2c6a14f7e9d3c2a1b8f7e6d05", "span_id": "b000000000000001", "response_id": "chatcmpl-2"}"#,
    "\n",
    r#"{"id": "t3", "question": "Q3?", "trace_id": "c4d5e6f708194a2bb3c4d5e6f7081920", "span_id": "c000000000000001"}"#,
    "\n",
    r#"{"id": "plain", "question": "Q4?"}"#,
    "\n",
);

fn supported(reason: &str) -> Verdict {
    Verdict {
        target: VerdictTarget::Statement(0),
        value: 1.0,
        label: Some("supported".into()),
        text: None,
        reason: Some(reason.into()),
        supporting_contexts: vec![0],
    }
}

/// Writes the run into `dir`: two metrics over the four samples, one cell undefined and
/// one failed.
pub fn write_run(dir: &Path) {
    let scored = |value: f64, reason: &str| {
        Outcome::score(
            value,
            Evidence {
                verdicts: vec![supported(reason)],
                details: Default::default(),
            },
        )
    };
    let results = vec![
        ("t1", "faithfulness", scored(1.0, "the context says so")),
        ("t1", "context_relevance", Outcome::bare(0.5)),
        ("t2", "faithfulness", scored(0.75, "mostly supported")),
        ("t2", "context_relevance", Outcome::undefined("no contexts")),
        (
            "t3",
            "faithfulness",
            Outcome::failed("the judge's answer never parsed"),
        ),
        ("t3", "context_relevance", Outcome::bare(0.25)),
        ("plain", "faithfulness", Outcome::bare(1.0)),
        ("plain", "context_relevance", Outcome::bare(1.0)),
    ];
    rageval_report::testing::write_run(dir, &sha256_bytes(DATASET.as_bytes()), &results);
    std::fs::write(dir.join("data.jsonl"), DATASET).unwrap();
}
