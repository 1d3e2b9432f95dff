//! One evaluation sample: a question, what the system retrieved and answered, and what a
//! person says is right. Readers in [`crate::dataset`] build these; metrics only read them.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::conversation::{Hop, Position, ToolCall, ToolCallOrder, Turn};

/// One retrieved context, in the order the retriever returned it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Context {
    /// The retriever's id for the chunk, when the data has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub text: String,
    /// The retriever's score, when the data has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// Which retrieval hop of a multi-step answer found it (1-based), when the contexts
    /// of several hops are judged together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hop: Option<usize>,
}

impl Context {
    /// A context with text only.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            id: None,
            text: text.into(),
            score: None,
            hop: None,
        }
    }
}

/// One question with everything known about it.
///
/// Optional parts are empty (or `None`) when the dataset does not have them; a metric that
/// needs a missing part returns `Outcome::Undefined` naming it.
///
/// Serialised, a sample is one record of the dataset format the readers in
/// [`crate::dataset`] read back into an equal sample: canonical field names (`reference`,
/// not the field's name), and `metadata`'s keys at the top level beside them (so a metadata
/// key must not be a field's name or alias; the readers never leave one there).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Unique within a dataset: the data's own id, or the 1-based row number.
    pub id: String,
    pub question: String,
    /// Retrieved contexts in retriever order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contexts: Vec<Context>,
    /// The answer of the system under test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// Reference ("ground truth") answers; the first is the primary one.
    #[serde(rename = "reference", default, skip_serializing_if = "Vec::is_empty")]
    pub references: Vec<String>,
    /// Gold contexts (text), for string-similarity context precision/recall.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reference_contexts: Vec<String>,
    /// Gold context ids, for ID-based context precision/recall.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reference_context_ids: Vec<String>,
    /// The reference answer already split into statements (seed S4), reused instead of
    /// asking a judge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_statements: Option<Vec<String>>,
    /// The answer already split into statements (seed S4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_statements: Option<Vec<String>>,
    /// Questions already generated from the answer (seed S4's answer relevance).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simulated_questions: Option<Vec<String>>,
    /// The conversation before this question, oldest message first; empty for a question
    /// asked on its own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<Turn>,
    /// The conversation (a session) this sample is one turn of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_id: Option<String>,
    /// Its turn in the conversation, 1-based.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<usize>,
    /// For one retrieval hop of a multi-step answer scored on its own: which hop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hop: Option<Hop>,
    /// The tool calls the system made for this answer, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// The tool calls it should have made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reference_tool_calls: Vec<ToolCall>,
    /// Whether `reference_tool_calls` must be made in their order.
    #[serde(default, skip_serializing_if = "ToolCallOrder::is_in_order")]
    pub tool_call_order: ToolCallOrder,
    /// Every field of the row that is not one of the above, kept as it was.
    #[serde(flatten)]
    pub metadata: Map<String, Value>,
}

impl Sample {
    /// The reference answers joined by newlines, as ragas joins a list-valued reference.
    pub fn reference_text(&self) -> Option<String> {
        if self.references.is_empty() {
            None
        } else {
            Some(self.references.join("\n"))
        }
    }

    /// Where the sample sits in its conversation and trace, for results rows.
    pub fn position(&self) -> Position {
        Position {
            conversation_id: self.conversation_id.clone(),
            turn: self.turn,
            hop: self.hop.map(|hop| hop.index),
        }
    }

    /// Retrieved context ids, when every context has one.
    pub fn context_ids(&self) -> Option<Vec<&str>> {
        self.contexts.iter().map(|c| c.id.as_deref()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_text_joins_with_newlines() {
        let sample = Sample {
            references: vec!["a".into(), "b".into()],
            ..Sample::default()
        };
        assert_eq!(sample.reference_text().as_deref(), Some("a\nb"));
        assert_eq!(Sample::default().reference_text(), None);
    }

    #[test]
    fn context_ids_need_every_id() {
        let mut sample = Sample {
            contexts: vec![Context::text("x"), Context::text("y")],
            ..Sample::default()
        };
        assert_eq!(sample.context_ids(), None);
        sample.contexts[0].id = Some("1".into());
        sample.contexts[1].id = Some("2".into());
        assert_eq!(sample.context_ids(), Some(vec!["1", "2"]));
    }
}
