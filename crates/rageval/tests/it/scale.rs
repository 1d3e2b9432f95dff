//! Beyond one machine, through the binary: a batch run killed with SIGKILL while polling
//! resumes the same jobs and sends nothing twice; `--export-requests` exits 5; shards merge
//! with `rageval merge`, which refuses an incomplete set with a hint; `rageval cache
//! export|import` moves answers so that another machine scores offline.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use rageval_testkit::{MockBatchConfig, MockConfig};
use serde_json::Value;

use crate::judged::{Endpoint, endpoint};
use crate::{command, rageval, repo_root, stderr, stdout};

const METRICS: &str = "faithfulness,context_recall";

fn fiqa() -> String {
    repo_root()
        .join("examples/fiqa-30.jsonl")
        .to_string_lossy()
        .into_owned()
}

/// `eval` of FiQA with the judged metrics into `out`, with its own cache, plus `extra`.
fn eval_args(endpoint: &Endpoint, out: &str, cache: &str, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = ["eval", &fiqa(), "--metrics", METRICS, "--out", out]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend(endpoint.flags());
    args.extend(["--cache".to_string(), cache.to_string()]);
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

fn run(dir: &Path, args: &[String]) -> std::process::Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    rageval(dir, &args)
}

fn sorted_results(run: &Path) -> Vec<String> {
    let mut lines: Vec<String> = fs::read_to_string(run.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    lines.sort();
    lines
}

fn events(run: &Path) -> Vec<Value> {
    fs::read_to_string(run.join("batches.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

#[test]
fn a_batch_run_killed_while_polling_resumes_its_jobs_and_sends_nothing_twice() {
    let endpoint = endpoint(MockConfig {
        embedding_dim: 16,
        batch: MockBatchConfig {
            validating: Duration::from_millis(10),
            in_progress: Duration::from_millis(1_500),
            finalizing: Duration::from_millis(10),
            expire_after_requests: None,
        },
        ..MockConfig::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let sync = run(
        dir.path(),
        &eval_args(&endpoint, "sync", "sync.sqlite", &[]),
    );
    assert!(sync.status.success(), "{}", stderr(&sync));
    endpoint.mock.reset();

    let batch = eval_args(
        &endpoint,
        "batch",
        "batch.sqlite",
        &["--batch", "--batch-poll", "0.05"],
    );
    let args: Vec<&str> = batch.iter().map(String::as_str).collect();
    let mut child = command(dir.path(), &args)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let run_dir = dir.path().join("batch");
    let started = Instant::now();
    // Kill it once its first job is created and being polled.
    loop {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no job was created"
        );
        let polling = events(&run_dir).iter().any(|e| e["event"] == "state");
        if polling {
            break;
        }
        assert!(child.try_wait().unwrap().is_none(), "the run ended first");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = events(&run_dir);
    assert!(!before.iter().any(|e| e["event"] == "loaded"), "{before:?}");
    assert_eq!(endpoint.mock.stats().batches_created, 1);

    let resumed = run(dir.path(), &batch);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert!(
        stderr(&resumed).contains("waiting for 1 job(s) an earlier session started"),
        "{}",
        stderr(&resumed)
    );
    let after = events(&run_dir);
    // Each request file went out once, as one job, and the first job was waited for again.
    let mut jobs: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for event in after.iter().filter(|e| e["event"] == "created") {
        jobs.entry(event["name"].as_str().unwrap().to_owned())
            .or_default()
            .insert(event["batch_id"].as_str().unwrap().to_owned());
    }
    assert!(jobs.values().all(|ids| ids.len() == 1), "{jobs:?}");
    let prepared = after.iter().filter(|e| e["event"] == "prepared").count();
    assert_eq!(prepared, jobs.len());
    let stats = endpoint.mock.stats();
    assert_eq!(stats.batches_created as usize, jobs.len(), "{stats:?}");
    assert_eq!(stats.chat_requests, 0);
    assert_eq!(
        sorted_results(&dir.path().join("sync")),
        sorted_results(&run_dir)
    );
}

#[test]
fn export_requests_stops_with_exit_5_and_says_how_to_go_on() {
    let endpoint = endpoint(MockConfig::default());
    let dir = tempfile::tempdir().unwrap();
    let args = eval_args(
        &endpoint,
        "run",
        "c.sqlite",
        &["--samples", "3", "--export-requests", "requests"],
    );
    let output = run(dir.path(), &args);
    assert_eq!(output.status.code(), Some(5), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("--import-responses"),
        "{}",
        stderr(&output)
    );
    let file = dir.path().join("requests/stage-0001-0001.jsonl");
    let input = fs::read_to_string(&file).unwrap();
    assert!(input.lines().count() >= 3, "{input}");
    assert_eq!(endpoint.mock.stats().requests, 0);
    let manifest: Value =
        serde_json::from_slice(&fs::read(dir.path().join("run/manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["sessions"][0]["ended"], "requests_exported");
}

#[test]
fn shards_merge_through_the_binary_and_an_incomplete_set_is_refused_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let metrics = "rouge_l,exact_match";
    let data = fiqa();
    for (shard, out) in [("1/2", "s1"), ("2/2", "s2")] {
        let output = rageval(
            dir.path(),
            &[
                "eval",
                &data,
                "--metrics",
                metrics,
                "--shard",
                shard,
                "--out",
                out,
                "--no-reports",
            ],
        );
        assert!(output.status.success(), "{}", stderr(&output));
        assert!(!dir.path().join(out).join("report.html").exists());
    }
    let whole = rageval(
        dir.path(),
        &["eval", &data, "--metrics", metrics, "--out", "whole"],
    );
    assert!(whole.status.success());
    let merged = rageval(dir.path(), &["merge", "s2", "s1", "--out", "merged"]);
    assert!(merged.status.success(), "{}", stderr(&merged));
    assert!(stdout(&merged).contains("rouge_l"), "{}", stdout(&merged));
    assert!(dir.path().join("merged/report.html").is_file());
    assert_eq!(
        sorted_results(&dir.path().join("whole")),
        sorted_results(&dir.path().join("merged"))
    );
    let summary = |run: &str| {
        let mut summary: Value =
            serde_json::from_slice(&fs::read(dir.path().join(run).join("summary.json")).unwrap())
                .unwrap();
        summary.as_object_mut().unwrap().remove("judge");
        summary
    };
    assert_eq!(summary("whole"), summary("merged"));

    let refused = rageval(dir.path(), &["merge", "s1", "--out", "half"]);
    assert_eq!(refused.status.code(), Some(2));
    let text = stderr(&refused);
    assert!(
        text.contains("shard 2/2 is missing (given: 1/2)") && text.contains("hint:"),
        "{text}"
    );
    let bad = rageval(dir.path(), &["eval", &data, "--shard", "3/2"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("shard 3/2 does not exist"),
        "{}",
        stderr(&bad)
    );
}

/// The scheduler variables `--shard auto` reads, removed from a child's environment so that
/// a test run under a scheduler sees only what the test sets.
const SCHEDULER_VARIABLES: [&str; 7] = [
    rageval_run::engine::shard::ENV_JOB_COMPLETION_INDEX,
    rageval_run::engine::shard::ENV_SLURM_ARRAY_TASK_ID,
    rageval_run::engine::shard::ENV_SLURM_ARRAY_TASK_COUNT,
    rageval_run::engine::shard::ENV_SLURM_ARRAY_TASK_MIN,
    rageval_run::engine::shard::ENV_SLURM_ARRAY_TASK_STEP,
    rageval_run::engine::shard::ENV_RANK,
    rageval_run::engine::shard::ENV_WORLD_SIZE,
];

/// `eval` of FiQA with model-free metrics and `--shard <shard>` into `out`, with only `vars`
/// of the scheduler variables set.
fn eval_shard(dir: &Path, shard: &str, out: &str, vars: &[(&str, &str)]) -> std::process::Output {
    let data = fiqa();
    let args = [
        "eval",
        &data,
        "--metrics",
        "rouge_l,exact_match",
        "--shard",
        shard,
        "--out",
        out,
        "--no-reports",
    ];
    let mut child = command(dir, &args);
    for name in SCHEDULER_VARIABLES {
        child.env_remove(name);
    }
    child.envs(vars.iter().copied());
    child.output().expect("the binary runs")
}

#[test]
fn regression_issue_26_shard_auto_under_an_indexed_job_scores_the_shard_it_names() {
    let dir = tempfile::tempdir().unwrap();
    let auto = eval_shard(
        dir.path(),
        "auto/4",
        "auto",
        &[("JOB_COMPLETION_INDEX", "2")],
    );
    assert!(auto.status.success(), "{}", stderr(&auto));
    let given = eval_shard(dir.path(), "3/4", "given", &[]);
    assert!(given.status.success(), "{}", stderr(&given));
    let auto_cells = sorted_results(&dir.path().join("auto"));
    assert!(!auto_cells.is_empty());
    assert_eq!(auto_cells, sorted_results(&dir.path().join("given")));
    let other = eval_shard(dir.path(), "2/4", "other", &[]);
    assert!(other.status.success(), "{}", stderr(&other));
    assert_ne!(auto_cells, sorted_results(&dir.path().join("other")));

    let slurm = eval_shard(
        dir.path(),
        "auto",
        "slurm",
        &[
            ("SLURM_ARRAY_TASK_ID", "7"),
            ("SLURM_ARRAY_TASK_MIN", "5"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ],
    );
    assert!(slurm.status.success(), "{}", stderr(&slurm));
    assert_eq!(auto_cells, sorted_results(&dir.path().join("slurm")));
}

#[test]
fn regression_issue_26_shard_auto_without_an_index_exits_2_naming_the_variables() {
    let dir = tempfile::tempdir().unwrap();
    let refused = eval_shard(dir.path(), "auto/4", "none", &[]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    let text = stderr(&refused);
    for name in [
        "JOB_COMPLETION_INDEX",
        "SLURM_ARRAY_TASK_ID",
        "RANK",
        "WORLD_SIZE",
    ] {
        assert!(text.contains(name), "{text}");
    }
    assert!(!dir.path().join("none").exists());
    let no_count = eval_shard(dir.path(), "auto", "none", &[("JOB_COMPLETION_INDEX", "2")]);
    assert_eq!(no_count.status.code(), Some(2));
    assert!(
        stderr(&no_count).contains("auto/N"),
        "{}",
        stderr(&no_count)
    );
}

#[test]
fn exported_answers_let_another_cache_score_offline() {
    let endpoint = endpoint(MockConfig::default());
    let dir = tempfile::tempdir().unwrap();
    let first = eval_args(&endpoint, "first", "a.sqlite", &["--samples", "5"]);
    assert!(run(dir.path(), &first).status.success());
    let exported = rageval(
        dir.path(),
        &["cache", "export", "answers.jsonl", "--cache", "a.sqlite"],
    );
    assert!(exported.status.success(), "{}", stderr(&exported));
    let imported = rageval(
        dir.path(),
        &["cache", "import", "answers.jsonl", "--cache", "b.sqlite"],
    );
    assert!(imported.status.success(), "{}", stderr(&imported));
    // One `contexts_check` call per sample (the answer's and the reference's splits in it).
    assert!(
        stderr(&imported).contains("imported 5 answers"),
        "{}",
        stderr(&imported)
    );
    let calls = endpoint.mock.stats().requests;
    let offline = eval_args(
        &endpoint,
        "second",
        "b.sqlite",
        &["--samples", "5", "--offline"],
    );
    let output = run(dir.path(), &offline);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(endpoint.mock.stats().requests, calls);
    assert_eq!(
        sorted_results(&dir.path().join("first")),
        sorted_results(&dir.path().join("second"))
    );
}
