//! Tool argument correctness, deterministic against judged (issue 37): on a hand-worked set
//! where free-text arguments are reworded, the judged variant pairs the calls as the
//! deterministic one does and differs from it only where the judge finds the text means
//! the same — through the testkit mock playing the judge, and with the heuristic judge.

use rageval_core::conversation::ToolCall;
use rageval_core::{Outcome, Sample};
use rageval_metrics::{Judges, ScoringContext, build};
use rageval_tasks::{Heuristic, Policy, TaskJudge};
use serde_json::{Value, json};

use crate::support::{Answer, Asked, close, detail, scripted, value};

fn call(name: &str, arguments: Value) -> ToolCall {
    let Value::Object(arguments) = arguments else {
        panic!("arguments are an object");
    };
    ToolCall::new(name, arguments)
}

/// Three expected calls and four made (the last an extra call, unpaired):
/// 1. web_search: `query` "capital of France" / "France capital city" (text, reworded)
///    and `max_results` 5 / "5" (equal once normalised) → deterministic 1/2; judged 2/2.
/// 2. send_message: `subject` "Meeting moved" / "Meeting rescheduled" (same meaning),
///    `text` "The meeting moves to Friday at 10" / "Meeting cancelled" (not), `to` "Ana" /
///    "ana" (equal once normalised) → deterministic 1/3; judged 2/3, from one call for
///    both free-text arguments.
/// 3. get_weather: `city` equal, `days` 3 / 2 (numbers, unequal) → 1/2 either way, and no
///    judge call (no free text).
///
/// Deterministic (normalised) = (1/2 + 1/3 + 1/2) ÷ 3 = 4/9 = 0.4444; judged = (1 + 2/3 +
/// 1/2) ÷ 3 = 13/18 = 0.7222; two judge calls.
fn hand_worked() -> Sample {
    Sample {
        id: "tools".into(),
        question: "Plan my Friday.".into(),
        reference_tool_calls: vec![
            call(
                "web_search",
                json!({"query": "capital of France", "max_results": 5}),
            ),
            call(
                "send_message",
                json!({"to": "Ana", "subject": "Meeting moved",
                       "text": "The meeting moves to Friday at 10"}),
            ),
            call("get_weather", json!({"city": "Paris", "days": 3})),
        ],
        tool_calls: vec![
            call(
                "web_search",
                json!({"query": "France capital city", "max_results": "5"}),
            ),
            call(
                "send_message",
                json!({"to": "ana", "subject": "Meeting rescheduled",
                       "text": "Meeting cancelled"}),
            ),
            call("get_weather", json!({"city": "Paris", "days": 2})),
            call("get_time", json!({})),
        ],
        ..Sample::default()
    }
}

/// The pairs of values the mock judge finds the same in meaning.
const SAME: [(&str, &str); 2] = [
    ("capital of France", "France capital city"),
    ("Meeting moved", "Meeting rescheduled"),
];

/// The mock judge: each argument the same when its (expected, made) pair is in [`SAME`].
fn by_table(asked: &Asked) -> Answer {
    let expected = asked.items("expected");
    let made = asked.items("made");
    let verdicts: serde_json::Map<String, Value> = expected
        .iter()
        .zip(&made)
        .map(|((label, want), (_, got))| {
            let key = label.trim_start_matches("expected ").to_owned();
            let same = SAME.contains(&(want.as_str(), got.as_str()));
            (key, json!({"reason": "by table", "same": same}))
        })
        .collect();
    Answer::Json(match asked.task {
        "tool_argument_meaning" => json!({ "verdicts": verdicts }),
        other => json!({ "unexpected_task": other }),
    })
}

/// Each argument's (name, same, by) in the evidence of pair `index`.
fn arguments_of(outcome: &Outcome, index: usize) -> Vec<(String, bool, String)> {
    let pairs = detail(outcome, "pairs");
    pairs[index]["arguments"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|a| {
            (
                a["name"].as_str().unwrap_or_default().to_owned(),
                a["same"] == true,
                a["by"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn the_judged_variant_credits_reworded_free_text_the_deterministic_one_does_not() {
    let judge = scripted(by_table).await;
    let sample = hand_worked();
    let outcomes = judge
        .score(
            &sample,
            &[
                "tool_argument_correctness",
                "tool_argument_correctness_judged",
            ],
        )
        .await;
    let (deterministic, judged) = (&outcomes[0], &outcomes[1]);
    assert!(close(value(deterministic), 4.0 / 9.0), "{deterministic:?}");
    assert!(close(value(judged), 13.0 / 18.0), "{judged:?}");
    assert_eq!(judge.calls("tool_argument_meaning"), 2);
    // Both pair the same calls.
    let made = |o: &Outcome| -> Vec<Value> {
        let pairs = detail(o, "pairs");
        let pairs = pairs.as_array().cloned().unwrap_or_default();
        pairs.iter().map(|p| p["made"].clone()).collect()
    };
    assert_eq!(made(deterministic), made(judged));
    assert_eq!(made(judged), [json!(0), json!(1), json!(2)]);
    let named = |name: &str, same: bool, by: &str| (name.to_owned(), same, by.to_owned());
    assert_eq!(
        arguments_of(judged, 0),
        [
            named("max_results", true, "rule"),
            named("query", true, "judge")
        ]
    );
    assert_eq!(
        arguments_of(judged, 1),
        [
            named("subject", true, "judge"),
            named("text", false, "judge"),
            named("to", true, "rule"),
        ]
    );
    assert_eq!(
        arguments_of(judged, 2),
        [named("city", true, "rule"), named("days", false, "rule")]
    );
    assert_eq!(detail(judged, "judged_calls"), json!(2));
}

/// The heuristic judge on the same set: "capital of France" / "France capital city" share
/// {capital, france}, Dice 4/5 ≥ 0.5; "Meeting moved" / "Meeting rescheduled" share
/// {meeting}, 2/4 ≥ 0.5; the two message texts share only "meeting", below 0.5 — the mock's
/// verdicts, so 13/18 again.
#[tokio::test]
async fn the_heuristic_judge_decides_free_text_by_word_overlap() {
    let judges =
        Judges::new(TaskJudge::new(Policy::offline()).with_heuristic(Heuristic::lexical()));
    let metric = build("tool_argument_correctness_judged").expect("metric");
    assert!(judges.unmet(&metric.requirements()).is_none());
    let sample = hand_worked();
    let outcome = metric
        .score(&sample, &ScoringContext::new(&judges, &sample))
        .await;
    assert!(close(value(&outcome), 13.0 / 18.0), "{outcome:?}");
    let by = detail(&outcome, "judged_by");
    assert!(
        by.as_str()
            .unwrap_or_default()
            .contains("content_word_overlap"),
        "{by}"
    );
}

/// Arguments that agree or differ without text ask the judge nothing; a sample whose
/// expected tool was never called is undefined.
#[tokio::test]
async fn no_free_text_asks_nothing_and_no_pair_is_undefined() {
    let judge = scripted(by_table).await;
    let mut sample = hand_worked();
    sample.reference_tool_calls.truncate(3);
    sample.reference_tool_calls.drain(..2);
    let outcome = judge.one(&sample, "tool_argument_correctness_judged").await;
    assert!(close(value(&outcome), 0.5), "{outcome:?}");
    assert_eq!(judge.calls("tool_argument_meaning"), 0);
    sample.tool_calls.clear();
    sample.tool_calls.push(call("book_car", json!({})));
    let outcome = judge.one(&sample, "tool_argument_correctness_judged").await;
    assert!(matches!(outcome, Outcome::Undefined { .. }), "{outcome:?}");
}
