//! The done-criterion: 500 structured calls under 10% 500s, 10% 429s, 5% hangs and 10%
//! garbage all end answered or failed with a reason — none lost, none duplicated — the rung
//! counts add up, and an offline replay makes no request and returns the same results.

use std::time::{Duration, Instant};

use rageval_judge::{Answer, Cache, CacheMode, JudgeError};
use rageval_testkit::{MockConfig, MockServer};

use crate::support::{Verdict, config, judge, request, settings};

const CALLS: usize = 500;
const TEMPLATES: [&str; 3] = ["support", "relevance", "usefulness"];

fn requests() -> Vec<rageval_judge::StructuredRequest> {
    (0..CALLS)
        .map(|i| {
            request(
                TEMPLATES[i % TEMPLATES.len()],
                &format!("Statement {i} is about item {i}. Context {i} mentions item {i}."),
            )
        })
        .collect()
}

type Results = Vec<Result<Answer<Verdict>, JudgeError>>;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_hundred_calls_under_faults_then_an_identical_offline_replay() {
    let mock = MockServer::start(MockConfig {
        seed: 7,
        fail_rate: 0.10,
        rate_limit_rate: 0.10,
        hang_rate: 0.05,
        garbage_rate: 0.10,
        retry_after: Duration::from_millis(20),
        hang: Duration::from_secs(10),
        ..MockConfig::default()
    })
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cache.sqlite");
    // Long enough that no answer the server sends is abandoned on a loaded machine (the
    // server would count a 200 the client never booked); hangs (10 s) still time out.
    let timeout = Duration::from_millis(1500);

    let online = judge(
        settings(&mock, timeout),
        Some(Cache::open(&path).unwrap()),
        config(CacheMode::ReadWrite),
    );
    let start = Instant::now();
    let first: Results = online.ask_all(requests()).await;
    let online_wall = start.elapsed();

    // Every call ended, in order, with its own answer or a reason.
    assert_eq!(first.len(), CALLS);
    let (mut answered, mut failed) = (0, 0);
    for (i, result) in first.iter().enumerate() {
        match result {
            Ok(answer) => {
                answered += 1;
                assert!(
                    answer.value.reason.contains(&format!("{i}")),
                    "call {i} got {:?}",
                    answer.value
                );
            }
            Err(err) => {
                failed += 1;
                assert!(!err.to_string().is_empty());
                assert!(
                    matches!(err, JudgeError::Unparsed { .. }),
                    "call {i}: {err}"
                );
            }
        }
    }

    // The rung counts add up, per template and overall.
    let counts = online.rung_counts();
    let total: u64 = counts.values().map(|c| c.total()).sum();
    assert_eq!(total, CALLS as u64);
    for template in TEMPLATES {
        let expected = (0..CALLS).filter(|i| TEMPLATES[i % 3] == template).count() as u64;
        assert_eq!(
            counts[&format!("{template}@1")].total(),
            expected,
            "{template}"
        );
    }
    let failed_rungs: u64 = counts.values().map(|c| c.failed + c.errored).sum();
    assert_eq!(failed_rungs, failed as u64);
    let reasked: u64 = counts.values().map(|c| c.reasked).sum();
    let repaired: u64 = counts.values().map(|c| c.repaired).sum();
    assert!(reasked > 0, "garbage should force re-asks: {counts:?}");

    // The server saw each attempt once: no lost or duplicated requests.
    let seen = mock.stats();
    let stats = online.stats();
    assert_eq!(seen.chat_requests, stats.attempts, "{seen:?} vs {stats:?}");
    assert_eq!(stats.deduplicated, 0, "no two calls were identical");
    // The injected mix is the one asked for (10% 500s, 10% 429s, 5% hangs, 10% garbage),
    // give or take the draw.
    let share = |n: u64| n as f64 / seen.chat_requests as f64;
    for (name, got, want) in [
        ("500", share(seen.faults.fail), 0.10),
        ("429", share(seen.faults.rate_limit), 0.10),
        ("hang", share(seen.faults.hang), 0.05),
        ("garbage", share(seen.faults.garbage), 0.10),
    ] {
        assert!((want * 0.6..want * 1.4).contains(&got), "{name}: {got:.3}");
    }
    assert_eq!(
        seen.client_disconnects, seen.faults.hang,
        "every hang timed out"
    );
    assert!(stats.limit_cuts > 0);

    // The journal: every answered HTTP call was booked once, and stored once unless it
    // belonged to a climb of the ladder that never parsed (those are asked afresh next
    // time, never replayed): each such climb wasted at most two answers, at least one of
    // them garbage. The books match the server's own token counts.
    let answers_sent = seen.status_counts.get(&200).copied().unwrap_or(0);
    let usage = online.usage();
    assert_eq!(usage.total.calls, answers_sent);
    let rows = Cache::open(&path).unwrap().len().await.unwrap();
    assert_eq!(stats.cache_writes, rows);
    assert_eq!(stats.cache_write_errors, 0);
    assert!(
        rows <= answers_sent,
        "{rows} rows for {answers_sent} answers"
    );
    assert!(
        rows + 2 * seen.faults.garbage >= answers_sent,
        "{rows} rows for {answers_sent} answers and {} garbage",
        seen.faults.garbage
    );
    assert_eq!(
        (usage.total.prompt_tokens, usage.total.completion_tokens),
        (seen.prompt_tokens, seen.completion_tokens)
    );
    assert_eq!(usage.total.cached_calls, 0);

    // Offline replay from the same cache file: zero requests, identical results.
    let before = mock.stats().requests;
    let offline = judge(
        settings(&mock, timeout),
        Some(Cache::open(&path).unwrap()),
        config(CacheMode::Offline),
    );
    let start = Instant::now();
    let second: Results = offline.ask_all(requests()).await;
    let offline_wall = start.elapsed();
    assert_eq!(mock.stats().requests, before);
    assert_eq!(offline.stats().attempts, 0);
    for (i, (a, b)) in first.iter().zip(&second).enumerate() {
        match (a, b) {
            (Ok(a), Ok(b)) => {
                assert_eq!(
                    (&a.value, &a.raw, a.rung, a.usage),
                    (&b.value, &b.raw, b.rung, b.usage),
                    "call {i}"
                );
                assert!(b.cached);
            }
            // Nothing of a failed climb is cached, so a call that failed online is a miss
            // offline (and a later online run asks it afresh).
            (Err(_), Err(b)) => {
                assert!(matches!(b, JudgeError::OfflineMiss { .. }), "call {i}: {b}");
            }
            _ => panic!("call {i} differs: {a:?} vs {b:?}"),
        }
    }
    let replayed = offline.rung_counts();
    for (template, online_counts) in &counts {
        let offline_counts = replayed[template];
        assert_eq!(
            (
                offline_counts.direct + offline_counts.extracted + offline_counts.repaired,
                offline_counts.reasked,
                offline_counts.failed + offline_counts.errored,
            ),
            (
                online_counts.direct + online_counts.extracted + online_counts.repaired,
                online_counts.reasked,
                online_counts.failed + online_counts.errored,
            ),
            "{template}"
        );
    }
    // Offline, everything is a cached answer: nothing spent.
    let replayed_usage = offline.usage().total;
    assert_eq!((replayed_usage.calls, replayed_usage.cost_usd), (0, 0.0));
    println!(
        "faulty batch: {answered} answered, {failed} failed, {reasked} re-asked, {repaired} repaired; \
         {} attempts, {} retries, {} cuts; online {:.2}s, offline {:.2}s; mock {:?}, {} client hang-ups",
        stats.attempts,
        stats.retries,
        stats.limit_cuts,
        online_wall.as_secs_f64(),
        offline_wall.as_secs_f64(),
        seen.faults,
        seen.client_disconnects
    );
}

