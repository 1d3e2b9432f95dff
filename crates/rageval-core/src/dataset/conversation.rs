//! Whole conversations on one line: a record holding a chat is spread into one record per
//! assistant turn to judge, each carrying the turns before it as its `history`, its
//! conversation id and its turn number. The records then go through the ordinary field
//! reading, so a turn is a sample like any other.
//!
//! | shape | messages under | a message |
//! |---|---|---|
//! | ragas `MultiTurnSample` | `user_input` (a list) | `{type: human\|ai\|tool, content, tool_calls?}` |
//! | OpenAI chat | `messages` | `{role: system\|user\|assistant\|tool, content, tool_calls?}` |
//! | DeepEval `ConversationalTestCase` | `turns` | `{role, content, retrieval_context?, tools_called?}` |
//!
//! A user message opens a turn; the turn's answer is its last assistant message with text;
//! the tool messages of a turn and an assistant message's own contexts are that turn's
//! contexts; every tool call of the turn's assistant messages is one of its `tool_calls`.
//! The conversation's `reference` and expected tool calls (ragas's `reference_tool_calls`)
//! belong to the whole conversation, so its last judged turn carries them, with every tool
//! call the conversation made. A record with a question of its own (`question`, `query`, a
//! string `user_input`) is not spread. Nothing here judges anything.

use std::path::Path;

use serde_json::{Map, Value};

use super::error::{DatasetError, DatasetErrorKind};
use super::turns::{TURN_CONTEXT_KEYS, role, tool_calls};
use super::value::{Record, contexts, describe};
use crate::conversation::{Role, TurnCounter};

/// Keys naming a conversation's id, in order of preference.
const ID_KEYS: &[&str] = &["conversation_id", "id", "sample_id", "uuid"];
/// Keys of the conversation's expected tool calls.
const EXPECTED_CALL_KEYS: &[&str] = &[
    "reference_tool_calls",
    "expected_tool_calls",
    "expected_tools",
];
/// Keys of the conversation's reference answer.
const REFERENCE_KEYS: &[&str] = &["reference", "ground_truth"];
/// Keys of a message's tool calls (DeepEval's `tools_called`).
const MESSAGE_CALL_KEYS: &[&str] = &["tool_calls", "tools_called"];

/// The key holding a record's messages, when it is a conversation.
fn messages_key(fields: &Map<String, Value>) -> Option<&'static str> {
    let list_of_objects = |value: &Value| matches!(value, Value::Array(items) if items.first().is_some_and(Value::is_object));
    if fields.get("user_input").is_some_and(list_of_objects) {
        return Some("user_input");
    }
    let own_question = ["question", "query", "user_input"]
        .iter()
        .any(|key| fields.get(*key).is_some_and(Value::is_string));
    if own_question {
        return None;
    }
    ["messages", "turns"]
        .into_iter()
        .find(|key| fields.get(*key).is_some_and(list_of_objects))
}

/// One turn as the messages give it: the user's question and what the assistant did.
#[derive(Default)]
struct TurnParts {
    number: usize,
    question: Option<String>,
    answer: Option<String>,
    contexts: Vec<Value>,
    tool_calls: Vec<Value>,
    /// Whether an assistant message belongs to it (with text or tool calls only).
    replied: bool,
}

/// The record itself when it holds no conversation, else one record per assistant turn.
pub(crate) fn spread(record: Record, file: &Path) -> Result<Vec<Record>, DatasetError> {
    let Some(key) = messages_key(&record.fields) else {
        return Ok(vec![record]);
    };
    let Record {
        file: own_file,
        line,
        mut fields,
    } = record;
    let error = |message: String, field: &str| {
        let error = DatasetError::at(own_file.as_deref().unwrap_or(file), line, {
            DatasetErrorKind::Conversation { message }
        });
        error.with_field(field)
    };
    let Some(Value::Array(messages)) = fields.remove(key) else {
        return Ok(Vec::new());
    };
    let (preamble, turns) = read_turns(messages).map_err(|message| error(message, key))?;

    let conversation_id = match take_first(&mut fields, ID_KEYS) {
        Some((_, Value::String(id))) if !id.trim().is_empty() => id,
        Some((_, Value::Number(id))) => id.to_string(),
        Some((column, other)) => {
            let message = format!(
                "expected a non-empty string or a number, found {}",
                describe(&other)
            );
            return Err(error(message, column));
        }
        None => line.to_string(),
    };
    let reference = take_first(&mut fields, REFERENCE_KEYS);
    let expected_calls = take_first(&mut fields, EXPECTED_CALL_KEYS);

    let judged: Vec<&TurnParts> = turns
        .iter()
        .filter(|t| t.replied && t.question.is_some())
        .collect();
    let Some(last) = judged.last().map(|t| t.number) else {
        return Err(error(
            "no assistant reply to a user message to judge".into(),
            key,
        ));
    };
    let mut rows = Vec::with_capacity(judged.len());
    for parts in judged {
        let mut row = fields.clone();
        let history = history(&preamble, &turns, parts.number);
        row.insert(
            "id".into(),
            format!("{conversation_id}:{}", parts.number).into(),
        );
        row.insert("conversation_id".into(), conversation_id.clone().into());
        row.insert("turn".into(), parts.number.into());
        row.insert("question".into(), parts.question.clone().into());
        row.insert(
            "answer".into(),
            parts.answer.clone().unwrap_or_default().into(),
        );
        row.insert("contexts".into(), Value::Array(parts.contexts.clone()));
        if !history.is_empty() {
            row.insert("history".into(), Value::Array(history));
        }
        let mut calls = parts.tool_calls.clone();
        if parts.number == last {
            if let Some((_, value)) = &reference {
                row.insert("reference".into(), value.clone());
            }
            if let Some((_, value)) = &expected_calls {
                row.insert("reference_tool_calls".into(), value.clone());
                // Expected calls cover the conversation: the last turn answers for all.
                calls = turns.iter().flat_map(|t| t.tool_calls.clone()).collect();
            }
        }
        if !calls.is_empty() {
            row.insert("tool_calls".into(), Value::Array(calls));
        }
        rows.push(Record {
            file: own_file.clone(),
            line,
            fields: row,
        });
    }
    Ok(rows)
}

