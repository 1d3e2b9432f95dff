//! Conversations end to end (issue 37): a ragas multi-turn file is read as is, one row per
//! answered turn; faithfulness reads each turn's history; `summary.json` and `report.md`
//! carry per-conversation figures; through the mock, the dry run plans exactly the calls
//! the run makes, a cap stops resumably (exit 3) and the resumed run sends only the rest.

use std::fs;
use std::path::Path;

use rageval_testkit::MockConfig;
use serde_json::{Value, json};

use crate::judged::{endpoint, planned};
use crate::{rageval, stderr};

/// Two conversations: in `trip` the third answer restates what the user said in turn 1 (its
/// own context is about something else); in `porto` the second answer says what nothing
/// backs. Expected tool calls on `trip`'s last turn: one made, one missed.
fn write_data(dir: &Path) -> std::path::PathBuf {
    let human = |text: &str| json!({"type": "human", "content": text});
    let ai = |text: &str, context: &str| json!({"type": "ai", "content": text, "retrieved_contexts": [context]});
    let trip = json!({
        "id": "trip",
        "user_input": [
            human("I am flying to Lisbon on the 14th of May with my two children."),
            ai("Families with children under twelve board first at Lisbon airport.",
               "At Lisbon airport, families with children under twelve board first."),
            human("What luggage may I bring?"),
            ai("Each passenger may bring one cabin bag of 10 kg.",
               "Each passenger may bring one cabin bag weighing up to 10 kg."),
            human("Remind me of my trip details?"),
            {"type": "ai", "content": "", "tool_calls": [{"name": "lookup_booking", "args": {"city": "Lisbon"}}]},
            {"type": "tool", "content": "Flights to Porto leave from terminal 2."},
            {"type": "ai", "content": "You are flying to Lisbon on the 14th of May with your two children."},
        ],
        "reference_tool_calls": [
            {"name": "lookup_booking", "args": {"city": "lisbon"}},
            {"name": "send_itinerary", "args": {}},
        ],
    });
    let porto = json!({
        "id": "porto",
        "user_input": [
            human("Is the Porto museum open on Mondays?"),
            ai("The Porto museum opens every day except Monday.",
               "The Porto museum opens every day except Monday."),
            human("And the tram?"),
            ai("The tram runs on solar power imported from Iceland.",
               "Tram tickets cost three euros."),
        ],
    });
    let path = dir.join("chats.jsonl");
    fs::write(&path, format!("{trip}\n{porto}\n")).unwrap();
    path
}

