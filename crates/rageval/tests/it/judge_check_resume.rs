//! Resuming `rageval judge-check`: Ctrl-C leaves a run that is marked incomplete and that
//! the same command finishes, judging only what is missing, with exactly the agreement of an
//! uninterrupted run; other labels or another judge in the same directory are refused.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use rageval_testkit::MockConfig;
use serde_json::Value;

use crate::judged::endpoint;
use crate::{command, interrupt, rageval, repo_root, stderr};

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

fn lines(path: &Path) -> usize {
    fs::read_to_string(path).map_or(0, |t| t.lines().count())
}

/// The judge's calls in session `i` of a run's manifest.
fn refs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

fn session_calls(manifest: &Value, i: usize) -> u64 {
    manifest["sessions"][i]["judge"]["total"]["calls"]
        .as_u64()
        .unwrap_or_else(|| panic!("no calls in session {i}: {manifest}"))
}

#[test]
fn ctrl_c_leaves_a_resumable_run_that_finishes_with_an_uninterrupted_runs_agreement() {
    if crate::skip_without_shared(
        "ctrl_c_leaves_a_resumable_run_that_finishes_with_an_uninterrupted_runs_agreement",
    ) {
        return;
    }
    let endpoint = endpoint(MockConfig {
        latency: Duration::from_millis(150),
        seed: 3,
        ..MockConfig::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let labels = repo_root().join("../shared/validation/wikieval/WikiEval_samples_10.jsonl");
    let args = |out: &str| -> Vec<String> {
        let mut args: Vec<String> = [
            "judge-check",
            labels.to_str().unwrap(),
            "--format",
            "wikieval",
            "--metric",
            "faithfulness",
            "--samples",
            "6",
            "--repeat",
            "2",
            "--no-cache",
            "--concurrency",
            "2",
            "--out",
            out,
        ]
        .map(String::from)
        .to_vec();
        args.extend(endpoint.flags());
        args
    };

    let whole = rageval(dir.path(), &refs(&args("whole")));
    assert!(whole.status.success(), "{}", stderr(&whole));
    let whole_calls = session_calls(&read_json(&dir.path().join("whole/manifest.json")), 0);

    // Interrupt once the first pass is journaled and the repeat has begun.
    let run = dir.path().join("run");
    let child = command(dir.path(), &refs(&args("run"))).spawn().unwrap();
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(60) && lines(&run.join("repeats.jsonl")) < 2 {
        std::thread::sleep(Duration::from_millis(10));
    }
    let stopped = interrupt(child);
    assert_eq!(stopped.status.code(), Some(130), "{}", stderr(&stopped));
    // Marked incomplete: nothing that looks finished, and the reports refuse it.
    let manifest = read_json(&run.join("manifest.json"));
    assert_eq!(manifest["status"], "running");
    assert_eq!(manifest["sessions"][0]["ended"], "interrupted");
    for file in ["summary.json", "agreement.json", "report.html"] {
        assert!(
            !run.join(file).exists(),
            "{file} written by an interrupted run"
        );
    }
    assert_eq!(lines(&run.join("results.jsonl")), 12);
    let repeated = lines(&run.join("repeats.jsonl"));
    assert!((2..12).contains(&repeated), "{repeated} repeat lines");
    let report = rageval(dir.path(), &["report", "run"]);
    assert_eq!(report.status.code(), Some(2));
    assert!(
        stderr(&report).contains("not complete"),
        "{}",
        stderr(&report)
    );

    let resumed = rageval(dir.path(), &refs(&args("run")));
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert!(
        stderr(&resumed).contains(&format!(
            "resuming run: 12 of 12 samples judged, {repeated} repeat judgements kept"
        )),
        "{}",
        stderr(&resumed)
    );
    assert!(stderr(&resumed).contains("judging 0 of 12 samples"));
    assert!(stderr(&resumed).contains(&format!("repeat 2 of 2: {} samples", 12 - repeated)));
    let finished = read_json(&run.join("manifest.json"));
    assert_eq!(finished["status"], "complete");
    assert_eq!(finished["sessions"][1]["ended"], "complete");
    // Only the missing repeats were asked: fewer calls than a whole run.
    assert!(session_calls(&finished, 1) < whole_calls);
    assert_eq!(lines(&run.join("repeats.jsonl")), 12);
    let (a, b) = (
        read_json(&dir.path().join("whole/agreement.json")),
        read_json(&run.join("agreement.json")),
    );
    assert_eq!(a, b);
    assert!(a["stability"]["repeats"] == 2 && a["figures"]["pairwise_accuracy"].is_object());
}

#[test]
fn other_labels_or_another_judge_in_the_same_directory_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, answer: &str| {
        let line = |id: &str| {
            serde_json::json!({"id": id, "question": "What is the capital of France?",
                               "contexts": ["Paris is the capital of France."],
                               "answer": answer, "label": true})
            .to_string()
        };
        fs::write(
            dir.path().join(name),
            format!("{}\n{}\n", line("1"), line("2")),
        )
        .unwrap();
    };
    write("a.jsonl", "Paris is the capital.");
    write("b.jsonl", "Lyon is the capital.");
    let check = |labels: &str, extra: &[String]| {
        let mut args = vec![
            "judge-check",
            labels,
            "--metric",
            "faithfulness",
            "--out",
            "run",
        ];
        args.extend(extra.iter().map(String::as_str));
        rageval(dir.path(), &args)
    };
    let first = check("a.jsonl", &[]);
    assert!(first.status.success(), "{}", stderr(&first));
    let agreement = fs::read(dir.path().join("run/agreement.json")).unwrap();

    let other = check("b.jsonl", &[]);
    assert_eq!(other.status.code(), Some(2));
    let said = stderr(&other);
    assert!(
        said.contains("cannot resume the run in run: it checked the labels a.jsonl")
            && said.contains("now the labels are b.jsonl")
            && said.contains("--overwrite"),
        "{said}"
    );
    let endpoint = endpoint(MockConfig::default());
    let judged = check("a.jsonl", &endpoint.flags());
    assert_eq!(judged.status.code(), Some(2));
    assert!(
        stderr(&judged).contains("it was judged by"),
        "{}",
        stderr(&judged)
    );
    assert_eq!(endpoint.mock.stats().requests, 0);
    // The run refused twice is untouched; the same command again judges nothing new.
    assert_eq!(
        fs::read(dir.path().join("run/agreement.json")).unwrap(),
        agreement
    );
    let again = check("a.jsonl", &[]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(
        stderr(&again).contains("judging 0 of 2 samples"),
        "{}",
        stderr(&again)
    );
    assert_eq!(
        fs::read(dir.path().join("run/agreement.json")).unwrap(),
        agreement
    );
    let overwritten = check("b.jsonl", &["--overwrite".into()]);
    assert!(overwritten.status.success(), "{}", stderr(&overwritten));
}

/// The first pass's and the repeats' journal lines that failed.
fn failed_lines(run: &Path) -> usize {
    ["results.jsonl", "repeats.jsonl"]
        .iter()
        .map(|file| {
            fs::read_to_string(run.join(file))
                .unwrap()
                .lines()
                .filter(|line| line.contains(r#""status":"failed""#))
                .count()
        })
        .sum()
}

/// Marks the first line of a journal as a judge error, as a judge that failed leaves it.
fn fail_first_line(journal: &Path) {
    let text = fs::read_to_string(journal).unwrap();
    let mut lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let first = lines[0].as_object_mut().unwrap();
    first.retain(|key, _| ["repeat", "sample_id", "metric"].contains(&key.as_str()));
    first.insert("status".into(), "failed".into());
    first.insert("error".into(), "the judge's answer never parsed".into());
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    fs::write(journal, text).unwrap();
}

/// `--retry-failed`, declared once for every command that writes a run, judges a check's
/// failed judgements again, in the first pass and in the repeats; without it they are kept.
#[test]
fn retry_failed_judges_again_what_failed_in_the_first_pass_and_the_repeats() {
    let endpoint = endpoint(MockConfig::default());
    let dir = tempfile::tempdir().unwrap();
    crate::judge_check::write_curie_pairs(dir.path());
    let mut args: Vec<String> = [
        "judge-check",
        "labels.jsonl",
        "--metric",
        "faithfulness",
        "--repeat",
        "2",
        "--no-cache",
        "--out",
        "run",
    ]
    .map(String::from)
    .to_vec();
    args.extend(endpoint.flags());
    let checked = rageval(dir.path(), &refs(&args));
    assert!(checked.status.success(), "{}", stderr(&checked));
    let run = dir.path().join("run");
    let journaled = lines(&run.join("results.jsonl")) + lines(&run.join("repeats.jsonl"));
    fail_first_line(&run.join("results.jsonl"));
    fail_first_line(&run.join("repeats.jsonl"));
    let asked = endpoint.mock.stats().chat_requests;

    let kept = rageval(dir.path(), &refs(&args));
    assert!(kept.status.success(), "{}", stderr(&kept));
    assert_eq!(failed_lines(&run), 2, "without the flag, failures are kept");
    assert_eq!(endpoint.mock.stats().chat_requests, asked);

    args.push("--retry-failed".into());
    let retried = rageval(dir.path(), &refs(&args));
    assert!(retried.status.success(), "{}", stderr(&retried));
    assert!(
        stderr(&retried).contains("2 failed judgements to judge again"),
        "{}",
        stderr(&retried)
    );
    assert_eq!(failed_lines(&run), 0);
    let now = lines(&run.join("results.jsonl")) + lines(&run.join("repeats.jsonl"));
    assert_eq!(now, journaled, "replaced, never duplicated");
    assert!(endpoint.mock.stats().chat_requests > asked);
}
