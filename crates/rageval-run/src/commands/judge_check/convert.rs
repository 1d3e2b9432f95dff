//! Converters from the shared labelled sets (`shared/validation/`, read in place: RGB is
//! non-commercial and never copied) to labelled items. `limit` keeps the first N source
//! records (questions, news items, queries).
//!
//! - WikiEval → pairs, chosen by what the metric reads: answer and contexts (faithfulness)
//!   → grounded answer over ungrounded; answer without contexts (answer relevance) → answer
//!   over poor answer; contexts without answer (context relevance) → `context_v1` over the
//!   padded `context_v2`.
//! - UHGEval → binary per annotated keyword of the continuation (sound = good), against the
//!   real news (beginning and remainder).
//! - RGB → binary per passage: positive (contains the answer) or negative.
//! - DuReader → binary per document: `is_selected` by the annotators.
//! - Cranfield → graded per judged (query, abstract), grouped by query.

use std::path::Path;

use rageval_core::{Context, Sample};
use rageval_metrics::Input;
use rageval_tasks::validation::{
    read_cranfield, read_dureader, read_rgb, read_uhgeval, read_wikieval,
};

use super::labels::{Item, Label};
use crate::engine::error::Result;

fn take<T>(rows: Vec<T>, limit: Option<usize>) -> impl Iterator<Item = (usize, T)> {
    rows.into_iter()
        .enumerate()
        .take(limit.unwrap_or(usize::MAX))
}

fn sample(question: &str, contexts: &[String], answer: Option<&str>) -> Sample {
    Sample {
        question: question.to_owned(),
        contexts: contexts.iter().map(|c| Context::text(c.as_str())).collect(),
        answer: answer.map(str::to_owned),
        ..Sample::default()
    }
}

/// WikiEval pairs for a metric reading `inputs`.
pub fn wikieval(path: &Path, inputs: &[Input], limit: Option<usize>) -> Result<Vec<Item>> {
    let reads = |input: Input| inputs.contains(&input);
    let rows = read_wikieval(path)?;
    Ok(take(rows, limit)
        .map(|(i, row)| {
            let q = row.question.as_str();
            let v1 = row.context_v1.as_slice();
            let (a, b) = match (reads(Input::Answer), reads(Input::Contexts)) {
                (true, true) => (
                    sample(q, v1, Some(&row.answer)),
                    sample(q, v1, Some(&row.ungrounded_answer)),
                ),
                (true, false) => (
                    sample(q, v1, Some(&row.answer)),
                    sample(q, v1, Some(&row.poor_answer)),
                ),
                _ => (
                    sample(q, v1, Some(&row.answer)),
                    sample(q, &row.context_v2, Some(&row.answer)),
                ),
            };
            Item::pair(format!("wikieval-{}", i + 1), a, b, Some(0))
        })
        .collect())
}

/// UHGEval keywords: `keyword<sep>合理` is sound, anything else (`不合理…`) hallucinated.
pub fn uhgeval(path: &Path, limit: Option<usize>) -> Result<Vec<Item>> {
    Ok(read_uhgeval(path, limit)?
        .into_iter()
        .map(|k| {
            Item::single(
                format!("{}#{}", k.doc_id, k.number),
                sample(&k.headline, &k.news, Some(&k.keyword)),
                Label::Binary(k.sound),
            )
        })
        .collect())
}

/// RGB passages: positive or negative for the query.
pub fn rgb(path: &Path, limit: Option<usize>) -> Result<Vec<Item>> {
    let mut items = Vec::new();
    for (i, row) in take(read_rgb(path)?, limit) {
        let passages = [(true, &row.positive), (false, &row.negative)];
        for (label, list) in passages {
            for (k, passage) in list.iter().enumerate() {
                let side = if label { "pos" } else { "neg" };
                items.push(Item::single(
                    format!("rgb-{}-{side}{}", i + 1, k + 1),
                    sample(&row.query, std::slice::from_ref(passage), None),
                    Label::Binary(label),
                ));
            }
        }
    }
    Ok(items)
}

/// DuReader documents: selected by the annotators or not.
pub fn dureader(path: &Path, limit: Option<usize>) -> Result<Vec<Item>> {
    let mut items = Vec::new();
    for (i, row) in take(read_dureader(path)?, limit) {
        for (k, document) in row.documents.iter().enumerate() {
            items.push(Item::single(
                format!("dureader-{}-{}", i + 1, k + 1),
                sample(&row.question, &[document.text()], None),
                Label::Binary(document.is_selected),
            ));
        }
    }
    Ok(items)
}