/// The first of `keys` the record has, removed, with the key it was under.
fn take_first(
    fields: &mut Map<String, Value>,
    keys: &[&'static str],
) -> Option<(&'static str, Value)> {
    keys.iter()
        .find_map(|key| fields.remove(*key).map(|value| (*key, value)))
        .filter(|(_, value)| !value.is_null())
}

/// The messages before turn `number`: what came before the first question, then each earlier
/// turn's question and answer (with that turn's contexts).
fn history(preamble: &[String], turns: &[TurnParts], number: usize) -> Vec<Value> {
    let mut history: Vec<Value> = preamble
        .iter()
        .map(|content| message(Role::Assistant, 1, content, &[]))
        .collect();
    for parts in turns.iter().take_while(|t| t.number < number) {
        if let Some(question) = &parts.question {
            history.push(message(Role::User, parts.number, question, &[]));
        }
        if let Some(answer) = &parts.answer {
            history.push(message(
                Role::Assistant,
                parts.number,
                answer,
                &parts.contexts,
            ));
        }
    }
    history
}

fn message(role: Role, turn: usize, content: &str, contexts: &[Value]) -> Value {
    let mut object = Map::new();
    object.insert("role".into(), role.name().into());
    object.insert("turn".into(), turn.into());
    object.insert("content".into(), content.into());
    if !contexts.is_empty() {
        object.insert("contexts".into(), Value::Array(contexts.to_vec()));
    }
    Value::Object(object)
}

/// Groups messages into turns; assistant messages before the first question come back on
/// their own. Errors name the message's 1-based position.
fn read_turns(messages: Vec<Value>) -> Result<(Vec<String>, Vec<TurnParts>), String> {
    let mut counter = TurnCounter::default();
    let mut preamble = Vec::new();
    let mut turns: Vec<TurnParts> = Vec::new();
    for (index, item) in messages.into_iter().enumerate() {
        let at = |what: String| format!("message {}: {what}", index + 1);
        let Value::Object(mut object) = item else {
            return Err(at(format!(
                "expected a {{role, content}} object, found {}",
                describe(&item)
            )));
        };
        let name = ["role", "type"]
            .iter()
            .find_map(|key| object.get(*key).and_then(Value::as_str))
            .unwrap_or_default()
            .to_ascii_lowercase();
        let content = content(object.remove("content")).map_err(&at)?;
        if matches!(name.as_str(), "tool" | "function") {
            if let (Some(parts), Some(text)) = (turns.last_mut(), content) {
                parts.contexts.push(text.into());
            }
            continue;
        }
        let speaker = match role(&name) {
            Some(Some(speaker)) => speaker,
            Some(None) => continue,
            None => {
                return Err(at(format!(
                    "expected a `role` or `type` of user, assistant or tool (human, ai), found `{name}`"
                )));
            }
        };
        let number = counter.next(speaker);
        if speaker == Role::User {
            turns.push(TurnParts {
                number,
                question: Some(content.unwrap_or_default()),
                ..TurnParts::default()
            });
            continue;
        }
        let Some(parts) = turns.last_mut() else {
            preamble.extend(content);
            continue;
        };
        parts.replied = true;
        if content.is_some() {
            parts.answer = content;
        }
        if let Some(value) = TURN_CONTEXT_KEYS.iter().find_map(|key| object.remove(*key)) {
            if !value.is_null() {
                let read = contexts(value.clone(), false).map_err(|kind| at(kind.to_string()))?;
                for context in read {
                    let value = serde_json::to_value(context).map_err(|e| at(e.to_string()))?;
                    parts.contexts.push(value);
                }
            }
        }
        if let Some(value) = MESSAGE_CALL_KEYS.iter().find_map(|key| object.remove(*key)) {
            if !value.is_null() {
                let calls = tool_calls(value, false).map_err(|kind| at(kind.to_string()))?;
                for call in calls {
                    let value = serde_json::to_value(call).map_err(|e| at(e.to_string()))?;
                    parts.tool_calls.push(value);
                }
            }
        }
    }
    Ok((preamble, turns))
}

/// A message's text: a string, OpenAI's list of `{type: text, text}` parts, or nothing.
fn content(value: Option<Value>) -> Result<Option<String>, String> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) if text.trim().is_empty() => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(Value::Array(parts)) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter_map(|part| part.get("text").and_then(Value::as_str))
                .collect();
            Ok((!texts.is_empty()).then(|| texts.join("\n")))
        }
        Some(other) => Err(format!(
            "expected a string `content`, found {}",
            describe(&other)
        )),
    }
}
