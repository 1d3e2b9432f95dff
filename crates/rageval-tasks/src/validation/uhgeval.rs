//! UHGEval (`shared/validation/uhgeval-zh/`): Chinese news continuations whose keywords a
//! person labelled sound (`合理`) or hallucinated, checked against the real news.

use std::path::Path;

use serde::Deserialize;

use crate::error::TaskError;

/// One annotated keyword.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UhgevalKeyword {
    /// The news item's id.
    pub doc_id: String,
    /// 1-based position among the item's keywords.
    pub number: usize,
    /// The headline (the "question").
    pub headline: String,
    /// The real news: beginning and remainder.
    pub news: [String; 2],
    /// The keyword of the continuation.
    pub keyword: String,
    /// Sound (`合理`) or hallucinated.
    pub sound: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Row {
    id: String,
    #[serde(default)]
    head_line: String,
    news_beginning: String,
    #[serde(default)]
    news_remainder: String,
    annotations: Vec<String>,
}

/// Every annotated keyword of the first `limit` news items (all without one). An
/// annotation is `keyword<sep>verdict`; errors name the file, the line and the field.
pub fn read_uhgeval(path: &Path, limit: Option<usize>) -> Result<Vec<UhgevalKeyword>, TaskError> {
    let error = |line: usize, why: String| TaskError::Data {
        file: path.display().to_string(),
        line,
        why,
    };
    let text = std::fs::read_to_string(path).map_err(|e| error(0, e.to_string()))?;
    let mut keywords = Vec::new();
    for (index, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        if limit.is_some_and(|n| index >= n) {
            break;
        }
        let row: Row = serde_json::from_str(line)
            .map_err(|e| error(index + 1, format!("not a UHGEval row: {e}")))?;
        let news = [
            row.news_beginning.trim().to_owned(),
            row.news_remainder.trim().to_owned(),
        ];
        for (k, annotation) in row.annotations.iter().enumerate() {
            let Some((keyword, verdict)) = annotation.split_once("<sep>") else {
                return Err(error(
                    index + 1,
                    format!("field `annotations`: `{annotation}` has no <sep>"),
                ));
            };
            keywords.push(UhgevalKeyword {
                doc_id: row.id.clone(),
                number: k + 1,
                headline: row.head_line.clone(),
                news: news.clone(),
                keyword: keyword.trim().to_owned(),
                sound: verdict.trim() == "合理",
            });
        }
    }
    Ok(keywords)
}
