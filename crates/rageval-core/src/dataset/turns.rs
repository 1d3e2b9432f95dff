//! The values of a sample's conversation fields, as a record holds them: `history` (a list of
//! messages), `turn`, `hop`, `tool_calls` / `reference_tool_calls` and `tool_call_order`.
//!
//! Messages are `{role|type, content, contexts?, turn?}` objects: `user`/`human` and
//! `assistant`/`ai`, a turn's contexts under any name the contexts field answers to
//! (`contexts`, `retrieved_contexts`, DeepEval's `retrieval_context`). Tool calls are
//! `{name, arguments|args|input_parameters}` or OpenAI's `{function: {name, arguments}}`,
//! arguments an object or a JSON string holding one. In a table cell each value is JSON
//! text. The conversation readers ([`super::conversation`]) use the same pieces.

use serde_json::{Map, Value};

use super::error::DatasetErrorKind;
use super::value::{contexts, describe};
use crate::conversation::{Hop, Role, ToolCall, ToolCallOrder, Turn, TurnCounter};

/// Keys a message's contexts go by, in order of preference.
pub(crate) const TURN_CONTEXT_KEYS: &[&str] =
    &["contexts", "retrieved_contexts", "retrieval_context"];

/// A structured value, or the JSON text of one in a table cell.
fn structured(value: Value, tabular: bool) -> Value {
    match value {
        Value::String(text) if tabular => {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        }
        other => other,
    }
}

fn wrong_type(expected: &'static str, found: String) -> DatasetErrorKind {
    DatasetErrorKind::WrongType { expected, found }
}

/// The role a message's `role` or `type` names: `Some(None)` for the roles a history leaves
/// out (system, tool), `None` for a name no reader knows.
pub(crate) fn role(name: &str) -> Option<Option<Role>> {
    match name.to_ascii_lowercase().as_str() {
        "user" | "human" => Some(Some(Role::User)),
        "assistant" | "ai" | "bot" => Some(Some(Role::Assistant)),
        "system" | "developer" | "tool" | "function" => Some(None),
        _ => None,
    }
}

/// A `history` field: messages oldest first, numbered into turns when they carry no number.
pub(crate) fn history(value: Value, tabular: bool) -> Result<Vec<Turn>, DatasetErrorKind> {
    const EXPECTED: &str = "a list of {role, content} messages";
    let Value::Array(items) = structured(value, tabular) else {
        return Err(wrong_type(EXPECTED, "another value".into()));
    };
    let mut counter = TurnCounter::default();
    let mut turns = Vec::with_capacity(items.len());
    for (position, item) in items.into_iter().enumerate() {
        let at = |what: String| format!("{what} at position {}", position + 1);
        let Value::Object(mut message) = item else {
            return Err(wrong_type(EXPECTED, at(describe(&item))));
        };
        let name = ["role", "type"]
            .iter()
            .find_map(|key| message.get(*key).and_then(Value::as_str))
            .unwrap_or_default()
            .to_owned();
        let role = match role(&name) {
            Some(Some(role)) => role,
            Some(None) => continue,
            None => {
                return Err(wrong_type(
                    "a message `role` of user or assistant",
                    at(format!("`{name}`")),
                ));
            }
        };
        let content = match message.remove("content") {
            Some(Value::String(text)) => text,
            Some(Value::Null) | None => String::new(),
            Some(other) => return Err(wrong_type("a string `content`", at(describe(&other)))),
        };
        let counted = counter.next(role);
        let turn = match message.get("turn") {
            None | Some(Value::Null) => counted,
            Some(value) => positive(value)
                .ok_or_else(|| wrong_type("a `turn` of 1 or more", at(describe(value))))?,
        };
        let mut found = Vec::new();
        if let Some(value) = TURN_CONTEXT_KEYS
            .iter()
            .find_map(|key| message.remove(*key))
        {
            if !value.is_null() {
                found = contexts(value, false).map_err(|kind| match kind {
                    DatasetErrorKind::WrongType { expected, found } => {
                        wrong_type(expected, at(format!("contexts: {found}")))
                    }
                    other => other,
                })?;
            }
        }
        turns.push(Turn {
            turn,
            role,
            content,
            contexts: found,
        });
    }
    Ok(turns)
}

/// A whole number of at least 1 (a table cell's text too).
fn positive(value: &Value) -> Option<usize> {
    match value {
        Value::Number(n) => n.as_u64().and_then(|n| usize::try_from(n).ok()),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
    .filter(|n| *n >= 1)
}

/// A `turn` field: a whole number of at least 1.
pub(crate) fn turn(value: Value) -> Result<usize, DatasetErrorKind> {
    positive(&value).ok_or_else(|| wrong_type("a turn number of 1 or more", describe(&value)))
}

/// A `hop` field: `{index, used_by_answer?}`, or the index alone.
pub(crate) fn hop(value: Value, tabular: bool) -> Result<Hop, DatasetErrorKind> {
    const EXPECTED: &str = "a hop index of 1 or more, or {index, used_by_answer}";
    let value = structured(value, tabular);
    if let Some(index) = positive(&value) {
        return Ok(Hop {
            index,
            used_by_answer: None,
        });
    }
    let Value::Object(object) = &value else {
        return Err(wrong_type(EXPECTED, describe(&value)));
    };
    let index = object
        .get("index")
        .and_then(positive)
        .ok_or_else(|| wrong_type(EXPECTED, "an object without a positive `index`".into()))?;
    let used_by_answer = match object.get("used_by_answer") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(used)) => Some(*used),
        Some(other) => {
            return Err(wrong_type("a boolean `used_by_answer`", describe(other)));
        }
    };
    Ok(Hop {
        index,
        used_by_answer,
    })
}

