//! The judge's accounts on the testkit mock: a run records its calls, tokens and cost in
//! `summary.json` exactly as the mock counted them; `--max-calls` / `--max-cost` stop a run
//! resumably (exit 3) and the sessions add up; `--dry-run` estimates what the real run then
//! spends, sending nothing; `report.html` (in headless Chromium) and `report.md` show the
//! numbers `summary.json` holds.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use rageval_report::{CallTally, JudgeAccount, RunData};
use rageval_testkit::MockConfig;
use serde_json::Value;

use crate::chromium::{render, screenshot_path, table_rows};
use crate::judged::{Endpoint, checked_cells, endpoint};
use crate::{command, interrupt, repo_root, stderr, stdout};

/// Judged metrics that need only the chat model (so every token is a chat token).
const METRICS: &str = "faithfulness,context_recall";
/// The price the tests give the mock model, USD per million tokens (prompt, completion).
const PRICE: (f64, f64) = (100.0, 400.0);

fn with_price(dir: &Path) {
    let toml = format!(
        "[judge.prices.\"mock-chat\"]\nprompt_per_million = {}\ncompletion_per_million = {}\n",
        PRICE.0, PRICE.1
    );
    fs::write(dir.join("rageval.toml"), toml).unwrap();
}

fn eval(endpoint: &Endpoint, dir: &Path, samples: &str, extra: &[&str]) -> std::process::Output {
    let data = repo_root().join("examples/fiqa-30.jsonl");
    let mut args = vec![
        data.to_str().unwrap(),
        "--metrics",
        METRICS,
        "--samples",
        samples,
        "--out",
        "run",
        "--no-cache",
    ];
    args.extend(extra);
    endpoint.eval(dir, &args)
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

fn account(run: &Path) -> JudgeAccount {
    RunData::load(run).unwrap().summary.judge.unwrap()
}

fn cost_of(prompt: u64, completion: u64) -> f64 {
    (prompt as f64 * PRICE.0 + completion as f64 * PRICE.1) / 1e6
}

/// A session's total as the manifest keeps it.
fn session_total(manifest: &Value, index: usize) -> CallTally {
    serde_json::from_value(manifest["sessions"][index]["judge"]["total"].clone()).unwrap()
}

#[test]
fn a_call_cap_stops_the_run_resumably_and_the_sessions_add_up() {
    let endpoint = endpoint(MockConfig::default());
    let dir = tempfile::tempdir().unwrap();
    with_price(dir.path());
    let run = dir.path().join("run");

    // One call at a time, two samples in flight: the calls allowed finish whole samples
    // (one `contexts_check` call each: both metrics' splits and verdicts).
    let capped = eval(
        &endpoint,
        dir.path(),
        "10",
        &["--max-calls", "5", "--concurrency", "1"],
    );
    assert_eq!(capped.status.code(), Some(3), "{}", stderr(&capped));
    assert!(stderr(&capped).contains("judge cap reached: max calls 5"));
    // No request beyond the cap; the run is kept, incomplete, with no summary.
    let first = endpoint.mock.stats();
    assert_eq!(first.requests, 5);
    assert!(!run.join("summary.json").exists());
    let manifest = read_json(&run.join("manifest.json"));
    assert_eq!(manifest["status"], "running");
    assert_eq!(manifest["sessions"][0]["ended"], "cap_reached");
    let session = session_total(&manifest, 0);
    assert_eq!(session.calls, 5);
    assert_eq!(session.prompt_tokens, first.prompt_tokens);
    let journal = fs::read_to_string(run.join("results.jsonl")).unwrap();
    let kept = journal.lines().count();
    assert!(kept > 0 && kept < 20, "{kept} cells kept");
    assert!(
        !journal.contains("\"failed\""),
        "a refused cell was journaled"
    );

    let resumed = eval(&endpoint, dir.path(), "10", &["--max-calls", "1000"]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    let lines = checked_cells(&run, 10, 2);
    assert!(lines.iter().all(|l| l["status"] == "score"));
    let all = endpoint.mock.stats();
    let account = account(&run);
    assert_eq!(account.sessions, 2);
    let total = &account.usage.total;
    // Every request the mock answered, counted once, in its own session.
    assert_eq!(total.calls, all.requests);
    assert_eq!(total.prompt_tokens, all.prompt_tokens);
    assert_eq!(total.completion_tokens, all.completion_tokens);
    let manifest = read_json(&run.join("manifest.json"));
    assert_eq!(manifest["status"], "complete");
    assert_eq!(manifest["sessions"][1]["ended"], "complete");
    assert_eq!(session_total(&manifest, 1).calls, all.requests - 5);
    let usd = total.cost_usd.unwrap();
    assert!((usd - cost_of(all.prompt_tokens, all.completion_tokens)).abs() < 1e-9);
    assert!(stdout(&resumed).contains("whole run (2 sessions)"));
}

#[test]
fn ctrl_c_records_the_interrupted_session_and_a_rerun_adds_to_it() {
    let endpoint = endpoint(MockConfig {
        latency: Duration::from_millis(100),
        ..MockConfig::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let data = repo_root().join("examples/fiqa-30.jsonl");
    let mut args = vec![
        "eval".to_owned(),
        data.to_str().unwrap().to_owned(),
        "--metrics".into(),
        METRICS.into(),
        "--out".into(),
        "run".into(),
        "--no-cache".into(),
        "--concurrency".into(),
        "2".into(),
    ];
    args.extend(endpoint.flags());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let child = command(dir.path(), &args).spawn().unwrap();
    let journal = run.join("results.jsonl");
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(60)
        && fs::read_to_string(&journal).map_or(0, |t| t.lines().count()) < 4
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    let stopped = interrupt(child);
    assert_eq!(stopped.status.code(), Some(130), "{}", stderr(&stopped));
    assert!(!run.join("summary.json").exists());
    let manifest = read_json(&run.join("manifest.json"));
    assert_eq!(manifest["status"], "running");
    assert_eq!(manifest["sessions"][0]["ended"], "interrupted");
    let first = session_total(&manifest, 0).calls;
    assert!(first > 0);

    let resumed = endpoint.eval(dir.path(), &args[1..args.len() - 6]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    checked_cells(&run, 30, 2);
    let account = account(&run);
    assert_eq!(account.sessions, 2);
    let manifest = read_json(&run.join("manifest.json"));
    assert_eq!(
        account.usage.total.calls,
        first + session_total(&manifest, 1).calls
    );
    // Requests in flight when Ctrl-C came were cut off unanswered: never more than the mock
    // received.
    assert!(account.usage.total.calls <= endpoint.mock.stats().requests);
}

#[test]
fn a_cost_cap_stops_before_passing_it_and_a_larger_one_finishes() {
    let endpoint = endpoint(MockConfig::default());
    let dir = tempfile::tempdir().unwrap();
    with_price(dir.path());
    let run = dir.path().join("run");
    // The cap reserves each call's prompt (tiktoken) and its `max_tokens` while in flight:
    // an upper bound on what the mock bills only when the completion is capped (without a
    // cap it reserves 256 tokens, which one `contexts_check` answer of the mock exceeds).
    let cap = 1.5;
    let max_tokens = ["--judge-max-tokens", "1000"];

    let capped = eval(
        &endpoint,
        dir.path(),
        "10",
        &[&["--max-cost", &cap.to_string()][..], &max_tokens].concat(),
    );
    assert_eq!(capped.status.code(), Some(3), "{}", stderr(&capped));
    let stats = endpoint.mock.stats();
    assert!(stats.requests > 0);
    let spent = cost_of(stats.prompt_tokens, stats.completion_tokens);
    assert!(spent <= cap, "spent ${spent} past the cap ${cap}");
    let manifest = read_json(&run.join("manifest.json"));
    let session = session_total(&manifest, 0);
    assert!((session.cost_usd.unwrap() - spent).abs() < 1e-9);
    assert_eq!(manifest["status"], "running");

    let resumed = eval(
        &endpoint,
        dir.path(),
        "10",
        &[&["--max-cost", "100"][..], &max_tokens].concat(),
    );
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    checked_cells(&run, 10, 2);
    let all = endpoint.mock.stats();
    let total = account(&run).usage.total;
    assert!(
        (total.cost_usd.unwrap() - cost_of(all.prompt_tokens, all.completion_tokens)).abs() < 1e-9
    );
}

/// The numbers of a dry run's row that starts with `label`: calls, prompt tokens,
/// completion tokens.
fn planned(table: &str, label: &str) -> [u64; 3] {
    let row = table
        .lines()
        .find(|l| l.starts_with(label))
        .unwrap_or_else(|| panic!("no row {label} in {table}"));
    let cells: Vec<&str> = row[label.len()..].split_whitespace().collect();
    [0, 1, 2].map(|i| cells[i].parse().unwrap())
}

/// How far `estimate` is from `actual`, as a share of `actual`.
fn error(estimate: u64, actual: u64) -> f64 {
    (estimate as f64 - actual as f64).abs() / actual as f64
}

#[test]
fn a_dry_run_sends_nothing_and_estimates_what_the_run_spends() {
    let endpoint = endpoint(MockConfig::default());
    let dir = tempfile::tempdir().unwrap();
    with_price(dir.path());

    let dry = eval(&endpoint, dir.path(), "30", &["--dry-run"]);
    assert!(dry.status.success(), "{}", stderr(&dry));
    assert_eq!(
        endpoint.mock.stats().requests,
        0,
        "a dry run sent a request"
    );
    assert!(!dir.path().join("run").exists(), "a dry run wrote a run");
    let table = stdout(&dry);
    for metric in METRICS.split(',') {
        assert!(table.lines().any(|l| l.starts_with(metric)), "{table}");
    }

    let real = eval(&endpoint, dir.path(), "30", &[]);
    assert!(real.status.success(), "{}", stderr(&real));
    let spent = account(&dir.path().join("run")).usage;
    let mut report = String::new();
    for (name, tally) in spent
        .templates
        .iter()
        .chain([(&"whole run".to_owned(), &spent.total)])
    {
        let [calls, prompt, completion] = planned(&table, name);
        report.push_str(&format!(
            "{name}: planned {calls} calls, {prompt} + {completion} tokens; spent {} calls, \
             {} + {} tokens\n",
            tally.calls, tally.prompt_tokens, tally.completion_tokens
        ));
        // No faults and no re-asks: every call is foreseen.
        assert_eq!(calls, tally.calls, "{report}");
    }
    // The mock bills characters ÷ 4 where the plan counts with tiktoken (English runs about
    // 4.6 characters a token, so a prompt of dataset text reads ~10% low); verdict prompts
    // hold statements the plan takes to be one per sentence where the mock always returns two.
    // Prompt tokens are what a plan is for: both must land within 20% of the spend.
    let (check_name, check) = spent
        .templates
        .iter()
        .find(|(name, _)| name.starts_with("contexts_check.en@"))
        .expect("the run checked the contexts");
    let [_, prompt, _] = planned(&table, check_name);
    assert!(error(prompt, check.prompt_tokens) < 0.2, "{report}");
    let [_, prompt, _] = planned(&table, "whole run");
    assert!(error(prompt, spent.total.prompt_tokens) < 0.2, "{report}");
    let _ = fs::write(
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("dry-run-accuracy.txt"),
        &report,
    );
}

/// A tally's row as both reports show it: calls, cached, merged, tokens, cost.
fn shown(t: &CallTally) -> Vec<String> {
    vec![
        t.calls.to_string(),
        t.cached_calls.to_string(),
        t.merged_calls.to_string(),
        t.prompt_tokens.to_string(),
        t.completion_tokens.to_string(),
        t.cost_usd
            .map_or_else(|| "—".into(), |usd| format!("{usd:.6}")),
    ]
}

#[test]
fn both_reports_show_the_judges_calls_tokens_and_cost_as_summary_json_holds_them() {
    let endpoint = endpoint(MockConfig::default());
    let dir = tempfile::tempdir().unwrap();
    with_price(dir.path());
    let output = eval(&endpoint, dir.path(), "5", &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let run = dir.path().join("run");
    let account = account(&run);
    assert!(account.usage.total.calls > 0);

    let page = run.join("report.html");
    let dom = render(
        &format!("file://{}", page.display()),
        &screenshot_path("report-judge"),
        1800,
    );
    let rows: Vec<Vec<String>> = table_rows(&dom, "judge")
        .into_iter()
        .filter(|row| !row.is_empty())
        .collect();
    let total = "total".to_owned();
    let templates: Vec<(&String, &CallTally)> = account
        .usage
        .templates
        .iter()
        .chain([(&total, &account.usage.total)])
        .collect();
    assert_eq!(rows.len(), templates.len());
    for (row, (name, tally)) in rows.iter().zip(&templates) {
        assert_eq!(&row[0], *name);
        assert_eq!(row[1..7], shown(tally), "{name}");
    }

    let md = fs::read_to_string(run.join("report.md")).unwrap();
    let total = format!(
        "| **total** | {} |",
        shown(&account.usage.total).join(" | ")
    );
    assert!(md.contains(&total), "{total} not in {md}");
}
