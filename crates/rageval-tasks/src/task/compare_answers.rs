//! [`CompareAnswers`]: which of two versions' answers to the same question is better
//! (`pairwise`), each answer shown with the passages its own version retrieved, and the
//! reference answer when the data has one (the "golden answer" mode). The criterion is the
//! built-in RAG one (correct, grounded in its own passages, answers what was asked) or a
//! rubric metric's own. The caller asks each pair in both seat orders. The heuristic judge
//! has no rule for it: no honest rule tells a better answer from a worse one.

use std::sync::Arc;

use rageval_judge::TemplateId;
use serde_json::Value;

use super::pairwise_preference::{PairwisePreference, Preference, PreferenceRaw, Preferred};
use super::{Rubric, TaskFamily, TaskKind, TypedTask};
use crate::error::TaskError;
use crate::judged::Judged;
use crate::llm::{LlmTask, Part, text};
use crate::prompt::Lang;
use crate::prompt::pack::{PackFiles, pack_files};
use crate::router::TaskJudge;
use crate::schema::Shape;

/// One version's answer as the judge sees it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ShownAnswer {
    pub answer: String,
    /// The passages its own version retrieved (may be empty).
    pub contexts: Vec<String>,
}

/// Which of two answers to `question` is better by the criterion. Answered as a
/// [`Preference`] naming the seat ([`Preferred::First`] is [`CompareAnswers::first`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompareAnswers {
    /// The user's question.
    pub question: String,
    /// The reference answer, when the data has one (empty: none).
    pub reference: String,
    /// The answer shown first (as "A").
    pub first: ShownAnswer,
    /// The answer shown second (as "B").
    pub second: ShownAnswer,
    /// A rubric metric whose criterion is used instead of the built-in RAG one.
    pub criterion: Option<Arc<Rubric>>,
}

impl LlmTask for CompareAnswers {
    const KIND: TaskKind = TaskKind::CompareAnswers;
    const PACK: PackFiles = pack_files!("compare_answers");
    type Raw = PreferenceRaw;
    type Output = Preference;
    /// The same answer as [`PairwisePreference`]'s: a reason, then "A", "B" or "tie".
    fn schema(shape: Shape) -> Value {
        PairwisePreference::schema(shape)
    }
    fn deciding_text(&self) -> &str {
        &self.question
    }
    fn parts(&self) -> Vec<Part<'_>> {
        let passages = |slot, label, items| Part::Items {
            slot,
            label,
            key: None,
            items,
        };
        vec![
            text("question", &self.question),
            text("reference", &self.reference),
            Part::Text {
                slot: "first_answer",
                label: "answer A",
                text: &self.first.answer,
            },
            passages("first_contexts", "passage of A", &self.first.contexts),
            Part::Text {
                slot: "second_answer",
                label: "answer B",
                text: &self.second.answer,
            },
            passages("second_contexts", "passage of B", &self.second.contexts),
        ]
    }
    fn pack_parts(&self, lang: Lang) -> Vec<Part<'_>> {
        let criterion = self.criterion.as_ref();
        vec![Part::Plain {
            slot: "criterion",
            value: criterion.map_or(String::new(), |r| r.criterion(lang).trim().to_owned()),
        }]
    }
    fn template_parts(&self) -> Vec<&'static str> {
        let mut parts = vec![if self.criterion.is_some() {
            "own_criterion"
        } else {
            "rag_criterion"
        }];
        if !self.reference.trim().is_empty() {
            parts.push("reference");
        }
        if !self.first.contexts.is_empty() {
            parts.push("first_contexts");
        }
        if !self.second.contexts.is_empty() {
            parts.push("second_contexts");
        }
        parts
    }
    /// With a rubric's criterion, the cache and the manifest know the call by the rubric's
    /// name and hash too (as `custom_rubric` does).
    fn template_id(&self, template: TemplateId) -> TemplateId {
        match &self.criterion {
            None => template,
            Some(rubric) => TemplateId::new(
                format!("{}:{}#{}", template.id, rubric.name, rubric.hash()),
                template.version,
            ),
        }
    }
    /// Read as [`PairwisePreference`]'s answer is: the winner's seat, or the refusal of
    /// anything but A, B or tie.
    fn convert(&self, raw: PreferenceRaw) -> Result<Preference, String> {
        let same_answer = PairwisePreference {
            question: String::new(),
            first: String::new(),
            second: String::new(),
        };
        same_answer.convert(raw)
    }
}

impl TypedTask for CompareAnswers {
    const FAMILY: TaskFamily = TaskFamily::Verdict;

    /// Two answers of the same text are a tie without a call.
    fn by_rule(&self) -> Result<Option<Judged<Preference>>, TaskError> {
        if self.first.answer.trim() != self.second.answer.trim()
            || self.first.contexts != self.second.contexts
        {
            return Ok(None);
        }
        let tie = Preference {
            preferred: Preferred::Tie,
            reason: "the two answers and their passages are the same".into(),
        };
        Ok(Some(Judged::by_rule(tie, "the same answer twice")))
    }
}

impl TaskJudge {
    /// [`CompareAnswers`]: the same answer with the same passages twice is a tie (no call).
    pub async fn compare_answers(
        &self,
        task: &CompareAnswers,
    ) -> Result<Judged<Preference>, TaskError> {
        self.ask(task).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(first: &str, second: &str) -> CompareAnswers {
        CompareAnswers {
            question: "q".into(),
            reference: String::new(),
            first: ShownAnswer {
                answer: first.into(),
                contexts: vec!["c1".into()],
            },
            second: ShownAnswer {
                answer: second.into(),
                contexts: Vec::new(),
            },
            criterion: None,
        }
    }

    #[test]
    fn the_winner_maps_to_a_seat_and_anything_else_is_refused() {
        let t = task("x", "y");
        let seat = |winner: &str| {
            let raw = serde_json::from_value(serde_json::json!({"reason": "r", "winner": winner}));
            t.convert(raw.unwrap()).map(|p| p.preferred)
        };
        assert_eq!(seat("A"), Ok(Preferred::First));
        assert_eq!(seat("B"), Ok(Preferred::Second));
        assert_eq!(seat("tie"), Ok(Preferred::Tie));
        assert!(seat("C").is_err_and(|e| e.contains("`C`")));
    }

    #[test]
    fn optional_parts_follow_the_material() {
        let mut t = task("x", "y");
        assert_eq!(t.template_parts(), ["rag_criterion", "first_contexts"]);
        t.reference = "gold".into();
        t.second.contexts = vec!["c2".into()];
        assert_eq!(
            t.template_parts(),
            [
                "rag_criterion",
                "reference",
                "first_contexts",
                "second_contexts"
            ]
        );
    }

    #[test]
    fn the_same_answer_twice_is_a_tie_without_a_call() {
        let mut same = task("the answer", " the answer ");
        same.second.contexts = same.first.contexts.clone();
        let judged = same.by_rule().unwrap().unwrap();
        assert_eq!(judged.value.preferred, Preferred::Tie);
        assert_eq!(task("x", "y").by_rule().unwrap(), None);
    }
}
