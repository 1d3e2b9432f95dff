//! Batch mode ends where the synchronous run ends: the same results and summary, every
//! chat request answered by a batch job (or an exported file) and none synchronously, one
//! job per stage and request file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rageval_judge::batch::{BatchLimits, PollPolicy};
use rageval_run::Stop;
use rageval_run::commands::eval::EvalOptions;
use rageval_run::engine::batch::BatchMode;
use rageval_run::engine::batch::journal::BatchEvent;
use rageval_run::engine::observe::Silent;
use rageval_testkit::MockStats;
use serde_json::Value;

use crate::{
    Endpoint, METRICS, assert_same_summary, complete, endpoint, no_env, options, results, summary,
    write_dataset,
};

/// `eval`'s options for the batch tests: the bench's four metrics and answer_correctness,
/// whose support calls wait on the answer's split in the `contexts_check` call, so that a
/// run has two stages (the four alone ask everything in one).
fn chained(endpoint: &Endpoint, data: &Path, out: &Path, cache: &Path) -> EvalOptions {
    let mut chained = options(endpoint, data, out, cache);
    chained.metrics = format!("{METRICS},answer_correctness")
        .split(',')
        .map(String::from)
        .collect();
    chained
}

/// Polls that suit the mock's jobs (done within milliseconds).
fn quick_poll() -> PollPolicy {
    PollPolicy {
        first: Duration::from_millis(10),
        max: Duration::from_millis(40),
    }
}

/// Per stage: request files sent and requests in them, from `batches.jsonl`.
fn stages(run: &Path) -> BTreeMap<u32, (u64, usize)> {
    let text = std::fs::read_to_string(run.join("batches.jsonl")).unwrap();
    let mut stages = BTreeMap::new();
    for line in text.lines() {
        if let BatchEvent::Prepared {
            stage, requests, ..
        } = serde_json::from_str(line).unwrap()
        {
            let entry = stages.entry(stage).or_insert((0, 0));
            entry.0 += 1;
            entry.1 += requests;
        }
    }
    stages
}

/// Chat calls, prompt and completion tokens in the run's books. Embeddings are left out:
/// which inputs of an embedding request are cache hits depends on timing in any run.
fn account(run: &Path) -> (u64, u64, u64) {
    let summary: Value =
        serde_json::from_slice(&std::fs::read(run.join("summary.json")).unwrap()).unwrap();
    let mut books = (0, 0, 0);
    for (template, tally) in summary["judge"]["templates"].as_object().unwrap() {
        if template != "embedding" {
            let number = |name: &str| tally[name].as_u64().unwrap();
            books.0 += number("calls");
            books.1 += number("prompt_tokens");
            books.2 += number("completion_tokens");
        }
    }
    books
}

/// The synchronous run of `data` into `dir/sync`, and what the mock saw of it (then reset).
fn synchronous(endpoint: &Endpoint, dir: &Path, data: &Path) -> (PathBuf, MockStats) {
    let run = dir.join("sync");
    complete(&chained(endpoint, data, &run, &dir.join("sync.sqlite")));
    let stats = endpoint.mock.stats();
    endpoint.mock.reset();
    (run, stats)
}

#[test]
fn a_thousand_samples_in_batch_jobs_score_as_the_synchronous_run() {
    let (endpoint, dir) = (endpoint(), tempfile::tempdir().unwrap());
    let data = write_dataset(dir.path(), 1_000);
    let (sync_run, sync) = synchronous(&endpoint, dir.path(), &data);

    let batch_run = dir.path().join("batch");
    let mut batch = chained(
        &endpoint,
        &data,
        &batch_run,
        &dir.path().join("batch.sqlite"),
    );
    let per_file = 700;
    batch.batch = Some(BatchMode {
        submit: true,
        limits: BatchLimits {
            max_requests_per_file: per_file,
            ..BatchLimits::default()
        },
        poll: quick_poll(),
        ..BatchMode::default()
    });
    complete(&batch);
    let stats = endpoint.mock.stats();

    assert_eq!(results(&sync_run), results(&batch_run));
    assert_same_summary(&summary(&sync_run), &summary(&batch_run));
    // Every chat request went out in a batch job, each once, and none synchronously.
    assert_eq!(stats.chat_requests, 0, "{stats:?}");
    assert_eq!(stats.batch_requests_answered, sync.chat_requests);
    assert_eq!(stats.batch_requests_failed, 0);
    // One job per stage and request file: files of at most 700 requests.
    let stages = stages(&batch_run);
    assert!(stages.len() >= 2, "{stages:?}");
    let mut jobs = 0;
    for (stage, (files, requests)) in &stages {
        assert_eq!(*files, requests.div_ceil(per_file) as u64, "stage {stage}");
        jobs += files;
    }
    assert!(
        jobs > stages.len() as u64,
        "some stage was split: {stages:?}"
    );
    assert_eq!(stats.batches_created, jobs);
    // The books count each answer once, as the synchronous run's do.
    assert_eq!(account(&sync_run), account(&batch_run));
}

