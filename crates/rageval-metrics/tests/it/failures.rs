//! Outcomes when a metric does not apply (`Undefined` with the reason) or the judge gives no
//! usable answer (`Failed` with the error and the raw answer), never NaN.

use rageval_core::Outcome;
use rageval_metrics::{Judges, ScoringContext, build};

use crate::support::{Answer, cooperative, sample, scripted};

fn undefined(outcome: &Outcome) -> &str {
    match outcome {
        Outcome::Undefined { reason } => reason,
        other => panic!("expected undefined, got {other:?}"),
    }
}

fn failed(outcome: &Outcome) -> &str {
    match outcome {
        Outcome::Failed { error } => error,
        other => panic!("expected failed, got {other:?}"),
    }
}

#[tokio::test]
async fn garbage_after_the_ladder_fails_with_the_raw_answer() {
    let judge = scripted(|asked| match asked.task {
        "support_verdicts" => Answer::Raw("I'm sorry, I cannot do that.".into()),
        _ => cooperative(asked),
    })
    .await;
    let s = sample("Q?", &["c"], "One claim. Two claims", "");
    let error = failed(&judge.one(&s, "faithfulness").await).to_owned();
    assert!(error.contains("support_verdicts"), "{error}");
    assert!(error.contains("I'm sorry, I cannot do that."), "{error}");
    // Ask, re-ask, then one fresh climb: ask and re-ask again.
    assert_eq!(judge.calls("support_verdicts"), 4);
}

#[tokio::test]
async fn a_failed_shared_step_fails_each_metric_once_asked() {
    let judge = scripted(|asked| match asked.task {
        "split_statements" => Answer::Raw("Here are the statements, more or less.".into()),
        _ => cooperative(asked),
    })
    .await;
    let s = sample("Q?", &["c"], "An answer.", "A reference.");
    let outcomes = judge
        .score(
            &s,
            &[
                "faithfulness",
                "noise_sensitivity",
                "answer_correctness:ragas",
            ],
        )
        .await;
    for outcome in &outcomes {
        assert!(failed(outcome).contains("split_statements"), "{outcome:?}");
    }
    // Two texts (answer, reference), each one failed ladder of 4 calls, shared.
    assert_eq!(judge.calls("split_statements"), 8);
}

#[tokio::test]
async fn texts_that_state_nothing_are_undefined_with_the_reason() {
    let judge = scripted(|asked| match asked.task {
        "split_statements" => Answer::Json(serde_json::json!({"statements": []})),
        _ => cooperative(asked),
    })
    .await;
    let s = sample("Q?", &["c"], "Hmm.", "Well.");
    let outcomes = judge
        .score(
            &s,
            &[
                "faithfulness",
                "context_recall",
                "answer_correctness",
                "noise_sensitivity",
            ],
        )
        .await;
    assert_eq!(undefined(&outcomes[0]), "the answer states no claims");
    assert_eq!(undefined(&outcomes[1]), "the reference states nothing");
    assert_eq!(undefined(&outcomes[2]), "the reference states nothing");
    assert_eq!(undefined(&outcomes[3]), "the answer states no claims");
}

#[tokio::test]
async fn missing_inputs_are_undefined_before_any_call() {
    let judge = scripted(cooperative).await;
    let s = sample("Q?", &["c"], "An answer.", "");
    let outcome = judge.one(&s, "context_recall").await;
    assert_eq!(undefined(&outcome), "sample has no reference");
    let outcome = judge
        .one(&sample("Q?", &[], "A.", "R."), "faithfulness")
        .await;
    assert_eq!(undefined(&outcome), "sample has no retrieved_contexts");
    assert_eq!(judge.mock.stats().requests, 0);
}

#[tokio::test]
async fn without_a_judge_judged_metrics_fail_saying_so() {
    let s = sample("Q?", &["c"], "An answer.", "A reference.");
    let scoring = ScoringContext::new(&Judges::none(), &s);
    let faithfulness = build("faithfulness").unwrap();
    let outcome = faithfulness.score(&s, &scoring).await;
    assert_eq!(failed(&outcome), "no judge is configured");
    let similarity = build("semantic_similarity").unwrap();
    let outcome = similarity.score(&s, &scoring).await;
    assert_eq!(failed(&outcome), "no embedding model is configured");
}
