//! WikiEval (the ragas paper's set; `shared/validation/wikieval/`) gives each question a
//! grounded answer, an ungrounded one and a poor one, and a context with (`context_v2`) and
//! without (`context_v1`) padding. Agreement is the share of pairs where the judge prefers
//! the better item, a tie counting half:
//! - faithfulness: the grounded answer's faithfulness (statements split, then fully
//!   supported ÷ statements against `context_v1`) above the ungrounded answer's;
//! - answer relevance: the rubric score of the answer above the poor answer's;
//! - context relevance: the pairwise preference of `context_v1` over `context_v2`, asked in
//!   both orders and averaged.

use std::path::Path;

use serde::Deserialize;

use super::rgb::points;
use super::{PairwiseAgreement, faithfulness, read_jsonl};
use crate::error::TaskError;
use crate::router::TaskJudge;
use crate::task::{AnswerRubric, PairwisePreference, Preferred};

/// One WikiEval row, with the `Question: ` / `Answer: ` prefixes of the source removed.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct WikiEvalRow {
    /// The question.
    pub question: String,
    /// The grounded answer.
    pub answer: String,
    /// An answer written without the context.
    pub ungrounded_answer: String,
    /// An answer that addresses the question poorly.
    pub poor_answer: String,
    /// The context.
    pub context_v1: Vec<String>,
    /// The context padded with less relevant material.
    pub context_v2: Vec<String>,
}

/// Reads WikiEval JSONL; errors name the file and line.
pub fn read_wikieval(path: &Path) -> Result<Vec<WikiEvalRow>, TaskError> {
    let mut rows: Vec<WikiEvalRow> = read_jsonl(path)?;
    for row in &mut rows {
        row.question = strip_label(&row.question, "Question:");
        row.answer = strip_label(&row.answer, "Answer:");
    }
    Ok(rows)
}

fn strip_label(text: &str, label: &str) -> String {
    text.trim()
        .strip_prefix(label)
        .unwrap_or(text)
        .trim()
        .to_owned()
}

/// WikiEval faithfulness: grounded above ungrounded.
pub async fn wikieval_faithfulness(
    judge: &TaskJudge,
    rows: &[WikiEvalRow],
) -> Result<PairwiseAgreement, TaskError> {
    let mut agreement = PairwiseAgreement::default();
    for row in rows {
        let grounded = faithfulness(judge, &row.question, &row.answer, &row.context_v1).await?;
        let ungrounded = faithfulness(
            judge,
            &row.question,
            &row.ungrounded_answer,
            &row.context_v1,
        )
        .await?;
        agreement.add(grounded, ungrounded);
    }
    Ok(agreement)
}

/// WikiEval answer relevance: the answer's rubric score above the poor answer's.
pub async fn wikieval_answer_relevance(
    judge: &TaskJudge,
    rows: &[WikiEvalRow],
) -> Result<PairwiseAgreement, TaskError> {
    let mut agreement = PairwiseAgreement::default();
    for row in rows {
        let score = |answer: &str| AnswerRubric {
            question: row.question.clone(),
            answer: answer.to_owned(),
        };
        let good = judge.answer_rubric(&score(&row.answer)).await?.value.score;
        let poor = judge
            .answer_rubric(&score(&row.poor_answer))
            .await?
            .value
            .score;
        agreement.add(f64::from(good), f64::from(poor));
    }
    Ok(agreement)
}

/// WikiEval context relevance: `context_v1` preferred over `context_v2`, both orders.
pub async fn wikieval_context_relevance(
    judge: &TaskJudge,
    rows: &[WikiEvalRow],
) -> Result<PairwiseAgreement, TaskError> {
    let mut agreement = PairwiseAgreement::default();
    for row in rows {
        let (v1, v2) = (row.context_v1.join("\n"), row.context_v2.join("\n"));
        let ask = |first: &str, second: &str| PairwisePreference {
            question: row.question.clone(),
            first: first.to_owned(),
            second: second.to_owned(),
        };
        let forward = judge
            .pairwise_preference(&ask(&v1, &v2))
            .await?
            .value
            .preferred;
        let backward = judge
            .pairwise_preference(&ask(&v2, &v1))
            .await?
            .value
            .preferred;
        let score = (points(forward, Preferred::First) + points(backward, Preferred::Second)) / 2.0;
        agreement.pairs += 1;
        agreement.wins += score;
    }
    Ok(agreement)
}

/// The three WikiEval figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WikiEvalFigures {
    /// See [`wikieval_faithfulness`].
    pub faithfulness: PairwiseAgreement,
    /// See [`wikieval_answer_relevance`].
    pub answer_relevance: PairwiseAgreement,
    /// See [`wikieval_context_relevance`].
    pub context_relevance: PairwiseAgreement,
}

/// All three WikiEval figures for `judge`.
pub async fn wikieval(
    judge: &TaskJudge,
    rows: &[WikiEvalRow],
) -> Result<WikiEvalFigures, TaskError> {
    Ok(WikiEvalFigures {
        faithfulness: wikieval_faithfulness(judge, rows).await?,
        answer_relevance: wikieval_answer_relevance(judge, rows).await?,
        context_relevance: wikieval_context_relevance(judge, rows).await?,
    })
}
