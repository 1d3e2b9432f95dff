//! Reasoning judges, as the testkit mock plays them (`MockConfig::reasoning`): whatever the
//! layout of their thinking (tags, a closing tag alone, a reasoning field, the answer
//! misrouted into that field), whatever parameters they refuse and however tight the token
//! cap, `eval` gives the plain judge's verdicts cell for cell — never the draft inside the
//! thinking — with no failed cell, and counts the thinking apart. A judge whose every answer
//! is garbage halts the run early.

use std::path::Path;

use rageval_judge::CancelToken;
use rageval_report::RunData;
use rageval_run::commands::eval::{self, EvalOptions};
use rageval_run::engine::observe::Silent;
use rageval_run::{Ended, Stop};
use rageval_testkit::{MockConfig, MockServer};
use serde_json::Value;

use super::options_at;

/// The 12 first FiQA samples of the repository's example (what the issue measured).
fn fiqa_12(dir: &Path) -> std::path::PathBuf {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/fiqa-30.jsonl"),
    )
    .unwrap();
    let path = dir.join("fiqa-12.jsonl");
    let lines: Vec<&str> = text.lines().take(12).collect();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

/// A mock answering as `modes` say, served on its own runtime.
struct Reasoner {
    mock: MockServer,
    _runtime: tokio::runtime::Runtime,
}

fn reasoner(modes: &str) -> Reasoner {
    mock_with(MockConfig {
        reasoning: modes.parse().unwrap(),
        ..MockConfig::default()
    })
}

fn mock_with(config: MockConfig) -> Reasoner {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mock = runtime
        .block_on(MockServer::start(MockConfig {
            embedding_dim: 16,
            ..config
        }))
        .unwrap();
    Reasoner {
        mock,
        _runtime: runtime,
    }
}

/// `eval`'s options against `mock`, with its own cache in `dir`.
fn against(mock: &MockServer, data: &Path, dir: &Path) -> EvalOptions {
    let mut options = options_at(
        &mock.base_url,
        data,
        &dir.join("run"),
        &dir.join("cache.sqlite"),
    );
    options.reports = false;
    options
}

/// Each cell's outcome without its evidence (whose `judged_by` says where the answer was
/// read): `(sample, metric) → outcome`.
fn outcomes(run: &Path) -> Vec<(String, String, Value)> {
    let text = std::fs::read_to_string(run.join("results.jsonl")).unwrap();
    let mut cells: Vec<(String, String, Value)> = text
        .lines()
        .map(|line| {
            let mut value: Value = serde_json::from_str(line).unwrap();
            let object = value.as_object_mut().unwrap();
            object.remove("evidence");
            let sample = object.remove("sample_id").unwrap().to_string();
            let metric = object.remove("metric").unwrap().to_string();
            (sample, metric, value)
        })
        .collect();
    cells.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    cells
}

fn complete(options: &EvalOptions) -> eval::Evaluated {
    match eval::run(options, &super::no_env, &Silent, &CancelToken::new()).unwrap() {
        Ended::Complete(done) => done,
        Ended::Stopped(stopped) => panic!("stopped: {}", stopped.message),
    }
}

#[test]
fn every_reasoning_layout_gives_the_plain_judges_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let data = fiqa_12(dir.path());
    let plain = reasoner("");
    let plain_dir = dir.path().join("plain");
    let expected = {
        complete(&against(&plain.mock, &data, &plain_dir));
        outcomes(&plain_dir.join("run"))
    };
    assert_eq!(expected.len(), 48);
    assert!(expected.iter().all(|(_, _, v)| v["status"] != "failed"));
    let cases = [
        "think",
        "close-only",
        "field",
        "field-new",
        "field-only",
        "strict-params",
        "think,strict-params,budget",
        "field-new,field-only,budget",
    ];
    for modes in cases {
        let mock = reasoner(modes);
        let case_dir = dir.path().join(modes.replace(',', "+"));
        let mut options = against(&mock.mock, &data, &case_dir);
        if modes.contains("budget") {
            // A cap below the thinking's cost: the first reply is cut off while thinking.
            options.judge.flags.max_tokens = Some(300);
        }
        let done = complete(&options);
        assert!(done.too_many_failed.is_none(), "{modes}");
        let got = outcomes(&case_dir.join("run"));
        assert_eq!(
            got, expected,
            "{modes}: cells differ from the plain judge's"
        );
        let judge = RunData::load(&case_dir.join("run"))
            .unwrap()
            .summary
            .judge
            .unwrap();
        // `strict-params` alone refuses parameters but does not think.
        if modes != "strict-params" {
            assert!(
                judge.usage.total.reasoning_tokens > 0,
                "{modes}: no reasoning tokens in summary.json"
            );
        }
        let stats = mock.mock.stats();
        if modes.contains("strict-params") {
            // Each refused parameter is refused once in the run, not once per call (the
            // endpoint's first calls go one at a time until one is answered).
            let refused = if modes.contains("budget") { 2 } else { 1 };
            assert_eq!(stats.faults.param_400, refused, "{modes}: {stats:?}");
        }
        if modes.contains("budget") {
            assert!(
                stats.faults.truncated > 0,
                "{modes}: the cap never cut a reply"
            );
        }
    }
}

