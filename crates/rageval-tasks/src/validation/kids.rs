//! The S4 article's kids-coding test set (`shared/validation/ai-learn-kids-coding-zh/`):
//! 100 Chinese questions about a market report, each with its reference answer and the
//! report chunk it was written from (`doc`, one of the report's 125 chunks as the article's
//! splitter cut them). A question's own chunk holds its answer; the chunks of the other
//! questions are on the same report but, as a rule, not about it — the material of a
//! retrieval that found the right chunk or a neighbour on the topic.

use std::path::Path;

use serde::Deserialize;

use super::read_jsonl;
use crate::error::TaskError;

/// The file under the validation folder.
pub const KIDS_CODING_FILE: &str = "ai-learn-kids-coding-zh/qa_test_100.jsonl";

/// One question with its reference answer and its gold chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KidsCodingRow {
    /// The question.
    pub question: String,
    /// The reference answer (often a phrase, e.g. `千亿级别`).
    pub answer: String,
    /// The report chunk the question was written from.
    pub chunk: String,
}

#[derive(Deserialize)]
struct Raw {
    question: String,
    answer: String,
    doc: String,
}

/// Reads the file; errors name the file and line.
pub fn read_kids_coding(path: &Path) -> Result<Vec<KidsCodingRow>, TaskError> {
    let raw: Vec<Raw> = read_jsonl(path)?;
    Ok(raw
        .into_iter()
        .map(|row| KidsCodingRow {
            question: row.question.trim().to_owned(),
            answer: row.answer.trim().to_owned(),
            chunk: row.doc.trim().to_owned(),
        })
        .collect())
}

/// The distinct gold chunks of the set, in first-seen order: a question's negatives are
/// every one of them but its own.
pub fn distinct_chunks(rows: &[KidsCodingRow]) -> Vec<&str> {
    let mut chunks: Vec<&str> = Vec::new();
    for row in rows {
        if !chunks.contains(&row.chunk.as_str()) {
            chunks.push(&row.chunk);
        }
    }
    chunks
}
