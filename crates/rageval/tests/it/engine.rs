//! The rules every judged command keeps, checked command by command against the testkit
//! mock (issue 14): `--dry-run` sends nothing and writes nothing; a cap stops with exit 3 and
//! a rerun with a larger cap ends identical to an uncapped run; a judge answering 500 to
//! everything, or not there at all, stops early with exit 4 and the cause; kill -9 in the
//! middle of a stage, then a rerun, ends identical to an uninterrupted run.
//!
//! Each test writes a `rageval.toml` with quick retries into its directory (the binary reads
//! `./rageval.toml`), so a failing judge is given up on in milliseconds, not seconds.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use rageval_testkit::MockConfig;
use serde_json::Value;

use crate::judged::{Endpoint, endpoint};
use crate::{command, rageval, repo_root, stderr};

/// A judged command as the tests drive it.
#[derive(Clone, Copy)]
struct Case {
    name: &'static str,
    /// The command's arguments, writing into `out` (no judge flags).
    args: fn(dir: &Path, out: &str) -> Vec<String>,
    /// The files that hold the command's results, relative to `out`.
    results: &'static [&'static str],
    /// The journal whose lines say how far a run is.
    journal: &'static str,
    /// Journal lines to wait for before the kill.
    kill_after: usize,
    /// The manifest of the stage a small cap stops in.
    manifest: &'static str,
}

const CASES: [Case; 6] = [
    Case {
        name: "eval",
        args: eval_args,
        results: &["results.jsonl", "summary.json"],
        journal: "results.jsonl",
        kill_after: 4,
        manifest: "manifest.json",
    },
    Case {
        name: "judge-check",
        args: judge_check_args,
        results: &["results.jsonl", "agreement.json"],
        journal: "results.jsonl",
        kill_after: 3,
        manifest: "manifest.json",
    },
    Case {
        name: "rank",
        args: rank_args,
        results: &["rankings.jsonl", "rank_agreement.jsonl"],
        journal: "rankings.jsonl",
        kill_after: 2,
        manifest: "manifest.json",
    },
    Case {
        name: "reference",
        args: reference_args,
        results: &["references.jsonl"],
        journal: "references.jsonl",
        kill_after: 2,
        manifest: "manifest.json",
    },
    Case {
        name: "pipeline",
        args: pipeline_args,
        results: &[
            "rank/rankings.jsonl",
            "reference/references.jsonl",
            "dataset.jsonl",
            "eval/results.jsonl",
        ],
        journal: "eval/results.jsonl",
        kill_after: 2,
        manifest: "rank/manifest.json",
    },
    Case {
        name: "judge-check --head-to-head",
        args: head_to_head_args,
        results: &["results.jsonl", "agreement.json"],
        journal: "results.jsonl",
        kill_after: 3,
        manifest: "manifest.json",
    },
];

