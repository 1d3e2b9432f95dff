//! Knowledge retention (issue 37): in a hand-built three-turn conversation the user gives
//! the travel date in turn 1; a third reply that asks for the date again scores 0, one that
//! uses it scores 1 (the testkit mock plays the judge, deciding from what the prompt shows);
//! a first turn is undefined, and the heuristic judge cannot answer it.

use std::sync::{Arc, Mutex};

use rageval_core::{Outcome, Role, Sample, Turn};
use rageval_metrics::{Judges, ScoringContext, build};
use rageval_tasks::{Heuristic, Policy, TaskJudge};
use serde_json::json;

use crate::support::{Answer, Asked, detail, scripted, value};

const DATE: &str = "the 14th of May";

/// Turn `turn` of the conversation, answered with `answer`; turn 1 has no history.
fn turn(turn: usize, answer: &str) -> Sample {
    let history = [
        Turn::new(1, Role::User, format!("I fly to Lisbon on {DATE}.")),
        Turn::new(1, Role::Assistant, "Noted: Lisbon."),
        Turn::new(2, Role::User, "What luggage may I bring?"),
        Turn::new(2, Role::Assistant, "One cabin bag of 10 kg."),
    ];
    Sample {
        id: format!("trip:{turn}"),
        question: "Which terminal do I leave from?".into(),
        answer: Some(answer.into()),
        conversation_id: Some("trip".into()),
        turn: Some(turn),
        history: history[..2 * (turn - 1)].to_vec(),
        ..Sample::default()
    }
}

/// The mock judge: a reply re-asks when it is a question about the date that a user line
/// of the conversation already gives; records each conversation it was shown.
fn by_date(shown: Arc<Mutex<Vec<String>>>) -> impl Fn(&Asked) -> Answer {
    move |asked: &Asked| {
        let conversation = asked.item("conversation");
        if let Ok(mut shown) = shown.lock() {
            shown.push(conversation.clone());
        }
        let answer = asked.item("answer");
        let given = conversation
            .lines()
            .any(|line| line.contains(", user:") && line.contains(DATE));
        let re_asks = given && answer.contains("date") && answer.trim_end().ends_with('?');
        Answer::Json(match asked.task {
            "knowledge_retention" => json!({
                "reason": if re_asks { "asks again for the date given in turn 1" } else { "keeps the date" },
                "contradicts": false,
                "re_asks": re_asks,
            }),
            other => json!({ "unexpected_task": other }),
        })
    }
}

#[tokio::test]
async fn a_reply_that_asks_again_for_what_turn_one_gave_scores_zero() {
    let shown = Arc::new(Mutex::new(Vec::new()));
    let judge = scripted(by_date(Arc::clone(&shown))).await;
    let re_asked = judge
        .one(&turn(3, "On which date do you fly?"), "knowledge_retention")
        .await;
    assert_eq!(value(&re_asked), 0.0, "{re_asked:?}");
    assert_eq!(detail(&re_asked, "re_asks"), json!(true));
    let kept = judge
        .one(
            &turn(3, "On the 14th of May you leave from terminal 1."),
            "knowledge_retention",
        )
        .await;
    assert_eq!(value(&kept), 1.0, "{kept:?}");
    assert_eq!(detail(&kept, "re_asks"), json!(false));
    let shown = shown.lock().map(|s| s.clone()).unwrap_or_default();
    assert_eq!(shown.len(), 2);
    assert!(
        shown[0].contains("turn 1, user: I fly to Lisbon"),
        "{}",
        shown[0]
    );
}

#[tokio::test]
async fn a_first_turn_is_undefined_without_a_call() {
    let judge = scripted(by_date(Arc::new(Mutex::new(Vec::new())))).await;
    let first = judge
        .one(&turn(1, "On which date do you fly?"), "knowledge_retention")
        .await;
    assert!(
        matches!(&first, Outcome::Undefined { reason } if reason.starts_with("a first turn")),
        "{first:?}"
    );
    assert_eq!(judge.calls("knowledge_retention"), 0);
    // A sample outside any conversation lacks the input.
    let mut alone = turn(1, "Terminal 1.");
    alone.conversation_id = None;
    let outcome = judge.one(&alone, "knowledge_retention").await;
    assert!(matches!(outcome, Outcome::Undefined { .. }), "{outcome:?}");
}

#[tokio::test]
async fn the_heuristic_judge_cannot_answer_it_and_says_why() {
    let judges =
        Judges::new(TaskJudge::new(Policy::offline()).with_heuristic(Heuristic::lexical()));
    let metric = build("knowledge_retention").expect("metric");
    assert!(judges.unmet(&metric.requirements()).is_some());
    let sample = turn(3, "On which date do you fly?");
    let outcome = metric
        .score(&sample, &ScoringContext::new(&judges, &sample))
        .await;
    assert!(matches!(outcome, Outcome::Failed { .. }), "{outcome:?}");
}
