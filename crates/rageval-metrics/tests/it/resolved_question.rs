//! Answer relevance and the context metrics judge a follow-up as resolved through the
//! history (issue 37): "and last year?" after a question about Acme's revenue is judged as
//! the standalone question the judge wrote, which every later prompt carries and the
//! evidence records; a sample without a history makes no such call and sends its own
//! question.

use std::sync::{Arc, Mutex};

use rageval_core::{Outcome, Role, Turn};
use serde_json::json;

use crate::support::{Answer, Asked, cooperative, detail, sample, scripted};

const FOLLOW_UP: &str = "And last year?";
const RESOLVED: &str = "What was Acme's revenue in 2023?";
const METRICS: [&str; 4] = [
    "answer_relevance:rubric",
    "context_relevance",
    "context_precision",
    "context_recall",
];

/// The mock: the standalone question for `resolve_question`, the cooperative answers
/// otherwise; records (task, question) of every call that shows a question.
fn recording(seen: Arc<Mutex<Vec<(String, String)>>>) -> impl Fn(&Asked) -> Answer {
    move |asked: &Asked| {
        let question = asked.item("question");
        if !question.is_empty() {
            if let Ok(mut seen) = seen.lock() {
                seen.push((asked.task.to_owned(), question));
            }
        }
        match asked.task {
            "resolve_question" => Answer::Json(json!({ "question": RESOLVED })),
            _ => cooperative(asked),
        }
    }
}

fn follow_up(with_history: bool) -> rageval_core::Sample {
    let mut follow_up = sample(
        FOLLOW_UP,
        &["Acme's revenue in 2023 was 3 million dollars."],
        "Acme earned 3 million dollars in 2023.",
        "Acme's revenue in 2023 was 3 million dollars.",
    );
    if with_history {
        follow_up.conversation_id = Some("c1".into());
        follow_up.turn = Some(2);
        follow_up.history = vec![
            Turn::new(1, Role::User, "What was Acme's revenue in 2024?"),
            Turn::new(
                1,
                Role::Assistant,
                "Acme's revenue in 2024 was 4 million dollars.",
            ),
        ];
    }
    follow_up
}

fn tasks_asking(seen: &[(String, String)], question: &str) -> Vec<String> {
    let mut tasks: Vec<String> = seen
        .iter()
        .filter(|(_, asked)| asked == question)
        .map(|(task, _)| task.clone())
        .collect();
    tasks.sort_unstable();
    tasks.dedup();
    tasks
}

#[tokio::test]
async fn a_follow_up_is_judged_as_the_standalone_question_the_judge_wrote() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let judge = scripted(recording(Arc::clone(&seen))).await;
    let outcomes = judge.score(&follow_up(true), &METRICS).await;
    // One rewrite for the sample, shared by its four metrics.
    assert_eq!(judge.calls("resolve_question"), 1);
    let seen = seen.lock().map(|s| s.clone()).unwrap_or_default();
    assert_eq!(
        tasks_asking(&seen, RESOLVED),
        [
            "answer_rubric",
            "context_relevance",
            "context_usefulness",
            "split_statements"
        ]
    );
    // The follow-up itself reaches only the rewrite.
    assert_eq!(tasks_asking(&seen, FOLLOW_UP), ["resolve_question"]);
    for (metric, outcome) in METRICS.iter().zip(&outcomes) {
        assert!(
            matches!(outcome, Outcome::Score { .. }),
            "{metric}: {outcome:?}"
        );
        assert_eq!(
            detail(outcome, "resolved_question"),
            json!(RESOLVED),
            "{metric}"
        );
    }
}

#[tokio::test]
async fn a_sample_without_history_sends_its_own_question_and_no_rewrite() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let judge = scripted(recording(Arc::clone(&seen))).await;
    let outcomes = judge.score(&follow_up(false), &METRICS).await;
    assert_eq!(judge.calls("resolve_question"), 0);
    let seen = seen.lock().map(|s| s.clone()).unwrap_or_default();
    assert!(
        seen.iter().all(|(_, question)| question == FOLLOW_UP),
        "{seen:?}"
    );
    for outcome in &outcomes {
        assert_eq!(
            detail(outcome, "resolved_question"),
            serde_json::Value::Null
        );
    }
}

#[tokio::test]
async fn the_heuristic_judge_puts_the_earlier_subject_before_the_follow_up() {
    use rageval_metrics::{Judges, ScoringContext, build};
    use rageval_tasks::{Heuristic, Policy, TaskJudge};
    let judges =
        Judges::new(TaskJudge::new(Policy::offline()).with_heuristic(Heuristic::lexical()));
    let turn = follow_up(true);
    let scoring = ScoringContext::new(&judges, &turn);
    let metric = build("context_relevance").expect("metric");
    let outcome = metric.score(&turn, &scoring).await;
    assert_eq!(
        detail(&outcome, "resolved_question"),
        json!("acme's revenue 2024 And last year?")
    );
    // The follow-up alone shares no content word with the passage; resolved, two of five.
    let alone = follow_up(false);
    let scoring = ScoringContext::new(&judges, &alone);
    let outcome_alone = metric.score(&alone, &scoring).await;
    assert!(first_reason(&outcome).starts_with("0.40 of the question's 5"));
    assert!(first_reason(&outcome_alone).starts_with("0.00 of the question's 2"));
}

fn first_reason(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Score { evidence, .. } => evidence.verdicts[0].reason.clone().unwrap_or_default(),
        other => panic!("expected a score, got {other:?}"),
    }
}
