//! Parquet and Arrow IPC datasets: the same rows written as JSONL and as columnar files
//! (built here with arrow-rs's writers) must read into the same samples, batch boundaries
//! must not lose or repeat rows, and errors must name the row and column.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{
    Float64Builder, ListBuilder, StringBuilder, StringDictionaryBuilder, StructBuilder,
};
use arrow_array::types::Int32Type;
use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Fields, Schema};
use rageval_core::dataset::{FieldMap, Format, ReadOptions, open, read_all};

/// Rows in ragas ≥ 0.2 columns: `user_input`, `retrieved_contexts` (list<string>),
/// `response`, `reference`, and an extra `topic` column (dictionary-encoded) for metadata.
fn ragas_batch(rows: usize) -> RecordBatch {
    let mut contexts = ListBuilder::new(StringBuilder::new());
    let mut topic = StringDictionaryBuilder::<Int32Type>::new();
    for row in 0..rows {
        contexts.values().append_value(format!("context {row} a"));
        contexts.values().append_value(format!("context {row} b"));
        contexts.append(true);
        topic.append_value(if row % 2 == 0 { "even" } else { "odd" });
    }
    let columns: Vec<(&str, ArrayRef)> = vec![
        (
            "user_input",
            Arc::new(StringArray::from_iter_values(
                (0..rows).map(|row| format!("question {row}?")),
            )),
        ),
        ("retrieved_contexts", Arc::new(contexts.finish())),
        (
            "response",
            Arc::new(StringArray::from_iter(
                (0..rows).map(|row| (row % 3 != 0).then(|| format!("answer {row}"))),
            )),
        ),
        (
            "reference",
            Arc::new(StringArray::from_iter_values(
                (0..rows).map(|row| format!("reference {row}")),
            )),
        ),
        ("topic", Arc::new(topic.finish())),
    ];
    RecordBatch::try_from_iter(columns).expect("writing a test file")
}

/// The same rows as JSON Lines.
fn ragas_jsonl(rows: usize) -> String {
    (0..rows)
        .map(|row| {
            let mut object = serde_json::json!({
                "user_input": format!("question {row}?"),
                "retrieved_contexts": [format!("context {row} a"), format!("context {row} b")],
                "reference": format!("reference {row}"),
                "topic": if row % 2 == 0 { "even" } else { "odd" },
            });
            if row % 3 != 0 {
                object["response"] = serde_json::json!(format!("answer {row}"));
            }
            object.to_string() + "\n"
        })
        .collect()
}

fn write_parquet(path: &Path, batches: &[RecordBatch]) {
    let file = File::create(path).expect("writing a test file");
    let mut writer = parquet::arrow::ArrowWriter::try_new(file, batches[0].schema(), None)
        .expect("writing a test file");
    for batch in batches {
        writer.write(batch).expect("writing a test file");
    }
    writer.close().expect("writing a test file");
}

fn write_ipc_file(path: &Path, batch: &RecordBatch) {
    let file = File::create(path).expect("writing a test file");
    let mut writer =
        arrow_ipc::writer::FileWriter::try_new(file, &batch.schema()).expect("writing a test file");
    writer.write(batch).expect("writing a test file");
    writer.finish().expect("writing a test file");
}

fn write_ipc_stream(path: &Path, batch: &RecordBatch) {
    let file = File::create(path).expect("writing a test file");
    let mut writer = arrow_ipc::writer::StreamWriter::try_new(file, &batch.schema())
        .expect("writing a test file");
    writer.write(batch).expect("writing a test file");
    writer.finish().expect("writing a test file");
}

