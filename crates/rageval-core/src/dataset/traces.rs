//! Traces as datasets: what the OpenInference and Langfuse readers share.
//!
//! A trace reader takes a stream of records (one span, observation or trace per record, as a
//! JSONL, JSON, Parquet or Arrow source yields them), groups them by trace, and turns each
//! trace into a [`TraceSample`]; [`trace_records`] makes the records of our own shape from
//! them (`id`, `question`, `retrieved_contexts`, `response`, and `hop`, `conversation_id`,
//! `turn`, `history` where they apply), which the
//! [`RecordBuilder`](super::value::RecordBuilder) then reads like any other record. Each
//! trace gives its answer row and, when it retrieved more than once, a row per hop (id
//! `TRACE:hop:N`, no answer); the traces of one session are the turns of a conversation, in
//! time order. A trace without a retriever step is skipped and named in
//! [`TraceRecords::skipped`] (the caller reports them), yet stays history for its session.
//! The readers hold the spans of the whole file, since a trace's spans may be anywhere in it.

use std::cmp::Ordering;
use std::path::Path;

use serde_json::{Map, Value, json};

use super::error::{DatasetError, DatasetErrorKind};
use super::value::{Record, describe};

/// The records made from a file of traces.
#[derive(Debug, Default)]
pub(crate) struct TraceRecords {
    /// One record per usable trace (in order of first appearance), and the per-record errors
    /// of the source, in place.
    pub(crate) records: Vec<Result<Record, DatasetError>>,
    /// The ids of traces left out because they have no retriever step.
    pub(crate) skipped: Vec<String>,
}

/// What one trace gave: where it starts, and the sample fields found.
#[derive(Debug, Default)]
pub(crate) struct TraceSample {
    pub(crate) id: String,
    /// The line of the trace's first record.
    pub(crate) line: usize,
    pub(crate) question: Option<String>,
    /// Every retrieval step, in time order; empty when the trace has none (it is skipped,
    /// and is only history for the later traces of its session).
    pub(crate) hops: Vec<TraceHop>,
    /// What the answering model was given, as text (its prompt or input messages), when the
    /// trace records it: which hops' documents it holds tells which hops the answer used.
    pub(crate) answer_input: Option<String>,
    pub(crate) answer: Option<String>,
    /// The session the trace belongs to, and when it started (its turn's place there).
    pub(crate) session: Option<String>,
    pub(crate) start: Option<Value>,
    /// Other keys of the answer row: the sample's metadata (trace name, session, span ids)
    /// and the tool-call fields a reader found (`tool_calls`, `reference_tool_calls`,
    /// `tool_call_order`), which the record builder reads as fields.
    pub(crate) metadata: Map<String, Value>,
}

/// One retrieval step of a trace.
#[derive(Debug, Default)]
pub(crate) struct TraceHop {
    /// Its sub-query: the retriever step's input, when it has a question-like one.
    pub(crate) query: Option<String>,
    /// Its documents, as [`context`] objects.
    pub(crate) contexts: Vec<Value>,
    /// Its span's (observation's) id.
    pub(crate) span_id: Option<String>,
}

/// The records of a file's traces, in order of first appearance: each trace with a
/// retriever step gives its answer row and, when it retrieved more than once, a row per hop
/// after it; traces of one session are turns of one conversation. `question_field` is
/// where the question was looked for, as the format spells it.
pub(crate) fn trace_records(
    file: &Path,
    traces: Vec<Result<TraceSample, DatasetError>>,
    question_field: &str,
    out: &mut TraceRecords,
) {
    let mut traces_read = Vec::with_capacity(traces.len());
    for trace in traces {
        match trace {
            Ok(trace) => traces_read.push(trace),
            Err(error) => out.records.push(Err(error)),
        }
    }
    let traces = traces_read;
    let turns = session_turns(&traces);
    for (index, trace) in traces.iter().enumerate() {
        if trace.hops.is_empty() {
            out.skipped.push(trace.id.clone());
            continue;
        }
        let mut record = match answer_record(file, trace, question_field) {
            Ok(record) => record,
            Err(error) => {
                out.records.push(Err(error));
                continue;
            }
        };
        if let Some(turn) = &turns[index] {
            turn.write(&traces, &mut record.fields);
        }
        out.records.push(Ok(record));
        if trace.hops.len() > 1 {
            out.records.extend(hop_records(trace).map(Ok));
        }
    }
}

