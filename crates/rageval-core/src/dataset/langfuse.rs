//! Langfuse trace exports read as one sample per trace, one per retrieval hop of a trace that
//! retrieved more than once, sessions (`sessionId`) as conversations.
//!
//! Records are traces, observations, or both: a trace as Langfuse's public API returns it
//! (`id`, `name`, `input`, `output`, `sessionId`, and `observations` as full objects or as
//! ids) and observations (`id`, `traceId`, `type` — `SPAN`, `GENERATION`, `EVENT`, or the
//! newer `RETRIEVER` and friends — `name`, `startTime`, `endTime`, `parentObservationId`,
//! `input`, `output`). A record with `traceId` and `type` is an observation; any other
//! record with an `id` is a trace, and its embedded observation objects are read too.
//!
//! Per trace: the question is the trace's `input` (else the root observation's), searched
//! for a question-like key when it is JSON; each retriever observation (type `RETRIEVER`,
//! or a `SPAN` whose name says "retriev") is a hop, its documents in its output; the answer
//! is the output of the last-ending `GENERATION`, else the trace's `output`, and that
//! generation's input tells which hops the answer used ([`super::traces`] makes the rows). Documents may be strings or objects such as LangChain's
//! `{page_content, metadata}`; ids and scores are taken from the object or its metadata. A
//! trace without a retriever observation is skipped.
//!
//! Tool calls made are the trace's `TOOL` observations in time order (the tool's name, its
//! `input` as the arguments, as the OpenInference reader reads `TOOL` spans); a trace
//! without one gives the calls its `GENERATION`s asked for instead — OpenAI's `tool_calls`
//! on the output message (`{id, type: "function", function: {name, arguments}}`, as
//! Langfuse's OpenAI integration records a completion), so a call that was both asked for
//! and run counts once. The trace's `metadata` may name the expected calls
//! (`reference_tool_calls`, `expected_tool_calls`, `tool_call_order`).

use std::path::Path;

use serde_json::{Map, Value};

use super::error::{DatasetError, DatasetErrorKind};
use super::openinference::{expected_tool_keys, json_object, tool_call};
use super::traces::{
    Groups, TraceHop, TraceRecords, TraceSample, all_text, answer_text, compare_times, context,
    id_at, question_text, session_id, trace_records,
};
use super::value::Record;

/// What one trace's records hold.
#[derive(Debug, Default)]
struct Trace {
    /// The trace record itself, when the export has one.
    header: Option<Map<String, Value>>,
    /// The line of the trace record.
    header_line: Option<usize>,
    observations: Vec<Map<String, Value>>,
    line: Option<usize>,
}

/// Groups the records of `source` into traces and makes one record per trace.
pub(crate) fn traces(
    file: &Path,
    source: impl Iterator<Item = Result<Record, DatasetError>>,
) -> TraceRecords {
    let mut out = TraceRecords::default();
    let mut groups: Groups<(usize, Map<String, Value>, bool)> = Groups::default();
    for item in source {
        let mut record = match item {
            Ok(record) => record,
            Err(error) => {
                out.records.push(Err(error));
                continue;
            }
        };
        let observation = record.fields.contains_key("type");
        let trace = if observation {
            id_at(&record.fields, &["traceId", "trace_id"])
        } else {
            id_at(&record.fields, &["id", "traceId"])
        };
        let Some(trace) = trace else {
            let field = if observation { "traceId" } else { "id" };
            out.records.push(Err(DatasetError::at(
                file,
                record.line,
                DatasetErrorKind::MissingField,
            )
            .with_field(field)));
            continue;
        };
        if !observation {
            if let Some(Value::Array(embedded)) = record.fields.remove("observations") {
                for item in embedded {
                    if let Value::Object(fields) = item {
                        groups.push(trace.clone(), (record.line, fields, true));
                    }
                }
            }
        }
        groups.push(trace, (record.line, record.fields, observation));
    }
    let mut samples = Vec::new();
    for (id, members) in groups.into_ordered() {
        let mut trace = Trace::default();
        for (line, fields, observation) in members {
            trace.line = Some(trace.line.map_or(line, |first| first.min(line)));
            if observation {
                trace.observations.push(fields);
            } else {
                trace.header = Some(fields);
                trace.header_line = Some(line);
            }
        }
        samples.push(sample(file, id, trace));
    }
    trace_records(file, samples, "input", &mut out);
    out
}

fn kind(observation: &Map<String, Value>) -> String {
    observation
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_ascii_uppercase()
}

fn is_retriever(observation: &Map<String, Value>) -> bool {
    let name = observation
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_lowercase();
    match kind(observation).as_str() {
        "RETRIEVER" => true,
        "SPAN" => name.contains("retriev"),
        _ => false,
    }
}

