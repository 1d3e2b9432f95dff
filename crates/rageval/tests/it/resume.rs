//! Resuming `rageval eval`: a run killed mid-way (with a torn last line) finishes on the
//! next invocation with exactly one journal line per sample × metric, and `--retry-failed`
//! replaces failed cells instead of adding to them.

use std::fs;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rageval_report::RunData;
use rageval_testkit::{MockConfig, MockServer, Reply};
use serde_json::Value;

use crate::judged::{checked_cells, endpoint};
use crate::{command, rageval, repo_root, stderr};

const METRICS: &str = "context_precision,context_recall,faithfulness,answer_relevancy";

fn args<'a>(data: &'a str, extra: &'a [String]) -> Vec<&'a str> {
    let mut args = vec![
        "eval",
        data,
        "--metrics",
        METRICS,
        "--out",
        "run",
        "--no-cache",
    ];
    args.extend(extra.iter().map(String::as_str));
    args
}

#[test]
fn a_killed_run_resumes_with_exactly_one_line_per_cell() {
    let endpoint = endpoint(MockConfig {
        latency: Duration::from_millis(150),
        embedding_dim: 16,
        ..MockConfig::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let data = repo_root().join("examples/fiqa-30.jsonl");
    let data = data.to_str().unwrap();
    let flags = [endpoint.flags(), vec!["--concurrency".into(), "2".into()]].concat();
    let mut child = command(dir.path(), &args(data, &flags)).spawn().unwrap();
    let journal = dir.path().join("run/results.jsonl");
    let started = Instant::now();
    // Kill it once some samples are journaled (or when it has finished anyway).
    while started.elapsed() < Duration::from_secs(60) {
        let lines = fs::read_to_string(&journal).map_or(0, |t| t.lines().count());
        if lines >= 8 || child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    // A crash in the middle of a write leaves a torn line.
    fs::OpenOptions::new()
        .append(true)
        .open(&journal)
        .unwrap()
        .write_all(b"{\"sample_id\":\"29\",\"metric\":\"faithf")
        .unwrap();

    let output = rageval(dir.path(), &args(data, &endpoint.flags()));
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stderr(&output).contains("resuming"), "{}", stderr(&output));
    let lines = checked_cells(&dir.path().join("run"), 30, 4);
    assert!(lines.iter().all(|l| l["status"] == "score"));
    // The killed session kept its judge numbers as of its last checkpoint; the sessions add
    // up to the run's account, which never counts more than the mock answered.
    let manifest: Value =
        serde_json::from_slice(&fs::read(dir.path().join("run/manifest.json")).unwrap()).unwrap();
    let sessions = manifest["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 2, "{manifest}");
    assert_eq!(sessions[0]["ended"], "running");
    assert_eq!(sessions[1]["ended"], "complete");
    let calls = |i: usize| sessions[i]["judge"]["total"]["calls"].as_u64().unwrap();
    assert!(calls(0) > 0, "{manifest}");
    let summary = RunData::load(&dir.path().join("run")).unwrap().summary;
    let account = summary.judge.unwrap();
    assert_eq!(account.sessions, 2);
    assert_eq!(account.usage.total.calls, calls(0) + calls(1));
    assert!(account.usage.total.calls <= endpoint.mock.stats().requests);
}

#[test]
fn retry_failed_replaces_failed_cells() {
    let dir = tempfile::tempdir().unwrap();
    let data = repo_root().join("examples/fiqa-30.jsonl");
    let data = data.to_str().unwrap();
    let failed = {
        // An endpoint that refuses every chat request about the last two samples (400 is
        // not retried) and answers the rest: their cells fail, too few refusals in a row,
        // after answers, to halt the judge, and at most 8 of 120 cells stay under
        // --max-failed.
        let refusing = endpoint(MockConfig {
            script: Some(Arc::new(|body: &serde_json::Value| {
                let text = body.to_string();
                let last_two = text.contains("Massachusetts Sales Tax")
                    || text.contains("plenty of current accounts");
                if last_two {
                    Reply::Status(400, "bad request".into())
                } else {
                    Reply::Schema
                }
            })),
            embedding_dim: 16,
            ..MockConfig::default()
        });
        let output = rageval(dir.path(), &args(data, &refusing.flags()));
        assert!(output.status.success(), "{}", stderr(&output));
        let lines = checked_cells(&dir.path().join("run"), 30, 4);
        // Every prompt that quotes their question is refused (some metrics' prompts do not).
        let failed = lines.iter().filter(|l| l["status"] == "failed").count();
        assert!((1..=8).contains(&failed), "{failed} failed: {lines:?}");
        failed
    };
    let healthy = endpoint(MockConfig {
        embedding_dim: 16,
        ..MockConfig::default()
    });
    // Without --retry-failed a finished run has nothing left to do (and its failed cells
    // stay failed).
    let output = rageval(dir.path(), &args(data, &healthy.flags()));
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("0 cells scored now"),
        "{}",
        stderr(&output)
    );
    assert_eq!(healthy.mock.stats().requests, 0);

    let retry = [healthy.flags(), vec!["--retry-failed".into()]].concat();
    let output = rageval(dir.path(), &args(data, &retry));
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains(&format!("{failed} failed cells to score again")),
        "{}",
        stderr(&output)
    );
    let lines = checked_cells(&dir.path().join("run"), 30, 4);
    assert!(lines.iter().all(|l| l["status"] == "score"));
    let _: &MockServer = &healthy.mock;
}

/// Regression (issue 24, item 6): `RUN_FORMAT_VERSION` was written into every manifest and
/// never checked, so an older binary resumed a newer run and rewrote its manifest without
/// the fields it did not know. A run of a newer format is refused by every reader, named
/// with both versions, and left as it was.
#[test]
fn a_run_of_a_newer_format_is_refused_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    crate::eval_fiqa(dir.path(), "rouge_l", &run);
    let manifest_path = run.join("manifest.json");
    let mut manifest: Value = serde_json::from_slice(&fs::read(&manifest_path).unwrap()).unwrap();
    let newer = rageval_report::RUN_FORMAT_VERSION + 1;
    manifest["format_version"] = newer.into();
    manifest["a_field_of_the_future"] = "kept".into();
    let future = serde_json::to_vec_pretty(&manifest).unwrap();
    fs::write(&manifest_path, &future).unwrap();
    let journal = fs::read(run.join("results.jsonl")).unwrap();

    let data = repo_root().join("examples/fiqa-30.jsonl");
    let data = data.to_str().unwrap();
    let run_arg = run.to_str().unwrap();
    for args in [
        vec!["eval", data, "--metrics", "rouge_l", "--out", run_arg],
        vec!["report", run_arg],
        vec!["compare", run_arg, run_arg],
    ] {
        let output = rageval(dir.path(), &args);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(&format!(
                "run format {newer}, newer than format {}",
                newer - 1
            )),
            "{args:?}: {err}"
        );
        assert_eq!(
            fs::read(&manifest_path).unwrap(),
            future,
            "{args:?} rewrote it"
        );
        assert_eq!(fs::read(run.join("results.jsonl")).unwrap(), journal);
    }
}
