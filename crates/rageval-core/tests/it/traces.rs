//! Trace exports as datasets: each format's fixture (written by us in the shapes Phoenix
//! and Langfuse document) must read into the expected samples, with the trace that has no
//! retriever step skipped and named.

use std::path::{Path, PathBuf};

use rageval_core::conversation::ToolCall;
use rageval_core::dataset::{self, DatasetErrorKind, Format, ReadOptions};
use rageval_core::{Context, Hop, Role, Sample, ToolCallOrder, Turn};
use serde_json::Value;

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

fn hop(index: usize, used_by_answer: Option<bool>) -> Option<Hop> {
    Some(Hop {
        index,
        used_by_answer,
    })
}

fn in_hop(id: &str, score: f64, text: &str, hop: usize) -> Context {
    Context {
        hop: Some(hop),
        ..context(id, score, text)
    }
}

/// Three sessions, two retriever spans per trace (`phoenix_sessions.jsonl`): five traces give
/// five answer rows, each followed by its two hop rows; a session's traces are its turns in
/// time order (`lyon-2` comes first in the file but began later), each with the earlier
/// ones as history.
#[test]
fn sessions_become_conversations_and_every_retriever_span_a_hop_row() {
    let (samples, skipped) = read("phoenix_sessions.jsonl", Format::OpenInference);
    assert!(skipped.is_empty(), "{skipped:?}");
    let ids: Vec<&str> = samples.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "lyon-2",
            "lyon-2:hop:1",
            "lyon-2:hop:2",
            "mars-1",
            "mars-1:hop:1",
            "mars-1:hop:2",
            "lyon-1",
            "lyon-1:hop:1",
            "lyon-1:hop:2",
            "mars-2",
            "mars-2:hop:1",
            "mars-2:hop:2",
            "tea-1",
            "tea-1:hop:1",
            "tea-1:hop:2",
        ]
    );
    let by_id = |id: &str| {
        samples
            .iter()
            .find(|s| s.id == id)
            .unwrap_or_else(|| panic!("no sample {id}"))
    };
    let turns: Vec<(&str, Option<&str>, Option<usize>)> = samples
        .iter()
        .filter(|s| s.hop.is_none())
        .map(|s| (s.id.as_str(), s.conversation_id.as_deref(), s.turn))
        .collect();
    assert_eq!(
        turns,
        [
            ("lyon-2", Some("s-lyon"), Some(2)),
            ("mars-1", Some("s-mars"), Some(1)),
            ("lyon-1", Some("s-lyon"), Some(1)),
            ("mars-2", Some("s-mars"), Some(2)),
            ("tea-1", Some("s-tea"), Some(1)),
        ]
    );

    // The follow-up reads the first turn: its question, and its answer with the contexts
    // that answer used (both hops of lyon-1, as its prompt shows).
    let follow_up = by_id("lyon-2");
    assert_eq!(
        follow_up.history,
        [
            Turn::new(1, Role::User, "Which rivers meet in Lyon?"),
            Turn {
                contexts: vec![
                    in_hop(
                        "geo-1",
                        0.9,
                        "Lyon lies where the Rhône meets the Saône.",
                        1
                    ),
                    in_hop("geo-2", 0.7, "The Saône rises in the Vosges mountains.", 2),
                    in_hop("geo-3", 0.2, "Paris is crossed by the Seine.", 2),
                ],
                ..Turn::new(
                    1,
                    Role::Assistant,
                    "The Rhône and the Saône meet in Lyon; the Saône rises in the Vosges."
                )
            },
        ]
    );
    assert!(by_id("lyon-1").history.is_empty());
    // Its prompt holds the second hop's passage only: the answer row has that hop's
    // contexts, and the hop rows say which hop the answer used.
    assert_eq!(
        follow_up.contexts,
        [in_hop(
            "geo-5",
            0.8,
            "Vieux Lyon has been a UNESCO World Heritage Site since 1998.",
            2
        )]
    );
    assert_eq!(by_id("lyon-2:hop:1").hop, hop(1, Some(false)));
    assert_eq!(by_id("lyon-2:hop:2").hop, hop(2, Some(true)));

    // A hop row: the retriever's input as its question, its documents, no answer, its span.
    let first = by_id("lyon-2:hop:1");
    assert_eq!(first.question, "Lyon old town");
    assert_eq!(
        first.contexts,
        [context(
            "geo-4",
            0.6,
            "Vieux Lyon is a Renaissance quarter on the Saône."
        )]
    );
    assert_eq!(first.answer, None);
    assert_eq!(first.conversation_id, None);
    assert_eq!(first.metadata["trace_id"], "lyon-2");
    assert_eq!(first.metadata["span_id"], "lyon-2-r1");

    // mars-1's LLM span records no input: the answer row keeps the last hop's contexts, and
    // whether a hop was used is unknown.
    assert_eq!(
        by_id("mars-1").contexts,
        [in_hop(
            "astro-2",
            0.5,
            "Phobos is about 22 kilometres across.",
            2
        )]
    );
    assert_eq!(by_id("mars-1:hop:1").hop, hop(1, None));
    // mars-2's prompt wraps the first hop's passage in other white space: still found.
    assert_eq!(
        by_id("mars-2").contexts,
        [in_hop(
            "astro-3",
            0.8,
            "Deimos orbits Mars in about 30 hours.",
            1
        )]
    );
    assert_eq!(by_id("mars-2:hop:2").hop, hop(2, Some(false)));
}