/// Which of a trace's hops its answer used: per hop, whether the answering model's input
/// holds the text of one of the hop's documents; `None` when the input is not recorded.
fn used_hops(trace: &TraceSample) -> Option<Vec<bool>> {
    let input = squeeze(trace.answer_input.as_deref()?);
    let used = trace
        .hops
        .iter()
        .map(|hop| {
            hop.contexts.iter().any(|context| {
                let text = context.get("text").and_then(Value::as_str).unwrap_or("");
                let text = squeeze(text);
                !text.is_empty() && input.contains(&text)
            })
        })
        .collect();
    Some(used)
}

/// White space collapsed to single spaces, so a document and a prompt that wraps it
/// compare alike.
fn squeeze(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The contexts the answer row holds: those of the hops the answer used when the trace
/// says, else the last hop's; with several hops, each context names its hop.
fn answer_contexts(trace: &TraceSample) -> Vec<Value> {
    let several = trace.hops.len() > 1;
    let last = trace.hops.len();
    let chosen: Vec<usize> = match used_hops(trace) {
        Some(used) if used.contains(&true) => (1..=last).filter(|k| used[k - 1]).collect(),
        _ => vec![last],
    };
    let mut contexts = Vec::new();
    for index in chosen {
        for context in &trace.hops[index - 1].contexts {
            let mut context = context.clone();
            if let (true, Value::Object(object)) = (several, &mut context) {
                object.insert("hop".into(), json!(index));
            }
            contexts.push(context);
        }
    }
    contexts
}

/// The answer row of a trace, or the error naming what it lacks.
fn answer_record(
    file: &Path,
    trace: &TraceSample,
    question_field: &str,
) -> Result<Record, DatasetError> {
    let Some(question) = trace.question.as_ref().filter(|q| !q.trim().is_empty()) else {
        return Err(
            DatasetError::at(file, trace.line, DatasetErrorKind::MissingField)
                .with_field(format!("{question_field} (trace `{}`)", trace.id)),
        );
    };
    let mut fields = trace.metadata.clone();
    fields.insert("id".into(), Value::String(trace.id.clone()));
    fields.insert("question".into(), Value::String(question.clone()));
    fields.insert(
        "retrieved_contexts".into(),
        Value::Array(answer_contexts(trace)),
    );
    if let Some(answer) = &trace.answer {
        fields.insert("response".into(), Value::String(answer.clone()));
    }
    Ok(Record {
        file: None,
        line: trace.line,
        fields,
    })
}

/// One row per hop of a trace that retrieved several times: id `TRACE:hop:N`, its
/// sub-query as the question (the trace's question when the step has none), its documents,
/// its position and whether the answer used it; no answer.
fn hop_records(trace: &TraceSample) -> impl Iterator<Item = Record> + '_ {
    let used = used_hops(trace);
    trace.hops.iter().enumerate().map(move |(offset, hop)| {
        let index = offset + 1;
        let mut fields = Map::new();
        for key in ["trace_id", "trace_name", "session_id"] {
            if let Some(value) = trace.metadata.get(key) {
                fields.insert(key.into(), value.clone());
            }
        }
        fields.insert(
            "id".into(),
            Value::String(format!("{}:hop:{index}", trace.id)),
        );
        let question = hop.query.clone().or_else(|| trace.question.clone());
        fields.insert("question".into(), json!(question.unwrap_or_default()));
        fields.insert(
            "retrieved_contexts".into(),
            Value::Array(hop.contexts.clone()),
        );
        let mut position = Map::new();
        position.insert("index".into(), json!(index));
        if let Some(used) = &used {
            position.insert("used_by_answer".into(), json!(used[offset]));
        }
        fields.insert("hop".into(), Value::Object(position));
        if let Some(span) = &hop.span_id {
            // A score of this row belongs to the retriever's span.
            fields.insert("span_id".into(), json!(span));
            fields.insert("retriever_span_id".into(), json!(span));
        }
        Record {
            file: None,
            line: trace.line,
            fields,
        }
    })
}

/// A trace's place in its session: the conversation, its turn, and the traces before it.
#[derive(Debug)]
struct SessionTurn {
    conversation: String,
    turn: usize,
    /// Indices of the session's earlier traces, oldest first.
    earlier: Vec<usize>,
}

