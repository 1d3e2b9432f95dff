//! [`AnswerRubric`]: how well an answer addresses the question, 1 to 5 (S1 answer
//! relevance). The heuristic judge's rule: 1 for a noncommittal answer ([`NONCOMMITTAL`]),
//! else 1 + 4 × the share of the question's content words the answer holds.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{TaskFamily, TaskKind, TypedTask};
use crate::error::TaskError;
use crate::heuristic::overlap::{first_phrase, question_coverage};
use crate::heuristic::words::Material;
use crate::heuristic::{self, Heuristic};
use crate::judged::{HeuristicInfo, Judged};
use crate::llm::{LlmTask, Part, text};
use crate::prompt::pack::{PackFiles, pack_files};
use crate::router::TaskJudge;
use crate::schema::{Shape, integer, object, reason};

/// Rate how well `answer` addresses `question` on a 1–5 rubric (S1 answer relevance).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnswerRubric {
    /// The user's question.
    pub question: String,
    /// The answer to rate.
    pub answer: String,
}

/// The answer to [`AnswerRubric`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RubricScore {
    /// 1 (does not address the question) to 5 (addresses it fully and directly).
    pub score: u8,
    /// Why.
    pub reason: String,
}

impl RubricScore {
    /// The score mapped to [0, 1] as S1 does: `(score − 1) / 4`.
    pub fn normalised(&self) -> f64 {
        (f64::from(self.score.clamp(1, 5)) - 1.0) / 4.0
    }
}

/// Phrases (lower-cased) that make an answer noncommittal, rubric score 1.
pub const NONCOMMITTAL: &[&str] = &[
    "i don't know",
    "i do not know",
    "not sure",
    "cannot be determined",
    "can't be determined",
    "cannot answer",
    "unable to answer",
    "not been provided",
    "not provided",
    "no information",
    "not mentioned",
    "is unknown",
    "不知道",
    "不确定",
    "无法回答",
    "无法确定",
    "无法判断",
    "没有提供",
    "未提供",
    "未提及",
    "没有相关信息",
    "不清楚",
];

#[derive(Deserialize)]
pub(crate) struct RubricRaw {
    reason: String,
    score: u8,
}

impl LlmTask for AnswerRubric {
    const KIND: TaskKind = TaskKind::AnswerRubric;
    const PACK: PackFiles = pack_files!("answer_rubric");
    type Raw = RubricRaw;
    type Output = RubricScore;
    fn schema(_: Shape) -> Value {
        object([("reason", reason()), ("score", integer(1, 5))])
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
    fn convert(&self, raw: RubricRaw) -> Result<RubricScore, String> {
        Ok(RubricScore {
            score: raw.score,
            reason: raw.reason,
        })
    }
}

impl TypedTask for AnswerRubric {
    const FAMILY: TaskFamily = TaskFamily::Verdict;

    fn heuristic_info(_: &Heuristic) -> Option<HeuristicInfo> {
        Some(heuristic::rule("content_word_overlap", vec![]))
    }

    async fn by_heuristic(&self, heuristic: &Heuristic) -> Result<Judged<RubricScore>, TaskError> {
        Ok(heuristic.answer_rubric(self))
    }
}

impl Heuristic {
    /// See [`NONCOMMITTAL`]; otherwise 1 + 4 × the question's coverage in the answer.
    pub fn answer_rubric(&self, task: &AnswerRubric) -> Judged<RubricScore> {
        let score = rubric(&task.question, &task.answer);
        self.judged(TaskKind::AnswerRubric, score, false)
    }
}

impl TaskJudge {
    /// [`AnswerRubric`].
    pub async fn answer_rubric(
        &self,
        task: &AnswerRubric,
    ) -> Result<Judged<RubricScore>, TaskError> {
        self.ask(task).await
    }
}

/// The noncommittal phrase `answer` contains, if any.
pub(crate) fn noncommittal(answer: &str) -> Option<&'static str> {
    first_phrase(answer, NONCOMMITTAL)
}

/// 1 for a noncommittal answer; else 1 + 4 × the question's coverage in the answer, rounded.
fn rubric(question: &str, answer: &str) -> RubricScore {
    if let Some(phrase) = noncommittal(answer) {
        return RubricScore {
            score: 1,
            reason: format!("the answer is noncommittal (\"{phrase}\")"),
        };
    }
    match question_coverage(question, &Material::new(answer)) {
        Err(reason) => RubricScore { score: 1, reason },
        Ok((covered, n)) => RubricScore {
            score: (1.0 + 4.0 * covered).round() as u8,
            reason: format!(
                "{covered:.2} of the question's {n} content words appear in the answer \
                 (score = 1 + 4 × share, rounded)"
            ),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rubric_normalises_like_s1() {
        let score = |s| RubricScore {
            score: s,
            reason: String::new(),
        };
        assert_eq!(score(1).normalised(), 0.0);
        assert_eq!(score(3).normalised(), 0.5);
        assert_eq!(score(5).normalised(), 1.0);
    }
}
