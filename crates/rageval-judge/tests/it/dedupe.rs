//! Single flight: identical calls in flight together make one request, with the cache on
//! or off; later identical calls go to the cache (on) or make a new request (off).

use std::time::Duration;

use rageval_judge::{Cache, CacheMode};
use rageval_testkit::{MockConfig, MockServer};

use crate::support::{Verdict, config, judge, request, settings};

const T: Duration = Duration::from_secs(5);

async fn slow_mock() -> MockServer {
    MockServer::start(MockConfig {
        latency: Duration::from_millis(150),
        ..MockConfig::default()
    })
    .await
    .expect("mock starts")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_duplicates_make_one_request_with_the_cache_off() {
    let mock = slow_mock().await;
    let j = judge(settings(&mock, T), None, config(CacheMode::Off));
    let same = vec![request("d", "Item 4 holds."); 10];
    let results = j.ask_all::<Verdict>(same.clone()).await;
    assert_eq!(mock.stats().chat_requests, 1);
    let first = results[0].as_ref().unwrap();
    for result in &results {
        let answer = result.as_ref().unwrap();
        assert_eq!((&answer.value, &answer.raw), (&first.value, &first.raw));
    }
    assert_eq!(j.stats().deduplicated, 9);
    let usage = j.usage().templates["d@1"];
    assert_eq!((usage.calls, usage.shared_calls), (1, 9));
    assert_eq!(j.rung_counts()["d@1"].total(), 10);

    // Not concurrent any more: without a cache, a new request.
    j.ask::<Verdict>(&same[0]).await.unwrap();
    assert_eq!(mock.stats().chat_requests, 2);

    // Different requests are never merged.
    let distinct: Vec<_> = (0..5)
        .map(|i| request("d", &format!("Item {i} differs.")))
        .collect();
    j.ask_all::<Verdict>(distinct).await;
    assert_eq!(mock.stats().chat_requests, 7);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_duplicates_make_one_request_then_hit_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let mock = slow_mock().await;
    let cache = Cache::open(dir.path().join("d.sqlite")).unwrap();
    let j = judge(
        settings(&mock, T),
        Some(cache.clone()),
        config(CacheMode::ReadWrite),
    );
    let mut requests = vec![request("d", "Item 5 holds."); 6];
    requests.extend(vec![request("d", "Item 6 holds."); 6]);
    let results = j.ask_all::<Verdict>(requests).await;
    assert!(results.iter().all(Result::is_ok));
    assert_eq!(mock.stats().chat_requests, 2);
    assert_eq!(cache.len().await.unwrap(), 2);
    assert_eq!(j.stats().cache_writes, 2);
    let later = j
        .ask::<Verdict>(&request("d", "Item 5 holds."))
        .await
        .unwrap();
    assert!(later.cached);
    assert_eq!(mock.stats().chat_requests, 2);
}
