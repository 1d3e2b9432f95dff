//! Faithfulness reads the conversation (issue 37): the third answer of a hand-built
//! three-turn conversation restates what the user said in turn 1, which its own contexts do
//! not hold. Read with its history it scores 1 — with the offline heuristic judge and
//! through a chat model (the testkit mock) — and the evidence names turn 1; the same row
//! read as a single turn scores below 1.

use std::sync::{Arc, Mutex};

use futures_util::future::join_all;

use rageval_core::{Context, Outcome, Role, Sample, Turn};
use rageval_metrics::Judges;
use rageval_tasks::{Heuristic, Policy, TaskJudge};
use serde_json::{Value, json};

use crate::support::{Answer, Asked, cooperative, detail, scripted, value};

/// One language's conversation: the turn-1 question, the two earlier replies with their
/// contexts, the turn-2 question, and turn 3 (question, context, answer).
struct Conversation {
    first: &'static str,
    first_reply: (&'static str, &'static str),
    second: &'static str,
    second_reply: (&'static str, &'static str),
    third: (&'static str, &'static str, &'static str),
}

const ENGLISH: Conversation = Conversation {
    first: "I am flying to Lisbon on the 14th of May with my two children.",
    first_reply: (
        "Families with children under twelve board first at Lisbon airport.",
        "At Lisbon airport, families with children under twelve board first.",
    ),
    second: "What luggage may I bring?",
    second_reply: (
        "Each passenger may bring one cabin bag of 10 kg.",
        "Each passenger may bring one cabin bag weighing up to 10 kg.",
    ),
    third: (
        "Remind me of my trip details?",
        "Flights to Porto leave from terminal 2.",
        "You are flying to Lisbon on the 14th of May with your two children.",
    ),
};

const CHINESE: Conversation = Conversation {
    first: "我五月十四日带两个孩子飞往里斯本。",
    first_reply: (
        "里斯本机场允许带儿童的家庭优先登机。",
        "在里斯本机场，带儿童的家庭可以优先登机。",
    ),
    second: "可以带多少行李？",
    second_reply: (
        "每位乘客可以带一件十公斤的手提行李。",
        "每位乘客可携带一件不超过十公斤的手提行李。",
    ),
    third: (
        "再说一下我的行程？",
        "飞往波尔图的航班从二号航站楼出发。",
        "你五月十四日带两个孩子飞往里斯本。",
    ),
};

impl Conversation {
    /// Turn 3, read with its history (`true`) or as a single turn.
    fn turn_three(&self, with_history: bool) -> Sample {
        let reply = |turn, (content, context): (&str, &str)| Turn {
            contexts: vec![Context::text(context)],
            ..Turn::new(turn, Role::Assistant, content)
        };
        let (question, context, answer) = self.third;
        let mut sample = Sample {
            id: "c1:3".into(),
            question: question.into(),
            contexts: vec![Context::text(context)],
            answer: Some(answer.into()),
            ..Sample::default()
        };
        if with_history {
            sample.conversation_id = Some("c1".into());
            sample.turn = Some(3);
            sample.history = vec![
                Turn::new(1, Role::User, self.first),
                reply(1, self.first_reply),
                Turn::new(2, Role::User, self.second),
                reply(2, self.second_reply),
            ];
        }
        sample
    }
}

/// The heuristic judge alone, as `--judge heuristic` runs it.
fn heuristic() -> Judges {
    Judges::new(TaskJudge::new(Policy::offline()).with_heuristic(Heuristic::lexical()))
}

async fn faithfulness(judges: &Judges, sample: &Sample) -> Outcome {
    let metric = rageval_metrics::build("faithfulness").expect("metric");
    let scoring = rageval_metrics::ScoringContext::new(judges, sample);
    metric.score(sample, &scoring).await
}

/// The first verdict's (label, reason).
fn first_verdict(outcome: &Outcome) -> (String, String) {
    let Outcome::Score { evidence, .. } = outcome else {
        panic!("expected a score, got {outcome:?}");
    };
    let verdict = &evidence.verdicts[0];
    (
        verdict.label.clone().unwrap_or_default(),
        verdict.reason.clone().unwrap_or_default(),
    )
}

fn assert_supported_by_turn_one(outcome: &Outcome) {
    assert_eq!(value(outcome), 1.0, "{outcome:?}");
    let (label, reason) = first_verdict(outcome);
    assert_eq!(label, "supported_by_conversation");
    assert!(
        reason.starts_with("supported by the conversation, turn 1"),
        "{reason}"
    );
    assert_eq!(detail(outcome, "supported_by_conversation"), json!(1));
    assert_eq!(detail(outcome, "turn_lapse"), json!(false));
}

#[tokio::test]
async fn the_heuristic_judge_counts_a_claim_the_user_made_in_turn_one() {
    let judges = heuristic();
    for conversation in [&ENGLISH, &CHINESE] {
        let with = faithfulness(&judges, &conversation.turn_three(true)).await;
        assert_supported_by_turn_one(&with);
        let alone = faithfulness(&judges, &conversation.turn_three(false)).await;
        assert!(value(&alone) < 1.0, "{alone:?}");
        assert_eq!(detail(&alone, "supported_by_conversation"), Value::Null);
    }
}

/// A chat judge that supports a statement by the passages when they name its place, else
/// by the first user line of the conversation that does (`supporting_turn`), and records
/// each conversation it was shown.
fn by_place(place: &'static str, shown: Arc<Mutex<Vec<String>>>) -> impl Fn(&Asked) -> Answer {
    move |asked: &Asked| {
        Answer::Json(match asked.task {
            "split_statements" => json!({"statements": [asked.item("text")]}),
            "support_verdicts" => {
                let conversation = asked.item("conversation");
                if let Ok(mut shown) = shown.lock() {
                    shown.push(conversation.clone());
                }
                let in_passages = asked
                    .items("context")
                    .iter()
                    .any(|(_, c)| c.contains(place));
                let turn = conversation
                    .lines()
                    .find(|l| {
                        l.contains(place) && (l.contains(", user:") || l.contains("，用户："))
                    })
                    .and_then(|l| {
                        l.split(|c: char| !c.is_ascii_digit())
                            .find(|n| !n.is_empty())
                    })
                    .and_then(|n| n.parse::<u64>().ok())
                    .unwrap_or(0);
                let verdict = if in_passages || turn > 0 {
                    "fully_supported"
                } else {
                    "not_supported"
                };
                let mut item = json!({"reason": "judged by place", "verdict": verdict,
                                      "supporting_context": u64::from(in_passages)});
                if !conversation.is_empty() {
                    item["supporting_turn"] = json!(turn);
                }
                json!({"verdicts": {"s1": item}})
            }
            other => json!({"unexpected_task": other}),
        })
    }
}

#[tokio::test]
async fn a_chat_judge_is_shown_the_history_and_names_turn_one() {
    for (conversation, place, user_line) in [
        (&ENGLISH, "Lisbon", "turn 1, user: I am flying"),
        (&CHINESE, "里斯本", "第 1 轮，用户：我五月"),
    ] {
        let shown = Arc::new(Mutex::new(Vec::new()));
        let judge = scripted(by_place(place, Arc::clone(&shown))).await;
        let with = judge
            .one(&conversation.turn_three(true), "faithfulness")
            .await;
        assert_supported_by_turn_one(&with);
        let alone = judge
            .one(&conversation.turn_three(false), "faithfulness")
            .await;
        assert_eq!(value(&alone), 0.0, "{alone:?}");
        let shown = shown.lock().map(|s| s.clone()).unwrap_or_default();
        assert_eq!(shown.len(), 2);
        assert!(shown[0].contains(user_line), "{}", shown[0]);
        // The single turn's prompt has no conversation at all.
        assert_eq!(shown[1], "");
    }
}

/// In a planned run, a turn with a history makes its own calls: the shared contexts call
/// carries the question as written, so the turn's question is made standalone first, its
/// answer is split apart and its claims are judged with the conversation.
#[tokio::test]
async fn in_a_planned_run_a_turn_with_a_history_makes_its_own_calls_and_is_judged_with_it() {
    let shown = Arc::new(Mutex::new(Vec::new()));
    let place = by_place("Lisbon", Arc::clone(&shown));
    let judge = scripted(move |asked: &Asked| match asked.task {
        "resolve_question" => Answer::Json(
            serde_json::json!({"question": "Which terminal do flights to Porto leave from?"}),
        ),
        "contexts_check" => cooperative(asked),
        _ => place(asked),
    })
    .await;
    let mut turn = ENGLISH.turn_three(true);
    turn.references = vec!["Flights to Porto leave from terminal 2.".into()];
    let metrics: Vec<_> = ["context_recall", "faithfulness"]
        .iter()
        .map(|spec| rageval_metrics::build(spec).expect("metric"))
        .collect();
    let judges = judge.judges.clone().plan_for(&metrics);
    let scoring = rageval_metrics::ScoringContext::new(&judges, &turn);
    let outcomes = join_all(metrics.iter().map(|m| m.score(&turn, &scoring))).await;
    assert!(outcomes[0].value().is_some(), "{:?}", outcomes[0]);
    assert_supported_by_turn_one(&outcomes[1]);
    assert_eq!(judge.calls("contexts_check"), 0);
    assert_eq!(judge.calls("resolve_question"), 1);
    let shown = shown.lock().map(|s| s.clone()).unwrap_or_default();
    assert!(
        shown
            .iter()
            .any(|s| s.contains("turn 1, user: I am flying")),
        "{shown:?}"
    );
}
