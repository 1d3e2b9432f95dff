//! Cranfield (`shared/validation/cranfield/`): 225 queries, 1,400 aeronautics abstracts and
//! 1,837 graded judgements (`qrels.tsv`: gain 0–4, higher = more relevant). The judgements
//! number queries 1..225 in the order of `queries.jsonl`, not by the ids it holds.

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;

use super::read_jsonl;
use crate::error::TaskError;

/// One judged (query, abstract).
#[derive(Debug, Clone, PartialEq)]
pub struct CranfieldJudgement {
    /// The query's number (1-based, file order).
    pub query_number: usize,
    /// The query text.
    pub question: String,
    /// The abstract's id.
    pub doc_id: String,
    /// The abstract.
    pub abstract_text: String,
    /// The gain, 0–4.
    pub grade: f64,
}

#[derive(Deserialize)]
struct Text {
    #[serde(alias = "doc_id", alias = "query_id")]
    id: String,
    text: String,
}

/// Reads the folder `dir` (or the folder of a file in it); queries numbered above `limit`
/// are skipped. Errors name the file, the line and the field.
pub fn read_cranfield(
    dir: &Path,
    limit: Option<usize>,
) -> Result<Vec<CranfieldJudgement>, TaskError> {
    let dir = if dir.is_dir() {
        dir
    } else {
        dir.parent().unwrap_or(Path::new("."))
    };
    let queries: Vec<Text> = read_jsonl(&dir.join("queries.jsonl"))?;
    let docs: HashMap<String, String> = read_jsonl::<Text>(&dir.join("docs.jsonl"))?
        .into_iter()
        .map(|d| (d.id, d.text))
        .collect();
    let qrels = dir.join("qrels.tsv");
    let error = |line: usize, why: String| TaskError::Data {
        file: qrels.display().to_string(),
        line,
        why,
    };
    let text = std::fs::read_to_string(&qrels).map_err(|e| error(0, e.to_string()))?;
    let mut judgements = Vec::new();
    for (index, line) in text.lines().enumerate().skip(1) {
        let line_no = index + 1;
        let fields: Vec<&str> = line.split('\t').collect();
        let [query, doc, _, gain] = fields[..] else {
            return Err(error(line_no, "expected 4 tab-separated fields".into()));
        };
        let query_number: usize = query
            .parse()
            .map_err(|e| error(line_no, format!("field `query_id`: {e}")))?;
        if limit.is_some_and(|n| query_number > n) {
            continue;
        }
        let question = query_number
            .checked_sub(1)
            .and_then(|i| queries.get(i))
            .ok_or_else(|| {
                error(
                    line_no,
                    format!("field `query_id`: no query {query_number}"),
                )
            })?;
        let abstract_text = docs
            .get(doc)
            .ok_or_else(|| error(line_no, format!("field `doc_id`: no document {doc}")))?;
        let grade: f64 = gain
            .parse()
            .map_err(|e| error(line_no, format!("field `gain`: {e}")))?;
        judgements.push(CranfieldJudgement {
            query_number,
            question: question.text.clone(),
            doc_id: doc.to_owned(),
            abstract_text: abstract_text.clone(),
            grade,
        });
    }
    Ok(judgements)
}