fn fiqa() -> String {
    repo_root()
        .join("examples/fiqa-30.jsonl")
        .display()
        .to_string()
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

fn eval_args(_: &Path, out: &str) -> Vec<String> {
    strings(&[
        "eval",
        &fiqa(),
        "--metrics",
        "faithfulness,context_recall,rouge_l",
        "--samples",
        "8",
        "--concurrency",
        "2",
        "--out",
        out,
    ])
}

fn judge_check_args(dir: &Path, out: &str) -> Vec<String> {
    let labels = dir.join("labels.jsonl");
    if !labels.exists() {
        let mut text = String::new();
        for i in 0..8 {
            text.push_str(&format!(
                "{{\"id\": \"i{i}\", \"question\": \"Where is item {i}?\", \"contexts\": \
                 [\"Item {i} is in room {i}.\"], \"answer\": \"Item {i} is in room {i}.\", \
                 \"label\": {}}}\n",
                i % 2 == 0
            ));
        }
        fs::write(&labels, text).unwrap();
    }
    strings(&[
        "judge-check",
        labels.to_str().unwrap(),
        "--metric",
        "faithfulness",
        "--concurrency",
        "2",
        "--out",
        out,
    ])
}

/// Eight labelled pairs of different answers (each pair costs two calls).
fn head_to_head_args(dir: &Path, out: &str) -> Vec<String> {
    let labels = dir.join("labels.jsonl");
    if !labels.exists() {
        let mut text = String::new();
        for i in 0..8 {
            let side = |name: &str| {
                serde_json::json!({
                    "question": format!("Where is item {i}?"),
                    "contexts": [format!("Item {i} is in room {i}.")],
                    "answer": format!("Item {i} is in room {name}."),
                })
            };
            let preferred = ["a", "b", "tie"][i % 3];
            let line = serde_json::json!({"id": format!("p{i}"), "a": side("one"),
                                          "b": side("two"), "preferred": preferred});
            text.push_str(&format!("{line}\n"));
        }
        fs::write(&labels, text).unwrap();
    }
    strings(&[
        "judge-check",
        labels.to_str().unwrap(),
        "--head-to-head",
        "--concurrency",
        "2",
        "--out",
        out,
    ])
}

fn rank_args(_: &Path, out: &str) -> Vec<String> {
    strings(&[
        "rank",
        &fiqa(),
        "--samples",
        "6",
        "--questions-at-once",
        "1",
        "--grade-batch",
        "2",
        "--out",
        out,
    ])
}

fn reference_args(_: &Path, out: &str) -> Vec<String> {
    strings(&["reference", &fiqa(), "--samples", "6", "--out", out])
}

fn pipeline_args(_: &Path, out: &str) -> Vec<String> {
    strings(&[
        "pipeline",
        &fiqa(),
        "--samples",
        "4",
        "--metrics",
        "faithfulness,rouge_l",
        "--grade-batch",
        "2",
        "--concurrency",
        "2",
        "--out",
        out,
    ])
}

/// A test directory whose `rageval.toml` gives up on a failing judge quickly.
fn test_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("rageval.toml"),
        "[judge.retries]\nmax_attempts = 2\nbase_delay_secs = 0.01\nmax_delay_secs = 0.05\n",
    )
    .unwrap();
    dir
}

fn run(dir: &Path, case: Case, out: &str, extra: &[String]) -> Output {
    let mut args = (case.args)(dir, out);
    args.extend(extra.iter().cloned());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    rageval(dir, &args)
}

/// A JSON file or JSON-lines file with the values that vary between identical runs (wall
/// times, session times, the run directory's own path) removed.
fn comparable(path: &Path) -> Value {
    let text =
        fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut value = if path.extension().is_some_and(|e| e == "jsonl") {
        // A journal is compared as a set of lines: a resumed session appends the cells it
        // left behind after later ones.
        let mut lines: Vec<&str> = text.lines().collect();
        lines.sort_unstable();
        Value::Array(
            lines
                .into_iter()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect(),
        )
    } else {
        serde_json::from_str(&text).unwrap()
    };
    strip(&mut value);
    value
}

fn strip(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for key in ["wall_seconds", "judge", "started_at", "finished_at"] {
                map.remove(key);
            }
            map.values_mut().for_each(strip);
        }
        Value::Array(items) => items.iter_mut().for_each(strip),
        _ => {}
    }
}

/// The results of `case` in `dir/out`, comparable across runs.
fn results(dir: &Path, case: Case, out: &str) -> BTreeMap<String, Value> {
    let mut files: BTreeMap<String, Value> = case
        .results
        .iter()
        .map(|file| (file.to_string(), comparable(&dir.join(out).join(file))))
        .collect();
    // The reference files a run writes, by name and content.
    for folder in [dir.join(out), dir.join(out).join("reference")] {
        let Ok(entries) = fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with("GT_") || name.starts_with("FULL_") {
                files.insert(name, comparable(&entry.path()));
            }
        }
    }
    files
}

fn status(dir: &Path, out: &str, case: Case) -> String {
    let manifest: Value =
        serde_json::from_str(&fs::read_to_string(dir.join(out).join(case.manifest)).unwrap())
            .unwrap();
    manifest["status"].as_str().unwrap().to_string()
}

/// The mock's answers with a pause, so a run can be caught in the middle.
fn slow_endpoint() -> Endpoint {
    endpoint(MockConfig {
        latency: Duration::from_millis(60),
        embedding_dim: 16,
        ..MockConfig::default()
    })
}