/// Langfuse: observations of two traces of one session, the first without a retriever (it is
/// skipped, yet is the second's first turn), the second retrieving twice.
#[test]
fn langfuse_sessions_keep_unscored_traces_as_history() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("traces.jsonl");
    let lines = [
        r#"{"id": "t1", "sessionId": "chat-7", "timestamp": "2025-07-01T08:00:00Z", "input": "Hi, I drink green tea.", "output": "Noted: green tea."}"#,
        r#"{"id": "t2", "sessionId": "chat-7", "timestamp": "2025-07-01T08:01:00Z", "input": {"query": "How hot should the water be?"}}"#,
        r#"{"id": "o1", "traceId": "t2", "type": "RETRIEVER", "name": "search", "startTime": "2025-07-01T08:01:01Z", "input": "tea water temperature", "output": ["Black tea wants boiling water."]}"#,
        r#"{"id": "o2", "traceId": "t2", "type": "RETRIEVER", "name": "search", "startTime": "2025-07-01T08:01:02Z", "input": "green tea water temperature", "output": [{"page_content": "Green tea wants water at 70 to 80 degrees.", "metadata": {"id": "g1"}}]}"#,
        r#"{"id": "o3", "traceId": "t2", "type": "GENERATION", "startTime": "2025-07-01T08:01:03Z", "endTime": "2025-07-01T08:01:04Z", "input": [{"role": "system", "content": "Passages: Green tea wants water at 70 to 80 degrees."}], "output": "About 75 degrees."}"#,
    ];
    std::fs::write(&path, lines.join("\n")).expect("write the traces");
    let options = ReadOptions {
        format: Some(Format::Langfuse),
        ..ReadOptions::default()
    };
    let reader = dataset::open(&path, &options).expect("the traces open");
    assert_eq!(reader.skipped_traces(), ["t1"]);
    let samples = reader
        .collect::<Result<Vec<_>, _>>()
        .expect("every trace reads");
    let ids: Vec<&str> = samples.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["t2", "t2:hop:1", "t2:hop:2"]);
    let answer = &samples[0];
    assert_eq!(
        (answer.conversation_id.as_deref(), answer.turn),
        (Some("chat-7"), Some(2))
    );
    assert_eq!(
        answer.history,
        [
            Turn::new(1, Role::User, "Hi, I drink green tea."),
            Turn::new(1, Role::Assistant, "Noted: green tea."),
        ]
    );
    assert_eq!(answer.contexts.len(), 1);
    assert_eq!(answer.contexts[0].id.as_deref(), Some("g1"));
    assert_eq!(samples[1].question, "tea water temperature");
    assert_eq!(samples[1].hop, hop(1, Some(false)));
    assert_eq!(samples[2].hop, hop(2, Some(true)));
    assert_eq!(samples[2].metadata["span_id"], "o2");
}

