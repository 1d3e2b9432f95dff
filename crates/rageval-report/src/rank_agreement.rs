//! `rank_agreement.jsonl`: per question, how the retriever's order agrees with the judge's,
//! as `rank` and `pipeline` write it beside their results; the reports show it when a run
//! directory holds it.

use serde::{Deserialize, Serialize};

/// The file of a run directory with the rank agreement per question.
pub const RANK_AGREEMENT_FILE: &str = "rank_agreement.jsonl";

/// One question's retriever-versus-judge figures. A question whose judge grades did not all
/// come back carries no figures, and `left_out` says why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankAgreementRow {
    pub sample_id: String,
    pub question: String,
    pub spearman: Option<f64>,
    pub kendall_tau_b: Option<f64>,
    /// The cut-off of the top-k figures.
    pub k: usize,
    pub top_k_overlap: Option<f64>,
    /// Context indices in both top-k lists.
    pub overlap_indices: Vec<usize>,
    pub ndcg_at_k: Option<f64>,
    pub map: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_out: Option<String>,
}
