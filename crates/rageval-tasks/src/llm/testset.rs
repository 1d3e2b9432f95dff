//! The LLM implementations of the test-set tasks: [`WriteTestItem`] (one part of the
//! template per question category) and [`AnswerClosedBook`].

use serde::Deserialize;

use super::{LlmTask, Part, clean_list, text};
use crate::schema::Shape;
use crate::task::{AnswerClosedBook, TaskKind, TestItemDraft, WriteTestItem};
use rageval_core::testset::Category;

#[derive(Deserialize)]
pub(crate) struct TestItemRaw {
    #[serde(default)]
    opening_question: Option<String>,
    #[serde(default)]
    opening_answer: Option<String>,
    question: String,
    answer: String,
    key_points: Vec<String>,
}

impl LlmTask for WriteTestItem {
    const KIND: TaskKind = TaskKind::WriteTestItem;
    type Raw = TestItemRaw;
    type Output = TestItemDraft;
    /// The passages' language decides the pack: the item is written in it.
    fn deciding_text(&self) -> &str {
        self.passages.first().map_or("", String::as_str)
    }
    fn parts(&self) -> Vec<Part<'_>> {
        vec![Part::Items {
            slot: "passages",
            label: "passage",
            key: None,
            items: &self.passages,
        }]
    }
    fn shape(&self) -> Shape {
        Shape {
            follow_up: self.category == Category::FollowUp,
            ..Shape::default()
        }
    }
    fn template_parts(&self) -> Vec<&'static str> {
        vec![self.category.name()]
    }
    fn convert(&self, raw: TestItemRaw) -> Result<TestItemDraft, String> {
        let question = raw.question.trim();
        if question.is_empty() {
            return Err("the question is blank".into());
        }
        let opening = match (raw.opening_question, raw.opening_answer) {
            (Some(q), Some(a)) if !q.trim().is_empty() && !a.trim().is_empty() => {
                Some((q.trim().to_owned(), a.trim().to_owned()))
            }
            _ if self.category == Category::FollowUp => {
                return Err("a follow-up needs its opening question and answer".into());
            }
            _ => None,
        };
        Ok(TestItemDraft {
            question: question.to_owned(),
            answer: raw.answer.trim().to_owned(),
            key_points: clean_list(raw.key_points),
            opening,
        })
    }
}

#[derive(Deserialize)]
pub(crate) struct ClosedBookRaw {
    answer: String,
    known: bool,
}

impl LlmTask for AnswerClosedBook {
    const KIND: TaskKind = TaskKind::AnswerClosedBook;
    type Raw = ClosedBookRaw;
    type Output = Option<String>;
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
