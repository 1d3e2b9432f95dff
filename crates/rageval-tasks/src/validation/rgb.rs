//! RGB (Chen et al., 2024; `shared/validation/rgb/`, CC BY-NC-SA: read in place, never
//! bundled). Per query: passages that contain the answer (`positive`), passages on the same
//! topic that do not (`negative`), and in the fact sets the positive passages with the
//! answer replaced by a wrong one (`positive_wrong`, with `fakeanswer`).
//!
//! - [`rgb_relevance`] (the refine set): the first positive passage against the first
//!   negative one — graded higher, preferred in both orders, and judged useful for the
//!   reference answer while the negative is not.
//! - [`rgb_counterfactual`] (the fact sets): the claim "query? answer." is supported by the
//!   positive passages for the true answer and not for the fake one (each claim scored as
//!   faithfulness scores a statement).

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::{BinaryAgreement, PairwiseAgreement, read_jsonl};
use crate::error::TaskError;
use crate::prompt::Lang;
use crate::router::TaskJudge;
use crate::task::{
    ContextUsefulness, GradeRelevance, PairwisePreference, Preferred, SupportCredit,
    SupportVerdicts,
};

/// One RGB query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RgbRow {
    /// The query.
    pub query: String,
    /// The accepted answers (several for multi-part questions).
    pub answers: Vec<String>,
    /// The counterfactual answer, in the fact sets (the first, where several are given).
    pub fake_answer: Option<String>,
    /// Passages that contain the answer.
    pub positive: Vec<String>,
    /// Passages on the topic without the answer.
    pub negative: Vec<String>,
    /// The positive passages with the answer replaced by the fake one (fact sets).
    pub positive_wrong: Vec<String>,
}

#[derive(Deserialize)]
struct RawRow {
    query: String,
    answer: Value,
    #[serde(default)]
    fakeanswer: Value,
    #[serde(default)]
    positive: Value,
    #[serde(default)]
    negative: Value,
    #[serde(default)]
    positive_wrong: Value,
}

/// Every string in a string, a list or a nested list, in order.
fn strings(value: &Value) -> Vec<String> {
    match value {
        Value::String(s) => vec![s.trim().to_owned()],
        Value::Array(items) => items.iter().flat_map(strings).collect(),
        _ => Vec::new(),
    }
}

/// Reads an RGB file (one JSON object per line); errors name the file and line.
pub fn read_rgb(path: &Path) -> Result<Vec<RgbRow>, TaskError> {
    let raw: Vec<RawRow> = read_jsonl(path)?;
    Ok(raw
        .into_iter()
        .map(|row| RgbRow {
            query: row.query.trim().to_owned(),
            answers: strings(&row.answer),
            fake_answer: strings(&row.fakeanswer).into_iter().next(),
            positive: strings(&row.positive),
            negative: strings(&row.negative),
            positive_wrong: strings(&row.positive_wrong),
        })
        .collect())
}

/// The three relevance figures of the refine set.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RgbRelevance {
    /// Positive graded above negative.
    pub grade: PairwiseAgreement,
    /// Positive preferred over negative, both orders averaged.
    pub preference: PairwiseAgreement,
    /// Positive useful and negative not, for the reference answer.
    pub usefulness: BinaryAgreement,
}

/// See the module doc. Queries without both kinds of passage are skipped.
pub async fn rgb_relevance(judge: &TaskJudge, rows: &[RgbRow]) -> Result<RgbRelevance, TaskError> {
    let mut figures = RgbRelevance::default();
    for row in rows {
        let (Some(positive), Some(negative)) = (row.positive.first(), row.negative.first()) else {
            continue;
        };
        let grade = |context: &str| GradeRelevance {
            question: row.query.clone(),
            context: context.to_owned(),
        };
        let good = judge.grade_relevance(&grade(positive)).await?.value.grade;
        let bad = judge.grade_relevance(&grade(negative)).await?.value.grade;
        figures.grade.add(f64::from(good), f64::from(bad));
        let pair = |first: &str, second: &str| PairwisePreference {
            question: row.query.clone(),
            first: first.to_owned(),
            second: second.to_owned(),
        };
        let forward = judge
            .pairwise_preference(&pair(positive, negative))
            .await?
            .value
            .preferred;
        let backward = judge
            .pairwise_preference(&pair(negative, positive))
            .await?
            .value
            .preferred;
        figures.preference.pairs += 1;
        figures.preference.wins +=
            (points(forward, Preferred::First) + points(backward, Preferred::Second)) / 2.0;
        let answer = row.answers.join(if Lang::detect(&row.query) == Lang::Zh {
            "、"
        } else {
            ", "
        });
        for (context, label) in [(positive, true), (negative, false)] {
            let verdict = judge
                .context_usefulness(&ContextUsefulness {
                    question: row.query.clone(),
                    answer: answer.clone(),
                    context: context.clone(),
                })
                .await?;
            figures.usefulness.add(label, verdict.value.useful);
        }
    }
    Ok(figures)
}

/// 1 when `preferred` is the side holding the better item, ½ for a tie, else 0.
pub(crate) fn points(preferred: Preferred, better: Preferred) -> f64 {
    match preferred {
        p if p == better => 1.0,
        Preferred::Tie => 0.5,
        _ => 0.0,
    }
}

/// The claim that `answer` answers `query`: the query followed by the answer, as a
/// question-answer pair reads (how the sweep turns a question and its short answer into a
/// self-contained statement).
pub fn claim(query: &str, answer: &str) -> String {
    let query = query.trim_end_matches(['?', '？']);
    match Lang::detect(query) {
        Lang::Zh => format!("{query}？{answer}。"),
        Lang::En => format!("{query}? {answer}."),
    }
}

/// See the module doc: one statement per claim, judged against the positive passages and
/// scored by its credit under [`SupportCredit::FullByDegree`] (full support scores its
/// degree, 1 without one). Rows without a fake answer are skipped.
pub async fn rgb_counterfactual(
    judge: &TaskJudge,
    rows: &[RgbRow],
) -> Result<PairwiseAgreement, TaskError> {
    let mut agreement = PairwiseAgreement::default();
    for row in rows {
        let (Some(fake), Some(answer)) = (&row.fake_answer, row.answers.first()) else {
            continue;
        };
        if row.positive.is_empty() {
            continue;
        }
        let verdicts = judge
            .support_verdicts(&SupportVerdicts {
                statements: vec![claim(&row.query, answer), claim(&row.query, fake)],
                contexts: row.positive.clone(),
                premise: Default::default(),
                history: Vec::new(),
            })
            .await?
            .value;
        let credit = |i: usize| {
            verdicts
                .get(i)
                .map_or(0.0, |v| v.credit(SupportCredit::FullByDegree))
        };
        agreement.add(credit(0), credit(1));
    }
    Ok(agreement)
}