#[test]
fn the_forms_a_strict_judge_taught_are_recorded_and_a_resumed_run_starts_in_them() {
    let dir = tempfile::tempdir().unwrap();
    let data = fiqa_12(dir.path());
    let mock = reasoner("strict-params");
    let mut options = against(&mock.mock, &data, dir.path());
    options.judge.flags.max_tokens = Some(4096);
    options.judge.flags.max_calls = Some(20);
    match eval::run(&options, &super::no_env, &Silent, &CancelToken::new()).unwrap() {
        Ended::Stopped(stopped) => assert!(matches!(stopped.stop, Stop::CapReached(_))),
        Ended::Complete(_) => panic!("the cap should stop the first session"),
    }
    let refused = mock.mock.stats().faults.param_400;
    assert!(
        refused >= 2,
        "temperature and max_tokens refused: {refused}"
    );
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("run/manifest.json")).unwrap(),
    )
    .unwrap();
    let forms = &manifest["sessions"][0]["judge"]["request_forms"][0];
    assert_eq!(forms["cap_param"], "max_completion_tokens", "{manifest}");
    assert_eq!(forms["left_out"][0], "temperature", "{manifest}");
    assert_eq!(forms["learned"].as_array().unwrap().len(), 2, "{forms}");
    // The second session starts in the recorded form: not one more refusal.
    options.judge.flags.max_calls = None;
    complete(&options);
    assert_eq!(mock.mock.stats().faults.param_400, refused);
}

#[test]
fn a_judge_whose_every_answer_is_garbage_halts_the_run_early() {
    let dir = tempfile::tempdir().unwrap();
    let data = fiqa_12(dir.path());
    let mock = mock_with(MockConfig {
        garbage_rate: 1.0,
        ..MockConfig::default()
    });
    let options = against(&mock.mock, &data, dir.path());
    match eval::run(&options, &super::no_env, &Silent, &CancelToken::new()).unwrap() {
        Ended::Stopped(stopped) => {
            assert!(
                matches!(stopped.stop, Stop::JudgeUnavailable(_)),
                "{stopped:?}"
            );
            assert!(
                stopped.message.contains("unusable answers in a row"),
                "{}",
                stopped.message
            );
        }
        Ended::Complete(_) => panic!("a judge that answers only garbage must not complete"),
    }
    let requests = mock.mock.stats().chat_requests;
    assert!(requests <= 60, "{requests} requests before the halt");
}

#[test]
fn more_failed_cells_than_max_failed_allows_is_not_a_success() {
    let dir = tempfile::tempdir().unwrap();
    let data = fiqa_12(dir.path());
    // Every request about the last sample is refused (a 400 no form can escape); the rest
    // are answered. One sample of twelve: 4 of 48 cells fail, and the judge, which answered
    // the others first, is not halted for one sample's refusals.
    let mock = mock_with(MockConfig {
        script: Some(std::sync::Arc::new(|body: &Value| {
            if body
                .to_string()
                .contains("How can I make $250,000.00 from trading")
            {
                rageval_testkit::Reply::Status(
                    400,
                    r#"{"error": {"message": "mock: refused"}}"#.into(),
                )
            } else {
                rageval_testkit::Reply::Schema
            }
        })),
        ..MockConfig::default()
    });
    let mut options = against(&mock.mock, &data, dir.path());
    options.max_failed = "1%".parse().unwrap();
    let done = complete(&options);
    let too_many = done.too_many_failed.expect("over the limit");
    // Every prompt that quotes the question is refused (one metric's prompts do not).
    let failed = too_many.failed;
    assert!(
        (1..=4).contains(&failed) && too_many.cells == 48,
        "{too_many:?}"
    );
    assert!(too_many.commonest.contains("refused"), "{too_many:?}");
    let message = too_many.message();
    let share = format!("{:.1}%", 100.0 * failed as f64 / 48.0);
    assert!(
        message.starts_with(&format!(
            "{failed} of 48 judged cells failed ({share}, over the 1% that --max-failed allows)"
        )),
        "{message}"
    );
    // Under the default limit (10%) the same run is a success.
    let mut relaxed = options.clone();
    relaxed.max_failed = eval::MaxFailed::DEFAULT;
    relaxed.out = Some(dir.path().join("relaxed"));
    assert!(complete(&relaxed).too_many_failed.is_none());
}