/// A `tool_calls` or `reference_tool_calls` field: a list of calls.
pub(crate) fn tool_calls(value: Value, tabular: bool) -> Result<Vec<ToolCall>, DatasetErrorKind> {
    let Value::Array(items) = structured(value, tabular) else {
        return Err(wrong_type(
            "a list of {name, arguments} tool calls",
            "another value".into(),
        ));
    };
    items
        .into_iter()
        .enumerate()
        .map(|(position, item)| {
            tool_call(item).map_err(|found| {
                wrong_type(
                    "a tool call {name, arguments}",
                    format!("{found} at position {}", position + 1),
                )
            })
        })
        .collect()
}

/// One tool call in any of the shapes read, or what is wrong with it.
pub(crate) fn tool_call(item: Value) -> Result<ToolCall, String> {
    let Value::Object(mut object) = item else {
        return Err(describe(&item));
    };
    // OpenAI: {id, type: "function", function: {name, arguments}}.
    if let Some(Value::Object(function)) = object.remove("function") {
        object = function;
    }
    let name = match object.remove("name") {
        Some(Value::String(name)) if !name.trim().is_empty() => name,
        _ => return Err("an object without a `name`".into()),
    };
    let arguments = ["arguments", "args", "input_parameters", "input"]
        .iter()
        .find_map(|key| object.remove(*key))
        .unwrap_or(Value::Null);
    let arguments = match arguments {
        Value::Null => Map::new(),
        Value::Object(arguments) => arguments,
        Value::String(text) if text.trim().is_empty() => Map::new(),
        Value::String(text) => match serde_json::from_str(&text) {
            Ok(Value::Object(arguments)) => arguments,
            _ => {
                return Err(format!(
                    "`{name}` with arguments that are not a json object"
                ));
            }
        },
        other => {
            return Err(format!(
                "`{name}` with arguments that are {}",
                describe(&other)
            ));
        }
    };
    Ok(ToolCall { name, arguments })
}

/// A `tool_call_order` field: `in_order` (also `strict`, `true`) or `any_order` (`any`,
/// `false`).
pub(crate) fn order(value: Value) -> Result<ToolCallOrder, DatasetErrorKind> {
    let order = match &value {
        Value::Bool(true) => Some(ToolCallOrder::InOrder),
        Value::Bool(false) => Some(ToolCallOrder::AnyOrder),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "in_order" | "strict" | "true" => Some(ToolCallOrder::InOrder),
            "any_order" | "any" | "false" => Some(ToolCallOrder::AnyOrder),
            _ => None,
        },
        _ => None,
    };
    order.ok_or_else(|| wrong_type("`in_order` or `any_order`", describe(&value)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn history_numbers_turns_and_keeps_each_turns_contexts() {
        let turns = history(
            json!([
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Who?"},
                {"type": "ai", "content": "Ada.", "retrieval_context": ["Ada wrote it."]},
                {"role": "human", "content": "When?"},
            ]),
            false,
        )
        .unwrap_or_default();
        let summary: Vec<(usize, Role, &str, usize)> = turns
            .iter()
            .map(|t| (t.turn, t.role, t.content.as_str(), t.contexts.len()))
            .collect();
        assert_eq!(
            summary,
            [
                (1, Role::User, "Who?", 0),
                (1, Role::Assistant, "Ada.", 1),
                (2, Role::User, "When?", 0)
            ]
        );
    }

    #[test]
    fn bad_messages_name_their_position() {
        let error = history(
            json!([{"role": "user", "content": "a"}, {"role": "narrator"}]),
            false,
        )
        .unwrap_err();
        assert!(
            error.to_string().contains("`narrator` at position 2"),
            "{error}"
        );
        let error = history(json!([{"role": "user", "content": 3}]), false).unwrap_err();
        assert!(
            error.to_string().contains("a number (3) at position 1"),
            "{error}"
        );
    }

    #[test]
    fn tool_calls_come_in_three_shapes() {
        let calls = tool_calls(
            json!([
                {"name": "weather", "args": {"city": "Oslo"}},
                {"id": "c1", "type": "function", "function": {"name": "convert", "arguments": "{\"to\": \"C\"}"}},
                {"name": "search", "input_parameters": {"q": "x"}},
            ]),
            false,
        )
        .unwrap_or_default();
        let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["weather", "convert", "search"]);
        assert_eq!(calls[1].arguments["to"], "C");
        let error = tool_calls(json!([{"name": "x", "arguments": "[1]"}]), false).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("not a json object at position 1"),
            "{error}"
        );
    }

    #[test]
    fn hops_turns_and_orders() {
        assert_eq!(hop(json!(2), false).ok().map(|h| h.index), Some(2));
        let read = hop(json!({"index": 1, "used_by_answer": false}), false).ok();
        assert_eq!(read.and_then(|h| h.used_by_answer), Some(false));
        assert!(hop(json!({"index": 0}), false).is_err());
        assert_eq!(turn(json!("3")).ok(), Some(3));
        assert!(turn(json!(0)).is_err());
        assert_eq!(order(json!("any")).ok(), Some(ToolCallOrder::AnyOrder));
        assert!(order(json!("sometimes")).is_err());
    }
}
