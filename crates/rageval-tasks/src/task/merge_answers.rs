//! [`MergeAnswers`]: partial answers to one question merged into one (reference
//! generation). Only a chat model merges; one answer is its own merge, and none is an input
//! error.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{TaskFamily, TaskKind, TypedTask};
use crate::error::TaskError;
use crate::judged::Judged;
use crate::llm::{LlmTask, Part, text};
use crate::prompt::pack::{PackFiles, pack_files};
use crate::router::TaskJudge;
use crate::schema::{Shape, object};

/// Merge partial answers to `question` into one answer (reference generation, issue 4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MergeAnswers {
    /// The user's question.
    pub question: String,
    /// The partial answers, each from a different part of the material.
    pub answers: Vec<String>,
}

#[derive(Deserialize)]
pub(crate) struct MergedRaw {
    answer: String,
}

impl LlmTask for MergeAnswers {
    const KIND: TaskKind = TaskKind::MergeAnswers;
    const PACK: PackFiles = pack_files!("merge_answers");
    type Raw = MergedRaw;
    type Output = String;
    fn schema(_: Shape) -> Value {
        object([("answer", json!({"type": "string", "minLength": 1}))])
    }
    fn deciding_text(&self) -> &str {
        &self.question
    }
    fn parts(&self) -> Vec<Part<'_>> {
        vec![
            text("question", &self.question),
            Part::Items {
                slot: "answers",
                label: "partial answer",
                key: None,
                items: &self.answers,
            },
        ]
    }
    fn convert(&self, raw: MergedRaw) -> Result<String, String> {
        let answer = raw.answer.trim();
        if answer.is_empty() {
            return Err("the merged answer is blank".into());
        }
        Ok(answer.to_owned())
    }
}

impl TypedTask for MergeAnswers {
    const FAMILY: TaskFamily = TaskFamily::Generation;

    /// One answer is its own merge; none is an input error.
    fn by_rule(&self) -> Result<Option<Judged<String>>, TaskError> {
        let answers: Vec<&String> = self
            .answers
            .iter()
            .filter(|a| !a.trim().is_empty())
            .collect();
        match answers.as_slice() {
            [] => Err(TaskError::Input {
                task: TaskKind::MergeAnswers,
                why: "there are no answers to merge".into(),
            }),
            [one] => Ok(Some(Judged::by_rule(
                one.trim().to_owned(),
                "a single answer is its own merge",
            ))),
            _ => Ok(None),
        }
    }
}

impl TaskJudge {
    /// [`MergeAnswers`]: one answer is its own merge (no call); none is an input error.
    pub async fn merge_answers(&self, task: &MergeAnswers) -> Result<Judged<String>, TaskError> {
        self.ask(task).await
    }
}
