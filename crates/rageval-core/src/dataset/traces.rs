//! Traces as datasets: what the OpenInference and Langfuse readers share.
//!
//! A trace reader takes a stream of records (one span, observation or trace per record, as a
//! JSONL, JSON or — later — Parquet source yields them), groups them by trace, and turns each
//! trace into one record of our own shape (`id`, `question`, `retrieved_contexts`,
//! `response`), which the [`RecordBuilder`](super::value::RecordBuilder) then reads like any
//! other record. A trace without a retriever step is skipped and named in
//! [`TraceRecords::skipped`]; the caller reports them. The readers hold the spans of the
//! whole file, since a trace's spans may be anywhere in it.

use std::cmp::Ordering;
use std::path::Path;

use serde_json::{Map, Value, json};

use super::error::{DatasetError, DatasetErrorKind};
use super::value::Record;

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
    pub(crate) contexts: Vec<Value>,
    pub(crate) answer: Option<String>,
    /// Other keys kept as the sample's metadata (trace name, session).
    pub(crate) metadata: Map<String, Value>,
}

impl TraceSample {
    /// The record of our own shape, or the error naming what the trace lacks; `field` is
    /// where the question was looked for, as the format spells it.
    pub(crate) fn into_record(
        self,
        file: &Path,
        question_field: &str,
    ) -> Result<Record, DatasetError> {
        let Some(question) = self.question.filter(|q| !q.trim().is_empty()) else {
            return Err(
                DatasetError::at(file, self.line, DatasetErrorKind::MissingField)
                    .with_field(format!("{question_field} (trace `{}`)", self.id)),
            );
        };
        let mut fields = self.metadata;
        fields.insert("id".into(), Value::String(self.id));
        fields.insert("question".into(), Value::String(question));
        fields.insert("retrieved_contexts".into(), Value::Array(self.contexts));
        if let Some(answer) = self.answer {
            fields.insert("response".into(), Value::String(answer));
        }
        Ok(Record {
            file: None,
            line: self.line,
            fields,
        })
    }
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
