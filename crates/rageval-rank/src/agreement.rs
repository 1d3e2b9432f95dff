//! How far the retriever's order agrees with the judge's (seed S3's Spearman score and
//! "top-k similarity", and more): per question and averaged over questions.
//!
//! The retriever's order is the order the contexts were given in (index 0 first); the
//! judge's is a [`Ranking`]. Contexts whose grading failed are left out of the correlations
//! and count as not relevant in nDCG and AP (trec_eval's treatment of unjudged documents).
//! The formulas are `rageval_core::rank`'s; this module only decides what is compared with
//! what. Nothing here is NaN: an undefined value is `None` and counted when averaging.

use rageval_core::rank::{
    Gain, average_precision, kendall_tau_b, ndcg_at_k, rank_biased_overlap, spearman, top_k_overlap,
};
use serde::{Deserialize, Serialize};

use crate::ranking::Ranking;

/// The cut-off of top-k overlap and nDCG unless told otherwise (seed S3 uses 10).
pub const DEFAULT_TOP_K: usize = 10;
/// RBO persistence unless told otherwise: the top 10 carry 86% of the weight.
pub const DEFAULT_RBO_PERSISTENCE: f64 = 0.9;

/// Rank-biased overlap as a bound and a point estimate (`rageval_core::rank::Rbo`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RboEstimate {
    /// Lower bound.
    pub min: f64,
    /// How much higher it could be.
    pub residual: f64,
    /// Point estimate (Webber et al. eq. 32).
    pub extrapolated: f64,
}

/// Retriever-versus-judge agreement for one question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RetrieverAgreement {
    /// The cut-off used for `top_k_overlap` and `ndcg_at_k`.
    pub k: usize,
    /// Spearman's ρ between retriever position and judge position over the graded contexts;
    /// the bad contexts share one (average) judge rank.
    pub spearman: Option<f64>,
    /// Kendall's τ-b over the same two rankings.
    pub kendall_tau_b: Option<f64>,
    /// Seed S3's top-k similarity: the share of the judge's top k (contexts it graded
    /// useful, in its order) that are also in the retriever's top k; denominator k.
    pub top_k_overlap: f64,
    /// The shared contexts, in the judge's order.
    pub overlapping: Vec<usize>,
    /// Rank-biased overlap of the judge's useful list with the retriever's order, at
    /// persistence `rbo_persistence`; `None` when the judge found nothing useful.
    pub rbo: Option<RboEstimate>,
    /// The persistence used.
    pub rbo_persistence: f64,
    /// nDCG@k of the retriever's order with the judge's grades as gains (linear), the ideal
    /// built from every grade; `None` when no context is useful.
    pub ndcg_at_k: Option<f64>,
    /// Average precision of the retriever's order, relevant = grade ≥ 1; 0 when nothing is
    /// relevant, `None` for no contexts.
    pub average_precision: Option<f64>,
}

/// Compares the retriever's order of `ranking`'s contexts with the judge's.
pub fn retriever_agreement(
    ranking: &Ranking,
    k: usize,
    rbo_persistence: f64,
) -> RetrieverAgreement {
    let n = ranking.grades.len();
    let mut judge_position = vec![None; n];
    for (position, &index) in ranking.good.iter().enumerate() {
        judge_position[index] = Some(position as f64);
    }
    let bad_position = ranking.good.len() as f64;
    for &index in &ranking.bad {
        judge_position[index] = Some(bad_position);
    }
    let (retriever, judge): (Vec<f64>, Vec<f64>) = judge_position
        .iter()
        .enumerate()
        .filter_map(|(index, position)| position.map(|p| (index as f64, p)))
        .unzip();
    let retriever_order: Vec<usize> = (0..n).collect();
    let overlap = top_k_overlap(&ranking.good, &retriever_order, k);
    let grades: Vec<f64> = (0..n)
        .map(|index| ranking.grade(index).map_or(0.0, |g| f64::from(g.value())))
        .collect();
    let relevant: Vec<bool> = grades.iter().map(|&g| g > 0.0).collect();
    RetrieverAgreement {
        k,
        spearman: spearman(&retriever, &judge),
        kendall_tau_b: kendall_tau_b(&retriever, &judge),
        top_k_overlap: overlap.ratio,
        overlapping: overlap.overlapping,
        rbo: rank_biased_overlap(&ranking.good, &retriever_order, rbo_persistence).map(|rbo| {
            RboEstimate {
                min: rbo.min,
                residual: rbo.residual,
                extrapolated: rbo.extrapolated,
            }
        }),
        rbo_persistence,
        ndcg_at_k: ndcg_at_k(&grades, &grades, Some(k), Gain::Linear),
        average_precision: average_precision(&relevant),
    }
}

/// The mean of one measure over questions, with how many questions had it defined.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MeanOver {
    /// Mean over the questions where it is defined; `None` when it is defined nowhere.
    pub mean: Option<f64>,
    /// Questions where it is defined.
    pub defined: usize,
    /// Questions where it is not.
    pub undefined: usize,
}

impl MeanOver {
    /// The mean of the defined values, counting the undefined ones.
    pub fn of(values: impl Iterator<Item = Option<f64>>) -> MeanOver {
        let (mut sum, mut defined, mut undefined) = (0.0, 0, 0);
        for value in values {
            match value {
                Some(v) => {
                    sum += v;
                    defined += 1;
                }
                None => undefined += 1,
            }
        }
        MeanOver {
            mean: (defined > 0).then(|| sum / defined as f64),
            defined,
            undefined,
        }
    }
}

/// Retriever-versus-judge agreement averaged over questions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgreementSummary {
    /// Questions averaged.
    pub questions: usize,
    /// Mean Spearman's ρ.
    pub spearman: MeanOver,
    /// Mean Kendall's τ-b.
    pub kendall_tau_b: MeanOver,
    /// Mean top-k overlap.
    pub top_k_overlap: MeanOver,
    /// Mean RBO point estimate.
    pub rbo_extrapolated: MeanOver,
    /// Mean nDCG@k.
    pub ndcg_at_k: MeanOver,
    /// Mean average precision (MAP).
    pub mean_average_precision: MeanOver,
}

/// Averages per-question agreements.
pub fn summarize(agreements: &[RetrieverAgreement]) -> AgreementSummary {
    let over = |measure: fn(&RetrieverAgreement) -> Option<f64>| {
        MeanOver::of(agreements.iter().map(measure))
    };
    AgreementSummary {
        questions: agreements.len(),
        spearman: over(|a| a.spearman),
        kendall_tau_b: over(|a| a.kendall_tau_b),
        top_k_overlap: over(|a| Some(a.top_k_overlap)),
        rbo_extrapolated: over(|a| a.rbo.map(|r| r.extrapolated)),
        ndcg_at_k: over(|a| a.ndcg_at_k),
        mean_average_precision: over(|a| a.average_precision),
    }
}