/// What one trace gave; without a retriever observation, its hops are empty. A `sessionId`
/// that is neither text nor a number is an error naming the trace's line.
fn sample(file: &Path, id: String, mut trace: Trace) -> Result<TraceSample, DatasetError> {
    trace
        .observations
        .sort_by(|a, b| compare_times(a.get("startTime"), b.get("startTime")));
    let retrievers: Vec<&Map<String, Value>> = trace
        .observations
        .iter()
        .filter(|o| is_retriever(o))
        .collect();
    let retriever = retrievers.last().copied();
    let ids: Vec<String> = trace
        .observations
        .iter()
        .filter_map(|o| id_at(o, &["id"]))
        .collect();
    let root = trace
        .observations
        .iter()
        .find(|o| id_at(o, &["parentObservationId"]).is_none_or(|parent| !ids.contains(&parent)));
    let header = trace.header.as_ref();
    let question = header
        .and_then(|h| h.get("input"))
        .and_then(question_text)
        .or_else(|| root.and_then(|r| r.get("input")).and_then(question_text))
        .or_else(|| {
            retriever
                .and_then(|r| r.get("input"))
                .and_then(question_text)
        });
    let last_generation = trace
        .observations
        .iter()
        .filter(|o| kind(o) == "GENERATION")
        .reduce(|latest, o| {
            let later = compare_times(o.get("endTime"), latest.get("endTime")).is_ge();
            if later { o } else { latest }
        });
    let answer = last_generation
        .and_then(|g| g.get("output"))
        .and_then(answer_text)
        .or_else(|| header.and_then(|h| h.get("output")).and_then(answer_text));
    let mut metadata = Map::new();
    let name = header
        .and_then(|h| h.get("name"))
        .or_else(|| root.and_then(|r| r.get("name")));
    if let Some(name) = name.filter(|n| !n.is_null()) {
        metadata.insert("trace_name".into(), name.clone());
    }
    let line = trace.line.unwrap_or(1);
    let session = match header
        .and_then(|h| h.get("sessionId"))
        .filter(|s| !s.is_null())
    {
        Some(value) => {
            let at = trace.header_line.unwrap_or(line);
            Some(session_id(value, file, at, "sessionId", &id)?)
        }
        None => None,
    };
    if let Some(session) = &session {
        metadata.insert("session_id".into(), Value::String(session.clone()));
    }
    let calls = tool_calls(&trace.observations);
    if !calls.is_empty() {
        metadata.insert("tool_calls".into(), Value::Array(calls));
    }
    if let Some(expected) = header.and_then(|h| h.get("metadata")) {
        expected_tool_keys(expected, &mut metadata);
    }
    let hops = retrievers
        .iter()
        .map(|observation| TraceHop {
            query: observation.get("input").and_then(question_text),
            contexts: documents(observation.get("output")),
            span_id: id_at(observation, &["id"]),
        })
        .collect();
    // When the trace began: its `timestamp`, else its first observation's start.
    let start = header
        .and_then(|h| h.get("timestamp"))
        .or_else(|| trace.observations.first().and_then(|o| o.get("startTime")))
        .filter(|start| !start.is_null())
        .cloned();
    Ok(TraceSample {
        id,
        line,
        question,
        hops,
        answer_input: last_generation
            .and_then(|g| g.get("input"))
            .filter(|input| !input.is_null())
            .map(all_text),
        answer,
        session,
        start,
        metadata,
    })
}

/// The tool calls of a trace whose observations are in time order: its `TOOL` observations,
/// else the calls its generations asked for (see the module doc).
fn tool_calls(observations: &[Map<String, Value>]) -> Vec<Value> {
    let ran: Vec<Value> = observations
        .iter()
        .filter(|o| kind(o) == "TOOL")
        .map(|o| tool_call(o.get("name"), o.get("input")))
        .collect();
    if !ran.is_empty() {
        return ran;
    }
    observations
        .iter()
        .filter(|o| kind(o) == "GENERATION")
        .flat_map(|o| asked_calls(o.get("output")))
        .collect()
}

/// The `tool_calls` of a generation's output message (an object, or its JSON text), as
/// they are: the record builder reads OpenAI's shape and refuses another, naming the line.
fn asked_calls(output: Option<&Value>) -> Vec<Value> {
    match output
        .and_then(json_object)
        .and_then(|mut m| m.remove("tool_calls"))
    {
        Some(Value::Array(calls)) => calls,
        _ => Vec::new(),
    }
}

/// The documents in a retriever's output: a list, or a list under a common key.
fn documents(output: Option<&Value>) -> Vec<Value> {
    let list = match output {
        Some(Value::Array(items)) => items,
        Some(Value::Object(object)) => {
            let found = ["documents", "nodes", "results", "output"]
                .iter()
                .find_map(|key| object.get(*key).and_then(Value::as_array));
            match found {
                Some(items) => items,
                None => return Vec::new(),
            }
        }
        _ => return Vec::new(),
    };
    list.iter().filter_map(document).collect()
}

/// One document: a string, or an object with its text, and maybe an id and a score, at
/// its top level, under `node`, or in its `metadata`.
fn document(item: &Value) -> Option<Value> {
    let object = match item {
        Value::String(text) => return Some(context(text.clone(), None, None)),
        Value::Object(object) => object,
        _ => return None,
    };
    let node = object.get("node").and_then(Value::as_object);
    let metadata = object.get("metadata").and_then(Value::as_object);
    let places: Vec<&Map<String, Value>> = [Some(object), node, metadata]
        .into_iter()
        .flatten()
        .collect();
    let text = places.iter().find_map(|place| {
        ["page_content", "pageContent", "content", "text"]
            .iter()
            .find_map(|key| place.get(*key).and_then(Value::as_str))
    })?;
    let id = places
        .iter()
        .find_map(|place| id_at(place, &["id", "id_", "doc_id", "document_id", "source"]));
    let score = places.iter().find_map(|place| {
        ["score", "relevance_score"]
            .iter()
            .find_map(|key| place.get(*key).and_then(Value::as_f64))
    });
    Some(context(text.to_owned(), id, score))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn langchain_and_llamaindex_documents_are_read() {
        let output = json!([
            {"page_content": "a", "metadata": {"id": "d1", "score": 0.5}},
            {"node": {"id_": "n2", "text": "b"}, "score": 0.25},
            "c",
        ]);
        let read = documents(Some(&output));
        assert_eq!(
            read,
            vec![
                json!({"text": "a", "id": "d1", "score": 0.5}),
                json!({"text": "b", "id": "n2", "score": 0.25}),
                json!({"text": "c"}),
            ]
        );
    }
}
