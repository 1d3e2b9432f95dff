//! Several mock servers behind one `EndpointPool`: traffic by weight, away from endpoints
//! that fail, are slow or are down; one cache identity; and the pool built from a
//! `rageval.toml` text.

use std::path::Path;
use std::time::Duration;

use rageval_judge::config::{JudgeFlags, JudgeSettings};
use rageval_judge::{
    Cache, CacheMode, EndpointPool, EndpointSettings, Judge, LimiterConfig, OpenAiBackend,
    PoolEndpoint,
};
use rageval_testkit::{MockConfig, MockServer};

use crate::support::{Verdict, batch, config, judge, settings};

const T: Duration = Duration::from_secs(5);

fn member(mock: &MockServer, weight: f64, concurrency: usize) -> PoolEndpoint<OpenAiBackend> {
    PoolEndpoint {
        backend: OpenAiBackend::new(settings(mock, T)).expect("backend"),
        weight,
        limits: LimiterConfig {
            max_concurrency: concurrency,
            ..LimiterConfig::default()
        },
    }
}

fn pool_judge(
    members: Vec<PoolEndpoint<OpenAiBackend>>,
    cache: Option<Cache>,
    mode: CacheMode,
) -> Judge<EndpointPool> {
    let pool = EndpointPool::new("mock-chat", members).expect("pool");
    Judge::new(pool, cache, config(mode))
}

fn answered(mock: &MockServer) -> u64 {
    mock.stats().status_counts.get(&200).copied().unwrap_or(0)
}

