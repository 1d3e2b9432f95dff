//! [`WriteTestItem`]: one test-set item (`rageval testset`) written from passages, in their
//! language: a question, its answer from the passages alone, and the answer's key points;
//! one part of the template per question category. Only a chat model writes it; no passage
//! is an input error.

use rageval_core::testset::Category;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{TaskFamily, TaskKind, TypedTask};
use crate::error::TaskError;
use crate::judged::Judged;
use crate::llm::{LlmTask, Part, clean_list};
use crate::prompt::pack::{PackFiles, pack_files};
use crate::router::TaskJudge;
use crate::schema::{Shape, object, text_list};

/// Write one test-set item (`rageval testset`) of `category` from `passages`, in the
/// passages' language: a question a reader without the passages can understand, its answer
/// from the passages alone, and the answer's key points. Answered with a [`TestItemDraft`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteTestItem {
    /// What kind of question to write.
    pub category: Category,
    /// One passage, or two for multi-hop and comparison questions.
    pub passages: Vec<String>,
}

/// The answer to [`WriteTestItem`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestItemDraft {
    /// The question (for a follow-up: the second turn).
    pub question: String,
    /// The reference answer (for an unanswerable question: that the documents do not say).
    pub answer: String,
    /// Short statements that together make the answer, each checkable on its own.
    pub key_points: Vec<String>,
    /// A follow-up's first turn: the opening question and its answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opening: Option<(String, String)>,
}

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
    const PACK: PackFiles = pack_files!("write_test_item");
    type Raw = TestItemRaw;
    type Output = TestItemDraft;
    /// The question, its answer and key points; a follow-up also writes its opening turn
    /// first.
    fn schema(shape: Shape) -> Value {
        let text = || json!({"type": "string", "minLength": 1});
        let mut fields = Vec::new();
        if shape.follow_up {
            fields.push(("opening_question", text()));
            fields.push(("opening_answer", text()));
        }
        fields.push(("question", text()));
        fields.push(("answer", text()));
        fields.push(("key_points", text_list(None)));
        object(fields)
    }
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

impl TypedTask for WriteTestItem {
    const FAMILY: TaskFamily = TaskFamily::Generation;

    /// No passage is an input error (nothing to write from).
    fn by_rule(&self) -> Result<Option<Judged<TestItemDraft>>, TaskError> {
        if self.passages.iter().all(|p| p.trim().is_empty()) {
            return Err(TaskError::Input {
                task: TaskKind::WriteTestItem,
                why: "there is no passage to write from".into(),
            });
        }
        Ok(None)
    }
}

impl TaskJudge {
    /// [`WriteTestItem`]: no passage is an input error (nothing to write from).
    pub async fn write_test_item(
        &self,
        task: &WriteTestItem,
    ) -> Result<Judged<TestItemDraft>, TaskError> {
        self.ask(task).await
    }
}