#[test]
fn a_dry_run_sends_nothing_and_writes_nothing() {
    for case in CASES {
        let dir = test_dir();
        let mock = endpoint(MockConfig::default());
        let output = run(
            dir.path(),
            case,
            "out",
            &[mock.flags(), strings(&["--dry-run"])].concat(),
        );
        assert!(
            output.status.success(),
            "{}: {}",
            case.name,
            stderr(&output)
        );
        let said = crate::stdout(&output);
        assert!(
            said.contains("no request was sent and nothing written"),
            "{said}"
        );
        assert!(said.contains("model calls"), "{said}");
        assert_eq!(
            mock.mock.stats().requests,
            0,
            "{}: a request was sent",
            case.name
        );
        let left: Vec<PathBuf> = fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| !p.ends_with("rageval.toml") && !p.ends_with("labels.jsonl"))
            .collect();
        assert!(left.is_empty(), "{}: the dry run wrote {left:?}", case.name);
    }
}

#[test]
fn the_pipeline_dry_run_plans_every_stage() {
    let dir = test_dir();
    let mock = endpoint(MockConfig::default());
    let case = CASES[4];
    let output = run(
        dir.path(),
        case,
        "out",
        &[mock.flags(), strings(&["--dry-run"])].concat(),
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let said = crate::stdout(&output);
    for stage in ["\nrank ", "\nreference ", "\neval ", "\nall stages "] {
        assert!(said.contains(stage), "{stage:?} not in: {said}");
    }
}

#[test]
fn a_cap_stops_resumably_and_a_larger_cap_finishes_as_an_uncapped_run() {
    for case in CASES {
        let dir = test_dir();
        let mock = endpoint(MockConfig {
            embedding_dim: 16,
            ..MockConfig::default()
        });
        let uncapped = run(dir.path(), case, "whole", &mock.flags());
        assert!(
            uncapped.status.success(),
            "{}: {}",
            case.name,
            stderr(&uncapped)
        );
        let expected = results(dir.path(), case, "whole");

        // Another cache, so the capped run has to ask again.
        let capped_dir = test_dir();
        let capped = run(
            capped_dir.path(),
            case,
            "capped",
            &[mock.flags(), strings(&["--max-calls", "3"])].concat(),
        );
        assert_eq!(
            capped.status.code(),
            Some(3),
            "{}: {}",
            case.name,
            stderr(&capped)
        );
        assert!(
            stderr(&capped).contains("judge cap reached"),
            "{}: {}",
            case.name,
            stderr(&capped)
        );
        assert_eq!(
            status(capped_dir.path(), "capped", case),
            "running",
            "{}",
            case.name
        );
        let finished = run(
            capped_dir.path(),
            case,
            "capped",
            &[mock.flags(), strings(&["--max-calls", "100000"])].concat(),
        );
        assert!(
            finished.status.success(),
            "{}: {}",
            case.name,
            stderr(&finished)
        );
        assert_eq!(
            results(capped_dir.path(), case, "capped"),
            expected,
            "{}: the capped-then-resumed run differs from the uncapped one",
            case.name
        );
    }
}

#[test]
fn a_judge_that_answers_500_to_everything_stops_early_with_exit_4() {
    for case in CASES {
        let dir = test_dir();
        let mock = endpoint(MockConfig {
            fail_rate: 1.0,
            ..MockConfig::default()
        });
        let started = Instant::now();
        let output = run(dir.path(), case, "out", &mock.flags());
        assert_eq!(
            output.status.code(),
            Some(4),
            "{}: {}",
            case.name,
            stderr(&output)
        );
        let said = stderr(&output);
        assert!(said.contains("http 500"), "{}: {said}", case.name);
        assert!(said.contains("stays resumable"), "{}: {said}", case.name);
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{}: took {:?}",
            case.name,
            started.elapsed()
        );
        // Nothing the judge failed to answer was recorded as a finding.
        let journal = dir.path().join("out").join(case.journal);
        let recorded = fs::read_to_string(&journal).unwrap_or_default();
        assert!(
            !recorded.contains("http 500"),
            "{}: a failed call was journaled: {recorded}",
            case.name
        );
    }
}