/// A session id must be text or a number: anything else names the file, the span's line and
/// the field, with the trace.
#[test]
fn a_session_id_of_another_shape_names_its_line_and_field() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("spans.jsonl");
    let spans = [
        r#"{"context": {"trace_id": "t1", "span_id": "r"}, "span_kind": "CHAIN", "attributes": {"input.value": "Who?"}}"#,
        r#"{"context": {"trace_id": "t1", "span_id": "s"}, "parent_id": "r", "span_kind": "RETRIEVER", "attributes": {"session.id": true}}"#,
    ];
    std::fs::write(&path, spans.join("\n")).expect("write the spans");
    let options = ReadOptions {
        format: Some(Format::OpenInference),
        ..ReadOptions::default()
    };
    let error = dataset::read_all(&path, &options).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "{}:2: field `session.id (trace `t1`)`: expected a session id (non-empty text or a \
             number), found a boolean (true)",
            path.display()
        )
    );

    let path = dir.path().join("traces.jsonl");
    let traces = [
        r#"{"id": "o1", "traceId": "t2", "type": "RETRIEVER", "output": ["x"]}"#,
        r#"{"id": "t2", "sessionId": ["a"], "input": "Who?"}"#,
    ];
    std::fs::write(&path, traces.join("\n")).expect("write the traces");
    let options = ReadOptions {
        format: Some(Format::Langfuse),
        ..ReadOptions::default()
    };
    let error = dataset::read_all(&path, &options).unwrap_err();
    assert_eq!(error.line, Some(2), "{error}");
    assert!(
        error.to_string().contains("field `sessionId (trace `t2`)`"),
        "{error}"
    );
}

/// `TOOL` spans are the answer row's tool calls, in time order (a plain-text input under
/// `input`); the root span's `metadata` names the expected ones (`phoenix_tools.jsonl`: a
/// retriever, three `TOOL` spans whose file order is not their time order).
#[test]
fn tool_spans_are_the_calls_made_and_root_metadata_the_calls_expected() {
    let (samples, _) = read("phoenix_tools.jsonl", Format::OpenInference);
    assert_eq!(samples.len(), 1);
    assert_weather_calls(&samples[0]);
}

/// Each call's name and arguments (as JSON text).
fn calls(calls: &[ToolCall]) -> Vec<(String, String)> {
    calls
        .iter()
        .map(|c| {
            let arguments = Value::Object(c.arguments.clone()).to_string();
            (c.name.clone(), arguments)
        })
        .collect()
}

fn named(name: &str, arguments: &str) -> (String, String) {
    (name.to_owned(), arguments.to_owned())
}

/// The calls of both tool fixtures' weather trace: made get_weather {city: "paris "},
/// search {input: "weather Paris"} and convert {to: "f"}, in time order; expected
/// get_weather and convert, in any order.
fn assert_weather_calls(sample: &Sample) {
    assert_eq!(
        calls(&sample.tool_calls),
        [
            named("get_weather", r#"{"city":"paris "}"#),
            named("search", r#"{"input":"weather Paris"}"#),
            named("convert", r#"{"to":"f"}"#),
        ]
    );
    let expected: Vec<&str> = sample
        .reference_tool_calls
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(expected, ["get_weather", "convert"]);
    assert_eq!(sample.tool_call_order, ToolCallOrder::AnyOrder);
}

/// Langfuse tool observations (`langfuse_tools.json`, written by us in the shapes Langfuse
/// documents): in `lf-tools-1` three `TOOL` observations, in time order though not in file
/// order (a JSON-text input read as its object, a plain-text one under `input`), are the
/// calls made — the planning generation's `tool_calls` are not counted again; the trace's
/// `metadata` object names the expected calls and the order. `lf-tools-2` has no `TOOL`
/// observation: its calls are those the OpenAI-style generation asked for, and its
/// `metadata` is JSON text.
#[test]
fn langfuse_tool_observations_are_the_calls_made_and_trace_metadata_the_calls_expected() {
    let (samples, skipped) = read("langfuse_tools.json", Format::Langfuse);
    assert!(skipped.is_empty(), "{skipped:?}");
    assert_eq!(samples.len(), 2);
    assert_weather_calls(&samples[0]);
    assert_eq!(
        calls(&samples[1].tool_calls),
        [
            named("search_flights", r#"{"from":"LIS","to":"OPO"}"#),
            named("get_time", "{}"),
        ]
    );
    assert_eq!(samples[1].reference_tool_calls.len(), 1);
    assert_eq!(samples[1].tool_call_order, ToolCallOrder::InOrder);
}