/// Cranfield judgements: `DIR` (or a file in it) holds `queries.jsonl`, `docs.jsonl` and
/// `qrels.tsv`; qrels number queries 1..225 in file order, not by the query file's ids.
pub fn cranfield(path: &Path, limit: Option<usize>) -> Result<Vec<Item>> {
    Ok(read_cranfield(path, limit)?
        .into_iter()
        .map(|j| {
            Item::single(
                format!("cranfield-{}-{}", j.query_number, j.doc_id),
                sample(&j.question, std::slice::from_ref(&j.abstract_text), None),
                Label::Graded {
                    grade: j.grade,
                    group: Some(j.query_number.to_string()),
                },
            )
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn shared(file: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/validation")
            .join(file)
    }

    /// Whether the shared labelled sets are missing (they exist only beside this
    /// repository where it is developed); if so, says the test is skipped.
    #[allow(
        clippy::print_stderr,
        reason = "a skipped test says why in the test output"
    )]
    fn absent(test: &str) -> bool {
        let missing = !shared("").is_dir();
        if missing {
            eprintln!("skipped {test}: the shared labelled sets are absent");
        }
        missing
    }

    #[test]
    fn wikieval_pairs_follow_the_metric_inputs() {
        if absent("wikieval_pairs_follow_the_metric_inputs") {
            return;
        }
        let path = shared("wikieval/WikiEval_samples_10.jsonl");
        let faithful = wikieval(
            &path,
            &[Input::Question, Input::Contexts, Input::Answer],
            Some(2),
        )
        .unwrap();
        assert_eq!(faithful.len(), 2);
        assert_eq!(faithful[0].label, Label::Preferred(Some(0)));
        assert_ne!(faithful[0].samples[0].answer, faithful[0].samples[1].answer);
        assert_eq!(
            faithful[0].samples[0].contexts,
            faithful[0].samples[1].contexts
        );
        let relevance = wikieval(&path, &[Input::Question, Input::Contexts], Some(1)).unwrap();
        assert_eq!(
            relevance[0].samples[0].answer,
            relevance[0].samples[1].answer
        );
        assert_ne!(
            relevance[0].samples[0].contexts,
            relevance[0].samples[1].contexts
        );
        let answer = wikieval(&path, &[Input::Question, Input::Answer], Some(1)).unwrap();
        assert_ne!(answer[0].samples[1].answer, faithful[0].samples[1].answer);
    }

    #[test]
    fn uhgeval_keywords_are_binary() {
        if absent("uhgeval_keywords_are_binary") {
            return;
        }
        let items = uhgeval(&shared("uhgeval-zh/dataset_uhgeval_concise.jsonl"), Some(1)).unwrap();
        // doc_000004: 11 keywords, the first (a wrong minister's name) hallucinated.
        assert_eq!(items.len(), 11);
        assert_eq!(
            items[0].samples[0].answer.as_deref(),
            Some("德国外长弗拉德里希")
        );
        assert_eq!(items[0].label, Label::Binary(false));
        assert_eq!(items[1].label, Label::Binary(true));
        assert!(items[0].samples[0].contexts[0].text.contains("新华社柏林"));
    }

    #[test]
    fn rgb_and_dureader_label_passages() {
        if absent("rgb_and_dureader_label_passages") {
            return;
        }
        let items = rgb(&shared("rgb/zh_refine.json"), Some(1)).unwrap();
        let positives = items
            .iter()
            .filter(|i| i.label == Label::Binary(true))
            .count();
        assert_eq!((positives, items.len() - positives), (6, 29));
        let items = dureader(
            &shared("dureader-2.0-demo-zh/search.dev.slim.jsonl"),
            Some(3),
        )
        .unwrap();
        assert!(items.iter().any(|i| i.label == Label::Binary(true)));
        assert!(items.iter().any(|i| i.label == Label::Binary(false)));
        assert!(items.iter().all(|i| i.samples[0].contexts.len() == 1));
    }

    #[test]
    fn cranfield_grades_are_grouped_by_query_in_file_order() {
        if absent("cranfield_grades_are_grouped_by_query_in_file_order") {
            return;
        }
        let items = cranfield(&shared("cranfield"), Some(1)).unwrap();
        assert!(!items.is_empty());
        assert!(
            items[0].samples[0]
                .question
                .starts_with("what similarity laws")
        );
        assert!(
            items
                .iter()
                .all(|i| matches!(&i.label, Label::Graded { group: Some(g), .. } if g == "1"))
        );
        // qrels.tsv line 2: query 1, document 184, gain 3.
        assert_eq!(items[0].id, "cranfield-1-184");
        assert_eq!(
            items[0].label,
            Label::Graded {
                grade: 3.0,
                group: Some("1".into())
            }
        );
    }
}
