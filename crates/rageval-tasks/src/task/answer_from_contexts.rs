//! [`AnswerFromContexts`]: an answer to the question from the contexts alone, or word that
//! they do not tell (reference generation and the baseline RAG). Only a chat model writes
//! it; without a context the answer is unknown.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{TaskFamily, TaskKind, TypedTask};
use crate::error::TaskError;
use crate::judged::Judged;
use crate::llm::{LlmTask, Part, passages, text};
use crate::prompt::pack::{PackFiles, pack_files};
use crate::router::TaskJudge;
use crate::schema::{Shape, object};

/// Answer `question` from `contexts` alone, or say the contexts do not tell (reference
/// generation and the baseline RAG, issues 4 and 5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnswerFromContexts {
    /// The user's question.
    pub question: String,
    /// The material to answer from.
    pub contexts: Vec<String>,
}

/// The answer to [`AnswerFromContexts`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextAnswer {
    /// The answer, or `None` when the contexts do not contain it ("unknown").
    pub answer: Option<String>,
}

#[derive(Deserialize)]
pub(crate) struct ContextAnswerRaw {
    answer: String,
    found: bool,
}

impl LlmTask for AnswerFromContexts {
    const KIND: TaskKind = TaskKind::AnswerFromContexts;
    const PACK: PackFiles = pack_files!("answer_from_contexts");
    type Raw = ContextAnswerRaw;
    type Output = ContextAnswer;
    fn schema(_: Shape) -> Value {
        object([
            ("answer", json!({"type": "string"})),
            ("found", json!({"type": "boolean"})),
        ])
    }
    fn deciding_text(&self) -> &str {
        &self.question
    }
    fn parts(&self) -> Vec<Part<'_>> {
        vec![text("question", &self.question), passages(&self.contexts)]
    }
    fn convert(&self, raw: ContextAnswerRaw) -> Result<ContextAnswer, String> {
        let answer = raw.answer.trim();
        Ok(ContextAnswer {
            answer: (raw.found && !answer.is_empty()).then(|| answer.to_owned()),
        })
    }
}

impl TypedTask for AnswerFromContexts {
    const FAMILY: TaskFamily = TaskFamily::Generation;

    /// No contexts → unknown.
    fn by_rule(&self) -> Result<Option<Judged<ContextAnswer>>, TaskError> {
        Ok(self.contexts.iter().all(|c| c.trim().is_empty()).then(|| {
            Judged::by_rule(
                ContextAnswer { answer: None },
                "no context, so the answer is unknown",
            )
        }))
    }
}

impl TaskJudge {
    /// [`AnswerFromContexts`]: no contexts → unknown (no call).
    pub async fn answer_from_contexts(
        &self,
        task: &AnswerFromContexts,
    ) -> Result<Judged<ContextAnswer>, TaskError> {
        self.ask(task).await
    }
}
