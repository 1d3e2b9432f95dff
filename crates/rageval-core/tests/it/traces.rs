//! Trace exports as datasets: each format's fixture (written by us in the shapes Phoenix
//! and Langfuse document) must read into the expected samples, with the trace that has no
//! retriever step skipped and named.

use std::path::{Path, PathBuf};

use rageval_core::dataset::{self, DatasetErrorKind, Format, ReadOptions};
use rageval_core::{Context, Sample};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/datasets/traces")
        .join(name)
}

fn read(name: &str, format: Format) -> (Vec<Sample>, Vec<String>) {
    let options = ReadOptions {
        format: Some(format),
        ..ReadOptions::default()
    };
    let reader = dataset::open(&fixture(name), &options).expect("the fixture opens");
    let skipped = reader.skipped_traces().to_vec();
    let samples = reader
        .collect::<Result<Vec<_>, _>>()
        .expect("every trace reads");
    (samples, skipped)
}

fn context(id: &str, score: f64, text: &str) -> Context {
    Context {
        id: Some(id.into()),
        text: text.into(),
        score: Some(score),
        hop: None,
    }
}

#[test]
fn openinference_spans_become_one_sample_per_trace() {
    let (samples, skipped) = read("phoenix_spans.jsonl", Format::OpenInference);
    assert_eq!(skipped, ["c4d5e6f708194a2bb3c4d5e6f7081920"]);
    assert_eq!(samples.len(), 2);

    let lyon = &samples[0];
    assert_eq!(lyon.id, "7f3a0c11e2b94d0a8c5e6b2f1d4a9e01");
    assert_eq!(lyon.question, "Which river flows through Lyon?");
    assert_eq!(
        lyon.contexts,
        [
            context("geo-17", 0.82, "Lyon lies where the Rhône meets the Saône."),
            context("geo-03", 0.41, "Paris is crossed by the Seine."),
        ]
    );
    assert_eq!(
        lyon.answer.as_deref(),
        Some("The Rhône and the Saône meet in Lyon.")
    );
    assert_eq!(lyon.metadata["trace_name"], "query");
    assert_eq!(lyon.metadata["session_id"], "session-42");
    // Where scores are written back: the root span, and the retriever's.
    assert_eq!(lyon.metadata["trace_id"], lyon.id.as_str());
    assert_eq!(lyon.metadata["span_id"], "a1b2c3d4e5f60001");
    assert_eq!(lyon.metadata["retriever_span_id"], "a1b2c3d4e5f60002");

    let mars = &samples[1];
    assert_eq!(mars.id, "0b9e44d2c6a14f7e9d3c2a1b8f7e6d05");
    assert_eq!(mars.question, "How many moons does Mars have?");
    assert_eq!(
        mars.contexts,
        [context(
            "astro-9",
            0.91,
            "Mars has two small moons, Phobos and Deimos."
        )]
    );
    // The last LLM span to end writes the answer, not the question-condensing one.
    assert_eq!(
        mars.answer.as_deref(),
        Some("Mars has two moons: Phobos and Deimos.")
    );
}

#[test]
fn langfuse_traces_become_one_sample_per_trace() {
    let (samples, skipped) = read("langfuse_traces.json", Format::Langfuse);
    assert_eq!(skipped, ["lf-trace-003"]);
    assert_eq!(samples.len(), 2);

    let refund = &samples[0];
    assert_eq!(refund.id, "lf-trace-001");
    assert_eq!(
        refund.question,
        "What is the refund window for annual plans?"
    );
    assert_eq!(
        refund.contexts,
        [
            context(
                "policy-7",
                0.88,
                "Annual plans can be refunded within 30 days of purchase."
            ),
            context("policy-8", 0.52, "Monthly plans are not refundable."),
        ]
    );
    assert_eq!(
        refund.answer.as_deref(),
        Some("You can get a refund within 30 days of buying an annual plan.")
    );
    assert_eq!(refund.metadata["session_id"], "sess-9");

    // Observations as separate records, the trace listing only their ids.
    let help = &samples[1];
    assert_eq!(help.id, "lf-trace-002");
    assert_eq!(help.question, "帮助中心在哪里？");
    assert_eq!(
        help.contexts,
        [context("kb-1", 0.7, "帮助中心位于设置页面右上角。")]
    );
    assert_eq!(help.answer.as_deref(), Some("帮助中心在设置页面的右上角。"));
}

#[test]
fn trace_formats_come_by_name_only() {
    assert_eq!(
        Format::from_name("openinference"),
        Some(Format::OpenInference)
    );
    assert_eq!(Format::from_name("langfuse"), Some(Format::Langfuse));
    assert_eq!(
        Format::from_path(Path::new("spans.jsonl")),
        Some(Format::Jsonl)
    );
}

#[test]
fn a_file_whose_traces_all_lack_a_retriever_is_an_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("spans.jsonl");
    std::fs::write(
        &path,
        r#"{"context": {"trace_id": "t1", "span_id": "s1"}, "span_kind": "LLM", "attributes": {"input.value": "hi"}}"#,
    )
    .expect("write the spans");
    let options = ReadOptions {
        format: Some(Format::OpenInference),
        ..ReadOptions::default()
    };
    let error = dataset::open(&path, &options).unwrap_err();
    assert!(matches!(
        error.kind,
        DatasetErrorKind::NoRetrieverTraces { skipped: 1 }
    ));
}

#[test]
fn a_trace_without_a_question_names_its_line_and_trace() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("spans.jsonl");
    std::fs::write(
        &path,
        "\n{\"context\": {\"trace_id\": \"t9\", \"span_id\": \"s1\"}, \"span_kind\": \"RETRIEVER\"}\n",
    )
    .expect("write the spans");
    let options = ReadOptions {
        format: Some(Format::OpenInference),
        ..ReadOptions::default()
    };
    let error = dataset::read_all(&path, &options).unwrap_err();
    assert_eq!(error.line, Some(2));
    assert_eq!(
        error.to_string(),
        format!(
            "{}:2: field `input.value (trace `t9`)`: missing required field",
            path.display()
        )
    );
}
