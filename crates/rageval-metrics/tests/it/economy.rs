//! Call economy: what metrics share is asked once per sample, a sample's contexts are judged
//! concurrently, and all claims of an answer go in one call.

use std::time::Duration;

use crate::support::{cooperative, sample, scripted, scripted_with_latency, value};

#[tokio::test]
async fn statements_are_split_once_per_text_across_metrics() {
    let judge = scripted(cooperative).await;
    let s = sample(
        "Q?",
        &["k1 k3", "k4"],
        "k1 fact. k3 fact",
        "k1 fact. k2 fact",
    );
    let specs = [
        "faithfulness",
        "context_recall",
        "answer_correctness",
        "answer_correctness:ragas",
        "noise_sensitivity",
        "noise_sensitivity:irrelevant",
    ];
    let outcomes = judge.score(&s, &specs).await;
    for (spec, outcome) in specs.iter().zip(&outcomes) {
        value(outcome);
        assert!(outcome.value().is_some(), "{spec}");
    }
    // One split of the answer, one of the reference.
    assert_eq!(judge.calls("split_statements"), 2);
    // faithfulness 1, context_recall 1, answer vs reference 1 (shared by ragas correctness
    // and both noise modes), reference vs answer 1 (shared by both correctness modes), and
    // per context the reference's and the answer's statements (2 × 2): both noise modes ask
    // these at the same moment, and the judge's single flight makes one request of each pair.
    assert_eq!(judge.calls("support_verdicts"), 4 + 4);
}

#[tokio::test]
async fn both_precision_variants_share_the_usefulness_verdicts() {
    let judge = scripted(cooperative).await;
    let s = sample("Q?", &["a", "b noise", "c"], "A.", "R.");
    judge
        .score(
            &s,
            &[
                "context_precision",
                "context_precision_strict",
                "context_precision:ragas",
            ],
        )
        .await;
    assert_eq!(judge.calls("context_usefulness"), 3);
}

#[tokio::test]
async fn a_samples_contexts_are_judged_concurrently() {
    let judge = scripted_with_latency(Duration::from_millis(50), cooperative).await;
    let contexts: Vec<String> = (0..8).map(|i| format!("passage {i}")).collect();
    let refs: Vec<&str> = contexts.iter().map(String::as_str).collect();
    let s = sample("Q?", &refs, "A.", "R.");
    judge.score(&s, &["context_relevance"]).await;
    assert_eq!(judge.calls("context_relevance"), 8);
    assert_eq!(judge.mock.stats().max_in_flight, 8);
}

#[tokio::test]
async fn all_claims_of_an_answer_are_checked_in_one_call() {
    let judge = scripted(cooperative).await;
    let s = sample("Q?", &["c"], "One. Two. Three. Four. Five. Six", "");
    let outcome = judge.one(&s, "faithfulness").await;
    assert_eq!(value(&outcome), 1.0);
    assert_eq!(judge.calls("support_verdicts"), 1);
}

#[tokio::test]
async fn a_planned_run_checks_answer_and_reference_statements_in_one_call() {
    let judge = scripted(cooperative).await;
    let s = sample(
        "Q?",
        &["k1 k3", "k4"],
        "k1 fact. k3 fact",
        "k1 fact. k2 fact",
    );
    let metrics: Vec<_> = ["faithfulness", "context_recall"]
        .iter()
        .map(|spec| rageval_metrics::build(spec).unwrap())
        .collect();
    let judges = judge.judges.clone().plan_for(&metrics);
    let scoring = rageval_metrics::ScoringContext::new(&judges, &s);
    let outcomes =
        futures_util::future::join_all(metrics.iter().map(|m| m.score(&s, &scoring))).await;
    // Answer: k1 supported (context 1), k3 supported (context 1) → 1.0; reference: k1
    // supported, k2 not → 0.5. The same numbers as two separate calls give.
    assert_eq!(value(&outcomes[0]), 1.0);
    assert_eq!(value(&outcomes[1]), 0.5);
    assert_eq!(judge.calls("support_verdicts"), 1);
    assert_eq!(judge.calls("split_statements"), 2);
}
