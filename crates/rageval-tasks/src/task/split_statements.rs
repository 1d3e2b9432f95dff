//! [`SplitStatements`]: a text split into self-contained atomic statements. The heuristic
//! judge's rule is its sentence splitter (`heuristic::sentences`); a blank text states
//! nothing.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{TaskFamily, TaskKind, TypedTask};
use crate::error::TaskError;
use crate::heuristic::{self, Heuristic, sentences};
use crate::judged::{HeuristicInfo, Judged};
use crate::llm::{LlmTask, Part, clean_list, text};
use crate::prompt::pack::{PackFiles, pack_files};
use crate::router::TaskJudge;
use crate::schema::{Shape, object, text_list};

/// Split `text` (an answer or a reference, written for `question`) into self-contained
/// atomic statements: one fact each, pronouns replaced by what they refer to.
/// Answered with the statements, possibly none (an evasive answer states nothing).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SplitStatements {
    /// The question the text answers (context for resolving references).
    pub question: String,
    /// The text to split.
    pub text: String,
}

#[derive(Deserialize)]
pub(crate) struct StatementsRaw {
    statements: Vec<String>,
}

impl LlmTask for SplitStatements {
    const KIND: TaskKind = TaskKind::SplitStatements;
    const PACK: PackFiles = pack_files!("split_statements");
    type Raw = StatementsRaw;
    type Output = Vec<String>;
    fn schema(_: Shape) -> Value {
        object([("statements", text_list(None))])
    }
    fn deciding_text(&self) -> &str {
        &self.question
    }
    fn parts(&self) -> Vec<Part<'_>> {
        vec![text("question", &self.question), text("text", &self.text)]
    }
    fn convert(&self, raw: StatementsRaw) -> Result<Vec<String>, String> {
        Ok(clean_list(raw.statements))
    }
}

impl TypedTask for SplitStatements {
    const FAMILY: TaskFamily = TaskFamily::Generation;

    fn heuristic_info(_: &Heuristic) -> Option<HeuristicInfo> {
        Some(heuristic::rule("sentence_split", vec![]))
    }

    /// A blank text has no statements.
    fn by_rule(&self) -> Result<Option<Judged<Vec<String>>>, TaskError> {
        Ok(self
            .text
            .trim()
            .is_empty()
            .then(|| Judged::by_rule(Vec::new(), "a blank text states nothing")))
    }

    async fn by_heuristic(&self, heuristic: &Heuristic) -> Result<Judged<Vec<String>>, TaskError> {
        Ok(heuristic.split_statements(self))
    }
}

impl Heuristic {
    /// Sentences as statements.
    pub fn split_statements(&self, task: &SplitStatements) -> Judged<Vec<String>> {
        self.judged(TaskKind::SplitStatements, sentences(&task.text), false)
    }
}

impl TaskJudge {
    /// [`SplitStatements`]: a blank text has no statements (no call).
    pub async fn split_statements(
        &self,
        task: &SplitStatements,
    ) -> Result<Judged<Vec<String>>, TaskError> {
        self.ask(task).await
    }
}