/// Notes an observer was given.
#[derive(Default)]
struct Notes(std::sync::Mutex<Vec<String>>);

impl rageval_run::engine::observe::Observer for Notes {
    fn event(&self, event: &rageval_run::engine::observe::Event) {
        if let rageval_run::engine::observe::Event::Note(text) = event {
            self.0.lock().unwrap().push(text.clone());
        }
    }
}

/// Issue 39, item 3: a low `--judge-max-tokens` with a thinking judge doubled calls
/// silently (each reply cut off while thinking was sent again without the cap). Now the run
/// warns once, the footer says it, and the manifest's judge stats count the re-sends.
#[test]
fn regression_issue_39_calls_resent_without_the_cap_are_warned_once_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let data = fiqa_12(dir.path());
    let mock = reasoner("think,budget");
    let mut options = against(&mock.mock, &data, dir.path());
    options.judge.flags.max_tokens = Some(300);
    let notes = Notes::default();
    let done = match eval::run(&options, &super::no_env, &notes, &CancelToken::new()).unwrap() {
        Ended::Complete(done) => done,
        Ended::Stopped(stopped) => panic!("stopped: {}", stopped.message),
    };
    assert!(
        mock.mock.stats().faults.truncated > 0,
        "the cap never cut a reply"
    );
    let notes = notes.0.into_inner().unwrap();
    let warnings: Vec<&String> = notes
        .iter()
        .filter(|n| n.contains("cut off at the --judge-max-tokens cap"))
        .collect();
    assert_eq!(warnings.len(), 1, "{notes:?}");
    assert!(
        done.footer.contains("sent again without the cap"),
        "{}",
        done.footer
    );
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("run/manifest.json")).unwrap(),
    )
    .unwrap();
    let resends = manifest["settings"]["judge"]["stats"]["cut_off_resends"]
        .as_u64()
        .unwrap_or(0);
    assert!(resends > 0, "{}", manifest["settings"]["judge"]["stats"]);
}

/// Two chats of three turns each (OpenAI `messages`, each reply with the passage it was given
/// as a tool message): the turns after the first carry a history, so they are judged through
/// the question rewrite and the conversation-reading tasks.
fn chats(dir: &Path) -> std::path::PathBuf {
    let chat = |id: &str, city: &str| {
        serde_json::json!({"id": id, "messages": [
            {"role": "user", "content": format!("I am flying to {city} next week. Which terminal?")},
            {"role": "tool", "content": format!("Flights to {city} leave from terminal 2.")},
            {"role": "assistant", "content": format!("Flights to {city} leave from terminal 2.")},
            {"role": "user", "content": "And how early should I be there?"},
            {"role": "tool", "content": "Check-in closes 45 minutes before departure."},
            {"role": "assistant", "content": "Check-in closes 45 minutes before departure."},
            {"role": "user", "content": "And what about bags?"},
            {"role": "tool", "content": "Each passenger may check one bag of 23 kg."},
            {"role": "assistant", "content": format!("On your {city} flight you may check one 23 kg bag.")}
        ]})
    };
    let path = dir.join("chats.jsonl");
    std::fs::write(
        &path,
        format!("{}\n{}\n", chat("a", "Porto"), chat("b", "Lyon")),
    )
    .unwrap();
    path
}

const CONVERSATION_METRICS: [&str; 4] = [
    "answer_relevance",
    "context_relevance",
    "faithfulness",
    "knowledge_retention",
];