/// `rageval eval DATA --judge heuristic --metrics METRICS --out run` in `dir`.
fn heuristic_eval(dir: &Path, data: &Path, metrics: &str) -> std::process::Output {
    let data = data.to_str().unwrap();
    let args = [
        "eval",
        data,
        "--judge",
        "heuristic",
        "--metrics",
        metrics,
        "--out",
        "run",
    ];
    rageval(dir, &args)
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

#[test]
fn a_ragas_multi_turn_file_scores_per_turn_and_per_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_data(dir.path());
    let output = heuristic_eval(
        dir.path(),
        &data,
        "faithfulness,tool_selection,tool_argument_correctness",
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let run = dir.path().join("run");
    let journal = fs::read_to_string(run.join("results.jsonl")).unwrap();
    let cells: Vec<Value> = journal
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let faithfulness = |id: &str| -> Value {
        cells
            .iter()
            .find(|c| c["sample_id"] == id && c["metric"] == "faithfulness")
            .cloned()
            .unwrap_or_else(|| panic!("no faithfulness cell for {id}: {journal}"))
    };
    let ids: Vec<&str> = cells
        .iter()
        .filter(|c| c["metric"] == "faithfulness")
        .map(|c| c["sample_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["trip:1", "trip:2", "trip:3", "porto:1", "porto:2"]);
    let third = faithfulness("trip:3");
    assert_eq!(third["value"], 1.0, "{third}");
    assert_eq!(
        third["evidence"]["verdicts"][0]["label"],
        "supported_by_conversation"
    );
    assert_eq!(
        faithfulness("porto:2")["evidence"]["details"]["turn_lapse"],
        true
    );
    // Tool calls: 2 · 1 pair ÷ (2 expected + 1 made) = 2/3; the pair's argument agrees
    // once normalised.
    let tools = cells
        .iter()
        .find(|c| c["sample_id"] == "trip:3" && c["metric"] == "tool_selection")
        .unwrap();
    assert!(
        (tools["value"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-12,
        "{tools}"
    );

    let summary = read_json(&run.join("summary.json"));
    let conversations = &summary["conversations"];
    assert_eq!(conversations["conversations"], 2, "{summary}");
    assert_eq!(conversations["metrics"]["faithfulness"]["conversations"], 2);
    assert_eq!(
        conversations["with_lapse"]["conversations"], 1,
        "{conversations}"
    );
    assert_eq!(conversations["with_lapse"]["of"], 2);
    let report = fs::read_to_string(run.join("report.md")).unwrap();
    assert!(report.contains("## Conversations"), "{report}");
    assert!(report.contains(": 1 of 2 (50.0%)."), "{report}");
}

/// [`planned_capped_resumed_on`] the conversations.
fn planned_capped_resumed(metrics: &str, expected: u64, cap: &str) -> Value {
    planned_capped_resumed_on(write_data, metrics, expected, cap)
}

/// Through the mock: the dry run of `metrics` on the data `write` writes plans `expected`
/// calls, the whole run makes exactly those, a run capped at `cap` stops resumably (exit 3)
/// and its resumption asks at most the plan. Returns the resumed run's summary.
pub fn planned_capped_resumed_on(
    write: fn(&Path) -> std::path::PathBuf,
    metrics: &str,
    expected: u64,
    cap: &str,
) -> Value {
    let endpoint = endpoint(MockConfig::default());
    let dir = tempfile::tempdir().unwrap();
    let data = write(dir.path());
    let args = [
        data.to_str().unwrap(),
        "--metrics",
        metrics,
        "--out",
        "run",
        "--no-cache",
    ];

    let table = endpoint.dry_run(dir.path(), &args);
    let plan = planned(&table, "whole run");
    assert_eq!(plan, expected, "{table}");

    let whole = endpoint.eval(dir.path(), &[&args[..4], &["whole", "--no-cache"]].concat());
    assert!(whole.status.success(), "{}", stderr(&whole));
    assert_eq!(
        endpoint.mock.stats().requests,
        plan,
        "the run made other calls than planned"
    );

    let capped = endpoint.eval(dir.path(), &[&args[..], &["--max-calls", cap]].concat());
    assert_eq!(capped.status.code(), Some(3), "{}", stderr(&capped));
    let sent = endpoint.mock.stats().requests;
    let resumed = endpoint.eval(dir.path(), &args);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    // The resumed run asks at most what the dry run planned for the whole run (cells the
    // capped run finished are not scored again).
    let asked = endpoint.mock.stats().requests - sent;
    assert!(asked <= plan, "{asked} > {plan}");
    read_json(&dir.path().join("run/summary.json"))
}

#[test]
fn through_a_model_the_dry_run_cap_and_resume_hold_for_turns_with_history() {
    // Five turns, each split into claims and its claims judged: ten calls.
    let summary = planned_capped_resumed("faithfulness", 10, "3");
    assert_eq!(summary["metrics"]["faithfulness"]["n"], 5, "{summary}");
    assert_eq!(summary["conversations"]["conversations"], 2, "{summary}");
}

/// Answer relevance and context relevance on turns with a history: one `resolve_question`
/// call per such turn (three of the five), planned by the dry run, capped and resumed.
#[test]
fn the_question_rewrite_of_turns_with_history_is_planned_capped_and_resumed() {
    // Five rubric calls, five contexts judged, three rewrites (trip:2, trip:3, porto:2).
    let summary = planned_capped_resumed("answer_relevance:rubric,context_relevance", 13, "4");
    assert_eq!(summary["metrics"]["context_relevance"]["n"], 5, "{summary}");
}

/// Knowledge retention: one call per turn with a history (three of five); first turns are
/// undefined.
#[test]
fn knowledge_retention_is_planned_capped_and_resumed() {
    let summary = planned_capped_resumed("knowledge_retention", 3, "1");
    let cells = &summary["metrics"]["knowledge_retention"];
    assert_eq!(
        (&cells["n_scored"], &cells["n_undefined"]),
        (&json!(3), &json!(2)),
        "{summary}"
    );
}

#[test]
fn a_conversation_without_a_reply_to_judge_is_refused_with_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("bad.jsonl");
    fs::write(
        &data,
        "{\"messages\": [{\"role\": \"user\", \"content\": \"a\"}, {\"role\": \"assistant\", \"content\": \"b\"}]}\n{\"messages\": [{\"role\": \"user\", \"content\": \"hello\"}]}\n",
    )
    .unwrap();
    let output = heuristic_eval(dir.path(), &data, "faithfulness");
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("bad.jsonl:2: field `messages`: no assistant reply"),
        "{}",
        stderr(&output)
    );
}

/// Regression: the run identity did not name `resolve_question`'s prompt version, so a run
/// resumed after that template changed mixed two rewrites. A run over turns with a history
/// names it as every task's template; one whose data has none keeps the identity it had;
/// and a session whose rewrite template differs from the one recorded is refused.
#[test]
fn the_question_rewrite_template_is_part_of_the_run_identity() {
    let endpoint = endpoint(MockConfig::default());
    let dir = tempfile::tempdir().unwrap();
    let data = write_data(dir.path());
    let flat = dir.path().join("flat.jsonl");
    fs::write(
        &flat,
        "{\"id\": \"q1\", \"question\": \"Is the museum open?\", \"answer\": \"Yes.\", \
         \"contexts\": [\"The museum is open.\"]}\n",
    )
    .unwrap();
    let routes = |run: &str| -> Value {
        let manifest = read_json(&dir.path().join(run).join("manifest.json"));
        manifest["settings"]["identity"]["judge"]["routes"].clone()
    };
    for (data, run) in [(&data, "chats"), (&flat, "flat")] {
        let args = [data.to_str().unwrap(), "--metrics", "context_relevance"];
        let output = endpoint.eval(dir.path(), &[&args[..], &["--out", run]].concat());
        assert!(output.status.success(), "{}", stderr(&output));
    }
    let chats = routes("chats");
    let rewrite = chats["resolve_question"].as_str().unwrap_or_default();
    assert!(rewrite.contains("resolve_question.en@"), "{chats}");
    assert!(routes("flat").get("resolve_question").is_none());

    // The run as a session with another rewrite template would have recorded it.
    let path = dir.path().join("chats/manifest.json");
    let mut manifest = read_json(&path);
    manifest["settings"]["identity"]["judge"]["routes"]["resolve_question"] =
        json!(rewrite.replace("resolve_question.en@", "resolve_question.en@0"));
    fs::write(&path, manifest.to_string()).unwrap();
    let args = [data.to_str().unwrap(), "--metrics", "context_relevance"];
    let again = endpoint.eval(dir.path(), &[&args[..], &["--out", "chats"]].concat());
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert!(
        stderr(&again).contains("task resolve_question was answered by"),
        "{}",
        stderr(&again)
    );
}