#[test]
fn an_unreachable_judge_stops_early_with_exit_4() {
    for case in CASES {
        let dir = test_dir();
        // Nothing listens on port 1 of the loopback address.
        let flags = strings(&[
            "--judge-base-url",
            "http://127.0.0.1:1/v1",
            "--judge-model",
            "mock-chat",
        ]);
        let output = run(dir.path(), case, "out", &flags);
        assert_eq!(
            output.status.code(),
            Some(4),
            "{}: {}",
            case.name,
            stderr(&output)
        );
        let said = stderr(&output);
        assert!(
            said.contains("connection to http://127.0.0.1:1/v1 failed"),
            "{}: {said}",
            case.name
        );
    }
}

#[test]
fn kill_9_in_the_middle_then_a_rerun_finishes_as_an_uninterrupted_run() {
    for case in CASES {
        let mock = slow_endpoint();
        let whole_dir = test_dir();
        let whole = run(whole_dir.path(), case, "out", &mock.flags());
        assert!(whole.status.success(), "{}: {}", case.name, stderr(&whole));
        let expected = results(whole_dir.path(), case, "out");

        let dir = test_dir();
        kill_when(dir.path(), case, &mock, case.journal, case.kill_after);
        let again = run(dir.path(), case, "out", &mock.flags());
        assert!(again.status.success(), "{}: {}", case.name, stderr(&again));
        assert_eq!(
            results(dir.path(), case, "out"),
            expected,
            "{}: the killed-then-resumed run differs",
            case.name
        );
    }
}

#[test]
fn the_pipeline_resumes_after_kill_9_in_each_stage() {
    let case = CASES[4];
    let mock = slow_endpoint();
    let whole_dir = test_dir();
    let whole = run(whole_dir.path(), case, "out", &mock.flags());
    assert!(whole.status.success(), "{}", stderr(&whole));
    let expected = results(whole_dir.path(), case, "out");
    for (journal, lines) in [
        ("rank/rankings.jsonl", 1),
        ("reference/references.jsonl", 1),
    ] {
        let dir = test_dir();
        kill_when(dir.path(), case, &mock, journal, lines);
        let again = run(dir.path(), case, "out", &mock.flags());
        assert!(again.status.success(), "{journal}: {}", stderr(&again));
        assert_eq!(
            results(dir.path(), case, "out"),
            expected,
            "killed in {journal}"
        );
    }
}

/// Starts `case` and kills it (SIGKILL) once `journal` has `lines` lines, or panics if the
/// run ends first.
fn kill_when(dir: &Path, case: Case, mock: &Endpoint, journal: &str, lines: usize) {
    let mut args = (case.args)(dir, "out");
    args.extend(mock.flags());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut child = command(dir, &args).spawn().unwrap();
    let journal = dir.join("out").join(journal);
    let started = Instant::now();
    loop {
        let count = fs::read_to_string(&journal).map_or(0, |t| t.lines().count());
        if count >= lines {
            break;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!(
                "{}: the run ended ({status}) before {} had {lines} lines",
                case.name,
                journal.display()
            );
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "{}: no progress",
            case.name
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn verbose_shows_retries_and_never_the_key() {
    let dir = test_dir();
    let secret = "sk-test-0123456789abcdef";
    let mock = endpoint(MockConfig {
        fail_rate: 0.3,
        api_key: Some(secret.into()),
        ..MockConfig::default()
    });
    let mut args = eval_args(dir.path(), "out");
    args.extend(mock.flags());
    // A 30% fault rate fails a few cells for good: this test reads the log, not the share.
    args.extend(["-v".into(), "--max-failed".into(), "100%".into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = command(dir.path(), &args)
        .env("RAGEVAL_JUDGE_API_KEY", secret)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let said = stderr(&output);
    assert!(
        said.contains("judge call failed; retrying after a back-off"),
        "{said}"
    );
    assert!(said.contains("judge routing"), "{said}");
    assert!(!said.contains(secret), "the key reached stderr: {said}");
    for file in ["manifest.json", "results.jsonl", "summary.json"] {
        let text = fs::read_to_string(dir.path().join("out").join(file)).unwrap();
        assert!(!text.contains(secret), "the key reached {file}");
    }
}