/// A list answer, whose truncation would still parse as a shorter list.
#[derive(Debug, serde::Deserialize)]
struct Listed {
    items: Vec<String>,
}

/// Regression: the mock's garbage fault cuts valid JSON in half about half the time; the
/// repair rung used to close such a cut list and return it as a complete, shorter answer.
/// Now a cut answer is re-asked, so every answer holds the mock's full 3 items.
#[tokio::test]
async fn truncated_json_from_the_mock_is_reasked_never_repaired() {
    let mock = MockServer::start(MockConfig {
        seed: 11,
        garbage_rate: 0.5,
        ..MockConfig::default()
    })
    .await
    .unwrap();
    let online = judge(
        settings(&mock, Duration::from_secs(5)),
        None,
        config(CacheMode::Off),
    );
    let schema = serde_json::json!({
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"type": "string"}}},
        "required": ["items"],
        "additionalProperties": false
    });
    let asks: Vec<_> = (0..60)
        .map(|i| {
            let mut ask = request(
                "list",
                &format!("Item {i} is one thing. Item {i} is another."),
            );
            ask.schema = schema.clone();
            ask
        })
        .collect();
    let results: Vec<Result<Answer<Listed>, JudgeError>> = online.ask_all(asks).await;
    for result in results.iter().flatten() {
        assert_eq!(
            result.value.items.len(),
            3,
            "{:?} from {:?}",
            result.value,
            result.raw
        );
    }
    let counts = online.rung_counts()["list@1"];
    assert_eq!(counts.repaired, 0, "{counts:?}");
    assert!(counts.reasked > 0, "{counts:?}");
    assert!(
        mock.stats().faults.garbage > 10,
        "{:?}",
        mock.stats().faults
    );
}