impl SessionTurn {
    /// Writes `conversation_id`, `turn` and `history` into an answer row: each earlier
    /// trace's question, and its answer with the contexts its row holds.
    fn write(&self, traces: &[TraceSample], fields: &mut Map<String, Value>) {
        let mut history = Vec::new();
        for (offset, &index) in self.earlier.iter().enumerate() {
            let earlier = &traces[index];
            let turn = offset + 1;
            let Some(question) = earlier.question.as_ref().filter(|q| !q.trim().is_empty()) else {
                continue;
            };
            history.push(json!({"role": "user", "turn": turn, "content": question}));
            if let Some(answer) = &earlier.answer {
                let contexts = if earlier.hops.is_empty() {
                    Vec::new()
                } else {
                    answer_contexts(earlier)
                };
                history.push(json!({
                    "role": "assistant", "turn": turn, "content": answer, "contexts": contexts,
                }));
            }
        }
        fields.insert("conversation_id".into(), json!(self.conversation));
        fields.insert("turn".into(), json!(self.turn));
        if !history.is_empty() {
            fields.insert("history".into(), Value::Array(history));
        }
    }
}

/// Per trace, its turn when it belongs to a session: a session's traces in order of their
/// start (file order where times are equal or missing), each one turn, traces without a
/// retriever step included (they are history, never scored).
fn session_turns(traces: &[TraceSample]) -> Vec<Option<SessionTurn>> {
    let mut sessions: Groups<usize> = Groups::default();
    for (index, trace) in traces.iter().enumerate() {
        if let Some(session) = &trace.session {
            sessions.push(session.clone(), index);
        }
    }
    let mut turns: Vec<Option<SessionTurn>> = traces.iter().map(|_| None).collect();
    for (session, mut members) in sessions.into_ordered() {
        members.sort_by(|a, b| compare_times(traces[*a].start.as_ref(), traces[*b].start.as_ref()));
        for (offset, &index) in members.iter().enumerate() {
            turns[index] = Some(SessionTurn {
                conversation: session.clone(),
                turn: offset + 1,
                earlier: members[..offset].to_vec(),
            });
        }
    }
    turns
}

/// A trace's session id: text, or a number written out; anything else is an error naming
/// `line` and `field` (as the format spells it) of trace `trace`.
pub(crate) fn session_id(
    value: &Value,
    file: &Path,
    line: usize,
    field: &str,
    trace: &str,
) -> Result<String, DatasetError> {
    match value {
        Value::String(s) if !s.trim().is_empty() => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        other => {
            let kind = DatasetErrorKind::WrongType {
                expected: "a session id (non-empty text or a number)",
                found: describe(other),
            };
            Err(DatasetError::at(file, line, kind).with_field(format!("{field} (trace `{trace}`)")))
        }
    }
}

