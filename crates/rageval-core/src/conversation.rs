//! What a sample knows of the conversation and the steps around it: the earlier turns of a
//! chat ([`Turn`]), which retrieval hop of a multi-step answer it is ([`Hop`]), the tool calls
//! made and expected ([`ToolCall`], [`ToolCallOrder`]), and where a sample sits for reports
//! ([`Position`]).
//!
//! A sample that continues a conversation carries the turns before it, each with its own
//! contexts where they are known, so a metric reads the history as input; where the
//! history came from (OpenAI messages, ragas, DeepEval, a trace session) is the readers'
//! business. Nothing here judges anything.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::sample::Context;

/// Who spoke in a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
}

impl Role {
    /// `user` or `assistant`.
    pub fn name(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// One earlier message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    /// The turn it belongs to, 1-based: a user message opens a turn, the assistant's reply
    /// belongs to it.
    pub turn: usize,
    pub role: Role,
    pub content: String,
    /// What the assistant had retrieved for this reply, when known (never for a user
    /// message).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contexts: Vec<Context>,
}

impl Turn {
    /// A message of `role` in `turn`, without contexts.
    pub fn new(turn: usize, role: Role, content: impl Into<String>) -> Self {
        Turn {
            turn,
            role,
            content: content.into(),
            contexts: Vec::new(),
        }
    }
}

/// Numbers messages into turns as they come: a user message opens the next turn; anything
/// before the first user message belongs to turn 1.
#[derive(Debug, Clone, Copy, Default)]
pub struct TurnCounter {
    opened: usize,
}

impl TurnCounter {
    /// The turn of the next message of `role`.
    pub fn next(&mut self, role: Role) -> usize {
        if role == Role::User {
            self.opened += 1;
        }
        self.opened.max(1)
    }

    /// The turn a new user question would open.
    pub fn upcoming(&self) -> usize {
        self.opened + 1
    }
}

/// A retrieval hop of a multi-step answer, as a scored unit of its own: its question is the
/// hop's sub-query and its contexts what that hop retrieved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hop {
    /// Its position among the trace's retriever steps, 1-based, in time order.
    pub index: usize,
    /// Whether the final answer's generator was shown what this hop retrieved, when the
    /// trace says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used_by_answer: Option<bool>,
}

/// One call of a tool: its name and its arguments as JSON (an object, or empty).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub name: String,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub arguments: Map<String, Value>,
}

impl ToolCall {
    /// A call of `name` with `arguments`.
    pub fn new(name: impl Into<String>, arguments: Map<String, Value>) -> Self {
        ToolCall {
            name: name.into(),
            arguments,
        }
    }
}

/// Whether expected tool calls must come in their listed order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallOrder {
    /// In the order listed (ragas's `strict_order`, its default).
    #[default]
    InOrder,
    /// In any order.
    AnyOrder,
}

impl ToolCallOrder {
    /// Whether this is the default, [`ToolCallOrder::InOrder`].
    pub fn is_in_order(&self) -> bool {
        *self == ToolCallOrder::InOrder
    }

    /// `in_order` or `any_order`.
    pub fn name(self) -> &'static str {
        match self {
            ToolCallOrder::InOrder => "in_order",
            ToolCallOrder::AnyOrder => "any_order",
        }
    }
}

/// Where a sample sits: its conversation and turn, and its retrieval hop. Results rows carry
/// it, so reports group turns by conversation and hops by position without the dataset.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Position {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<usize>,
    /// The hop's index, for a per-hop unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hop: Option<usize>,
}

impl Position {
    /// Whether it says nothing (a sample asked on its own).
    pub fn is_empty(&self) -> bool {
        *self == Position::default()
    }
}

/// Evidence detail a conversation-aware metric sets on a turn it scores: `true` when the
/// turn lapses (a claim neither the contexts nor the conversation support; a fact the user
/// gave, contradicted or asked again). Summaries count the conversations with any lapse.
pub const TURN_LAPSE: &str = "turn_lapse";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_message_opens_a_turn_and_a_greeting_belongs_to_the_first() {
        let mut counter = TurnCounter::default();
        assert_eq!(counter.next(Role::Assistant), 1);
        assert_eq!(counter.next(Role::User), 1);
        assert_eq!(counter.next(Role::Assistant), 1);
        assert_eq!(counter.next(Role::User), 2);
        assert_eq!(counter.upcoming(), 3);
    }

    #[test]
    fn positions_serialise_only_what_they_know() {
        assert_eq!(
            serde_json::to_value(Position::default()).unwrap_or_default(),
            serde_json::json!({})
        );
        let hop = Position {
            conversation_id: Some("s1".into()),
            turn: Some(2),
            hop: Some(1),
        };
        assert_eq!(
            serde_json::to_value(&hop).unwrap_or_default(),
            serde_json::json!({"conversation_id": "s1", "turn": 2, "hop": 1})
        );
    }
}
