//! One call at a time: the ladder's rungs, what is retried and what is not, timeouts,
//! Retry-After, the cache and offline mode, headers, embeddings, cancellation.

use std::time::{Duration, Instant};

use rageval_judge::{
    Cache, CacheMode, Embedder, Judge, JudgeError, Rung, Sampling, SchemaMode, StructuredRequest,
};
use rageval_testkit::{MockConfig, MockServer, Reply};

use crate::support::{Canned, GOOD, Verdict, config, judge, request, scripted, settings};

const T: Duration = Duration::from_secs(5);

#[tokio::test]
async fn schema_driven_answer_arrives_direct_in_both_schema_modes() {
    let mock = MockServer::start(MockConfig::default()).await.unwrap();
    for mode in [SchemaMode::ResponseFormat, SchemaMode::InPrompt] {
        let mut s = settings(&mock, T);
        s.schema_mode = mode;
        let j = judge(s, None, config(CacheMode::Off));
        let answer = j
            .ask::<Verdict>(&request("t", "Item 7 is supported by the context."))
            .await
            .unwrap();
        assert_eq!(answer.rung, Rung::Direct, "{mode:?}");
        assert_eq!(answer.value.verdict, 1);
        assert_eq!(answer.value.reason, "Item 7 is supported by the context.");
        assert!(!answer.cached);
        assert!(answer.usage.prompt_tokens > 0 && answer.usage.completion_tokens > 0);
    }
}

#[tokio::test]
async fn in_prompt_mode_sends_no_response_format_and_writes_the_schema() {
    let mock = MockServer::start(scripted(|body, _| {
        let last = body["messages"][1]["content"].as_str().unwrap_or("");
        if body.get("response_format").is_none() && last.contains("\"required\"") {
            Reply::Content(GOOD.into())
        } else {
            Reply::Status(400, "schema missing from prompt".into())
        }
    }))
    .await
    .unwrap();
    let mut s = settings(&mock, T);
    s.schema_mode = SchemaMode::InPrompt;
    let j = judge(s, None, config(CacheMode::Off));
    let answer = j.ask::<Verdict>(&request("t", "x")).await.unwrap();
    assert_eq!(answer.rung, Rung::Direct);
}

#[tokio::test]
async fn sloppy_json_is_extracted_or_repaired() {
    let mock = MockServer::start(scripted(|body, _| {
        let material = body["messages"][1]["content"].as_str().unwrap_or("");
        Reply::Content(match material {
            "fenced" => format!("Here you go:\n```json\n{GOOD}\n```"),
            _ => r#"{"reason": "ok", "verdict": 1,}"#.into(),
        })
    }))
    .await
    .unwrap();
    let j = judge(settings(&mock, T), None, config(CacheMode::Off));
    let fenced = j.ask::<Verdict>(&request("t", "fenced")).await.unwrap();
    assert_eq!(fenced.rung, Rung::Extracted);
    let repaired = j.ask::<Verdict>(&request("t", "comma")).await.unwrap();
    assert_eq!(repaired.rung, Rung::Repaired);
    let counts = j.rung_counts()["t@1"];
    assert_eq!(
        (counts.extracted, counts.repaired, counts.total()),
        (1, 1, 2)
    );
}

