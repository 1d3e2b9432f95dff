//! [`ContextUsefulness`]: did one context help to arrive at the answer (S0 useful context
//! precision; ragas context precision with the reference)? The heuristic judge's rule: the
//! context holds at least [`USEFUL_MIN`] of what the answer adds to the question.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{TaskFamily, TaskKind, TypedTask};
use crate::error::TaskError;
use crate::heuristic::overlap::answer_overlap;
use crate::heuristic::{self, ByScript, Heuristic};
use crate::judged::{HeuristicInfo, Judged};
use crate::llm::{LlmTask, Part, text};
use crate::prompt::pack::{PackFiles, pack_files};
use crate::router::TaskJudge;
use crate::schema::{Shape, verdict};

/// Did `context` help to arrive at `answer` (S0 useful context precision with the generated
/// answer; ragas context precision with the reference answer)?
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextUsefulness {
    /// The user's question.
    pub question: String,
    /// The answer the context is judged for (a reference or a generated answer).
    pub answer: String,
    /// One retrieved context.
    pub context: String,
}

/// The answer to [`ContextUsefulness`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UsefulnessVerdict {
    /// Useful for the answer.
    pub useful: bool,
    /// Why.
    pub reason: String,
}

/// A context is useful when it holds at least this share of what the answer adds to the
/// question; by the question's script.
pub const USEFUL_MIN: ByScript = ByScript { en: 0.55, zh: 0.35 };

/// One context's usefulness as a chat model writes it (also per passage, in
/// [`ContextsCheck`](super::ContextsCheck)).
#[derive(Deserialize)]
pub(crate) struct UsefulnessRaw {
    reason: String,
    useful: bool,
}

impl UsefulnessRaw {
    pub(crate) fn into_verdict(self) -> UsefulnessVerdict {
        UsefulnessVerdict {
            useful: self.useful,
            reason: self.reason,
        }
    }
}

impl LlmTask for ContextUsefulness {
    const KIND: TaskKind = TaskKind::ContextUsefulness;
    const PACK: PackFiles = pack_files!("context_usefulness");
    type Raw = UsefulnessRaw;
    type Output = UsefulnessVerdict;
    fn schema(_: Shape) -> Value {
        verdict("useful")
    }
    fn deciding_text(&self) -> &str {
        &self.question
    }
    fn parts(&self) -> Vec<Part<'_>> {
        vec![
            text("question", &self.question),
            text("answer", &self.answer),
            text("context", &self.context),
        ]
    }
    fn convert(&self, raw: UsefulnessRaw) -> Result<UsefulnessVerdict, String> {
        Ok(raw.into_verdict())
    }
}

impl TypedTask for ContextUsefulness {
    const FAMILY: TaskFamily = TaskFamily::Verdict;
    const SWEPT: Option<ByScript> = Some(USEFUL_MIN);

    fn heuristic_info(_: &Heuristic) -> Option<HeuristicInfo> {
        Some(heuristic::rule(
            "content_word_overlap",
            heuristic::by_script("useful_min", USEFUL_MIN),
        ))
    }

    async fn by_heuristic(
        &self,
        heuristic: &Heuristic,
    ) -> Result<Judged<UsefulnessVerdict>, TaskError> {
        Ok(heuristic.context_usefulness(self))
    }
}

impl Heuristic {
    /// See [`USEFUL_MIN`].
    pub fn context_usefulness(&self, task: &ContextUsefulness) -> Judged<UsefulnessVerdict> {
        let verdict = usefulness(&task.question, &task.answer, &task.context);
        self.judged(TaskKind::ContextUsefulness, verdict, false)
    }
}

impl TaskJudge {
    /// [`ContextUsefulness`].
    pub async fn context_usefulness(
        &self,
        task: &ContextUsefulness,
    ) -> Result<Judged<UsefulnessVerdict>, TaskError> {
        self.ask(task).await
    }
}

/// Useful when the context holds at least [`USEFUL_MIN`] of what the answer adds to the
/// question (`answer_overlap`).
fn usefulness(question: &str, answer: &str, context: &str) -> UsefulnessVerdict {
    let (covered, n, what) = match answer_overlap(question, answer, context) {
        Ok(measured) => measured,
        Err(reason) => {
            return UsefulnessVerdict {
                useful: false,
                reason,
            };
        }
    };
    let min = USEFUL_MIN.for_text(question);
    let useful = covered >= min;
    UsefulnessVerdict {
        useful,
        reason: format!(
            "{covered:.2} of the answer's {n} {what} appear in the context ({} {min:.2})",
            if useful { "≥" } else { "<" }
        ),
    }
}