/// Every string of `value`, joined by new lines: the text a model was given, whatever its
/// shape (a prompt, chat messages, a JSON object of them).
pub(crate) fn all_text(value: &Value) -> String {
    fn collect(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::String(text) => out.push(text.clone()),
            Value::Array(items) => items.iter().for_each(|item| collect(item, out)),
            Value::Object(object) => object.values().for_each(|item| collect(item, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    collect(value, &mut out);
    out.join("\n")
}

/// One context object for the record builder.
pub(crate) fn context(text: String, id: Option<String>, score: Option<f64>) -> Value {
    let mut object = Map::new();
    object.insert("text".into(), Value::String(text));
    if let Some(id) = id {
        object.insert("id".into(), Value::String(id));
    }
    if let Some(score) = score {
        object.insert("score".into(), json!(score));
    }
    Value::Object(object)
}

/// Keys under which a question is commonly passed, in order of preference.
const QUESTION_KEYS: &[&str] = &[
    "question",
    "query",
    "user_input",
    "query_str",
    "input",
    "message",
    "prompt",
    "content",
    "text",
];

/// Keys under which an answer is commonly returned, in order of preference.
const ANSWER_KEYS: &[&str] = &[
    "answer", "response", "output", "content", "text", "result", "message",
];

/// The question in a span's or trace's input: the text itself, or the text under a common
/// key of a JSON object (also when the object arrives as a JSON string), or the last user
/// message of a chat.
pub(crate) fn question_text(value: &Value) -> Option<String> {
    text_under(value, QUESTION_KEYS, Some("user"))
}

/// The answer in an LLM step's output: the text, the text under a common key, the first
/// choice of an OpenAI-style completion, or the last message of a list.
pub(crate) fn answer_text(value: &Value) -> Option<String> {
    text_under(value, ANSWER_KEYS, None)
}

fn text_under(value: &Value, keys: &[&str], role: Option<&str>) -> Option<String> {
    text_at_depth(value, keys, role, 0)
}

/// Nested inputs are followed a few levels down, no further: a value that deep is not a
/// question.
const MAX_DEPTH: usize = 4;

fn text_at_depth(value: &Value, keys: &[&str], role: Option<&str>, depth: usize) -> Option<String> {
    if depth > MAX_DEPTH {
        return None;
    }
    let next = |value: &Value| text_at_depth(value, keys, role, depth + 1);
    match value {
        Value::String(text) => {
            let trimmed = text.trim_start();
            if trimmed.starts_with('{') || trimmed.starts_with('[') {
                if let Ok(parsed) = serde_json::from_str::<Value>(text) {
                    return next(&parsed);
                }
            }
            (!text.trim().is_empty()).then(|| text.clone())
        }
        Value::Object(object) => {
            if let Some(text) = object
                .get("choices")
                .and_then(|choices| choices.get(0))
                .and_then(|choice| choice.get("message").or_else(|| choice.get("text")))
                .and_then(next)
            {
                return Some(text);
            }
            if let Some(text) = object.get("messages").and_then(next) {
                return Some(text);
            }
            keys.iter().find_map(|key| object.get(*key).and_then(next))
        }
        Value::Array(items) => {
            let wanted = |item: &&Value| match role {
                Some(role) => item.get("role").and_then(Value::as_str) == Some(role),
                None => true,
            };
            let chosen = items.iter().rev().find(wanted).or_else(|| items.last())?;
            next(chosen)
        }
        _ => None,
    }
}

/// A record's text value under `key`, numbers written out.
pub(crate) fn id_at(fields: &Map<String, Value>, keys: &[&str]) -> Option<String> {
    keys.iter().find_map(|key| match fields.get(*key)? {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    })
}

/// Orders two timestamps as a trace export writes them: numbers by value, ISO 8601 strings
/// of one export by text; anything else is equal (file order decides).
pub(crate) fn compare_times(a: Option<&Value>, b: Option<&Value>) -> Ordering {
    match (a, b) {
        (Some(Value::Number(a)), Some(Value::Number(b))) => a
            .as_f64()
            .partial_cmp(&b.as_f64())
            .unwrap_or(Ordering::Equal),
        (Some(Value::String(a)), Some(Value::String(b))) => a.cmp(b),
        _ => Ordering::Equal,
    }
}

/// The first-appearance order of groups keyed by trace id, with each group's members in
/// file order.
#[derive(Debug)]
pub(crate) struct Groups<T> {
    order: Vec<String>,
    members: std::collections::HashMap<String, Vec<T>>,
}

impl<T> Default for Groups<T> {
    fn default() -> Self {
        Groups {
            order: Vec::new(),
            members: std::collections::HashMap::new(),
        }
    }
}

impl<T> Groups<T> {
    pub(crate) fn push(&mut self, trace: String, member: T) {
        match self.members.get_mut(&trace) {
            Some(members) => members.push(member),
            None => {
                self.order.push(trace.clone());
                self.members.insert(trace, vec![member]);
            }
        }
    }

    /// The groups in first-appearance order.
    pub(crate) fn into_ordered(mut self) -> Vec<(String, Vec<T>)> {
        self.order
            .into_iter()
            .filter_map(|trace| {
                let members = self.members.remove(&trace)?;
                Some((trace, members))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_come_from_text_json_and_chats() {
        assert_eq!(question_text(&json!("Who?")).as_deref(), Some("Who?"));
        assert_eq!(
            question_text(&json!("{\"query\": \"Who?\", \"k\": 3}")).as_deref(),
            Some("Who?")
        );
        let chat = json!({"messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Who?"},
            {"role": "assistant", "content": "Ada."},
        ]});
        assert_eq!(question_text(&chat).as_deref(), Some("Who?"));
        assert_eq!(question_text(&json!({"k": 3})), None);
    }

    #[test]
    fn answers_come_from_text_completions_and_messages() {
        assert_eq!(answer_text(&json!("Ada.")).as_deref(), Some("Ada."));
        let completion =
            json!({"choices": [{"message": {"role": "assistant", "content": "Ada."}}]});
        assert_eq!(answer_text(&completion).as_deref(), Some("Ada."));
        let message = json!({"role": "assistant", "content": "Ada."});
        assert_eq!(answer_text(&message).as_deref(), Some("Ada."));
    }

    #[test]
    fn times_order_numbers_and_iso_strings() {
        let (early, late) = (json!("2025-01-01T00:00:01Z"), json!("2025-01-01T00:00:02Z"));
        assert_eq!(compare_times(Some(&early), Some(&late)), Ordering::Less);
        assert_eq!(
            compare_times(Some(&json!(2)), Some(&json!(1.5))),
            Ordering::Greater
        );
        assert_eq!(compare_times(None, Some(&late)), Ordering::Equal);
    }
}