#[tokio::test]
async fn reask_quotes_the_error_and_recovers() {
    let mock = MockServer::start(scripted(|body, _| {
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        match messages.len() {
            2 => Reply::Content(r#"{"reason": "r", "verdict": "yes"}"#.into()),
            4 => {
                let last = messages[3]["content"].as_str().unwrap_or("");
                let quoted = messages[2]["content"].as_str().unwrap_or("");
                if last.contains("at $.verdict: expected integer") && quoted.contains("yes") {
                    Reply::Content(GOOD.into())
                } else {
                    Reply::Status(400, "re-ask did not quote the error".into())
                }
            }
            _ => Reply::Status(400, "unexpected conversation".into()),
        }
    }))
    .await
    .unwrap();
    let j = judge(settings(&mock, T), None, config(CacheMode::Off));
    let answer = j.ask::<Verdict>(&request("t", "x")).await.unwrap();
    assert_eq!(answer.rung, Rung::Reasked);
    assert_eq!(answer.raw, GOOD);
    assert_eq!(mock.stats().chat_requests, 2);
    // Usage covers both calls.
    assert!(answer.usage.completion_tokens >= 2 * 5);
}

#[tokio::test]
async fn a_second_failure_keeps_the_raw_text() {
    let mock = MockServer::start(scripted(|_, _| Reply::Content("no idea, sorry".into())))
        .await
        .unwrap();
    let j = judge(settings(&mock, T), None, config(CacheMode::Off));
    let err = j.ask::<Verdict>(&request("t", "x")).await.unwrap_err();
    assert!(matches!(err, JudgeError::Unparsed { .. }), "{err}");
    assert_eq!(err.raw_text(), Some("no idea, sorry"));
    assert_eq!(j.rung_counts()["t@1"].failed, 1);
    // Ask and re-ask, then one fresh climb: ask and re-ask again.
    assert_eq!(mock.stats().chat_requests, 4);
}

/// A model whose answers repeat (the embedded GGUF judge) is not asked the failed climb
/// again: ask and re-ask only, half the calls (and, on two cores, half the minutes).
#[tokio::test]
async fn a_model_whose_answers_repeat_gets_no_fresh_climb() {
    // A local model decoding greedily: the same request, the same garbage.
    let j = Judge::new(
        Canned::new("greedy", "no idea, sorry", true),
        None,
        config(CacheMode::Off),
    );
    let err = j.ask::<Verdict>(&request("t", "x")).await.unwrap_err();
    assert!(matches!(err, JudgeError::Unparsed { .. }), "{err}");
    assert_eq!(j.rung_counts()["t@1"].failed, 1);
    assert_eq!(j.model().calls(), 2, "ask and re-ask");
}

#[tokio::test]
async fn a_failed_climb_is_not_cached_and_a_fresh_one_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::open(dir.path().join("c.sqlite")).unwrap();
    // Garbage for the first two calls (ask and re-ask), then good answers.
    let mock = MockServer::start(scripted(|_, n| {
        if n < 2 {
            Reply::Content("no idea, sorry".into())
        } else {
            Reply::Content(GOOD.into())
        }
    }))
    .await
    .unwrap();
    let j = judge(
        settings(&mock, T),
        Some(cache.clone()),
        config(CacheMode::ReadWrite),
    );
    let answer = j.ask::<Verdict>(&request("t", "x")).await.unwrap();
    assert_eq!(answer.raw, GOOD);
    assert_eq!(mock.stats().chat_requests, 3);
    // Only the parsed answer was stored: a replay answers directly from the cache.
    assert_eq!(cache.len().await.unwrap(), 1);
    let again = j.ask::<Verdict>(&request("t", "x")).await.unwrap();
    assert!(again.cached);
    assert_eq!(mock.stats().chat_requests, 3);
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    for status in [400u16, 401, 403, 404] {
        let mock = MockServer::start(scripted(move |_, _| {
            Reply::Status(status, format!("nope {status}\nsecond line"))
        }))
        .await
        .unwrap();
        let j = judge(settings(&mock, T), None, config(CacheMode::Off));
        let err = j.ask::<Verdict>(&request("t", "x")).await.unwrap_err();
        assert_eq!(mock.stats().chat_requests, 1, "{status} was retried");
        let shown = err.to_string();
        assert!(
            shown.contains(&format!("answered http {status}: nope {status}")),
            "{shown}"
        );
        assert!(!shown.contains("second line"), "{shown}");
        assert!(shown.contains("127.0.0.1"), "{shown}");
        assert_eq!(j.rung_counts()["t@1"].errored, 1);
    }
}

#[tokio::test]
async fn server_errors_are_retried_until_an_answer() {
    let mock = MockServer::start(scripted(|_, n| match n {
        0 | 1 => Reply::Status(503, "busy".into()),
        _ => Reply::Content(GOOD.into()),
    }))
    .await
    .unwrap();
    let j = judge(settings(&mock, T), None, config(CacheMode::Off));
    let answer = j.ask::<Verdict>(&request("t", "x")).await.unwrap();
    assert_eq!(answer.rung, Rung::Direct);
    assert_eq!(mock.stats().chat_requests, 3);
    assert_eq!(j.stats().retries, 2);
}