/// The conversation tasks (the follow-up made standalone, claims judged with the history,
/// knowledge retention) read a thinking judge's answers as the plain judge's, whatever the
/// layout; a judge whose every answer is garbage halts such a run too.
#[test]
fn conversation_tasks_read_a_reasoning_judge_as_the_plain_one_and_garbage_halts() {
    let dir = tempfile::tempdir().unwrap();
    let data = chats(dir.path());
    let with_metrics = |mut options: EvalOptions| {
        options.metrics = CONVERSATION_METRICS.iter().map(|m| m.to_string()).collect();
        options
    };
    let plain = reasoner("");
    let plain_dir = dir.path().join("plain");
    complete(&with_metrics(against(&plain.mock, &data, &plain_dir)));
    let expected = outcomes(&plain_dir.join("run"));
    assert_eq!(expected.len(), 6 * CONVERSATION_METRICS.len());
    assert!(expected.iter().all(|(_, _, v)| v["status"] != "failed"));
    let plain_prompts = plain.mock.stats().chat_requests;
    let asked = RunData::load(&plain_dir.join("run"))
        .unwrap()
        .summary
        .judge
        .unwrap()
        .usage
        .templates;
    for task in [
        "resolve_question",
        "knowledge_retention",
        "support_verdicts",
    ] {
        assert!(
            asked.keys().any(|name| name.starts_with(task)),
            "{task} was never asked: {:?}",
            asked.keys()
        );
    }
    // The first turns have nothing to retain; the later four are judged.
    let retained = expected
        .iter()
        .filter(|(_, metric, v)| metric.contains("knowledge_retention") && v["status"] == "score")
        .count();
    assert_eq!(retained, 4, "{expected:?}");
    same_cells_through_every_layout_and_garbage_halts(
        dir.path(),
        &data,
        with_metrics,
        &expected,
        plain_prompts,
    );
}

/// Through each reasoning layout (and a cap tight enough to cut the thinking) the run of
/// `data` with `with_metrics`' metrics gives `expected`, the plain judge's cells, asking at
/// least its `plain_prompts`; a judge whose every answer is garbage stops it as unavailable.
fn same_cells_through_every_layout_and_garbage_halts(
    dir: &Path,
    data: &Path,
    with_metrics: impl Fn(EvalOptions) -> EvalOptions,
    expected: &[(String, String, Value)],
    plain_prompts: u64,
) {
    for modes in ["think", "field-only", "think,strict-params,budget"] {
        let mock = reasoner(modes);
        let case_dir = dir.join(modes.replace(',', "+"));
        let mut options = with_metrics(against(&mock.mock, data, &case_dir));
        if modes.contains("budget") {
            options.judge.flags.max_tokens = Some(300);
        }
        let done = complete(&options);
        assert!(done.too_many_failed.is_none(), "{modes}");
        assert_eq!(
            outcomes(&case_dir.join("run")),
            expected,
            "{modes}: cells differ from the plain judge's"
        );
        assert!(mock.mock.stats().chat_requests >= plain_prompts, "{modes}");
    }

    let garbage = mock_with(MockConfig {
        garbage_rate: 1.0,
        ..MockConfig::default()
    });
    let options = with_metrics(against(&garbage.mock, data, &dir.join("garbage")));
    match eval::run(&options, &super::no_env, &Silent, &CancelToken::new()).unwrap() {
        Ended::Stopped(stopped) => {
            assert!(
                matches!(stopped.stop, Stop::JudgeUnavailable(_)),
                "{stopped:?}"
            );
        }
        Ended::Complete(_) => panic!("a judge that answers only garbage must not complete"),
    }
}

/// Judged tool arguments (`tool_argument_meaning`: reworded free-text arguments judged by
/// meaning) read a thinking judge's answers as the plain judge's, whatever the layout; a
/// judge whose every answer is garbage halts such a run.
#[test]
fn judged_tool_arguments_read_a_reasoning_judge_as_the_plain_one_and_garbage_halts() {
    let dir = tempfile::tempdir().unwrap();
    let rows: String = (1..=4)
        .map(|i| {
            let row = serde_json::json!({"id": format!("s{i}"), "question": "What is the capital?",
                "answer": "The capital.",
                "reference_tool_calls": [{"name": "web_search",
                    "arguments": {"query": format!("capital of country {i}"), "limit": 3}}],
                "tool_calls": [{"name": "web_search",
                    "arguments": {"query": format!("country {i} capital city"), "limit": 3}}]});
            format!("{row}\n")
        })
        .collect();
    let data = dir.path().join("tools.jsonl");
    std::fs::write(&data, rows).unwrap();
    let with_metrics = |mut options: EvalOptions| {
        options.metrics = vec!["tool_argument_correctness_judged".to_string()];
        options
    };
    let plain = reasoner("");
    let plain_dir = dir.path().join("plain");
    complete(&with_metrics(against(&plain.mock, &data, &plain_dir)));
    let expected = outcomes(&plain_dir.join("run"));
    assert_eq!(expected.len(), 4);
    assert!(
        expected.iter().all(|(_, _, v)| v["status"] == "score"),
        "{expected:?}"
    );
    // One call per paired tool call with a differing text argument.
    let plain_prompts = plain.mock.stats().chat_requests;
    assert_eq!(plain_prompts, 4);
    same_cells_through_every_layout_and_garbage_halts(
        dir.path(),
        &data,
        with_metrics,
        &expected,
        plain_prompts,
    );
}
