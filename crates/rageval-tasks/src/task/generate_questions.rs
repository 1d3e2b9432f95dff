//! [`GenerateQuestions`]: questions an answer would answer, and whether the answer is
//! noncommittal (S4 simulated questions; ragas answer relevancy). Only a chat model writes
//! them; asking for none needs no call.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{TaskFamily, TaskKind, TypedTask};
use crate::error::TaskError;
use crate::judged::Judged;
use crate::llm::{LlmTask, Part, text};
use crate::prompt::pack::{PackFiles, pack_files};
use crate::router::TaskJudge;
use crate::schema::{Shape, object, text_list};

/// Write `n` questions that `answer` would answer, and say whether the answer is
/// noncommittal (S4 simulated questions; ragas answer relevancy).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GenerateQuestions {
    /// The answer.
    pub answer: String,
    /// How many questions (S4 and ragas use 3).
    pub n: usize,
}

/// The answer to [`GenerateQuestions`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GeneratedQuestions {
    /// Exactly `n` questions.
    pub questions: Vec<String>,
    /// The answer evades, hedges or declines ("I don't know").
    pub noncommittal: bool,
}

#[derive(Deserialize)]
pub(crate) struct QuestionsRaw {
    /// 1 when noncommittal (the schema allows 0 or 1).
    noncommittal: u8,
    questions: Vec<String>,
}

impl LlmTask for GenerateQuestions {
    const KIND: TaskKind = TaskKind::GenerateQuestions;
    const PACK: PackFiles = pack_files!("generate_questions");
    type Raw = QuestionsRaw;
    type Output = GeneratedQuestions;
    /// 0/1 rather than a boolean, as ragas asks: a model answers either equally well.
    fn schema(shape: Shape) -> Value {
        object([
            ("noncommittal", json!({"type": "integer", "enum": [0, 1]})),
            ("questions", text_list(Some(shape.items))),
        ])
    }
    fn deciding_text(&self) -> &str {
        &self.answer
    }
    fn parts(&self) -> Vec<Part<'_>> {
        vec![
            text("answer", &self.answer),
            Part::Plain {
                slot: "n",
                value: self.n.to_string(),
            },
        ]
    }
    fn shape(&self) -> Shape {
        Shape {
            items: self.n,
            ..Shape::default()
        }
    }
    fn convert(&self, raw: QuestionsRaw) -> Result<GeneratedQuestions, String> {
        Ok(GeneratedQuestions {
            questions: raw
                .questions
                .into_iter()
                .map(|q| q.trim().to_owned())
                .collect(),
            noncommittal: raw.noncommittal == 1,
        })
    }
}

impl TypedTask for GenerateQuestions {
    const FAMILY: TaskFamily = TaskFamily::Generation;

    /// `n = 0` → none.
    fn by_rule(&self) -> Result<Option<Judged<GeneratedQuestions>>, TaskError> {
        let none = GeneratedQuestions {
            questions: Vec::new(),
            noncommittal: false,
        };
        Ok((self.n == 0).then(|| Judged::by_rule(none, "no questions were asked for")))
    }
}

impl TaskJudge {
    /// [`GenerateQuestions`]: `n = 0` → none (no call).
    pub async fn generate_questions(
        &self,
        task: &GenerateQuestions,
    ) -> Result<Judged<GeneratedQuestions>, TaskError> {
        self.ask(task).await
    }
}