#[tokio::test]
async fn retries_give_up_with_the_last_error() {
    let mock = MockServer::start(scripted(|_, _| Reply::Status(500, "down".into())))
        .await
        .unwrap();
    let j = judge(settings(&mock, T), None, config(CacheMode::Off));
    let err = j.ask::<Verdict>(&request("t", "x")).await.unwrap_err();
    assert!(
        matches!(err, JudgeError::RetriesExhausted { attempts: 8, .. }),
        "{err}"
    );
    assert_eq!(mock.stats().chat_requests, 8);
}

#[tokio::test]
async fn retry_after_is_honoured() {
    let mut mock_config = scripted(|_, n| match n {
        0 => Reply::Status(429, "slow down".into()),
        _ => Reply::Content(GOOD.into()),
    });
    mock_config.retry_after = Duration::from_millis(300);
    let mock = MockServer::start(mock_config).await.unwrap();
    let j = judge(settings(&mock, T), None, config(CacheMode::Off));
    let start = Instant::now();
    j.ask::<Verdict>(&request("t", "x")).await.unwrap();
    assert!(
        start.elapsed() >= Duration::from_millis(300),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(j.stats().limit_cuts, 1);
}

#[tokio::test]
async fn a_hang_times_out_per_call_and_is_retried() {
    let mut mock_config = scripted(|_, n| {
        if n == 0 {
            Reply::Hang
        } else {
            Reply::Content(GOOD.into())
        }
    });
    mock_config.hang = Duration::from_secs(30);
    let mock = MockServer::start(mock_config).await.unwrap();
    let j = judge(
        settings(&mock, Duration::from_millis(150)),
        None,
        config(CacheMode::Off),
    );
    let start = Instant::now();
    let answer = j.ask::<Verdict>(&request("t", "x")).await.unwrap();
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(150) && took < Duration::from_secs(5),
        "{took:?}"
    );
    assert_eq!(answer.rung, Rung::Direct);
    assert_eq!(j.stats().attempts, 2);

    let mut always = scripted(|_, _| Reply::Hang);
    always.hang = Duration::from_secs(30);
    let mock = MockServer::start(always).await.unwrap();
    let mut once = config(CacheMode::Off);
    once.retry.max_attempts = 1;
    let j = judge(settings(&mock, Duration::from_millis(100)), None, once);
    let err = j.ask::<Verdict>(&request("t", "x")).await.unwrap_err();
    assert!(matches!(err, JudgeError::Timeout { .. }), "{err}");
    assert!(err.to_string().contains("no answer within 0.1 s"), "{err}");
}

/// Issue 40 item 1: a judge that never answers, or whose body never ends, is halted after
/// a few requests that got no answer, whatever each call's retries: the calls in flight and
/// queued end at once with the halt, within a few timeouts. The elapsed time is an upper
/// bound far above the expected (about 0.6 s), never a sleep.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue_40_1_a_silent_or_trickling_judge_is_halted_within_a_few_timeouts() {
    for reply in [Reply::Hang, Reply::Trickle] {
        let scripted_reply = reply.clone();
        let mut silent = scripted(move |_, _| scripted_reply.clone());
        silent.hang = Duration::from_secs(3600);
        let mock = MockServer::start(silent).await.unwrap();
        let mut halting = config(CacheMode::Off);
        halting.halt_after = Some(rageval_judge::health::DEFAULT_HALT_AFTER);
        let j = judge(settings(&mock, Duration::from_millis(200)), None, halting);
        let calls: Vec<_> = (0..20)
            .map(|i| request("t", &format!("Item {i} holds.")))
            .collect();
        let start = Instant::now();
        let results = j.ask_all::<Verdict>(calls).await;
        let took = start.elapsed();
        assert!(took < Duration::from_secs(10), "{reply:?}: took {took:?}");
        let halt = j.halted().expect("halted");
        assert_eq!(halt.reason, rageval_judge::health::HaltReason::Silent);
        assert!(
            halt.to_string().contains("no answer within 0.2 s"),
            "{halt}"
        );
        for result in results {
            assert!(result.is_err_and(|e| e.is_stop()), "{reply:?}");
        }
        // About one request per call (they start together), then the halt: not every
        // call's eight attempts (160 requests).
        assert!(j.stats().attempts < 40, "{reply:?}: {:?}", j.stats());
    }
}

