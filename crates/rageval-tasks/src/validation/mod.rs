//! Measuring a [`TaskJudge`] against human-labelled data, the same way for the heuristic
//! judge and for any chat model: the figures in [`measured`](crate::measured) come from
//! here, and `judge-check` can run the same code on another judge.
//!
//! - [`wikieval`](mod@wikieval): the ragas paper's pairs (faithfulness, answer relevance,
//!   context relevance), English.
//! - [`rgb`]: RGB's passages with and without the answer, and its counterfactual passages,
//!   Chinese and English.
//! - [`dureader`]: DuReader's documents with the annotators' selection, Chinese.
//! - [`kids`]: the S4 article's kids-coding questions with their gold chunks, Chinese.
//! - [`uhgeval`](mod@uhgeval) and [`cranfield`](mod@cranfield): readers of UHGEval's
//!   keywords and Cranfield's graded judgements.
//! - [`split`]: the seeded development / held-out split by question.
//! - [`choose`]: the sweep that chooses the heuristic judge's defaults on the development
//!   part and reports them on the held-out part.
//! - [`measure_all`]: every figure of the measured table for one judge.
//!
//! The data stay in `shared/validation/` (RGB is non-commercial: read, never bundled).

mod all;
pub mod choose;
pub mod cranfield;
pub mod dureader;
pub mod kids;
pub mod rgb;
pub mod split;
pub mod uhgeval;
pub mod wikieval;

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use crate::error::TaskError;
use crate::router::TaskJudge;
use crate::task::{SplitStatements, SupportCredit, SupportVerdicts};

pub use all::{
    DUREADER_FILE, RGB_EN_FACT_FILE, RGB_ZH_FACT_FILE, RGB_ZH_REFINE_FILE, WIKIEVAL_FILE,
    measure_all,
};
pub use cranfield::{CranfieldJudgement, read_cranfield};
pub use dureader::{
    DuReaderDocument, DuReaderRelevance, DuReaderRow, dureader_relevance, read_dureader,
};
pub use kids::{KIDS_CODING_FILE, KidsCodingRow, read_kids_coding};
pub use rgb::{RgbRelevance, RgbRow, read_rgb, rgb_counterfactual, rgb_relevance};
pub use split::{Part, SPLIT_SEED};
pub use uhgeval::{UhgevalKeyword, read_uhgeval};
pub use wikieval::{
    WikiEvalFigures, WikiEvalRow, read_wikieval, wikieval, wikieval_answer_relevance,
    wikieval_context_relevance, wikieval_faithfulness,
};

/// The environment variable that names the folder of the shared labelled sets, for a
/// checkout that does not sit beside them.
pub const ENV_VALIDATION_DIR: &str = "RAGEVAL_VALIDATION_DIR";

/// Where the shared labelled sets are for the workspace at `workspace_root`:
/// `$RAGEVAL_VALIDATION_DIR` when set, else `shared/validation` beside the repository
/// (`../shared/validation`). The folder may be absent (a clone elsewhere): callers check.
pub fn validation_dir(workspace_root: &Path) -> PathBuf {
    match std::env::var_os(ENV_VALIDATION_DIR) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => workspace_root.join("../shared/validation"),
    }
}

/// Reads JSON Lines into `T`; errors name the file and the line.
pub(crate) fn read_jsonl<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>, TaskError> {
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
        rows.push(serde_json::from_str(line).map_err(|e| data_error(index + 1, e.to_string()))?);
    }
    if rows.is_empty() {
        return Err(data_error(0, "no rows".into()));
    }
    Ok(rows)
}

pub use rageval_core::agreement::{BinaryAgreement, PairwiseAgreement};

/// Faithfulness as the metric's default defines it: the mean credit of the answer's
/// statements under [`SupportCredit::FullByDegree`] (S1/S4's fully supported ÷ statements
/// with a judge that gives no degree of support); 0 when the answer states nothing.
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
            premise: Default::default(),
            history: Vec::new(),
        })
        .await?
        .value;
    let credit: f64 = verdicts
        .iter()
        .map(|v| v.credit(SupportCredit::FullByDegree))
        .sum();
    Ok(credit / statements.len() as f64)
}
