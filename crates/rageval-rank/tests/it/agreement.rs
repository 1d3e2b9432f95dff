//! Retriever versus judge on a hand-worked ranking.

use rageval_rank::agreement::{RetrieverAgreement, retriever_agreement, summarize};
use rageval_rank::{CallRecord, Grade, RankSettings, Ranking};

/// Five contexts graded [1, 0, 3, 2, 0]; the judge orders the useful ones 2, 3, 0.
fn hand_ranking() -> Ranking {
    let grades = [1, 0, 3, 2, 0]
        .into_iter()
        .map(|g| CallRecord::Answer(Grade::new(g).unwrap_or(Grade::NOT_USEFUL)))
        .collect();
    Ranking {
        settings: RankSettings::default(),
        indices: vec![2, 3, 0, 1, 4],
        good: vec![2, 3, 0],
        bad: vec![1, 4],
        ungraded: vec![],
        grades,
        grade_batches: vec![],
        scores: vec![None; 5],
        comparisons: vec![],
        windows: vec![],
        position_inconsistency: None,
        calls: Default::default(),
        rounds: 2,
    }
}

fn close(actual: Option<f64>, expected: f64) {
    let actual = actual.unwrap_or(f64::INFINITY);
    assert!((actual - expected).abs() < 1e-9, "{actual} vs {expected}");
}

#[test]
fn hand_worked_agreement() {
    let agreement = retriever_agreement(&hand_ranking(), 3, 0.9);
    // Retriever positions 0..4; judge positions [2, 3, 0, 1, 3] (bad ones share 3). Average
    // ranks [3, 4.5, 1, 2, 4.5]: Σdxdy = 0.5, Σdx² = 10, Σdy² = 9.5.
    close(agreement.spearman, 0.5 / 95f64.sqrt());
    // Concordant (0,1) (0,4) (2,3) (2,4) (3,4); discordant (0,2) (0,3) (1,2) (1,3); tied
    // only in the judge (1,4): τ-b = (5 − 4)/sqrt(10·9).
    close(agreement.kendall_tau_b, 1.0 / 90f64.sqrt());
    // Judge's top 3 [2, 3, 0] against retriever's [0, 1, 2]: 2 and 0 shared.
    assert_eq!(agreement.overlapping, vec![2, 0]);
    close(Some(agreement.top_k_overlap), 2.0 / 3.0);
    // DCG@3 of [1, 0, 3] = 1 + 3/2; ideal [3, 2, 1] = 3 + 2/log2(3) + 1/2.
    close(agreement.ndcg_at_k, 2.5 / (3.5 + 2.0 / 3f64.log2()));
    // Relevant [1, 0, 1, 1, 0]: (1 + 2/3 + 3/4) / 3.
    close(agreement.average_precision, (1.0 + 2.0 / 3.0 + 0.75) / 3.0);
    assert!(
        agreement.rbo.is_some_and(
            |r| r.min <= r.extrapolated && r.extrapolated <= r.min + r.residual + 1e-12
        )
    );
}

#[test]
fn undefined_measures_are_counted_not_averaged() {
    let mut nothing_useful = hand_ranking();
    nothing_useful.grades = vec![CallRecord::Answer(Grade::NOT_USEFUL); 5];
    nothing_useful.good.clear();
    nothing_useful.bad = vec![0, 1, 2, 3, 4];
    let empty = retriever_agreement(&nothing_useful, 3, 0.9);
    assert_eq!(
        (empty.spearman, empty.ndcg_at_k, empty.rbo),
        (None, None, None)
    );
    assert_eq!(empty.average_precision, Some(0.0));
    let both: Vec<RetrieverAgreement> = vec![retriever_agreement(&hand_ranking(), 3, 0.9), empty];
    let summary = summarize(&both);
    assert_eq!(summary.questions, 2);
    assert_eq!(
        (summary.spearman.defined, summary.spearman.undefined),
        (1, 1)
    );
    close(summary.spearman.mean, 0.5 / 95f64.sqrt());
    close(summary.top_k_overlap.mean, 1.0 / 3.0);
    assert_eq!(summary.mean_average_precision.defined, 2);
}
