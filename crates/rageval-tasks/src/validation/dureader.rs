//! DuReader 2.0 (Baidu; `shared/validation/dureader-2.0-demo-zh/`): Chinese web questions,
//! each with up to five documents and the annotators' `is_selected` flag (the documents
//! they used to answer).
//!
//! [`dureader_relevance`]: every document judged relevant or not against the flag, and
//! every selected document graded above every unselected one of the same question.

use std::path::Path;

use serde::Deserialize;

use super::{BinaryAgreement, PairwiseAgreement, read_jsonl};
use crate::error::TaskError;
use crate::router::TaskJudge;
use crate::task::{ContextRelevance, GradeRelevance};

/// One DuReader question.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct DuReaderRow {
    /// The question.
    pub question: String,
    /// Its documents.
    pub documents: Vec<DuReaderDocument>,
}

/// One document of a question.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct DuReaderDocument {
    /// Page title.
    pub title: String,
    /// Whether the annotators used it to answer.
    pub is_selected: bool,
    /// Its paragraphs.
    pub paragraphs: Vec<String>,
}

impl DuReaderDocument {
    /// The title and the paragraphs, one per line.
    pub fn text(&self) -> String {
        std::iter::once(self.title.as_str())
            .chain(self.paragraphs.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Reads DuReader JSONL; errors name the file and line.
pub fn read_dureader(path: &Path) -> Result<Vec<DuReaderRow>, TaskError> {
    read_jsonl(path)
}

/// The two DuReader figures.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DuReaderRelevance {
    /// Relevance verdicts against the selection flags.
    pub relevance: BinaryAgreement,
    /// Selected documents graded above unselected ones of the same question.
    pub grade: PairwiseAgreement,
}

/// See the module doc.
pub async fn dureader_relevance(
    judge: &TaskJudge,
    rows: &[DuReaderRow],
) -> Result<DuReaderRelevance, TaskError> {
    let mut figures = DuReaderRelevance::default();
    for row in rows {
        let mut grades = Vec::with_capacity(row.documents.len());
        for document in &row.documents {
            let text = document.text();
            let verdict = judge
                .context_relevance(&ContextRelevance {
                    question: row.question.clone(),
                    context: text.clone(),
                })
                .await?;
            figures
                .relevance
                .add(document.is_selected, verdict.value.relevant);
            let grade = judge
                .grade_relevance(&GradeRelevance {
                    question: row.question.clone(),
                    context: text,
                })
                .await?;
            grades.push((document.is_selected, f64::from(grade.value.grade)));
        }
        for &(_, selected) in grades.iter().filter(|(s, _)| *s) {
            for &(_, unselected) in grades.iter().filter(|(s, _)| !*s) {
                figures.grade.add(selected, unselected);
            }
        }
    }
    Ok(figures)
}
