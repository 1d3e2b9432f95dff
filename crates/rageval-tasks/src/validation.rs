//! Measuring a [`TaskJudge`] against human-labelled data, the same way for the heuristic
//! judge and for any chat model: the figures in [`measured`](crate::measured) come from
//! here, and `judge-check` can run the same code on another judge.
//!
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

use crate::error::TaskError;
use crate::router::TaskJudge;
use crate::task::{
    AnswerRubric, PairwisePreference, Preferred, SplitStatements, SupportVerdicts, TaskKind,
};

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
    let data_error = |line: usize, why: String| TaskError::Data {
        file: path.display().to_string(),
        line,
        why,
    };
    let text = std::fs::read_to_string(path).map_err(|e| data_error(0, e.to_string()))?;
    let mut rows = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let mut row: WikiEvalRow =
            serde_json::from_str(line).map_err(|e| data_error(index + 1, e.to_string()))?;
        row.question = strip_label(&row.question, "Question:");
        row.answer = strip_label(&row.answer, "Answer:");
        rows.push(row);
    }
    if rows.is_empty() {
        return Err(data_error(0, "no rows".into()));
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

/// A pairwise agreement figure.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PairwiseAgreement {
    /// Pairs where the better item won (ties count half).
    pub wins: f64,
    /// Pairs compared.
    pub pairs: usize,
}

impl PairwiseAgreement {
    /// `wins / pairs` (0 with no pairs).
    pub fn accuracy(&self) -> f64 {
        if self.pairs == 0 {
            0.0
        } else {
            self.wins / self.pairs as f64
        }
    }

    fn add(&mut self, better: f64, worse: f64) {
        self.pairs += 1;
        self.wins += if better > worse {
            1.0
        } else if better == worse {
            0.5
        } else {
            0.0
        };
    }
}

/// Faithfulness as the metric defines it (S1/S4): fully supported statements ÷ statements;
/// 0 when the answer states nothing.
pub async fn faithfulness(
    judge: &TaskJudge,
    question: &str,
    answer: &str,
    contexts: &[String],
) -> Result<f64, TaskError> {
    let statements = judge
        .split_statements(&SplitStatements {
            question: question.to_owned(),
            text: answer.to_owned(),
        })
        .await?
        .value;
    if statements.is_empty() {
        return Ok(0.0);
    }
    let verdicts = judge
        .support_verdicts(&SupportVerdicts {
            statements: statements.clone(),
            contexts: contexts.to_vec(),
        })
        .await?
        .value;
    let supported = verdicts.iter().filter(|v| v.support.is_supported()).count();
    Ok(supported as f64 / statements.len() as f64)
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
        let points = |preferred: Preferred, v1_is: Preferred| match preferred {
            p if p == v1_is => 1.0,
            Preferred::Tie => 0.5,
            _ => 0.0,
        };
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

/// The tasks each WikiEval figure exercises, for the measured table.
pub const WIKIEVAL_TASKS: [(TaskKind, &str); 3] = [
    (TaskKind::SupportVerdicts, "faithfulness pairwise accuracy"),
    (TaskKind::AnswerRubric, "answer relevance pairwise accuracy"),
    (
        TaskKind::PairwisePreference,
        "context relevance pairwise accuracy",
    ),
];