#[tokio::test]
async fn cache_hits_skip_http_and_offline_misses_fail_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("judge-cache.sqlite");
    let mock = MockServer::start(MockConfig::default()).await.unwrap();
    let cache = Cache::open(&path).unwrap();
    let j = judge(
        settings(&mock, T),
        Some(cache.clone()),
        config(CacheMode::ReadWrite),
    );
    let first = j
        .ask::<Verdict>(&request("t", "Item 1 holds."))
        .await
        .unwrap();
    let second = j
        .ask::<Verdict>(&request("t", "Item 1 holds."))
        .await
        .unwrap();
    assert!(!first.cached && second.cached);
    assert_eq!(
        (first.value, first.raw, first.usage),
        (second.value, second.raw, second.usage)
    );
    assert_eq!(mock.stats().chat_requests, 1);
    assert_eq!(j.stats().cache_hits, 1);

    // A different template version or sampling is a different key.
    let mut bumped = request("t", "Item 1 holds.");
    bumped.template.version = 2;
    let mut warmer = request("t", "Item 1 holds.");
    warmer.sampling = Sampling {
        temperature: Some(0.7),
        ..Sampling::default()
    };
    let offline = judge(
        settings(&mock, T),
        Some(Cache::open(&path).unwrap()),
        config(CacheMode::Offline),
    );
    assert!(
        offline
            .ask::<Verdict>(&request("t", "Item 1 holds."))
            .await
            .unwrap()
            .cached
    );
    for miss in [bumped, warmer, request("t", "Item 2 holds.")] {
        let err = offline.ask::<Verdict>(&miss).await.unwrap_err();
        assert!(matches!(err, JudgeError::OfflineMiss { .. }), "{err}");
        assert!(
            err.to_string()
                .starts_with("offline: no cached answer for t@"),
            "{err}"
        );
    }
    assert_eq!(mock.stats().chat_requests, 1);
    assert_eq!(cache.len().await.unwrap(), 1);
}

#[tokio::test]
async fn key_and_extra_headers_are_sent() {
    let mock = MockServer::start(MockConfig {
        api_key: Some("sk-mock-key".into()),
        require_header: Some(("x-tenant".into(), "acme".into())),
        ..MockConfig::default()
    })
    .await
    .unwrap();
    let mut s = settings(&mock, T);
    s.api_key = Some(rageval_judge::ApiKey::new("sk-mock-key"));
    s.extra_headers = vec![("X-Tenant".into(), "acme".into())];
    let j = judge(s.clone(), None, config(CacheMode::Off));
    assert!(j.ask::<Verdict>(&request("t", "x")).await.is_ok());

    s.api_key = Some(rageval_judge::ApiKey::new("sk-wrong"));
    let j = judge(s, None, config(CacheMode::Off));
    let err = j.ask::<Verdict>(&request("t", "y")).await.unwrap_err();
    assert!(err.to_string().contains("http 401"), "{err}");
    assert_eq!(mock.stats().status_counts.get(&401), Some(&1));
}

#[tokio::test]
async fn embedder_returns_one_unit_vector_per_input() {
    let mock = MockServer::start(MockConfig {
        embedding_dim: 16,
        ..MockConfig::default()
    })
    .await
    .unwrap();
    let backend = rageval_judge::OpenAiBackend::new(settings(&mock, T)).unwrap();
    let inputs = vec![
        "alpha".to_string(),
        "beta".to_string(),
        "Alpha ".to_string(),
    ];
    let vectors = backend.embed(&inputs).await.unwrap();
    assert_eq!(vectors.len(), 3);
    for v in &vectors {
        assert_eq!(v.len(), 16);
        let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4);
    }
    assert_eq!(vectors[0], vectors[2]);
    assert_ne!(vectors[0], vectors[1]);
}

