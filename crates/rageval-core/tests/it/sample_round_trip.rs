//! A serialised [`Sample`] is a dataset record: written as JSONL and read back by the
//! dataset reader, it is equal to what was written, field by field. Regression: `references`
//! used to be written under its Rust name, which no reader knows, so `collect` → `eval` lost
//! the reference answers.

#![allow(clippy::unwrap_used)]

use rageval_core::dataset::{ReadOptions, read_all};
use rageval_core::{Context, Hop, Role, Sample, ToolCall, ToolCallOrder, Turn};
use serde_json::json;

/// Every field `Sample` writes, each set to a value that differs from its default.
fn full() -> Sample {
    let mut metadata = serde_json::Map::new();
    metadata.insert("source".into(), json!("kids-coding"));
    metadata.insert(
        "labels".into(),
        json!({"difficulty": 2, "tags": ["market"]}),
    );
    Sample {
        id: "q-7".into(),
        question: "2024年少儿编程市场规模是多少？".into(),
        contexts: vec![
            Context {
                id: Some("doc.txt#3".into()),
                text: "市场规模约为488亿元。".into(),
                score: Some(12.375),
                hop: None,
            },
            Context {
                id: Some("doc.txt#9".into()),
                text: "渗透率仍然较低。".into(),
                score: Some(0.1 + 0.2),
                hop: None,
            },
        ],
        answer: Some("约488亿元。".into()),
        references: vec!["约488亿元".into(), "488亿元人民币".into()],
        reference_contexts: vec!["市场规模约为488亿元。".into()],
        reference_context_ids: vec!["doc.txt#3".into()],
        reference_statements: Some(vec!["市场规模约488亿元。".into()]),
        answer_statements: Some(vec!["约488亿元。".into()]),
        simulated_questions: Some(vec!["市场有多大？".into()]),
        history: vec![
            Turn::new(1, Role::User, "少儿编程是什么？"),
            Turn {
                contexts: vec![Context {
                    hop: Some(2),
                    ..Context::text("少儿编程面向6到16岁。")
                }],
                ..Turn::new(1, Role::Assistant, "面向6到16岁的编程教育。")
            },
        ],
        conversation_id: Some("会话-1".into()),
        turn: Some(2),
        hop: Some(Hop {
            index: 2,
            used_by_answer: Some(true),
        }),
        tool_calls: vec![ToolCall::new(
            "search",
            json!({"query": "市场规模", "k": 3})
                .as_object()
                .cloned()
                .unwrap(),
        )],
        reference_tool_calls: vec![ToolCall::new("search", serde_json::Map::new())],
        tool_call_order: ToolCallOrder::AnyOrder,
        metadata,
    }
}

fn round_trip(samples: &[Sample]) -> Vec<Sample> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.jsonl");
    let lines: Vec<String> = samples
        .iter()
        .map(|s| serde_json::to_string(s).unwrap())
        .collect();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    read_all(&path, &ReadOptions::default()).unwrap()
}

#[test]
fn every_field_survives_write_then_read() {
    let written = full();
    let read = round_trip(std::slice::from_ref(&written));
    assert_eq!(read.len(), 1);
    let read = &read[0];
    // Field by field first, so a failure names the field that was lost.
    assert_eq!(read.id, written.id);
    assert_eq!(read.question, written.question);
    assert_eq!(read.contexts, written.contexts);
    assert_eq!(read.answer, written.answer);
    assert_eq!(read.references, written.references);
    assert_eq!(read.reference_contexts, written.reference_contexts);
    assert_eq!(read.reference_context_ids, written.reference_context_ids);
    assert_eq!(read.reference_statements, written.reference_statements);
    assert_eq!(read.answer_statements, written.answer_statements);
    assert_eq!(read.simulated_questions, written.simulated_questions);
    assert_eq!(read.history, written.history);
    assert_eq!(read.conversation_id, written.conversation_id);
    assert_eq!(read.turn, written.turn);
    assert_eq!(read.hop, written.hop);
    assert_eq!(read.tool_calls, written.tool_calls);
    assert_eq!(read.reference_tool_calls, written.reference_tool_calls);
    assert_eq!(read.tool_call_order, written.tool_call_order);
    assert_eq!(read.metadata, written.metadata);
    assert_eq!(*read, written);
}

#[test]
fn sparse_samples_survive_too() {
    let question_only = Sample {
        id: "1".into(),
        question: "what is rust?".into(),
        ..Sample::default()
    };
    let one_reference = Sample {
        id: "2".into(),
        question: "who?".into(),
        contexts: vec![Context::text("plain text, no id or score")],
        references: vec!["nobody".into()],
        ..Sample::default()
    };
    let written = vec![question_only, one_reference];
    assert_eq!(round_trip(&written), written);
}
