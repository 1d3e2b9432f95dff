//! OpenInference spans (as Arize Phoenix exports them) read as one sample per trace, one per
//! retrieval hop of a trace that retrieved more than once, sessions as conversations.
//!
//! Each record is one span. Phoenix writes spans in three spellings, all accepted: the
//! spans dataframe (`context.trace_id`, `span_kind`, `parent_id`, `attributes.input.value`,
//! `attributes.retrieval.documents` as a list of `{document.id, document.score,
//! document.content}`), the REST/client span (`context: {trace_id, span_id}`, `attributes`
//! nested by dots or flat), and OpenTelemetry's flat attribute keys
//! (`retrieval.documents.0.document.content`). Every span is flattened to dotted keys, so
//! the three look alike from here on.
//!
//! Per trace: the question is the root span's `input.value` (a JSON input is searched for a
//! question-like key), each `RETRIEVER` span is a hop (its input, its documents' id, score
//! and content), and the answer is the last-ending `LLM` span's final output message, else
//! its `output.value`; that span's input messages tell which hops the answer used
//! ([`super::traces`] makes the rows). The session is the root span's `session.id`, else
//! any span's. `TOOL` spans are the tool calls made (name and `input.value` arguments); the
//! root span's `metadata` may name the expected ones. A trace without a `RETRIEVER` span is skipped. The sample's metadata keeps
//! the trace id, the root span's id (`span_id`: where `rageval-export` writes a score back)
//! and the last retriever span's (`retriever_span_id`).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value, json};

use super::error::DatasetError;
use super::traces::{
    Groups, TraceHop, TraceRecords, TraceSample, answer_text, compare_times, context, id_at,
    question_text, session_id, trace_records,
};
use super::value::Record;

const TRACE_ID: &[&str] = &["context.trace_id", "trace_id", "traceId", "context.traceId"];
const SPAN_ID: &[&str] = &["context.span_id", "span_id", "spanId", "context.spanId"];
const PARENT_ID: &[&str] = &["parent_id", "parent_span_id", "parentSpanId"];
const SPAN_KIND: &[&str] = &["openinference.span.kind", "span_kind", "spanKind"];
const DOCUMENTS: &str = "retrieval.documents.";

/// One span, flattened.
#[derive(Debug)]
struct Span {
    line: usize,
    id: Option<String>,
    parent: Option<String>,
    /// Upper case: `RETRIEVER`, `LLM`, `CHAIN`, ...
    kind: String,
    /// Dotted keys, the `attributes.` prefix dropped, to leaf values.
    flat: BTreeMap<String, Value>,
}

impl Span {
    fn get(&self, key: &str) -> Option<&Value> {
        self.flat.get(key).filter(|value| !value.is_null())
    }

    fn start(&self) -> Option<&Value> {
        self.get("start_time").or_else(|| self.get("startTime"))
    }

    fn end(&self) -> Option<&Value> {
        self.get("end_time").or_else(|| self.get("endTime"))
    }
}

/// Groups the spans of `source` into traces and makes one record per trace.
pub(crate) fn traces(
    file: &Path,
    source: impl Iterator<Item = Result<Record, DatasetError>>,
) -> TraceRecords {
    let mut out = TraceRecords::default();
    let mut groups = Groups::default();
    for item in source {
        let record = match item {
            Ok(record) => record,
            Err(error) => {
                out.records.push(Err(error));
                continue;
            }
        };
        let mut flat = BTreeMap::new();
        flatten("", Value::Object(record.fields), &mut flat);
        let flat: Map<String, Value> = flat.into_iter().collect();
        let Some(trace) = id_at(&flat, TRACE_ID) else {
            let error = DatasetError::at(
                file,
                record.line,
                super::error::DatasetErrorKind::MissingField,
            )
            .with_field("context.trace_id");
            out.records.push(Err(error));
            continue;
        };
        let span = Span {
            line: record.line,
            id: id_at(&flat, SPAN_ID),
            parent: id_at(&flat, PARENT_ID),
            kind: id_at(&flat, SPAN_KIND)
                .unwrap_or_default()
                .to_ascii_uppercase(),
            flat: flat.into_iter().collect(),
        };
        groups.push(trace, span);
    }
    let samples = groups
        .into_ordered()
        .into_iter()
        .map(|(trace, spans)| sample(file, trace, spans))
        .collect();
    trace_records(file, samples, "input.value", &mut out);
    out
}

