//! The engine's rules for `eval`, in process against the testkit mock: a dry run sends
//! nothing and writes nothing; a cap stops resumably and the rerun ends as an uncapped
//! run; a judge that fails every call halts the run early; a cancel mid-run leaves a run
//! that resumes to the uninterrupted one. The binary's tests check the exit codes these
//! stops become; these check the stops themselves, where the engine lives.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rageval_judge::CancelToken;
use rageval_rank::Algorithm;
use rageval_run::Ended;
use rageval_run::commands::eval::{self, EvalOptions};
use rageval_run::commands::rank::{RankOptions, RankingOptions};
use rageval_run::engine::judges::Stop;
use rageval_run::engine::observe::{Event, Observer, Silent};
use rageval_testkit::{MockConfig, MockServer};

use crate::{
    Endpoint, assert_same_summary, complete, endpoint, endpoint_of, no_env, options, options_at,
    question_data, results, summary, write_dataset,
};

const SAMPLES: usize = 12;

/// An uncapped, uninterrupted run of the same data with its own cache: what every stopped
/// and resumed run must end as.
fn reference_run(endpoint: &Endpoint, dir: &std::path::Path) -> std::path::PathBuf {
    let data = write_dataset(dir, SAMPLES);
    let out = dir.join("reference");
    complete(&options(
        endpoint,
        &data,
        &out,
        &dir.join("reference.sqlite"),
    ));
    out
}

fn stopped(ended: Ended<eval::Evaluated>) -> Stop {
    match ended {
        Ended::Stopped(stopped) => stopped.stop,
        Ended::Complete(_) => panic!("the run completed where it should have stopped"),
    }
}

#[test]
fn a_dry_run_sends_nothing_and_writes_nothing() {
    let endpoint = endpoint();
    let dir = tempfile::tempdir().unwrap();
    let data = write_dataset(dir.path(), SAMPLES);
    let out = dir.path().join("run");
    let cache = dir.path().join("cache.sqlite");
    let estimate =
        eval::dry_run(&options(&endpoint, &data, &out, &cache), &no_env, &Silent).unwrap();
    assert!(
        estimate.total().tally.calls > 0,
        "the plan counts the calls a real run makes"
    );
    assert_eq!(endpoint.mock.stats().requests, 0);
    assert!(!out.exists(), "a dry run wrote {}", out.display());
    assert!(!cache.exists(), "a dry run opened the cache");
}

#[test]
fn a_cap_stops_resumably_and_the_rerun_ends_as_an_uncapped_run() {
    let endpoint = endpoint();
    let dir = tempfile::tempdir().unwrap();
    let reference = reference_run(&endpoint, dir.path());
    let data = dir.path().join("data.jsonl");
    let out = dir.path().join("capped");
    let mut capped = options(&endpoint, &data, &out, &dir.path().join("capped.sqlite"));
    capped.judge.flags.max_calls = Some(30);
    capped.judge.flags.concurrency = Some(2);
    let stop = stopped(eval::run(&capped, &no_env, &Silent, &CancelToken::new()).unwrap());
    assert!(matches!(stop, Stop::CapReached(_)), "{stop:?}");
    let journaled = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    let cells = journaled.lines().count();
    assert!(
        cells > 0 && cells < SAMPLES * 4,
        "a cap of 30 calls scores some cells, not all: {cells} journaled"
    );
    capped.judge.flags.max_calls = None;
    complete(&capped);
    assert_eq!(results(&out), results(&reference));
    assert_same_summary(&summary(&out), &summary(&reference));
}

#[test]
fn a_judge_that_fails_every_call_halts_the_run_early() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mock = runtime
        .block_on(MockServer::start(MockConfig {
            fail_rate: 1.0,
            embedding_dim: 16,
            ..MockConfig::default()
        }))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let data = write_dataset(dir.path(), SAMPLES);
    let out = dir.path().join("run");
    let failing = options_at(&mock.base_url, &data, &out, &dir.path().join("c.sqlite"));
    let stop = stopped(eval::run(&failing, &no_env, &Silent, &CancelToken::new()).unwrap());
    assert!(matches!(stop, Stop::JudgeUnavailable(_)), "{stop:?}");
    // Nothing the judge failed to answer is a finding: no failed cell is journaled, and
    // the run stays incomplete, to resume once the judge answers.
    let journaled = std::fs::read_to_string(out.join("results.jsonl")).unwrap_or_default();
    assert!(!journaled.contains("http 500"), "{journaled}");
    let manifest = std::fs::read_to_string(out.join("manifest.json")).unwrap();
    assert!(manifest.contains("\"status\": \"running\""), "{manifest}");
    assert!(manifest.contains("\"judge_unavailable\""), "{manifest}");
}

/// Trips the cancel token at the first progress event after `after` samples finished.
struct CancelAfter<'a> {
    cancel: &'a CancelToken,
    after: u64,
    tripped: AtomicBool,
}