#[test]
fn parquet_and_arrow_read_like_the_same_jsonl() {
    let dir = tempfile::tempdir().unwrap();
    let rows = 7;
    let jsonl = dir.path().join("data.jsonl");
    std::fs::write(&jsonl, ragas_jsonl(rows)).unwrap();
    let expected = read_all(&jsonl, &ReadOptions::default()).unwrap();
    assert_eq!(expected.len(), rows);

    let batch = ragas_batch(rows);
    let parquet = dir.path().join("data.parquet");
    write_parquet(&parquet, std::slice::from_ref(&batch));
    let ipc_file = dir.path().join("data.arrow");
    write_ipc_file(&ipc_file, &batch);
    // A Hugging Face `datasets` cache file is the stream layout under a `.arrow` name.
    let ipc_stream = dir.path().join("cache-0001.arrow");
    write_ipc_stream(&ipc_stream, &batch);
    for path in [&parquet, &ipc_file, &ipc_stream] {
        let samples = read_all(path, &ReadOptions::default()).unwrap();
        assert_eq!(samples, expected, "{}", path.display());
    }
}

#[test]
fn rows_cross_batch_and_row_group_boundaries_once_each() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("many.parquet");
    // Two row groups of 1,500 rows: the reader's 1,024-row batches straddle both.
    let first = ragas_batch(1500);
    let second = ragas_batch(3000).slice(1500, 1500);
    write_parquet(&path, &[first, second]);
    let samples = read_all(&path, &ReadOptions::default()).unwrap();
    assert_eq!(samples.len(), 3000);
    for (row, sample) in samples.iter().enumerate() {
        assert_eq!(sample.id, (row + 1).to_string());
        assert_eq!(sample.question, format!("question {row}?"));
    }
}

#[test]
fn map_and_struct_contexts_apply_to_columnar_files() {
    let dir = tempfile::tempdir().unwrap();
    let fields = Fields::from(vec![
        Field::new("text", DataType::Utf8, true),
        Field::new("id", DataType::Utf8, true),
        Field::new("score", DataType::Float64, true),
    ]);
    // Each row holds a list of one {text, id, score} struct.
    let mut list = ListBuilder::new(StructBuilder::from_fields(fields, 2));
    for (text, id, score) in [("first text", "d1", 0.9), ("second text", "d2", 0.4)] {
        let context = list.values();
        context
            .field_builder::<StringBuilder>(0)
            .unwrap()
            .append_value(text);
        context
            .field_builder::<StringBuilder>(1)
            .unwrap()
            .append_value(id);
        context
            .field_builder::<Float64Builder>(2)
            .unwrap()
            .append_value(score);
        context.append(true);
        list.append(true);
    }
    let list = list.finish();
    let batch = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("prompt", DataType::Utf8, false),
            Field::new("docs", list.data_type().clone(), true),
            Field::new("qid", DataType::Int64, false),
        ])),
        vec![
            Arc::new(StringArray::from(vec!["q one", "q two"])),
            Arc::new(list),
            Arc::new(Int64Array::from(vec![11, 12])),
        ],
    )
    .unwrap();
    let path = dir.path().join("mapped.data");
    write_parquet(&path, &[batch]);
    let options = ReadOptions {
        format: Some(Format::Parquet),
        field_map: FieldMap::parse(&[
            "question=prompt".to_string(),
            "contexts=docs".to_string(),
            "id=qid".to_string(),
        ])
        .unwrap(),
        ..ReadOptions::default()
    };
    let samples = read_all(&path, &options).unwrap();
    assert_eq!(samples[1].id, "12");
    assert_eq!(samples[1].question, "q two");
    assert_eq!(samples[1].contexts[0].text, "second text");
    assert_eq!(samples[1].contexts[0].id.as_deref(), Some("d2"));
    assert_eq!(samples[1].contexts[0].score, Some(0.4));
}

#[test]
fn a_row_without_a_question_is_named_by_its_row() {
    let dir = tempfile::tempdir().unwrap();
    let batch = RecordBatch::try_from_iter(vec![(
        "question",
        Arc::new(StringArray::from(vec![Some("a?"), Some("b?"), None])) as ArrayRef,
    )])
    .unwrap();
    let path = dir.path().join("missing.parquet");
    write_parquet(&path, &[batch]);
    let results: Vec<_> = open(&path, &ReadOptions::default()).unwrap().collect();
    assert!(results[0].is_ok() && results[1].is_ok());
    let error = results[2].as_ref().unwrap_err();
    assert_eq!(error.line, Some(3));
    assert_eq!(error.field.as_deref(), Some("question"));
}

