//! Throughput against the mock, for the record rather than as a gate: ignored by default.
//! Run with `cargo test -p rageval-judge --test it -- --ignored --nocapture throughput`.

use std::time::{Duration, Instant};

use rageval_judge::{Answer, Cache, CacheMode, JudgeConfig, JudgeError, LimiterConfig};
use rageval_testkit::{MockConfig, MockServer};

use crate::support::{Verdict, fast_retry, judge, request, settings};

fn limited(concurrency: usize, mode: CacheMode) -> JudgeConfig {
    JudgeConfig {
        limiter: LimiterConfig {
            max_concurrency: concurrency,
            min_concurrency: concurrency,
            ..LimiterConfig::default()
        },
        retry: fast_retry(),
        cache_mode: mode,
    }
}

fn batch(n: usize, tag: &str) -> Vec<rageval_judge::StructuredRequest> {
    (0..n)
        .map(|i| request("bench", &format!("Statement {tag}-{i} holds for item {i}.")))
        .collect()
}

fn all_ok(results: &[Result<Answer<Verdict>, JudgeError>]) -> bool {
    results.iter().all(Result::is_ok)
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "measurement, not a gate"]
async fn throughput() {
    const N: usize = 2000;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bench.sqlite");

    // 0 ms latency, no cache: the pipeline's own cost plus the mock's.
    let fast = MockServer::start(MockConfig::default()).await.unwrap();
    let j = judge(
        settings(&fast, Duration::from_secs(10)),
        None,
        limited(16, CacheMode::Off),
    );
    let start = Instant::now();
    let results = j.ask_all::<Verdict>(batch(N, "off")).await;
    let off = start.elapsed().as_secs_f64();
    assert!(all_ok(&results));

    // Cache writes, then cache hits (no HTTP).
    let j = judge(
        settings(&fast, Duration::from_secs(10)),
        Some(Cache::open(&path).unwrap()),
        limited(16, CacheMode::ReadWrite),
    );
    let start = Instant::now();
    assert!(all_ok(&j.ask_all::<Verdict>(batch(N, "cache")).await));
    let writes = start.elapsed().as_secs_f64();
    let before = fast.stats().requests;
    let start = Instant::now();
    let hits = j.ask_all::<Verdict>(batch(N, "cache")).await;
    let hit = start.elapsed().as_secs_f64();
    assert!(all_ok(&hits) && hits.iter().flatten().all(|a| a.cached));
    assert_eq!(fast.stats().requests, before);

    // 200 ms latency at concurrency 16: ideal = calls / 16 × 0.2 s.
    const SLOW: usize = 320;
    let slow = MockServer::start(MockConfig {
        latency: Duration::from_millis(200),
        ..MockConfig::default()
    })
    .await
    .unwrap();
    let j = judge(
        settings(&slow, Duration::from_secs(10)),
        None,
        limited(16, CacheMode::Off),
    );
    let start = Instant::now();
    assert!(all_ok(&j.ask_all::<Verdict>(batch(SLOW, "slow")).await));
    let wall = start.elapsed().as_secs_f64();
    let ideal = SLOW as f64 / 16.0 * 0.2;
    println!(
        "no cache, 0 ms: {:.0} calls/s ({N} in {off:.2}s); cache writes: {:.0} calls/s; \
         cache hits: {:.0} calls/s ({N} in {hit:.2}s); 200 ms x 16: {wall:.2}s vs ideal {ideal:.2}s \
         (overhead {:.1}%), max in flight {}",
        N as f64 / off,
        N as f64 / writes,
        N as f64 / hit,
        (wall / ideal - 1.0) * 100.0,
        slow.stats().max_in_flight
    );
}
