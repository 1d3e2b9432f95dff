//! [`Abstention`]: two separate decisions about one sample — do the contexts support an
//! answer to the question, and does the answer decline to give one? The heuristic judge
//! decides only the second, by [`REFUSAL`]'s phrases, and says it cannot tell the first
//! ([`UNDECIDED_SUPPORT`]) rather than guess.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{TaskFamily, TaskKind, TypedTask};
use crate::error::TaskError;
use crate::heuristic::overlap::first_phrase;
use crate::heuristic::{self, Heuristic};
use crate::judged::{HeuristicInfo, Judged};
use crate::llm::{LlmTask, Part, passages, text};
use crate::prompt::pack::{PackFiles, pack_files};
use crate::router::TaskJudge;
use crate::schema::{Shape, object, reason};

/// Two separate decisions about one sample: do the contexts support an answer to the
/// question, and does the answer decline to give one (abstention; DeepEval's
/// `AbstentionMetric` proposal and ragas's risk-control metrics ask the same pair)?
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Abstention {
    /// The user's question.
    pub question: String,
    /// The retrieved contexts.
    pub contexts: Vec<String>,
    /// The system's answer.
    pub answer: String,
}

/// The answer to [`Abstention`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbstentionVerdict {
    /// The contexts hold what a correct answer needs; `None` when the implementation cannot
    /// tell (the heuristic judge, which says so rather than guess).
    pub supported: Option<bool>,
    /// The answer declines to answer ("I don't know", 无法回答).
    pub refused: bool,
    /// Why.
    pub reason: String,
}

/// Phrases (lower-cased) by which an answer declines to answer:
/// [`NONCOMMITTAL`](crate::heuristic::NONCOMMITTAL)'s without its hedges (`not sure`,
/// `不确定`, which also match `不确定性`, "uncertainty"), plus the refusals RGB asks models
/// to write (`can not answer`, `insufficient information`, `信息不足`). Measured by
/// `examples/measure_abstention.rs`.
pub const REFUSAL: &[&str] = &[
    "i don't know",
    "i do not know",
    "cannot be determined",
    "can't be determined",
    "cannot answer",
    "can't answer",
    "can not answer",
    "unable to answer",
    "not able to answer",
    "not been provided",
    "not provided",
    "no information",
    "insufficient information",
    "not enough information",
    "not mentioned",
    "is unknown",
    "不知道",
    "无法回答",
    "无法确定",
    "无法判断",
    "无法基于",
    "信息不足",
    "没有提供",
    "未提供",
    "未提及",
    "没有提及",
    "没有相关信息",
    "不清楚",
];

/// What the heuristic judge says about whether the contexts support an answer.
pub const UNDECIDED_SUPPORT: &str =
    "the heuristic judge cannot tell whether the contexts support an answer";

#[derive(Deserialize)]
pub(crate) struct AbstentionRaw {
    reason: String,
    refused: bool,
    supported: bool,
}

impl LlmTask for Abstention {
    const KIND: TaskKind = TaskKind::Abstention;
    const PACK: PackFiles = pack_files!("abstention");
    type Raw = AbstentionRaw;
    type Output = AbstentionVerdict;
    fn schema(_: Shape) -> Value {
        object([
            ("reason", reason()),
            ("refused", json!({"type": "boolean"})),
            ("supported", json!({"type": "boolean"})),
        ])
    }
    fn deciding_text(&self) -> &str {
        &self.question
    }
    fn parts(&self) -> Vec<Part<'_>> {
        vec![
            text("question", &self.question),
            passages(&self.contexts),
            text("answer", &self.answer),
        ]
    }
    fn convert(&self, raw: AbstentionRaw) -> Result<AbstentionVerdict, String> {
        Ok(AbstentionVerdict {
            supported: Some(raw.supported),
            refused: raw.refused,
            reason: raw.reason,
        })
    }
}

impl TypedTask for Abstention {
    const FAMILY: TaskFamily = TaskFamily::Verdict;

    fn heuristic_info(_: &Heuristic) -> Option<HeuristicInfo> {
        Some(heuristic::rule("refusal_phrases", vec![]))
    }

    async fn by_heuristic(
        &self,
        heuristic: &Heuristic,
    ) -> Result<Judged<AbstentionVerdict>, TaskError> {
        Ok(heuristic.abstention(self))
    }
}

impl Heuristic {
    /// Whether the answer declines, by [`REFUSAL`]'s phrases. Whether the contexts support
    /// an answer it does not decide (`supported` is `None`): passages retrieved for a
    /// question share its words whether or not they hold the answer, and the overlap rules
    /// told RGB's positive passages from its negative ones at chance on both fact sets
    /// (`examples/measure_abstention.rs`), so the judge says so rather than guess.
    pub fn abstention(&self, task: &Abstention) -> Judged<AbstentionVerdict> {
        let phrase = first_phrase(&task.answer, REFUSAL);
        let verdict = AbstentionVerdict {
            supported: None,
            refused: phrase.is_some(),
            reason: match phrase {
                Some(phrase) => format!("the answer declines (\"{phrase}\"); {UNDECIDED_SUPPORT}"),
                None => format!("the answer holds no refusal phrase; {UNDECIDED_SUPPORT}"),
            },
        };
        self.judged(TaskKind::Abstention, verdict, false)
    }
}

impl TaskJudge {
    /// [`Abstention`]: both decisions by the routed implementation (the heuristic judge
    /// decides only whether the answer declines, and says it cannot tell the other).
    pub async fn abstention(
        &self,
        task: &Abstention,
    ) -> Result<Judged<AbstentionVerdict>, TaskError> {
        self.ask(task).await
    }
}
