//! [`AnswerClosedBook`]: the model's own answer to a question, with no passage — the
//! closed-book check of a generated test item (`rageval testset`). Only a chat model
//! answers it.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{TaskFamily, TaskKind, TypedTask};
use crate::error::TaskError;
use crate::judged::Judged;
use crate::llm::{LlmTask, Part, text};
use crate::prompt::pack::{PackFiles, pack_files};
use crate::router::TaskJudge;
use crate::schema::{Shape, object};

/// Answer `question` from the model's own knowledge, with no passage: the closed-book check
/// of a generated item. Answered with the answer, or `None` when the model says it does not
/// know.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnswerClosedBook {
    /// The question.
    pub question: String,
}

#[derive(Deserialize)]
pub(crate) struct ClosedBookRaw {
    answer: String,
    known: bool,
}

impl LlmTask for AnswerClosedBook {
    const KIND: TaskKind = TaskKind::AnswerClosedBook;
    const PACK: PackFiles = pack_files!("answer_closed_book");
    type Raw = ClosedBookRaw;
    type Output = Option<String>;
    fn schema(_: Shape) -> Value {
        object([
            ("answer", json!({"type": "string"})),
            ("known", json!({"type": "boolean"})),
        ])
    }
    fn deciding_text(&self) -> &str {
        &self.question
    }
    fn parts(&self) -> Vec<Part<'_>> {
        vec![text("question", &self.question)]
    }
    fn convert(&self, raw: ClosedBookRaw) -> Result<Option<String>, String> {
        let answer = raw.answer.trim();
        Ok((raw.known && !answer.is_empty()).then(|| answer.to_owned()))
    }
}

impl TypedTask for AnswerClosedBook {
    const FAMILY: TaskFamily = TaskFamily::Generation;
}

impl TaskJudge {
    /// [`AnswerClosedBook`]: the model's own answer, `None` when it says it does not know.
    pub async fn answer_closed_book(
        &self,
        task: &AnswerClosedBook,
    ) -> Result<Judged<Option<String>>, TaskError> {
        self.ask(task).await
    }
}