/// What one trace gave; without a retriever span, its hops are empty. A session id that is
/// neither text nor a number is an error naming the span's line.
fn sample(file: &Path, trace: String, mut spans: Vec<Span>) -> Result<TraceSample, DatasetError> {
    // Stable: spans with equal or unknown times keep file order.
    spans.sort_by(|a, b| compare_times(a.start(), b.start()));
    let retrievers: Vec<&Span> = spans.iter().filter(|s| s.kind == "RETRIEVER").collect();
    let retriever = retrievers.last().copied();
    let ids: Vec<&str> = spans.iter().filter_map(|s| s.id.as_deref()).collect();
    let root = spans
        .iter()
        .find(|span| span.parent.as_deref().is_none_or(|p| !ids.contains(&p)))
        .or(spans.first());
    let line = spans.iter().map(|s| s.line).min().unwrap_or(1);
    let question = root
        .and_then(|root| root.get("input.value"))
        .and_then(question_text)
        .or_else(|| {
            retriever
                .and_then(|r| r.get("input.value"))
                .and_then(question_text)
        });
    let last_llm = spans
        .iter()
        .filter(|span| span.kind == "LLM")
        .reduce(|latest, span| {
            let later = compare_times(span.end(), latest.end()).is_ge();
            if later { span } else { latest }
        });
    let answer = match last_llm {
        Some(llm) => llm_answer(llm),
        None => root
            .and_then(|root| root.get("output.value"))
            .and_then(answer_text),
    };
    let mut metadata = Map::new();
    // Where scores written back belong: the root span is the evaluated operation (the
    // question in, the answer out); the retriever span is the one the contexts came from.
    metadata.insert("trace_id".into(), Value::String(trace.clone()));
    if let Some(span) = root.and_then(|root| root.id.clone()) {
        metadata.insert("span_id".into(), Value::String(span));
    }
    if let Some(span) = retriever.and_then(|r| r.id.clone()) {
        metadata.insert("retriever_span_id".into(), Value::String(span));
    }
    if let Some(name) = root.and_then(|root| root.get("name")) {
        metadata.insert("trace_name".into(), name.clone());
    }
    let calls = tool_calls(&spans);
    if !calls.is_empty() {
        metadata.insert("tool_calls".into(), Value::Array(calls));
    }
    if let Some(root) = root {
        expected_tool_calls(root, &mut metadata);
    }
    // OpenInference puts `session.id` on the root span; some instrumentations repeat it on
    // every span, or set it on a child only.
    let session_span = root
        .filter(|root| root.get("session.id").is_some())
        .or_else(|| spans.iter().find(|span| span.get("session.id").is_some()));
    let session = match session_span {
        Some(span) => {
            let value = span.get("session.id").unwrap_or(&Value::Null);
            let id = session_id(value, file, span.line, "session.id", &trace)?;
            metadata.insert("session_id".into(), Value::String(id.clone()));
            Some(id)
        }
        None => None,
    };
    let hops = retrievers
        .iter()
        .map(|span| TraceHop {
            query: span.get("input.value").and_then(question_text),
            contexts: documents(span),
            span_id: span.id.clone(),
        })
        .collect();
    Ok(TraceSample {
        id: trace,
        line,
        question,
        hops,
        answer_input: last_llm.and_then(llm_input),
        answer,
        session,
        start: root.and_then(|root| root.start()).cloned(),
        metadata,
    })
}

/// The tool calls of a trace, from its `TOOL` spans in time order: the name is `tool.name`
/// (else the span's name), the arguments the span's `input.value` — a JSON object (or its
/// text) as it is, any other input under `input`.
fn tool_calls(spans: &[Span]) -> Vec<Value> {
    spans
        .iter()
        .filter(|span| span.kind == "TOOL")
        .map(|span| {
            let name = span.get("tool.name").or_else(|| span.get("name"));
            tool_call(name, span.get("input.value"))
        })
        .collect()
}

/// A tool call as the record builder reads it, from a trace step that ran the tool: its
/// `name` (null when absent, which the builder refuses with the line) and its input as
/// the arguments — a JSON object (or its text) as it is, any other input under `input`.
/// The Langfuse reader reads its `TOOL` observations by this too.
pub(super) fn tool_call(name: Option<&Value>, input: Option<&Value>) -> Value {
    let arguments = match input {
        None | Some(Value::Null) => Value::Null,
        Some(Value::Object(object)) => Value::Object(object.clone()),
        Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(object)) => Value::Object(object),
            _ if text.trim().is_empty() => Value::Null,
            _ => json!({"input": text}),
        },
        Some(other) => json!({"input": other}),
    };
    json!({"name": name.cloned().unwrap_or(Value::Null), "arguments": arguments})
}

/// Keys of the root span's `metadata` (a JSON object, as OpenInference writes it: JSON
/// text) that name the calls the trace should have made, copied to the answer row as they
/// are: the record builder reads and checks them like any dataset's.
const EXPECTED_TOOL_KEYS: [&str; 3] = [
    "reference_tool_calls",
    "expected_tool_calls",
    "tool_call_order",
];

fn expected_tool_calls(root: &Span, fields: &mut Map<String, Value>) {
    if let Some(metadata) = root.get("metadata") {
        expected_tool_keys(metadata, fields);
    }
}

