//! [`GradeRelevance`]: one context graded 0 to 3 for the question (ranking round 0). The
//! heuristic judge's rule: grade k from k × [`GRADE_BAND`] of the question's content words
//! in the context.

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
use crate::schema::{Shape, integer, object, reason};

/// Grade `context` for `question` from 0 to 3 (ranking round 0, issue 4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GradeRelevance {
    /// The user's question.
    pub question: String,
    /// One retrieved context.
    pub context: String,
}

/// The answer to [`GradeRelevance`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RelevanceGrade {
    /// 0 not useful, 1 on the topic, 2 helps to answer, 3 answers the question.
    pub grade: u8,
    /// Why.
    pub reason: String,
}

/// Grades 1, 2 and 3 start at 1, 2 and 3 times this share of the question's content words
/// in the context; by the question's script.
pub const GRADE_BAND: ByScript = ByScript { en: 0.15, zh: 0.25 };

/// One grade as a chat model writes it (also per passage, in
/// [`GradeRelevanceBatch`](super::GradeRelevanceBatch)).
#[derive(Deserialize)]
pub(crate) struct GradeRaw {
    pub(crate) reason: String,
    pub(crate) relevance: u8,
}

/// A 0–3 relevance grade with its reason, in a schema.
pub(crate) fn grade_schema() -> Value {
    object([("reason", reason()), ("relevance", integer(0, 3))])
}

impl LlmTask for GradeRelevance {
    const KIND: TaskKind = TaskKind::GradeRelevance;
    const PACK: PackFiles = pack_files!("grade_relevance");
    type Raw = GradeRaw;
    type Output = RelevanceGrade;
    fn schema(_: Shape) -> Value {
        grade_schema()
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
    fn convert(&self, raw: GradeRaw) -> Result<RelevanceGrade, String> {
        Ok(RelevanceGrade {
            grade: raw.relevance,
            reason: raw.reason,
        })
    }
}

impl TypedTask for GradeRelevance {
    const FAMILY: TaskFamily = TaskFamily::Verdict;
    const SWEPT: Option<ByScript> = Some(GRADE_BAND);

    fn heuristic_info(_: &Heuristic) -> Option<HeuristicInfo> {
        Some(grade_rule())
    }

    async fn by_heuristic(
        &self,
        heuristic: &Heuristic,
    ) -> Result<Judged<RelevanceGrade>, TaskError> {
        Ok(heuristic.grade_relevance(self))
    }
}

impl Heuristic {
    /// See [`GRADE_BAND`].
    pub fn grade_relevance(&self, task: &GradeRelevance) -> Judged<RelevanceGrade> {
        let grade = grade(&task.question, &task.context);
        self.judged(TaskKind::GradeRelevance, grade, false)
    }
}

impl TaskJudge {
    /// [`GradeRelevance`].
    pub async fn grade_relevance(
        &self,
        task: &GradeRelevance,
    ) -> Result<Judged<RelevanceGrade>, TaskError> {
        self.ask(task).await
    }
}

/// The heuristic's grading rule as provenance names it (one context or several).
pub(crate) fn grade_rule() -> HeuristicInfo {
    heuristic::rule(
        "content_word_overlap",
        heuristic::by_script("grade_band", GRADE_BAND),
    )
}

/// Grade by the question's coverage: grade k from k × [`GRADE_BAND`].
pub(crate) fn grade(question: &str, context: &str) -> RelevanceGrade {
    match question_coverage(question, &Material::new(context)) {
        Err(reason) => RelevanceGrade { grade: 0, reason },
        Ok((covered, n)) => {
            let band = GRADE_BAND.for_text(question);
            let grade = (1..=3u8)
                .filter(|&k| covered >= band * f64::from(k))
                .count() as u8;
            RelevanceGrade {
                grade,
                reason: format!(
                    "{covered:.2} of the question's {n} content words appear in the context \
                     (grade bands at {:.2}, {:.2}, {:.2})",
                    band,
                    2.0 * band,
                    3.0 * band
                ),
            }
        }
    }
}
