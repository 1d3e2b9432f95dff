//! Throughput of the full pipeline against the in-process mock, for BENCHMARKS.md rather
//! than as a gate: ignored by default, and it asserts only correctness, never a time.
//! Run in release mode:
//! `cargo test --release -p rageval-judge --test it -- --ignored --nocapture throughput`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rageval_judge::chat::OutputSchema;
use rageval_judge::{
    Answer, Cache, CacheMode, ChatModel, ChatRequest, JudgeConfig, JudgeError, LimiterConfig,
    OpenAiBackend, StructuredRequest,
};
use rageval_testkit::{MockConfig, MockServer};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::support::{Verdict, batch, fast_retry, judge, settings};

/// Repetitions of each measurement; the median is reported.
const RUNS: usize = 3;

fn limited(concurrency: usize, mode: CacheMode) -> JudgeConfig {
    JudgeConfig {
        limiter: LimiterConfig {
            max_concurrency: concurrency,
            min_concurrency: concurrency,
            ..LimiterConfig::default()
        },
        retry: fast_retry(),
        cache_mode: mode,
        ..JudgeConfig::default()
    }
}

fn all_ok(results: &[Result<Answer<Verdict>, JudgeError>]) -> bool {
    results.iter().all(Result::is_ok)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Seconds to run `requests` through a fresh judge built by `make`.
async fn timed(
    make: impl Fn() -> rageval_judge::Judge<rageval_judge::OpenAiBackend>,
    requests: Vec<StructuredRequest>,
    expect_cached: bool,
) -> f64 {
    let j = make();
    let start = Instant::now();
    let results = j.ask_all::<Verdict>(requests).await;
    let seconds = start.elapsed().as_secs_f64();
    assert!(all_ok(&results));
    assert!(results.iter().flatten().all(|a| a.cached == expect_cached));
    seconds
}

/// Seconds for the bare backend — one HTTP attempt per request, `concurrency` at a time, no
/// cache, limiter, retries or parsing — to answer the same requests: the floor that the mock
/// and HTTP set, against which the pipeline's own cost shows.
async fn bare(backend: OpenAiBackend, requests: Vec<StructuredRequest>, concurrency: usize) -> f64 {
    let backend = Arc::new(backend);
    let slots = Arc::new(Semaphore::new(concurrency));
    let start = Instant::now();
    let mut tasks = JoinSet::new();
    for request in requests {
        let (backend, slots) = (Arc::clone(&backend), Arc::clone(&slots));
        tasks.spawn(async move {
            let _slot = slots.acquire_owned().await.expect("semaphore open");
            let chat = ChatRequest {
                messages: request.messages,
                sampling: request.sampling,
                response_schema: Some(OutputSchema {
                    name: request.template.id,
                    schema: request.schema,
                }),
            };
            backend.chat(&chat).await.is_ok()
        });
    }
    let mut ok = true;
    while let Some(done) = tasks.join_next().await {
        ok &= done.expect("task ran");
    }
    assert!(ok);
    start.elapsed().as_secs_f64()
}

fn percents(values: &[f64]) -> Vec<String> {
    values
        .iter()
        .map(|o| format!("{:.2}%", o * 100.0))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "measurement, not a gate"]
async fn throughput() {
    const N: usize = 5000;
    const CONCURRENCY: usize = 16;
    let dir = tempfile::tempdir().unwrap();
    let fast = MockServer::start(MockConfig::default()).await.unwrap();
    let t = Duration::from_secs(10);
    let pipeline = |mock: &MockServer, cache: Option<Cache>, mode: CacheMode| {
        judge(settings(mock, t), cache, limited(CONCURRENCY, mode))
    };
    let backend = |mock: &MockServer| OpenAiBackend::new(settings(mock, t)).expect("backend");

    // 0 ms latency, cache off: the pipeline's own cost plus the in-process mock's; then the
    // bare backend on the same requests.
    let (mut off, mut off_bare) = (Vec::new(), Vec::new());
    for run in 0..RUNS {
        let requests = batch("bench", N, &format!("off{run}"));
        let make = || pipeline(&fast, None, CacheMode::Off);
        off.push(N as f64 / timed(make, requests.clone(), false).await);
        off_bare.push(N as f64 / bare(backend(&fast), requests, CONCURRENCY).await);
    }

    // Cache on: first the writes, then the same batch again, all hits (no HTTP).
    let (mut writes, mut hits) = (Vec::new(), Vec::new());
    for run in 0..RUNS {
        let path = dir.path().join(format!("bench{run}.sqlite"));
        let requests = batch("bench", N, &format!("cache{run}"));
        let make = || {
            pipeline(
                &fast,
                Some(Cache::open(&path).unwrap()),
                CacheMode::ReadWrite,
            )
        };
        writes.push(N as f64 / timed(make, requests.clone(), false).await);
        let before = fast.stats().requests;
        hits.push(N as f64 / timed(make, requests, true).await);
        assert_eq!(fast.stats().requests, before);
    }

    // 200 ms latency at concurrency 16: the ideal is calls / 16 × 0.2 s.
    const SLOW: usize = 640;
    let latency = Duration::from_millis(200);
    let slow = MockServer::start(MockConfig {
        latency,
        ..MockConfig::default()
    })
    .await
    .unwrap();
    let ideal = SLOW as f64 / CONCURRENCY as f64 * latency.as_secs_f64();
    let (mut overheads, mut bare_overheads) = (Vec::new(), Vec::new());
    for run in 0..RUNS {
        let requests = batch("bench", SLOW, &format!("slow{run}"));
        let make = || pipeline(&slow, None, CacheMode::Off);
        overheads.push(timed(make, requests.clone(), false).await / ideal - 1.0);
        let wall = bare(backend(&slow), requests, CONCURRENCY).await;
        bare_overheads.push(wall / ideal - 1.0);
    }
    assert_eq!(slow.stats().max_in_flight, CONCURRENCY as u64);
    let overhead = median(overheads.clone());
    let per_call_ms = overhead * latency.as_secs_f64() * 1000.0;

    println!("judge pipeline throughput (median of {RUNS} runs, concurrency {CONCURRENCY})");
    println!("| measurement | result |");
    println!("|---|---|");
    for (what, rates) in [
        ("0 ms mock, cache off", off),
        ("0 ms mock, bare backend (no pipeline)", off_bare),
        ("0 ms mock, cache writes", writes),
        ("all cache hits (no HTTP)", hits),
    ] {
        println!("| {what}, {N} calls | {:.0} calls/s |", median(rates));
    }
    println!(
        "| 200 ms mock, {SLOW} calls | {:.3} s vs ideal {ideal:.3} s: overhead {:.2}% \
         ({per_call_ms:.2} ms per call); runs {:?} |",
        ideal * (1.0 + overhead),
        overhead * 100.0,
        percents(&overheads)
    );
    println!(
        "| 200 ms mock, bare backend (no pipeline) | overhead {:.2}%; runs {:?} |",
        median(bare_overheads.clone()) * 100.0,
        percents(&bare_overheads)
    );
}
