//! [`GradeRelevanceBatch`]: several contexts graded 0 to 3 in one call, shown as passages
//! `p1`, `p2`, …. Every shown passage must be graded once and nothing else, or the call
//! fails. The heuristic judge grades each as [`GradeRelevance`](super::GradeRelevance) does.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::grade_relevance::{GradeRaw, grade, grade_rule, grade_schema};
use super::{RelevanceGrade, TaskFamily, TaskKind, TypedTask};
use crate::error::TaskError;
use crate::heuristic::Heuristic;
use crate::judged::{HeuristicInfo, Judged};
use crate::llm::{LlmTask, PASSAGE, Part, keyed_passages, take_item};
use crate::prompt::pack::{PackFiles, pack_files};
use crate::router::TaskJudge;
use crate::schema::{Shape, item_key, keyed, keys, object, with_defs};

/// Grade each of several contexts for `question` from 0 to 3 in one call (ranking round 0
/// with fewer calls, issue 4). The contexts are shown as passages `p1`, `p2`, …; the judge
/// must grade every one of them once and nothing else. Answered with one [`RelevanceGrade`]
/// per context, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GradeRelevanceBatch {
    /// The user's question.
    pub question: String,
    /// The retrieved contexts, in the order shown.
    pub contexts: Vec<String>,
}

#[derive(Deserialize)]
pub(crate) struct GradesRaw {
    grades: BTreeMap<String, GradeRaw>,
}

impl LlmTask for GradeRelevanceBatch {
    const KIND: TaskKind = TaskKind::GradeRelevanceBatch;
    const PACK: PackFiles = pack_files!("grade_relevance_batch");
    type Raw = GradesRaw;
    type Output = Vec<RelevanceGrade>;
    fn schema(shape: Shape) -> Value {
        with_defs(
            object([("grades", keyed(&keys(PASSAGE, shape.items), "grade"))]),
            [("grade", grade_schema())],
        )
    }
    fn deciding_text(&self) -> &str {
        &self.question
    }
    fn parts(&self) -> Vec<Part<'_>> {
        keyed_passages(&self.question, &self.contexts)
    }
    fn shape(&self) -> Shape {
        Shape {
            items: self.contexts.len(),
            ..Shape::default()
        }
    }
    fn convert(&self, mut raw: GradesRaw) -> Result<Vec<RelevanceGrade>, String> {
        let grades = (0..self.contexts.len())
            .map(|i| {
                let key = item_key(PASSAGE, i);
                let raw = take_item(&mut raw.grades, PASSAGE, i)?;
                if raw.relevance > 3 {
                    return Err(format!("`{key}` got grade {}, not 0-3", raw.relevance));
                }
                Ok(RelevanceGrade {
                    grade: raw.relevance,
                    reason: raw.reason,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        match raw.grades.keys().next() {
            Some(extra) => Err(format!("the answer grades `{extra}`, which was not shown")),
            None => Ok(grades),
        }
    }
}

impl TypedTask for GradeRelevanceBatch {
    const FAMILY: TaskFamily = TaskFamily::Verdict;

    fn heuristic_info(_: &Heuristic) -> Option<HeuristicInfo> {
        Some(grade_rule())
    }

    /// No contexts → no grades.
    fn by_rule(&self) -> Result<Option<Judged<Vec<RelevanceGrade>>>, TaskError> {
        Ok(self
            .contexts
            .is_empty()
            .then(|| Judged::by_rule(Vec::new(), "no contexts to grade")))
    }

    async fn by_heuristic(
        &self,
        heuristic: &Heuristic,
    ) -> Result<Judged<Vec<RelevanceGrade>>, TaskError> {
        Ok(heuristic.grade_relevance_batch(self))
    }
}

impl Heuristic {
    /// Each context as [`Heuristic::grade_relevance`] grades it alone.
    pub fn grade_relevance_batch(&self, task: &GradeRelevanceBatch) -> Judged<Vec<RelevanceGrade>> {
        let grades = task
            .contexts
            .iter()
            .map(|context| grade(&task.question, context))
            .collect();
        self.judged(TaskKind::GradeRelevanceBatch, grades, false)
    }
}

impl TaskJudge {
    /// [`GradeRelevanceBatch`]: no contexts → no grades (no call).
    pub async fn grade_relevance_batch(
        &self,
        task: &GradeRelevanceBatch,
    ) -> Result<Judged<Vec<RelevanceGrade>>, TaskError> {
        self.ask(task).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_grades_must_cover_every_shown_passage_and_nothing_else() {
        let task = GradeRelevanceBatch {
            question: "q".into(),
            contexts: vec!["a".into(), "b".into()],
        };
        let raw = |pairs: &[(&str, u8)]| GradesRaw {
            grades: pairs
                .iter()
                .map(|&(k, g)| {
                    let grade = GradeRaw {
                        reason: "r".into(),
                        relevance: g,
                    };
                    (k.to_owned(), grade)
                })
                .collect(),
        };
        let grades = task.convert(raw(&[("p2", 0), ("p1", 3)]));
        assert_eq!(
            grades.map(|g| g.iter().map(|g| g.grade).collect::<Vec<_>>()),
            Ok(vec![3, 0])
        );
        assert!(task.convert(raw(&[("p1", 3)])).is_err());
        assert!(
            task.convert(raw(&[("p1", 3), ("p2", 1), ("p3", 1)]))
                .is_err()
        );
        assert!(task.convert(raw(&[("p1", 4), ("p2", 1)])).is_err());
    }
}