#[tokio::test]
async fn a_cancelled_call_leaves_the_cache_usable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.sqlite");
    let mock = MockServer::start(MockConfig {
        latency: Duration::from_millis(200),
        ..MockConfig::default()
    })
    .await
    .unwrap();
    let j = judge(
        settings(&mock, T),
        Some(Cache::open(&path).unwrap()),
        config(CacheMode::ReadWrite),
    );
    let req: StructuredRequest = request("t", "Item 9 holds.");
    let cut = tokio::time::timeout(Duration::from_millis(50), j.ask::<Verdict>(&req)).await;
    assert!(cut.is_err(), "should have been cancelled");
    let answer = j.ask::<Verdict>(&req).await.unwrap();
    assert!(!answer.cached);
    let again = j.ask::<Verdict>(&req).await.unwrap();
    assert!(again.cached);
    assert_eq!(Cache::open(&path).unwrap().len().await.unwrap(), 1);
    // The cancelled call counts nowhere: only the two finished ones.
    assert_eq!(j.rung_counts()["t@1"].total(), 2);
}

#[tokio::test]
async fn cache_hits_skip_the_rate_limiter() {
    let dir = tempfile::tempdir().unwrap();
    let mock = MockServer::start(MockConfig::default()).await.unwrap();
    // One request per minute: after the first call, a second HTTP call would wait a minute.
    let mut slow = config(CacheMode::ReadWrite);
    slow.limiter.requests_per_minute = Some(1);
    let cache = Cache::open(dir.path().join("nested/dir/c.sqlite")).unwrap();
    let j = judge(settings(&mock, T), Some(cache), slow);
    j.ask::<Verdict>(&request("t", "Item 3 holds."))
        .await
        .unwrap();
    let start = Instant::now();
    for _ in 0..50 {
        assert!(
            j.ask::<Verdict>(&request("t", "Item 3 holds."))
                .await
                .unwrap()
                .cached
        );
    }
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(mock.stats().chat_requests, 1);
}

#[tokio::test]
async fn embeddings_go_through_cache_and_offline_like_chat() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("e.sqlite");
    let mock = MockServer::start(MockConfig {
        embedding_dim: 4,
        ..MockConfig::default()
    })
    .await
    .unwrap();
    let j = judge(
        settings(&mock, T),
        Some(Cache::open(&path).unwrap()),
        config(CacheMode::ReadWrite),
    );
    let words = |ws: &[&str]| ws.iter().map(|w| w.to_string()).collect::<Vec<_>>();
    let first = j.embed(&words(&["a", "b", "c"])).await.unwrap();
    assert_eq!((first.vectors.len(), first.cached), (3, 0));
    let second = j.embed(&words(&["c", "d", "a"])).await.unwrap();
    assert_eq!(second.cached, 2);
    assert_eq!(second.vectors[0], first.vectors[2]);
    assert_eq!(second.vectors[2], first.vectors[0]);
    let seen = mock.stats();
    assert_eq!((seen.embedding_requests, seen.embedding_inputs), (2, 4));

    let offline = judge(
        settings(&mock, T),
        Some(Cache::open(&path).unwrap()),
        config(CacheMode::Offline),
    );
    assert_eq!(offline.embed(&words(&["d", "b"])).await.unwrap().cached, 2);
    let err = offline.embed(&words(&["e"])).await.unwrap_err();
    assert!(matches!(err, JudgeError::OfflineMiss { .. }), "{err}");
    assert_eq!(mock.stats().embedding_requests, 2);
}

#[tokio::test]
async fn a_server_rejecting_json_schema_gets_the_schema_in_the_prompt() {
    let mock = MockServer::start(scripted(|body, _| {
        if body.get("response_format").is_some() {
            Reply::Status(
                400,
                r#"{"error": {"message": "This response_format type is unavailable now"}}"#.into(),
            )
        } else {
            Reply::Content(GOOD.into())
        }
    }))
    .await
    .unwrap();
    let j = judge(settings(&mock, T), None, config(CacheMode::Off));
    let answer = j.ask::<Verdict>(&request("t", "x")).await.unwrap();
    assert_eq!(answer.rung, Rung::Direct);
    assert_eq!(mock.stats().chat_requests, 2);
    // Remembered: the next call goes straight to the prompt form.
    j.ask::<Verdict>(&request("t", "y")).await.unwrap();
    assert_eq!(mock.stats().chat_requests, 3);
    assert_eq!(j.stats().schema_fallbacks, 1);
}
