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
    // An endpoint's first call goes alone (its request form is settled on one call, not on
    // every call in flight); once it has answered, calls go out together.
    judge
        .score(
            &sample("Q0?", &["warm-up"], "A.", "R."),
            &["context_relevance"],
        )
        .await;
    judge.mock.reset();
    let contexts: Vec<String> = (0..8).map(|i| format!("passage {i}")).collect();
    let refs: Vec<&str> = contexts.iter().map(String::as_str).collect();
    let s = sample("Q?", &refs, "A.", "R.");
    judge.score(&s, &["context_relevance"]).await;
    assert_eq!(judge.calls("context_relevance"), 9);
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
async fn without_the_contexts_call_a_planned_run_checks_both_statement_lists_in_one_call() {
    let judge = scripted(cooperative).await;
    // The blank context keeps this sample off `contexts_check`.
    let s = sample(
        "Q?",
        &["k1 k3", "k4", " "],
        "k1 fact. k3 fact",
        "k1 fact. k2 fact",
    );
    let outcomes = planned(&judge, &s, &["faithfulness", "context_recall"]).await;
    // Answer: k1 supported (context 1), k3 supported (context 1) → 1.0; reference: k1
    // supported, k2 not → 0.5. The same numbers as two separate calls give.
    assert_eq!(value(&outcomes[0]), 1.0);
    assert_eq!(value(&outcomes[1]), 0.5);
    assert_eq!(judge.calls("support_verdicts"), 1);
    assert_eq!(judge.calls("split_statements"), 2);
    assert_eq!(judge.calls("contexts_check"), 0);
}

/// Scores `s` with `specs` planned as one run, in one scoring context.
async fn planned(
    judge: &crate::support::Scripted,
    s: &rageval_core::Sample,
    specs: &[&str],
) -> Vec<rageval_core::Outcome> {
    let metrics: Vec<_> = specs
        .iter()
        .map(|spec| rageval_metrics::build(spec).expect("metric"))
        .collect();
    let judges = judge.judges.clone().plan_for(&metrics);
    let scoring = rageval_metrics::ScoringContext::new(&judges, s);
    futures_util::future::join_all(metrics.iter().map(|m| m.score(s, &scoring))).await
}

#[tokio::test]
async fn a_planned_run_judges_precision_recall_and_faithfulness_in_one_contexts_call() {
    let judge = scripted(cooperative).await;
    let s = sample(
        "Q?",
        &["noise k4", "k1 k3"],
        "k1 fact. k3 fact",
        "k1 fact. k2 fact",
    );
    let specs = ["context_precision", "context_recall", "faithfulness"];
    let together = planned(&judge, &s, &specs).await;
    // Usefulness [no, yes] → AP 0.5; reference: k1 in context 2, k2 nowhere → 0.5; answer:
    // k1 and k3 in context 2 → 1.0.
    let values: Vec<f64> = together.iter().map(value).collect();
    assert_eq!(values, [0.5, 0.5, 1.0]);
    assert_eq!(judge.calls("contexts_check"), 1);
    assert_eq!(
        judge.calls("split_statements"),
        0,
        "the contexts call splits the answer and the reference"
    );
    assert_eq!(
        judge.calls("context_usefulness") + judge.calls("support_verdicts"),
        0
    );
    // The verdicts stay per context and per statement, with their reasons.
    let evidence = serde_json::to_string(&together).expect("outcomes serialise");
    assert!(evidence.contains("judged by marker"), "{evidence}");
    assert!(evidence.contains("judged by key"), "{evidence}");
    assert!(evidence.contains("k2 fact"), "{evidence}");
    // The same numbers as the separate tasks give.
    let apart = judge.score(&s, &specs).await;
    assert_eq!(apart.iter().map(value).collect::<Vec<_>>(), values);
    assert_eq!(judge.calls("contexts_check"), 1);
}

#[tokio::test]
async fn statements_the_dataset_gives_are_checked_as_given_in_the_contexts_call() {
    // The reference's statements given (k2 is in no context), then the answer's (k5).
    let given = |reference: bool| {
        let mut s = sample(
            "Q?",
            &["k1 k3", "noise"],
            "k1 fact. k3 fact",
            "k1 fact. k2 fact",
        );
        let statements = Some(vec![
            "k1 fact".into(),
            format!("k{} fact", if reference { 2 } else { 5 }),
        ]);
        match reference {
            true => s.reference_statements = statements,
            false => s.answer_statements = statements,
        }
        s
    };
    for (reference, values) in [(true, [0.5, 1.0]), (false, [0.5, 0.5])] {
        let judge = scripted(cooperative).await;
        let outcomes = planned(
            &judge,
            &given(reference),
            &["context_recall", "faithfulness"],
        )
        .await;
        assert_eq!(outcomes.iter().map(value).collect::<Vec<_>>(), values);
        assert_eq!(judge.calls("contexts_check"), 1);
        assert_eq!(
            judge.calls("split_statements"),
            0,
            "the other text is split in the call"
        );
    }
}

#[tokio::test]
async fn the_answer_split_in_the_contexts_call_serves_every_metric_of_the_sample() {
    let judge = scripted(cooperative).await;
    let s = sample(
        "Q?",
        &["noise k4", "k1 k3"],
        "k1 fact. k3 fact",
        "k1 fact. k2 fact",
    );
    let specs = [
        "context_precision",
        "faithfulness",
        "answer_correctness",
        "noise_sensitivity",
    ];
    let outcomes = planned(&judge, &s, &specs).await;
    for (spec, outcome) in specs.iter().zip(&outcomes) {
        assert!(outcome.value().is_some(), "{spec}: {outcome:?}");
    }
    // The answer is split once, in the contexts call; only answer_correctness's reference
    // (not checked against the contexts by this run) is split apart.
    assert_eq!(judge.calls("contexts_check"), 1);
    assert_eq!(judge.calls("split_statements"), 1);
    let evidence = serde_json::to_string(&outcomes).expect("outcomes serialise");
    assert!(evidence.contains("contexts_check.en@2"), "{evidence}");
}

#[tokio::test]
async fn a_blank_context_or_a_single_part_uses_the_separate_tasks() {
    let judge = scripted(cooperative).await;
    let blank = sample("Q?", &["k1 k3", " "], "k1 fact", "k1 fact");
    let outcomes = planned(&judge, &blank, &["context_recall", "faithfulness"]).await;
    assert_eq!(outcomes.iter().map(value).collect::<Vec<_>>(), [1.0, 1.0]);
    let single = sample("Q?", &["k1 k3"], "k1 fact", "k1 fact");
    planned(&judge, &single, &["faithfulness", "answer_relevance"]).await;
    assert_eq!(judge.calls("contexts_check"), 0);
    assert_eq!(judge.calls("support_verdicts"), 2);
}