impl Observer for CancelAfter<'_> {
    fn event(&self, event: &Event) {
        if let Event::Progress(progress) = event
            && progress.done >= self.after
            && !self.tripped.swap(true, Ordering::SeqCst)
        {
            self.cancel.cancel();
        }
    }
}

#[test]
fn a_cancel_mid_run_resumes_to_the_uninterrupted_run() {
    // Each answer takes 150 ms and the cancelled run asks one call at a time, so the samples
    // left after the third need seconds of calls, not the milliseconds the sink may take to
    // journal the third under load: without the latency, a loaded machine answered every
    // call before the cancel was seen (failed on CI-like runs with pytest beside it), and at
    // 50 ms it did again once a sample took two calls instead of three.
    let endpoint = endpoint_of(MockConfig {
        embedding_dim: 16,
        latency: Duration::from_millis(150),
        ..MockConfig::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let reference = reference_run(&endpoint, dir.path());
    let data = dir.path().join("data.jsonl");
    let out = dir.path().join("cancelled");
    let mut cancelled: EvalOptions =
        options(&endpoint, &data, &out, &dir.path().join("cancelled.sqlite"));
    cancelled.judge.flags.concurrency = Some(1);
    let cancel = CancelToken::new();
    let observer = CancelAfter {
        cancel: &cancel,
        after: 3,
        tripped: AtomicBool::new(false),
    };
    let stop = stopped(eval::run(&cancelled, &no_env, &observer, &cancel).unwrap());
    assert!(matches!(stop, Stop::Cancelled), "{stop:?}");
    let manifest = std::fs::read_to_string(out.join("manifest.json")).unwrap();
    assert!(manifest.contains("\"interrupted\""), "{manifest}");
    complete(&cancelled);
    assert_eq!(results(&out), results(&reference));
    assert_same_summary(&summary(&out), &summary(&reference));
}

/// `rank`'s options for `data` into `out`, judged by `endpoint` with its own cache.
fn rank_options(
    endpoint: &Endpoint,
    data: &std::path::Path,
    out: &std::path::Path,
    cache: &std::path::Path,
) -> RankOptions {
    let eval = options(endpoint, data, out, cache);
    RankOptions {
        data: question_data(data, out),
        ranking: RankingOptions {
            algorithm: Algorithm::Listwise,
            grade_batch: rageval_rank::ranking::DEFAULT_GRADE_BATCH,
            window: rageval_rank::ranking::listwise::DEFAULT_WINDOW,
            both_orders: false,
            questions_at_once: 2,
        },
        top_k: 2,
        judge: eval.judge,
    }
}

/// The rankings journal's lines without their timings, sorted.
fn rankings(run: &std::path::Path) -> Vec<serde_json::Value> {
    let text =
        std::fs::read_to_string(run.join(rageval_run::commands::rank::RANKINGS_FILE)).unwrap();
    let mut lines: Vec<serde_json::Value> = text
        .lines()
        .map(|line| {
            let mut value: serde_json::Value = serde_json::from_str(line).unwrap();
            value["wall_seconds"] = serde_json::Value::Null;
            value
        })
        .collect();
    lines.sort_by_key(|v| v["sample_id"].to_string());
    lines
}

#[test]
fn rank_dry_run_sends_nothing_and_a_capped_rank_resumes_to_the_uncapped_one() {
    let endpoint = endpoint();
    let dir = tempfile::tempdir().unwrap();
    let data = write_dataset(dir.path(), SAMPLES);
    let reference = dir.path().join("reference");
    let uncapped = rank_options(&endpoint, &data, &reference, &dir.path().join("r.sqlite"));

    let estimate =
        rageval_run::commands::rank::plan::estimate(&uncapped, &no_env, &Silent).unwrap();
    assert!(estimate.total().tally.calls > 0);
    assert_eq!(endpoint.mock.stats().requests, 0);
    assert!(!reference.exists());

    let run = |options: &RankOptions| {
        rageval_run::commands::rank::run(options, &no_env, &Silent, &CancelToken::new()).unwrap()
    };
    assert!(matches!(run(&uncapped), Ended::Complete(_)));
    let out = dir.path().join("capped");
    let mut capped = rank_options(&endpoint, &data, &out, &dir.path().join("c.sqlite"));
    capped.judge.flags.max_calls = Some(3);
    match run(&capped) {
        Ended::Stopped(stopped) => {
            assert!(
                matches!(stopped.stop, Stop::CapReached(_)),
                "{:?}",
                stopped.stop
            );
        }
        Ended::Complete(_) => panic!("a cap of 3 calls cannot rank 12 questions"),
    }
    capped.judge.flags.max_calls = None;
    assert!(matches!(run(&capped), Ended::Complete(_)));
    assert_eq!(rankings(&out), rankings(&reference));
}
