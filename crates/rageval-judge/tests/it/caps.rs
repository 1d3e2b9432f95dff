//! Accounting and caps: tokens and cost per template, cached answers apart, and
//! `max_calls` / `max_cost_usd` refusing new calls cleanly while calls in flight finish.

use std::time::Duration;

use rageval_judge::{
    Budget, Cache, CacheMode, Cap, Judge, JudgeConfig, JudgeError, PriceTable, tokens,
};
use rageval_testkit::{MockConfig, MockServer};

use crate::support::{Canned, Verdict, batch, config, judge, request, settings};

const T: Duration = Duration::from_secs(5);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_calls_refuses_new_calls_while_calls_in_flight_finish() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.sqlite");
    let mock = MockServer::start(MockConfig {
        latency: Duration::from_millis(100),
        ..MockConfig::default()
    })
    .await
    .unwrap();
    let mut capped = config(CacheMode::ReadWrite);
    capped.budget.max_calls = Some(10);
    let j = judge(
        settings(&mock, T),
        Some(Cache::open(&path).unwrap()),
        capped.clone(),
    );
    let results = j.ask_all::<Verdict>(batch("cap", 30, "a")).await;
    let answered: Vec<usize> = (0..30).filter(|&i| results[i].is_ok()).collect();
    assert_eq!(answered.len(), 10);
    for result in results.iter().filter(|r| r.is_err()) {
        let err = result.as_ref().unwrap_err();
        assert!(err.is_stop(), "{err}");
        assert!(
            matches!(
                err,
                JudgeError::BudgetExhausted {
                    cap: Cap::Calls(10),
                    ..
                }
            ),
            "{err}"
        );
    }
    // Exactly ten requests went out, every answer is kept, and none is on the ladder as a
    // failure.
    assert_eq!(mock.stats().chat_requests, 10);
    assert_eq!(Cache::open(&path).unwrap().len().await.unwrap(), 10);
    assert_eq!(j.rung_counts()["cap@1"].total(), 10);
    assert_eq!(j.usage().total.calls, 10);

    // A new run with the same cap: the ten cached answers are free, ten more are allowed.
    let again = judge(
        settings(&mock, T),
        Some(Cache::open(&path).unwrap()),
        capped,
    );
    let results = again.ask_all::<Verdict>(batch("cap", 30, "a")).await;
    assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 20);
    for &i in &answered {
        assert!(results[i].as_ref().unwrap().cached, "call {i}");
    }
    let usage = again.usage();
    assert_eq!((usage.total.calls, usage.total.cached_calls), (10, 10));
    assert_eq!(mock.stats().chat_requests, 20);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cost_is_booked_from_usage_and_the_cost_cap_stops_cleanly() {
    let mock = MockServer::start(MockConfig::default()).await.unwrap();
    let mut s = settings(&mock, T);
    s.model = "gpt-4o-mini".into();
    let price = PriceTable::builtin().get("gpt-4o-mini").unwrap();
    let j = judge(s.clone(), None, config(CacheMode::Off));
    let results = j.ask_all::<Verdict>(batch("cost", 50, "c")).await;
    assert!(results.iter().all(Result::is_ok));
    let seen = mock.stats();
    let usage = j.usage();
    let total = usage.total;
    assert_eq!(total.calls, 50);
    assert_eq!(
        (total.prompt_tokens, total.completion_tokens),
        (seen.prompt_tokens, seen.completion_tokens)
    );
    let expected = (seen.prompt_tokens as f64 * price.prompt_per_million
        + seen.completion_tokens as f64 * price.completion_per_million)
        / 1e6;
    assert!((usage.cost_usd().unwrap() - expected).abs() < 1e-12);
    assert_eq!(usage.templates["cost@1"], total);

    // A cap at a quarter of that cost stops the same batch part-way, under the cap.
    let mut prices = PriceTable::empty();
    prices.insert("gpt-4o-mini", price);
    let cap = expected / 4.0;
    let capped = JudgeConfig {
        budget: Budget {
            max_calls: None,
            max_cost_usd: Some(cap),
        },
        prices,
        ..config(CacheMode::Off)
    };
    let j = judge(s, None, capped);
    let results = j.ask_all::<Verdict>(batch("cost", 50, "d")).await;
    let ok = results.iter().filter(|r| r.is_ok()).count();
    assert!(ok > 0 && ok < 50, "{ok} answered");
    assert!(results.iter().all(|r| match r {
        Ok(_) => true,
        Err(e) => matches!(
            e,
            JudgeError::BudgetExhausted {
                cap: Cap::CostUsd(_),
                ..
            }
        ),
    }));
    let spent = j.usage().cost_usd().unwrap();
    assert!(spent <= cap, "spent {spent} over cap {cap}");
}

#[tokio::test]
async fn without_usage_from_the_server_tokens_are_counted_with_tiktoken() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("q.sqlite");
    let j = Judge::new(
        Canned::new(
            "gpt-4o",
            r#"{"reason": "hello world", "verdict": 1}"#,
            false,
        ),
        Some(Cache::open(&path).unwrap()),
        JudgeConfig::default(),
    );
    let answer = j
        .ask::<Verdict>(&request("q", "Item 1 holds."))
        .await
        .unwrap();
    let text = r#"{"reason": "hello world", "verdict": 1}"#;
    assert_eq!(
        answer.usage.completion_tokens,
        tokens::count_tokens("gpt-4o", text)
    );
    assert!(answer.usage.prompt_tokens > 10);
    let usage = j.usage();
    assert_eq!((usage.total.calls, usage.total.counted_calls), (1, 1));
    // The counted usage is stored with the answer: a replay reports the same tokens.
    let replay = j
        .ask::<Verdict>(&request("q", "Item 1 holds."))
        .await
        .unwrap();
    assert!(replay.cached);
    assert_eq!(replay.usage, answer.usage);
    let usage = j.usage().total;
    assert_eq!(usage.cached_calls, 1);
    assert_eq!(usage.cached_prompt_tokens, answer.usage.prompt_tokens);
    // gpt-4o is in the built-in table; cached answers add nothing to the cost.
    let price = PriceTable::builtin().get("gpt-4o").unwrap();
    assert_eq!(j.usage().cost_usd(), Some(price.cost_usd(answer.usage)));
}