#[test]
fn a_file_that_is_not_parquet_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.parquet");
    std::fs::write(&path, "question,answer\n").unwrap();
    let error = open(&path, &ReadOptions::default()).unwrap_err();
    assert!(
        error.to_string().contains("cannot read the parquet file"),
        "{error}"
    );
}

#[test]
fn a_codec_left_out_of_the_build_gets_a_hint() {
    let kind = rageval_core::dataset::DatasetErrorKind::InvalidColumnar {
        format: "parquet",
        message: "Parquet error: Disabled feature at compile time: brotli".into(),
    };
    let text = kind.to_string();
    assert!(
        text.contains("brotli; hint: rewrite the file with snappy, gzip, lz4 or zstd"),
        "{text}"
    );
}

/// Phoenix's spans dataframe saved as Parquet (flat OpenTelemetry attribute keys, nulls
/// where a span lacks one) reads as `--format openinference` does from JSONL: one sample
/// per trace, the retriever's documents as contexts.
#[test]
fn openinference_spans_read_from_parquet() {
    let text =
        |values: [Option<&str>; 3]| -> ArrayRef { Arc::new(StringArray::from(values.to_vec())) };
    let columns: Vec<(&str, ArrayRef)> = vec![
        (
            "context.trace_id",
            text([Some("t1"), Some("t1"), Some("t1")]),
        ),
        (
            "context.span_id",
            text([Some("s1"), Some("s2"), Some("s3")]),
        ),
        ("parent_id", text([None, Some("s1"), Some("s1")])),
        (
            "span_kind",
            text([Some("CHAIN"), Some("RETRIEVER"), Some("LLM")]),
        ),
        ("name", text([Some("query"), Some("retrieve"), Some("llm")])),
        (
            "start_time",
            text([
                Some("2025-06-02T09:15:00+00:00"),
                Some("2025-06-02T09:15:00.5+00:00"),
                Some("2025-06-02T09:15:01+00:00"),
            ]),
        ),
        (
            "end_time",
            text([
                Some("2025-06-02T09:15:03+00:00"),
                Some("2025-06-02T09:15:00.9+00:00"),
                Some("2025-06-02T09:15:02+00:00"),
            ]),
        ),
        (
            "attributes.input.value",
            text([Some("Which river flows through Lyon?"), None, None]),
        ),
        (
            "attributes.output.value",
            text([None, None, Some("The Rhône and the Saône.")]),
        ),
        (
            "attributes.retrieval.documents.0.document.id",
            text([None, Some("geo-17"), None]),
        ),
        (
            "attributes.retrieval.documents.0.document.content",
            text([
                None,
                Some("Lyon lies where the Rhône meets the Saône."),
                None,
            ]),
        ),
    ];
    let batch = RecordBatch::try_from_iter(columns).expect("writing a test file");
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("spans.parquet");
    write_parquet(&path, std::slice::from_ref(&batch));
    let options = ReadOptions {
        format: Some(Format::OpenInference),
        ..ReadOptions::default()
    };
    let samples = read_all(&path, &options).expect("the spans read");
    assert_eq!(samples.len(), 1);
    assert_eq!(samples[0].question, "Which river flows through Lyon?");
    assert_eq!(samples[0].contexts.len(), 1);
    assert_eq!(samples[0].contexts[0].id.as_deref(), Some("geo-17"));
    assert_eq!(
        samples[0].contexts[0].text,
        "Lyon lies where the Rhône meets the Saône."
    );
    assert_eq!(
        samples[0].answer.as_deref(),
        Some("The Rhône and the Saône.")
    );
}