#[test]
fn requests_out_answers_in_by_a_vllm_run_batch_stand_in_end_as_the_synchronous_run() {
    let (endpoint, dir) = (endpoint(), tempfile::tempdir().unwrap());
    let data = write_dataset(dir.path(), 150);
    let (sync_run, sync) = synchronous(&endpoint, dir.path(), &data);

    let run = dir.path().join("exported");
    let requests = dir.path().join("requests");
    let answers = dir.path().join("answers");
    std::fs::create_dir_all(&answers).unwrap();
    let mut imports = Vec::new();
    let mut sessions = 0;
    loop {
        sessions += 1;
        assert!(sessions < 12, "the loop does not end");
        let mut session = chained(&endpoint, &data, &run, &dir.path().join("b.sqlite"));
        session.batch = Some(BatchMode {
            export: Some(requests.clone()),
            import: std::mem::take(&mut imports),
            ..BatchMode::default()
        });
        if sessions == 1 {
            // Importing alone leaves the unanswered requests nowhere to go: refused.
            let mut alone = session.clone();
            alone.batch = Some(BatchMode {
                import: vec![answers.join("none.jsonl")],
                ..BatchMode::default()
            });
            let error = rageval_run::commands::eval::run(
                &alone,
                &no_env,
                &Silent,
                &rageval_judge::CancelToken::new(),
            )
            .unwrap_err();
            assert!(error.to_string().contains("--export-requests"), "{error}");
        }
        let stopped = match rageval_run::commands::eval::run(
            &session,
            &no_env,
            &Silent,
            &rageval_judge::CancelToken::new(),
        )
        .unwrap()
        {
            rageval_run::Ended::Complete(_) => break,
            rageval_run::Ended::Stopped(stopped) => stopped,
        };
        let Stop::RequestsExported { files, requests } = &stopped.stop else {
            panic!("stopped for another reason: {}", stopped.message)
        };
        assert!(*requests > 0);
        assert!(
            stopped.message.contains("--import-responses"),
            "{}",
            stopped.message
        );
        // `vllm run-batch -i FILE -o ANSWERS`, played by the mock.
        for file in files {
            let input = std::fs::read_to_string(file).unwrap();
            let output = answers.join(file.file_name().unwrap());
            std::fs::write(&output, endpoint.mock.run_batch_file(&input)).unwrap();
            imports.push(output);
        }
    }
    assert!(sessions >= 3, "{sessions} sessions");
    let stats = endpoint.mock.stats();
    assert_eq!(
        stats.chat_requests, 0,
        "no synchronous chat call: {stats:?}"
    );
    assert_eq!(results(&sync_run), results(&run));
    assert_same_summary(&summary(&sync_run), &summary(&run));
    assert_eq!(account(&sync_run), account(&run));
    assert_eq!(stats.batch_requests_answered, 0);
    assert!(sync.chat_requests > 0);
}

#[test]
fn a_dry_run_of_a_batch_run_says_its_stages_and_sends_nothing() {
    let endpoint = endpoint();
    let dir = tempfile::tempdir().unwrap();
    let data = write_dataset(dir.path(), 40);
    let run = dir.path().join("batch");
    let mut batch = chained(&endpoint, &data, &run, &dir.path().join("b.sqlite"));
    batch.batch = Some(BatchMode {
        submit: true,
        poll: quick_poll(),
        ..BatchMode::default()
    });
    let estimate = rageval_run::commands::eval::dry_run(&batch, &no_env, &Silent).unwrap();
    assert_eq!(endpoint.mock.stats(), rageval_testkit::MockStats::default());
    assert!(!run.exists());
    let planned = estimate.batch.clone().unwrap();
    let text = estimate.render();
    assert!(text.contains("batch jobs"), "{text}");

    complete(&batch);
    let stages = stages(&run);
    assert_eq!(planned.stages.len(), stages.len(), "{text}\n{stages:?}");
    for (planned, (_, (files, requests))) in planned.stages.iter().zip(&stages) {
        assert_eq!(planned.requests, *requests as u64, "{text}\n{stages:?}");
        assert_eq!(planned.jobs(&planned_limits()), *files);
    }
}