async fn mock(config: MockConfig) -> MockServer {
    MockServer::start(config).await.expect("mock starts")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthy_endpoints_get_traffic_by_weight() {
    let (a, b) = (
        mock(MockConfig::default()).await,
        mock(MockConfig::default()).await,
    );
    // 8 calls in flight at most, 16 slots per endpoint: nobody is ever full, so the weights
    // alone decide (smooth weighted round-robin: exact shares when nothing fails).
    let pool = EndpointPool::new("mock-chat", vec![member(&a, 3.0, 16), member(&b, 1.0, 16)]);
    let mut eight = config(CacheMode::Off);
    eight.limiter.max_concurrency = 8;
    let j = Judge::new(pool.unwrap(), None, eight);
    let results = j.ask_all::<Verdict>(batch("w", 400, "w")).await;
    assert!(results.iter().all(Result::is_ok));
    assert_eq!(
        (a.stats().chat_requests, b.stats().chat_requests),
        (300, 100)
    );
    let health = j.model().health();
    assert!(health.iter().all(|h| h.up && h.failures == 0));

    // Saturated (64 in flight, 16 slots each), a full endpoint is skipped for one with
    // room: capacity, not weight, sets the shares.
    let mut wide = config(CacheMode::Off);
    wide.limiter.max_concurrency = 64;
    let pool = EndpointPool::new("mock-chat", vec![member(&a, 3.0, 16), member(&b, 1.0, 16)]);
    let j = Judge::new(pool.unwrap(), None, wide);
    assert!(
        j.ask_all::<Verdict>(batch("w", 400, "x"))
            .await
            .iter()
            .all(Result::is_ok)
    );
    let b_share = b.stats().chat_requests - 100;
    assert!(b_share > 100, "b got {b_share} of 400");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_endpoint_gets_less_traffic_and_a_dead_one_almost_none() {
    let flaky = mock(MockConfig {
        seed: 3,
        fail_rate: 0.4,
        latency: Duration::from_millis(5),
        ..MockConfig::default()
    })
    .await;
    let good = mock(MockConfig {
        latency: Duration::from_millis(5),
        ..MockConfig::default()
    })
    .await;
    // A port nobody listens on: connection refused.
    let dead_url = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!(
            "http://127.0.0.1:{}/v1",
            listener.local_addr().unwrap().port()
        )
    };
    let dead = PoolEndpoint {
        backend: OpenAiBackend::new(EndpointSettings::new(dead_url, "mock-chat")).unwrap(),
        weight: 1.0,
        limits: LimiterConfig::default(),
    };
    let j = pool_judge(
        vec![member(&flaky, 1.0, 16), member(&good, 1.0, 16), dead],
        None,
        CacheMode::Off,
    );
    let results = j.ask_all::<Verdict>(batch("f", 300, "f")).await;
    assert!(results.iter().all(Result::is_ok), "every call answered");
    let (from_flaky, from_good) = (answered(&flaky), answered(&good));
    assert_eq!(from_flaky + from_good, 300);
    assert!(
        from_good as f64 > 1.5 * from_flaky as f64,
        "good {from_good} vs flaky {from_flaky}"
    );
    let health = j.model().health();
    // Calls picked before the first refusal came back (up to a third of the 32 in flight
    // at the start) reach the dead endpoint; after three refusals it is down and gets at
    // most a probe or two.
    assert!(
        (3..=16).contains(&health[2].attempts),
        "dead endpoint got {} attempts",
        health[2].attempts
    );
    assert!(health[1].health > health[0].health);
    // Each endpoint keeps its own limiter: the judge's global limit was never cut.
    assert_eq!(j.stats().limit_cuts, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_endpoint_gets_fewer_calls_and_429s_cut_only_their_endpoint() {
    let fast = mock(MockConfig::default()).await;
    let slow = mock(MockConfig {
        latency: Duration::from_millis(300),
        ..MockConfig::default()
    })
    .await;
    let limited = mock(MockConfig {
        seed: 5,
        rate_limit_rate: 0.5,
        retry_after: Duration::from_secs(30),
        ..MockConfig::default()
    })
    .await;
    let j = pool_judge(
        vec![
            member(&fast, 1.0, 4),
            member(&slow, 1.0, 4),
            member(&limited, 1.0, 4),
        ],
        None,
        CacheMode::Off,
    );
    let results = j.ask_all::<Verdict>(batch("s", 200, "s")).await;
    assert!(results.iter().all(Result::is_ok));
    let (from_fast, from_slow) = (answered(&fast), answered(&slow));
    assert!(
        from_fast > 2 * from_slow,
        "fast {from_fast} vs slow {from_slow}"
    );
    // The 429s asked for a 30 s pause: the limited endpoint paused (and was cut), the
    // others carried on, and the batch never waited 30 s for it.
    let health = j.model().health();
    assert!(health[2].failures > 0);
    assert!(health[2].current_limit < 4, "{health:?}");
    assert_eq!(j.stats().limit_cuts, 0);
    assert!(answered(&limited) < 20, "{}", answered(&limited));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_are_cached_under_the_model_whichever_replica_gave_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pool.sqlite");
    let (a, b) = (
        mock(MockConfig::default()).await,
        mock(MockConfig::default()).await,
    );
    let j = pool_judge(
        vec![member(&a, 1.0, 8), member(&b, 1.0, 8)],
        Some(Cache::open(&path).unwrap()),
        CacheMode::ReadWrite,
    );
    let first = j.ask_all::<Verdict>(batch("c", 40, "c")).await;
    assert!(a.stats().chat_requests > 0 && b.stats().chat_requests > 0);
    // Replay offline through one plain endpoint of the same model: all from the cache.
    let single = judge(
        settings(&a, T),
        Some(Cache::open(&path).unwrap()),
        config(CacheMode::Offline),
    );
    let before = a.stats().requests + b.stats().requests;
    let second = single.ask_all::<Verdict>(batch("c", 40, "c")).await;
    assert_eq!(a.stats().requests + b.stats().requests, before);
    for (x, y) in first.iter().zip(&second) {
        let (x, y) = (x.as_ref().unwrap(), y.as_ref().unwrap());
        assert_eq!((&x.value, &x.raw), (&y.value, &y.raw));
        assert!(y.cached);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pool_built_from_rageval_toml_runs_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (
        mock(MockConfig::default()).await,
        mock(MockConfig {
            api_key: Some("sk-b-0123456789".into()),
            ..MockConfig::default()
        })
        .await,
    );
    let toml = format!(
        r#"
[judge]
model = "mock-chat"
timeout_secs = 5

[judge.cache]
path = "answers.sqlite"

[judge.limits]
concurrency = 4

[judge.caps]
max_calls = 1000

[[judge.endpoints]]
base_url = "{}"
weight = 1

[[judge.endpoints]]
base_url = "{}"
weight = 2
api_key_env = "B_KEY"
"#,
        a.base_url, b.base_url
    );
    let file = dir.path().join("rageval.toml");
    let lookup = |name: &str| (name == "B_KEY").then(|| "sk-b-0123456789".to_owned());
    let s =
        JudgeSettings::resolve_with(&JudgeFlags::default(), Some((&file, &toml)), lookup).unwrap();
    assert_eq!(
        s.cache_path.as_deref(),
        Some(dir.path().join("answers.sqlite").as_path())
    );
    let j = s.build().unwrap();
    let results = j.ask_all::<Verdict>(batch("t", 30, "t")).await;
    assert!(
        results.iter().all(Result::is_ok),
        "{:?}",
        results.iter().find(|r| r.is_err())
    );
    assert_eq!((a.stats().chat_requests, b.stats().chat_requests), (10, 20));
    assert!(Path::new(&dir.path().join("answers.sqlite")).is_file());
    assert_eq!(j.usage().total.calls, 30);
}
