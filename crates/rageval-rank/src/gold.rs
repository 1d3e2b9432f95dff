//! How well an order puts labelled-relevant contexts first, when the data has gold labels
//! (RGB's positive and negative passages, a dataset's `reference_context_ids`): the judge's
//! order and the retriever's, side by side.
//!
//! AUROC is the share of (relevant, not relevant) pairs the order puts the right way round,
//! a tie counting half (Mann–Whitney U / (P·N)). In the judge's order the `bad` contexts
//! share one position, so pairs among them are ties. Contexts whose grading failed are left
//! out of the judge's figures. nDCG@k and AP are `rageval_core::rank`'s, with binary gains.

use rageval_core::agreement::auroc;
use rageval_core::rank::{Gain, average_precision, ndcg_at_k};
use serde::{Deserialize, Serialize};

use crate::agreement::MeanOver;
use crate::ranking::Ranking;

/// One order's figures against the gold labels.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GoldFigures {
    /// Share of (relevant, not relevant) pairs ordered correctly, ties half; `None` when
    /// either class is empty.
    pub auroc: Option<f64>,
    /// nDCG@k with gain 1 for a relevant context; `None` when none is relevant.
    pub ndcg_at_k: Option<f64>,
    /// Average precision; `None` for no contexts.
    pub average_precision: Option<f64>,
}

/// The judge's and the retriever's orders against the gold labels of one question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GoldAgreement {
    /// The cut-off of nDCG.
    pub k: usize,
    /// Contexts labelled relevant.
    pub relevant: usize,
    /// Contexts labelled not relevant.
    pub not_relevant: usize,
    /// The judge's order (`indices`, ungraded contexts left out).
    pub judge: GoldFigures,
    /// The retriever's order (the order the contexts came in).
    pub retriever: GoldFigures,
}

fn figures(scores: &[f64], labels: &[bool], order: &[usize], k: usize) -> GoldFigures {
    let gains: Vec<f64> = order
        .iter()
        .map(|&i| if labels[i] { 1.0 } else { 0.0 })
        .collect();
    let in_order: Vec<bool> = order.iter().map(|&i| labels[i]).collect();
    GoldFigures {
        auroc: auroc(labels, scores),
        ndcg_at_k: ndcg_at_k(&gains, &gains, Some(k), Gain::Linear),
        average_precision: average_precision(&in_order),
    }
}

/// Compares `ranking`'s order and the retriever's with `relevant` (one label per context).
/// `None` when the labels do not match the contexts in number.
pub fn gold_agreement(ranking: &Ranking, relevant: &[bool], k: usize) -> Option<GoldAgreement> {
    let n = ranking.grades.len();
    if relevant.len() != n {
        return None;
    }
    let graded: Vec<usize> = ranking.good.iter().chain(&ranking.bad).copied().collect();
    let bad_score = -(ranking.good.len() as f64);
    let mut judge_scores = Vec::with_capacity(graded.len());
    let mut judge_labels = Vec::with_capacity(graded.len());
    for (position, &index) in graded.iter().enumerate() {
        let score = if position < ranking.good.len() {
            -(position as f64)
        } else {
            bad_score
        };
        judge_scores.push(score);
        judge_labels.push(relevant[index]);
    }
    let retriever_scores: Vec<f64> = (0..n).map(|i| -(i as f64)).collect();
    let retriever_order: Vec<usize> = (0..n).collect();
    let judge_order: Vec<usize> = (0..graded.len()).collect();
    Some(GoldAgreement {
        k,
        relevant: relevant.iter().filter(|&&r| r).count(),
        not_relevant: relevant.iter().filter(|&&r| !r).count(),
        judge: figures(&judge_scores, &judge_labels, &judge_order, k),
        retriever: figures(&retriever_scores, relevant, &retriever_order, k),
    })
}

/// One order's figures averaged over questions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GoldMeans {
    /// Mean AUROC.
    pub auroc: MeanOver,
    /// Mean nDCG@k.
    pub ndcg_at_k: MeanOver,
    /// Mean average precision (MAP).
    pub mean_average_precision: MeanOver,
}

/// Gold agreement averaged over the questions that have labels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GoldSummary {
    /// Questions averaged.
    pub questions: usize,
    /// The judge's order.
    pub judge: GoldMeans,
    /// The retriever's order.
    pub retriever: GoldMeans,
}

/// Averages per-question gold agreements.
pub fn summarize_gold(agreements: &[GoldAgreement]) -> GoldSummary {
    let means = |side: fn(&GoldAgreement) -> GoldFigures| {
        let of = |measure: fn(&GoldFigures) -> Option<f64>| {
            MeanOver::of(agreements.iter().map(|a| measure(&side(a))))
        };
        GoldMeans {
            auroc: of(|f| f.auroc),
            ndcg_at_k: of(|f| f.ndcg_at_k),
            mean_average_precision: of(|f| f.average_precision),
        }
    };
    GoldSummary {
        questions: agreements.len(),
        judge: means(|a| a.judge),
        retriever: means(|a| a.retriever),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scores are positions (earlier = higher), so rageval-core's AUROC reads them the
    /// way the rank orders them: a perfect order is 1, a reversed one 0, a tie half.
    #[test]
    fn auroc_reads_earlier_as_better() {
        assert_eq!(
            auroc(&[true, true, false, false], &[3.0, 2.0, 1.0, 0.0]),
            Some(1.0)
        );
        assert_eq!(auroc(&[true, false], &[0.0, 1.0]), Some(0.0));
        assert_eq!(auroc(&[true, false, false], &[1.0, 1.0, 0.0]), Some(0.75));
    }
}
