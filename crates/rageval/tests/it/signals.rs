//! Signals that stop a run, whatever the process inherited: SIGTERM (a CI job's cancel, a
//! pod's end) during `eval` against the mock stops it like Ctrl-C — exit 143, every finished
//! cell journaled whole, the session recorded — and the same command resumes it to the end
//! with those cells kept. The child starts with SIGINT and SIGTERM ignored, as a background
//! job of a non-interactive shell does (issue 26, item 5).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use rageval_testkit::MockConfig;
use serde_json::Value;

use crate::judged::{checked_cells, endpoint, fiqa_judged_args};
use crate::{command, stderr};

/// Runs `"$0" "$@"` with SIGINT and SIGTERM ignored: what a child of `nohup … &` in a script
/// inherits. `exec` keeps the ignored dispositions, so the binary starts with them.
const IGNORING_SIGNALS: &str = "trap '' INT TERM; exec \"$0\" \"$@\"";

/// `command` (the binary with the tests' isolated environment), started through `sh` with
/// SIGINT and SIGTERM ignored.
fn with_signals_ignored(binary: &Command) -> Command {
    let mut wrapped = Command::new("sh");
    wrapped
        .arg("-c")
        .arg(IGNORING_SIGNALS)
        .arg(binary.get_program())
        .args(binary.get_args());
    if let Some(dir) = binary.get_current_dir() {
        wrapped.current_dir(dir);
    }
    for (name, value) in binary.get_envs() {
        match value {
            Some(value) => wrapped.env(name, value),
            None => wrapped.env_remove(name),
        };
    }
    wrapped
}

/// The journal's cells, (sample id, metric) → the whole line; every line must parse.
fn journaled(run: &Path) -> BTreeMap<(String, String), Value> {
    let text = fs::read_to_string(run.join("results.jsonl")).unwrap_or_default();
    assert!(text.is_empty() || text.ends_with('\n'), "a torn last line");
    text.lines()
        .map(|line| {
            let cell: Value = serde_json::from_str(line).unwrap();
            let key = (cell["sample_id"].to_string(), cell["metric"].to_string());
            (key, cell)
        })
        .collect()
}

/// Waits until the journal holds at least `cells` cells, or panics after a minute.
fn wait_for_cells(run: &Path, cells: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while fs::read_to_string(run.join("results.jsonl")).map_or(0, |t| t.lines().count()) < cells {
        assert!(
            Instant::now() < deadline,
            "no cell journaled within a minute"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends `signal` (a `kill` name: `TERM`, `INT`) to `child` and waits for it to exit.
fn signal(child: std::process::Child, signal: &str) -> Output {
    let sent = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success());
    child.wait_with_output().expect("the binary exits")
}

#[test]
fn regression_issue_26_sigterm_stops_eval_resumably_even_with_signals_ignored_at_start() {
    let endpoint = endpoint(MockConfig {
        latency: Duration::from_millis(200),
        ..MockConfig::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let flags = [vec!["--concurrency".into(), "2".into()], endpoint.flags()].concat();
    let args = fiqa_judged_args("run", &flags);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let child = with_signals_ignored(&command(dir.path(), &args))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_cells(&run, 1);
    let stopped = signal(child, "TERM");
    assert_eq!(stopped.status.code(), Some(143), "{}", stderr(&stopped));
    assert!(!run.join("summary.json").exists());
    let manifest: Value =
        serde_json::from_slice(&fs::read(run.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["status"], "running");
    assert_eq!(manifest["sessions"][0]["ended"], "interrupted");
    let kept = journaled(&run);
    assert!(!kept.is_empty() && kept.len() < 60, "{} cells", kept.len());

    let resumed = command(dir.path(), &args).output().unwrap();
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    checked_cells(&run, 30, 2);
    let all = journaled(&run);
    for (cell, line) in &kept {
        assert_eq!(all.get(cell), Some(line), "cell {cell:?} was not kept");
    }
}

/// Waits until `path` holds at least one complete line, or panics after a minute.
fn wait_for_a_line(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !fs::read_to_string(path).is_ok_and(|t| t.contains('\n')) {
        assert!(
            Instant::now() < deadline,
            "no record written within a minute"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Issue 25, item 4: Ctrl-C during `collect` ended it without a word (the default
/// disposition). Now it stops like the judged commands: exit 130, a line saying how many
/// records were written and how to go on, every written record whole; the same command
/// asks the rest.
#[test]
fn regression_issue_25_ctrl_c_stops_collect_saying_what_was_written() {
    let dir = tempfile::tempdir().unwrap();
    crate::sources::write_questions(dir.path(), 20);
    let url = crate::sources::serve(
        "200 OK",
        crate::sources::SERVICE_ANSWER.into(),
        Duration::from_millis(300),
    );
    crate::sources::write_service_settings(dir.path(), &url);
    let args = [
        "collect",
        "questions.jsonl",
        "--retriever",
        "http",
        "--config",
        "sources.toml",
        "--out",
        "data.jsonl",
    ];
    let child = with_signals_ignored(&command(dir.path(), &args))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = dir.path().join("data.jsonl");
    wait_for_a_line(&out);
    let stopped = signal(child, "INT");
    let text = stderr(&stopped);
    assert_eq!(stopped.status.code(), Some(130), "{text}");
    let kept = fs::read_to_string(&out).unwrap();
    assert!(kept.ends_with('\n'), "a torn last line");
    let written = kept.lines().count();
    assert!(written < 20, "{written} records: the signal came too late");
    let noun = if written == 1 { "record" } else { "records" };
    assert!(
        text.contains(&format!(
            "interrupted: {written} {noun} written to data.jsonl in this run, {written} of 20 \
             questions have one; run the same command again to ask the other {}",
            20 - written
        )),
        "{text}"
    );

    let resumed = command(dir.path(), &args).output().unwrap();
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert!(
        crate::stdout(&resumed).contains(&format!(
            "20 questions, {written} already there, {} written",
            20 - written
        )),
        "{}",
        crate::stdout(&resumed)
    );
}