/// The expected-call keys of a trace's `metadata` (an object, or its JSON text) copied to
/// `fields`; the Langfuse reader reads a trace's `metadata` by this too.
pub(super) fn expected_tool_keys(metadata: &Value, fields: &mut Map<String, Value>) {
    let Some(metadata) = json_object(metadata) else {
        return;
    };
    for key in EXPECTED_TOOL_KEYS {
        if let Some(value) = metadata.get(key) {
            fields.insert(key.into(), value.clone());
        }
    }
}

/// A JSON object, or a text holding one (trace tools write either).
pub(super) fn json_object(value: &Value) -> Option<Map<String, Value>> {
    match value {
        Value::Object(object) => Some(object.clone()),
        Value::String(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(object)) => Some(object),
            _ => None,
        },
        _ => None,
    }
}

/// What an LLM span was given, as text: its input messages, prompts and `input.value`;
/// `None` when it records none of them.
fn llm_input(span: &Span) -> Option<String> {
    let texts: Vec<&str> = span
        .flat
        .iter()
        .filter(|(key, _)| {
            key.starts_with("llm.input_messages.")
                || key.starts_with("llm.prompts")
                || key.as_str() == "input.value"
        })
        .filter_map(|(_, value)| value.as_str())
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

/// The last output message of an LLM span, else its `output.value`.
fn llm_answer(span: &Span) -> Option<String> {
    let last_message = span
        .flat
        .iter()
        .filter_map(|(key, value)| {
            let rest = key.strip_prefix("llm.output_messages.")?;
            let (index, field) = rest.split_once('.')?;
            (field == "message.content")
                .then(|| index.parse::<usize>().ok())
                .flatten()
                .map(|index| (index, value))
        })
        .max_by_key(|(index, _)| *index)
        .and_then(|(_, value)| value.as_str())
        .filter(|text| !text.trim().is_empty())
        .map(str::to_owned);
    last_message.or_else(|| span.get("output.value").and_then(answer_text))
}

/// The retriever's documents in their order, as context objects.
fn documents(span: &Span) -> Vec<Value> {
    #[derive(Default)]
    struct Document {
        id: Option<String>,
        score: Option<f64>,
        content: Option<String>,
    }
    let mut found: BTreeMap<usize, Document> = BTreeMap::new();
    for (key, value) in span.flat.range(DOCUMENTS.to_owned()..) {
        let Some(rest) = key.strip_prefix(DOCUMENTS) else {
            break;
        };
        let Some((index, field)) = rest.split_once('.') else {
            continue;
        };
        let Ok(index) = index.parse::<usize>() else {
            continue;
        };
        let document = found.entry(index).or_default();
        match field {
            "document.id" => {
                document.id = match value {
                    Value::String(s) => Some(s.clone()),
                    Value::Number(n) => Some(n.to_string()),
                    _ => None,
                }
            }
            "document.score" => {
                document.score = match value {
                    Value::Number(n) => n.as_f64(),
                    Value::String(s) => s.trim().parse().ok(),
                    _ => None,
                }
            }
            "document.content" => document.content = value.as_str().map(str::to_owned),
            _ => {}
        }
    }
    found
        .into_values()
        .map(|doc| context(doc.content.unwrap_or_default(), doc.id, doc.score))
        .collect()
}

/// Every leaf of `value` under its dotted path; list items under their index. A leading
/// `attributes.` is dropped, so a dataframe column and a span's attribute share one key.
fn flatten(prefix: &str, value: Value, out: &mut BTreeMap<String, Value>) {
    let join = |key: &str| {
        let path = if prefix.is_empty() {
            key.to_owned()
        } else {
            format!("{prefix}.{key}")
        };
        match path.strip_prefix("attributes.") {
            Some(rest) => rest.to_owned(),
            None => path,
        }
    };
    match value {
        Value::Object(object) => {
            for (key, value) in object {
                flatten(&join(&key), value, out);
            }
        }
        Value::Array(items) if !prefix.is_empty() => {
            for (index, value) in items.into_iter().enumerate() {
                flatten(&join(&index.to_string()), value, out);
            }
        }
        leaf => {
            out.insert(prefix.to_owned(), leaf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_three_spellings_flatten_alike() {
        let dataframe = json!({"attributes.retrieval.documents": [
            {"document.id": "d1", "document.content": "x"}
        ]});
        let nested = json!({"attributes": {"retrieval": {"documents": [
            {"document": {"id": "d1", "content": "x"}}
        ]}}});
        let flat = json!({"attributes": {
            "retrieval.documents.0.document.id": "d1",
            "retrieval.documents.0.document.content": "x"
        }});
        let keys = |value: Value| {
            let mut out = BTreeMap::new();
            flatten("", value, &mut out);
            out
        };
        let expected = keys(flat);
        assert_eq!(keys(dataframe), expected);
        assert_eq!(keys(nested), expected);
        assert!(expected.contains_key("retrieval.documents.0.document.content"));
    }
}