fn planned_limits() -> BatchLimits {
    BatchLimits::default()
}

#[test]
fn a_batch_run_needs_an_endpoint_and_the_cache() {
    let endpoint = endpoint();
    let dir = tempfile::tempdir().unwrap();
    let data = write_dataset(dir.path(), 3);
    let mut batch = chained(
        &endpoint,
        &data,
        &dir.path().join("r"),
        &dir.path().join("c"),
    );
    batch.batch = Some(BatchMode {
        submit: true,
        ..BatchMode::default()
    });
    let mut uncached = batch.clone();
    uncached.judge.flags.no_cache = true;
    let error = rageval_run::commands::eval::run(
        &uncached,
        &no_env,
        &Silent,
        &rageval_judge::CancelToken::new(),
    )
    .unwrap_err();
    assert!(error.to_string().contains("--no-cache"), "{error}");
    let mut local = batch.clone();
    local.judge.flags.base_url = None;
    local.judge.flags.model = None;
    local.judge.flags.embedding_model = None;
    local.judge.local = Some(rageval_run::LocalJudge::Heuristic);
    let error = rageval_run::commands::eval::run(
        &local,
        &no_env,
        &Silent,
        &rageval_judge::CancelToken::new(),
    )
    .unwrap_err();
    assert!(error.to_string().contains("judge endpoint"), "{error}");
}

#[test]
fn a_job_created_just_before_a_crash_is_found_by_its_metadata_not_sent_again() {
    let endpoint = endpoint();
    let dir = tempfile::tempdir().unwrap();
    let data = write_dataset(dir.path(), 20);
    let run = dir.path().join("batch");
    let mut batch = chained(&endpoint, &data, &run, &dir.path().join("b.sqlite"));
    batch.batch = Some(BatchMode {
        submit: true,
        poll: quick_poll(),
        ..BatchMode::default()
    });
    complete(&batch);
    let created = endpoint.mock.stats().batches_created;
    // As if the process died right after creating the last job: the journal ends with its
    // `prepared` event, and its answers were never kept.
    let journal = run.join("batches.jsonl");
    let text = std::fs::read_to_string(&journal).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let last = lines
        .iter()
        .rposition(|line| line.contains("\"event\":\"prepared\""))
        .unwrap();
    let name = serde_json::from_str::<Value>(lines[last]).unwrap()["name"]
        .as_str()
        .unwrap()
        .to_owned();
    let kept: String = lines[..=last].iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&journal, kept).unwrap();
    std::fs::remove_file(run.join(format!("batches/{name}.answers.jsonl"))).unwrap();

    let before = results(&run);
    complete(&batch);
    assert_eq!(endpoint.mock.stats().batches_created, created);
    let events: Vec<Value> = std::fs::read_to_string(&journal)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let adopted = events
        .iter()
        .filter(|e| e["event"] == "created" && e["name"] == name.as_str())
        .count();
    assert_eq!(adopted, 1, "{events:?}");
    assert!(run.join(format!("batches/{name}.answers.jsonl")).is_file());
    assert_eq!(results(&run), before);
}

#[test]
fn requests_a_job_left_unanswered_go_synchronous_with_the_sync_fallback() {
    let endpoint = crate::endpoint_with(rageval_testkit::MockBatchConfig {
        validating: Duration::from_millis(1),
        in_progress: Duration::from_millis(5),
        finalizing: Duration::from_millis(1),
        // Each job answers 30 requests and expires with the rest.
        expire_after_requests: Some(30),
    });
    let dir = tempfile::tempdir().unwrap();
    let data = write_dataset(dir.path(), 40);
    let (sync_run, sync) = synchronous(&endpoint, dir.path(), &data);
    let run = dir.path().join("batch");
    let mut batch = chained(&endpoint, &data, &run, &dir.path().join("b.sqlite"));
    batch.batch = Some(BatchMode {
        submit: true,
        failed_items: rageval_judge::batch::FailedItems::Sync,
        poll: quick_poll(),
        ..BatchMode::default()
    });
    complete(&batch);
    let stats = endpoint.mock.stats();
    assert!(stats.batch_requests_failed > 0, "{stats:?}");
    // Every expired request was asked once, synchronously; the rest in jobs.
    assert_eq!(stats.chat_requests, stats.batch_requests_failed);
    assert_eq!(
        stats.chat_requests + stats.batch_requests_answered,
        sync.chat_requests
    );
    assert_eq!(results(&sync_run), results(&run));
    assert_same_summary(&summary(&sync_run), &summary(&run));
}
