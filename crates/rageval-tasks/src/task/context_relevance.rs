//! [`ContextRelevance`]: is one context about the question (S4 context relevance)? The
//! heuristic judge's rule: the context holds at least [`RELEVANT_MIN`] of the question's
//! content words.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{TaskFamily, TaskKind, TypedTask};
use crate::error::TaskError;
use crate::heuristic::overlap::question_coverage;
use crate::heuristic::words::Material;
use crate::heuristic::{self, ByScript, Heuristic};
use crate::judged::{HeuristicInfo, Judged};
use crate::llm::{LlmTask, Part, text};
use crate::prompt::pack::{PackFiles, pack_files};
use crate::router::TaskJudge;
use crate::schema::{Shape, verdict};

/// Is `context` about `question` (S4 context relevance)? One call per context; callers run
/// a sample's contexts concurrently.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextRelevance {
    /// The user's question.
    pub question: String,
    /// One retrieved context.
    pub context: String,
}

/// The answer to [`ContextRelevance`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RelevanceVerdict {
    /// Relevant to the question.
    pub relevant: bool,
    /// Why.
    pub reason: String,
}

/// A context is relevant when it holds at least this share of the question's content words;
/// by the question's script.
pub const RELEVANT_MIN: ByScript = ByScript { en: 0.45, zh: 0.6 };

#[derive(Deserialize)]
pub(crate) struct RelevanceRaw {
    reason: String,
    relevant: bool,
}

impl LlmTask for ContextRelevance {
    const KIND: TaskKind = TaskKind::ContextRelevance;
    const PACK: PackFiles = pack_files!("context_relevance");
    type Raw = RelevanceRaw;
    type Output = RelevanceVerdict;
    fn schema(_: Shape) -> Value {
        verdict("relevant")
    }
    fn deciding_text(&self) -> &str {
        &self.question
    }
    fn parts(&self) -> Vec<Part<'_>> {
        vec![
            text("question", &self.question),
            text("context", &self.context),
        ]
    }
    fn convert(&self, raw: RelevanceRaw) -> Result<RelevanceVerdict, String> {
        Ok(RelevanceVerdict {
            relevant: raw.relevant,
            reason: raw.reason,
        })
    }
}

impl TypedTask for ContextRelevance {
    const FAMILY: TaskFamily = TaskFamily::Verdict;
    const SWEPT: Option<ByScript> = Some(RELEVANT_MIN);

    fn heuristic_info(_: &Heuristic) -> Option<HeuristicInfo> {
        Some(heuristic::rule(
            "content_word_overlap",
            heuristic::by_script("relevant_min", RELEVANT_MIN),
        ))
    }

    async fn by_heuristic(
        &self,
        heuristic: &Heuristic,
    ) -> Result<Judged<RelevanceVerdict>, TaskError> {
        Ok(heuristic.context_relevance(self))
    }
}

impl Heuristic {
    /// See [`RELEVANT_MIN`].
    pub fn context_relevance(&self, task: &ContextRelevance) -> Judged<RelevanceVerdict> {
        let verdict = relevance(&task.question, &task.context);
        self.judged(TaskKind::ContextRelevance, verdict, false)
    }
}

impl TaskJudge {
    /// [`ContextRelevance`].
    pub async fn context_relevance(
        &self,
        task: &ContextRelevance,
    ) -> Result<Judged<RelevanceVerdict>, TaskError> {
        self.ask(task).await
    }
}

/// Relevant when the context holds at least [`RELEVANT_MIN`] of the question's content
/// words.
fn relevance(question: &str, context: &str) -> RelevanceVerdict {
    match question_coverage(question, &Material::new(context)) {
        Err(reason) => RelevanceVerdict {
            relevant: false,
            reason,
        },
        Ok((covered, n)) => {
            let min = RELEVANT_MIN.for_text(question);
            let relevant = covered >= min;
            RelevanceVerdict {
                relevant,
                reason: format!(
                    "{covered:.2} of the question's {n} content words appear in the context ({} {min:.2})",
                    if relevant { "≥" } else { "<" }
                ),
            }
        }
    }
}
