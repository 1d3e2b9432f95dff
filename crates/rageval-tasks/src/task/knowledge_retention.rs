//! [`KnowledgeRetention`]: does the assistant's latest reply keep what the user established
//! earlier in the conversation — neither contradicting it nor asking for it again? Only a
//! chat model answers it: the heuristic judge's content-word overlap cannot tell a reply
//! that restates an earlier fact from one that contradicts it, nor a question that re-asks
//! from one that asks for something new.

use rageval_core::Turn;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::support_verdicts::history;
use super::{TaskFamily, TaskKind, TypedTask};
use crate::error::TaskError;
use crate::judged::Judged;
use crate::llm::{LlmTask, Part, text};
use crate::prompt::Lang;
use crate::prompt::pack::{PackFiles, pack_files};
use crate::router::TaskJudge;
use crate::schema::{Shape, object, reason};

/// Does `answer`, the assistant's reply to `question`, keep what the user established in
/// `history` (the turns before it)? Asked only for a turn with a history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KnowledgeRetention {
    /// The turn's question.
    pub question: String,
    /// The assistant's reply.
    pub answer: String,
    /// The turns before it; the passages retrieved for them are not shown.
    pub history: Vec<Turn>,
}

/// The answer to [`KnowledgeRetention`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RetentionVerdict {
    /// The reply contradicts something the user established earlier.
    pub contradicts: bool,
    /// The reply asks the user again for something the user already gave.
    pub re_asks: bool,
    /// Why.
    pub reason: String,
}

impl RetentionVerdict {
    /// Neither contradicted nor re-asked.
    pub fn kept(&self) -> bool {
        !self.contradicts && !self.re_asks
    }
}

#[derive(Deserialize)]
pub(crate) struct RetentionRaw {
    reason: String,
    contradicts: bool,
    re_asks: bool,
}

impl LlmTask for KnowledgeRetention {
    const KIND: TaskKind = TaskKind::KnowledgeRetention;
    const PACK: PackFiles = pack_files!("knowledge_retention");
    type Raw = RetentionRaw;
    type Output = RetentionVerdict;
    fn schema(_: Shape) -> Value {
        object([
            ("reason", reason()),
            ("contradicts", json!({"type": "boolean"})),
            ("re_asks", json!({"type": "boolean"})),
        ])
    }
    fn deciding_text(&self) -> &str {
        &self.question
    }
    fn parts(&self) -> Vec<Part<'_>> {
        vec![
            text("question", &self.question),
            text("answer", &self.answer),
        ]
    }
    fn pack_parts(&self, lang: Lang) -> Vec<Part<'_>> {
        vec![history::messages_only(&self.history, lang)]
    }
    fn convert(&self, raw: RetentionRaw) -> Result<RetentionVerdict, String> {
        Ok(RetentionVerdict {
            contradicts: raw.contradicts,
            re_asks: raw.re_asks,
            reason: raw.reason,
        })
    }
}

impl TypedTask for KnowledgeRetention {
    const FAMILY: TaskFamily = TaskFamily::Verdict;

    fn by_rule(&self) -> Result<Option<Judged<RetentionVerdict>>, TaskError> {
        match self.history.is_empty() {
            true => Err(TaskError::Unavailable {
                task: Self::KIND,
                why: "a first turn has nothing earlier to keep".into(),
            }),
            false => Ok(None),
        }
    }

    async fn by_heuristic(
        &self,
        _: &crate::heuristic::Heuristic,
    ) -> Result<Judged<RetentionVerdict>, TaskError> {
        Err(TaskError::Unavailable {
            task: Self::KIND,
            why: "content-word overlap cannot tell a restated fact from a contradicted one".into(),
        })
    }
}

impl TaskJudge {
    /// [`KnowledgeRetention`].
    pub async fn knowledge_retention(
        &self,
        task: &KnowledgeRetention,
    ) -> Result<Judged<RetentionVerdict>, TaskError> {
        self.ask(task).await
    }
}
