//! Batch jobs against the mock: the client's round trip (upload, create, poll, download),
//! files split at the limits, per-request failures, expired, cancelled and failed jobs as
//! typed errors per request, and `BatchModel` passes that end with the same answers, the
//! same cache entries and half the cost of the synchronous path.

use std::collections::BTreeMap;
use std::time::Duration;

use rageval_judge::batch::{
    Batch, BatchItem, BatchLimits, BatchOptions, BatchRequest, BatchStatus, FailedItems,
    ItemOutcome, PollPolicy, read_output_file, split_requests, write_request_files,
};
use rageval_judge::{
    Answer, BatchClient, BatchModel, BatchStore, Cache, CacheMode, ChatModel, ChatRequest,
    EndpointSettings, Judge, JudgeConfig, JudgeError, Message, OpenAiBackend, PriceTable, Sampling,
    StructuredRequest,
};
use rageval_testkit::{MockBatchConfig, MockConfig, MockServer, Reply};

use crate::support::{GOOD, Verdict, batch, config, last_user_text, request, scripted, settings};

const T: Duration = Duration::from_secs(5);

fn poll() -> PollPolicy {
    PollPolicy {
        first: Duration::from_millis(2),
        max: Duration::from_millis(10),
    }
}

fn client(mock: &MockServer) -> BatchClient {
    BatchClient::new(settings(mock, T))
        .expect("client")
        .with_retry(crate::support::fast_retry())
}

fn chat_request(text: &str) -> ChatRequest {
    ChatRequest {
        messages: vec![Message::user(text)],
        sampling: Sampling::default(),
        response_schema: None,
    }
}

/// A judge in batch mode over the endpoint, answering from `store`.
fn batch_judge(
    endpoint: EndpointSettings,
    store: &BatchStore,
    options: BatchOptions,
    cache: Option<Cache>,
    config: JudgeConfig,
) -> Judge<BatchModel<OpenAiBackend>> {
    let backend = OpenAiBackend::new(endpoint).expect("backend");
    let model = BatchModel::with_options(backend, store.clone(), options);
    Judge::new(model, cache, config)
}

/// A mock whose jobs answer `answered` requests each, then expire.
async fn expiring_mock(answered: usize) -> MockServer {
    let batch = MockBatchConfig {
        expire_after_requests: Some(answered),
        ..MockBatchConfig::default()
    };
    let config = MockConfig {
        batch,
        ..MockConfig::default()
    };
    MockServer::start(config).await.expect("mock")
}

/// `n` batch lines `r0`, `r1`, ... asking about `Item 0.`, `Item 1.`, ...
fn item_requests(n: usize) -> Vec<BatchRequest> {
    (0..n)
        .map(|i| {
            let chat = chat_request(&format!("Item {i}."));
            BatchRequest::chat(format!("r{i}"), "mock-chat", &chat)
        })
        .collect()
}

/// Uploads, creates and waits for one job per file; returns each finished job, the states
/// its callback saw, and the answers of all jobs.
async fn run_jobs(
    client: &BatchClient,
    requests: &[BatchRequest],
    limits: &BatchLimits,
) -> (Vec<(Batch, Vec<BatchStatus>)>, Vec<BatchItem>) {
    let mut jobs = Vec::new();
    let mut items = Vec::new();
    for (index, file) in split_requests(requests, limits)
        .expect("split")
        .iter()
        .enumerate()
    {
        let uploaded = client
            .upload(&format!("part-{index}.jsonl"), &file.jsonl)
            .await
            .expect("upload");
        assert_eq!(uploaded.bytes, file.jsonl.len() as u64);
        let metadata = BTreeMap::from([("part".to_owned(), index.to_string())]);
        let created = client
            .create(&uploaded.id, &metadata)
            .await
            .expect("create");
        let mut seen = Vec::new();
        let done = client
            .wait(&created.id, &poll(), |b| seen.push(b.status))
            .await
            .expect("wait");
        assert_eq!(done.metadata, Some(metadata));
        items.extend(
            client
                .results(&done, &file.custom_ids)
                .await
                .expect("results"),
        );
        jobs.push((done, seen));
    }
    (jobs, items)
}

/// Passes of `judge.ask_all` until nothing is pending, each pending set answered by batch
/// jobs; returns the last pass's results and the number of batch rounds.
async fn batch_passes<M: ChatModel>(
    judge: &Judge<M>,
    store: &BatchStore,
    client: &BatchClient,
    requests: &[StructuredRequest],
) -> (Vec<Result<Answer<Verdict>, JudgeError>>, usize) {
    let mut rounds = 0;
    loop {
        let results = judge.ask_all::<Verdict>(requests.to_vec()).await;
        let pending = store.take_pending();
        if pending.is_empty() {
            return (results, rounds);
        }
        rounds += 1;
        assert!(rounds < 10, "passes never settle");
        let (_, items) = run_jobs(client, &pending, &BatchLimits::default()).await;
        store.load(items);
    }
}

#[tokio::test]
async fn round_trip_answers_every_request_like_the_synchronous_endpoint() {
    let mock = MockServer::start(MockConfig::default()).await.unwrap();
    let sync = OpenAiBackend::new(settings(&mock, T)).unwrap();
    let chats: Vec<ChatRequest> = (0..25)
        .map(|i| chat_request(&format!("Statement {i} holds.")))
        .collect();
    let requests: Vec<BatchRequest> = chats
        .iter()
        .enumerate()
        .map(|(i, chat)| BatchRequest::chat(format!("r{i:02}"), "mock-chat", chat))
        .collect();
    let limits = BatchLimits {
        max_requests_per_file: 10,
        ..BatchLimits::default()
    };
    let client = client(&mock);
    let (jobs, items) = run_jobs(&client, &requests, &limits).await;
    assert_eq!(jobs.len(), 3, "25 requests at 10 per file");
    let order = [
        BatchStatus::Validating,
        BatchStatus::InProgress,
        BatchStatus::Finalizing,
        BatchStatus::Completed,
    ];
    for (job, seen) in &jobs {
        assert_eq!(job.status, BatchStatus::Completed);
        assert_eq!(job.request_counts.completed, job.request_counts.total);
        assert!(job.error_file_id.is_none());
        // States arrive in order; the last is the terminal one.
        let ranks: Vec<usize> = seen
            .iter()
            .map(|s| order.iter().position(|o| o == s).unwrap())
            .collect();
        assert!(ranks.windows(2).all(|w| w[0] <= w[1]), "{seen:?}");
        assert_eq!(seen.last(), Some(&BatchStatus::Completed));
    }
    assert_eq!(items.len(), 25);
    for (i, chat) in chats.iter().enumerate() {
        let item = items
            .iter()
            .find(|it| it.custom_id == format!("r{i:02}"))
            .unwrap();
        let expected = sync.chat(chat).await.unwrap();
        assert_eq!(item.outcome, ItemOutcome::Answered(expected), "r{i:02}");
    }
    let stats = mock.stats();
    assert_eq!(
        (
            stats.files_uploaded,
            stats.batches_created,
            stats.batch_requests_answered
        ),
        (3, 3, 25)
    );
    assert_eq!(stats.chat_requests, 25, "only the synchronous comparisons");
    let page = client.list(None, 2).await.unwrap();
    assert_eq!(page.data.len(), 2);
    assert!(page.has_more);
    assert_eq!(page.data[0].id, jobs[2].0.id, "newest first");
}

#[tokio::test]
async fn per_request_failures_land_in_the_error_file_typed() {
    let mock = MockServer::start(scripted(|body, _| {
        let text = last_user_text(body);
        if text.contains("flaky") {
            Reply::Status(503, "overloaded".into())
        } else if text.contains("reject") {
            Reply::Status(400, "response_format is not supported".into())
        } else {
            Reply::Content(GOOD.into())
        }
    }))
    .await
    .unwrap();
    let requests: Vec<BatchRequest> = ["fine", "flaky", "reject", "fine too"]
        .iter()
        .map(|t| BatchRequest::chat(*t, "mock-chat", &chat_request(t)))
        .collect();
    let (jobs, items) = run_jobs(&client(&mock), &requests, &BatchLimits::default()).await;
    let job = &jobs[0].0;
    assert_eq!(job.status, BatchStatus::Completed);
    assert_eq!(
        (job.request_counts.completed, job.request_counts.failed),
        (2, 2)
    );
    assert!(job.output_file_id.is_some() && job.error_file_id.is_some());
    let outcome = |id: &str| {
        items
            .iter()
            .find(|i| i.custom_id == id)
            .map(|i| i.outcome.clone())
            .unwrap()
    };
    assert!(matches!(outcome("fine"), ItemOutcome::Answered(a) if a.text == GOOD));
    let ItemOutcome::Failed(flaky) = outcome("flaky") else {
        panic!("a 503 fails")
    };
    assert!(flaky.resubmittable());
    let error = flaky.to_error("mock", "flaky");
    assert!(
        matches!(
            &error,
            JudgeError::BatchItem {
                status: Some(503),
                ..
            }
        ),
        "{error}"
    );
    let ItemOutcome::Failed(rejected) = outcome("reject") else {
        panic!("a 400 fails")
    };
    assert!(!rejected.resubmittable());
    let error = rejected.to_error("mock", "reject");
    assert!(
        matches!(&error, JudgeError::Status { status: 400, first_line, .. } if first_line.contains("response_format")),
        "{error}"
    );
    assert_eq!(mock.stats().batch_requests_failed, 2);
}

#[tokio::test]
async fn injected_faults_fail_the_same_requests_in_a_batch() {
    let mock = MockServer::start(MockConfig {
        seed: 4,
        fail_rate: 0.3,
        ..MockConfig::default()
    })
    .await
    .unwrap();
    let requests = item_requests(40);
    let (_, items) = run_jobs(&client(&mock), &requests, &BatchLimits::default()).await;
    let failed: Vec<&BatchItem> = items
        .iter()
        .filter(|i| matches!(&i.outcome, ItemOutcome::Failed(f) if f.status == Some(500)))
        .collect();
    let stats = mock.stats();
    assert_eq!(failed.len() as u64, stats.faults.fail);
    assert!(!failed.is_empty() && failed.len() < 40, "{}", failed.len());
    assert_eq!(items.len(), 40);
}

#[tokio::test]
async fn an_expired_job_answers_some_and_the_rest_expire() {
    let mock = expiring_mock(3).await;
    let requests = item_requests(8);
    let client = client(&mock);
    let (jobs, items) = run_jobs(&client, &requests, &BatchLimits::default()).await;
    let job = &jobs[0].0;
    assert_eq!(job.status, BatchStatus::Expired);
    let answered = items
        .iter()
        .filter(|i| matches!(i.outcome, ItemOutcome::Answered(_)))
        .count();
    assert_eq!(answered, 3);
    for item in items
        .iter()
        .filter(|i| matches!(i.outcome, ItemOutcome::Failed(_)))
    {
        let ItemOutcome::Failed(failure) = &item.outcome else {
            unreachable!()
        };
        assert_eq!(failure.code.as_deref(), Some("batch_expired"));
        assert!(failure.resubmittable());
    }
    // A request the files never mention is reported by the job's end state.
    let ghost = client.results(job, &["ghost".to_owned()]).await.unwrap();
    let ItemOutcome::Failed(failure) = &ghost.last().unwrap().outcome else {
        panic!("ghost is unanswered")
    };
    assert_eq!(failure.code.as_deref(), Some("batch_expired"));
}

#[tokio::test]
async fn a_cancelled_job_keeps_what_ran_and_cancels_the_rest() {
    let mock = MockServer::start(MockConfig {
        batch: MockBatchConfig {
            in_progress: Duration::from_secs(3),
            ..MockBatchConfig::default()
        },
        ..MockConfig::default()
    })
    .await
    .unwrap();
    let client = client(&mock);
    let requests = item_requests(6);
    let file = &split_requests(&requests, &BatchLimits::default()).unwrap()[0];
    let uploaded = client.upload("in.jsonl", &file.jsonl).await.unwrap();
    let created = client.create(&uploaded.id, &BTreeMap::new()).await.unwrap();
    assert_eq!(created.status, BatchStatus::Validating);
    tokio::time::sleep(Duration::from_millis(30)).await;
    let cancelling = client.cancel(&created.id).await.unwrap();
    assert_eq!(cancelling.status, BatchStatus::Cancelling);
    let done = client.wait(&created.id, &poll(), |_| {}).await.unwrap();
    assert_eq!(done.status, BatchStatus::Cancelled);
    let items = client.results(&done, &file.custom_ids).await.unwrap();
    assert_eq!(items.len(), 6);
    let cancelled = items
        .iter()
        .filter(|i| matches!(&i.outcome, ItemOutcome::Failed(f) if f.code.as_deref() == Some("batch_cancelled")))
        .count();
    assert!(cancelled >= 1, "{items:?}");
    let error = client.cancel(&created.id).await.unwrap_err();
    assert!(
        matches!(error, JudgeError::Status { status: 400, .. }),
        "{error}"
    );
    let error = client
        .results(&created, &file.custom_ids)
        .await
        .unwrap_err();
    assert!(error.to_string().contains("not over"), "{error}");
}

#[tokio::test]
async fn a_job_whose_input_is_invalid_fails_every_request_with_the_line_named() {
    let mock = MockServer::start(MockConfig::default()).await.unwrap();
    let client = client(&mock);
    let mut bad = BatchRequest::chat("b", "mock-chat", &chat_request("x"));
    bad.url = "/v1/completions".into();
    let requests = [
        BatchRequest::chat("a", "mock-chat", &chat_request("y")),
        bad,
    ];
    let (jobs, items) = run_jobs(&client, &requests, &BatchLimits::default()).await;
    let job = &jobs[0].0;
    assert_eq!(job.status, BatchStatus::Failed);
    assert_eq!(items.len(), 2);
    for item in &items {
        let ItemOutcome::Failed(failure) = &item.outcome else {
            panic!("nothing ran")
        };
        assert!(!failure.resubmittable());
        assert!(failure.message.contains("line 2"), "{}", failure.message);
    }
}

#[tokio::test]
async fn batch_passes_end_like_the_synchronous_path_with_the_same_cache_entries() {
    // One request's first answer does not parse: the re-ask goes into a second batch.
    let mock = MockServer::start(scripted(|body, _| {
        let messages = body["messages"].as_array().map_or(0, Vec::len);
        if last_user_text(body).contains("garbled") && messages == 2 {
            Reply::Content("no json here".into())
        } else {
            Reply::Content(GOOD.into())
        }
    }))
    .await
    .unwrap();
    let mut requests = batch("t", 6, "p");
    requests.push(request("t", "Statement garbled holds."));
    let dir = tempfile::tempdir().unwrap();
    let sync_cache = Cache::open(dir.path().join("sync.sqlite")).unwrap();
    let batch_cache = Cache::open(dir.path().join("batch.sqlite")).unwrap();
    let sync = crate::support::judge(
        settings(&mock, T),
        Some(sync_cache.clone()),
        config(CacheMode::ReadWrite),
    );
    let expected = sync.ask_all::<Verdict>(requests.clone()).await;

    let store = BatchStore::new();
    let judge = batch_judge(
        settings(&mock, T),
        &store,
        BatchOptions::default(),
        Some(batch_cache.clone()),
        config(CacheMode::ReadWrite),
    );
    // The first pass only records: every call is pending, a stop, off the ladder.
    let first = judge.ask_all::<Verdict>(requests.clone()).await;
    assert!(
        first
            .iter()
            .all(|r| matches!(r, Err(JudgeError::Pending { .. })))
    );
    assert!(judge.rung_counts().is_empty());
    assert_eq!(store.pending_len(), 7);
    let before = mock.stats().chat_requests;
    let (results, rounds) = batch_passes(&judge, &store, &client(&mock), &requests).await;
    assert_eq!(rounds, 2, "the first asks, then the re-ask");
    assert_eq!(mock.stats().chat_requests, before, "no synchronous call");
    assert_eq!(mock.stats().batches_created, 2);
    for (got, want) in results.iter().zip(&expected) {
        let (got, want) = (got.as_ref().unwrap(), want.as_ref().unwrap());
        assert_eq!(
            (&got.value, got.rung, &got.raw, got.usage),
            (&want.value, want.rung, &want.raw, want.usage)
        );
    }
    // The garbled request's first answer was handed out in two passes: booked twice.
    let counts = store.counts();
    assert_eq!(counts.replayed, 1);
    assert_eq!(
        judge.usage().total.calls - counts.replayed,
        sync.usage().total.calls
    );
    // Same cache keys: an offline judge over either cache answers everything alike.
    assert_eq!(
        sync_cache.len().await.unwrap(),
        batch_cache.len().await.unwrap()
    );
    for cache in [sync_cache, batch_cache] {
        let offline =
            crate::support::judge(settings(&mock, T), Some(cache), config(CacheMode::Offline));
        let replay = offline.ask_all::<Verdict>(requests.clone()).await;
        for (got, want) in replay.iter().zip(&expected) {
            assert_eq!(got.as_ref().unwrap().value, want.as_ref().unwrap().value);
        }
    }
}

#[tokio::test]
async fn failed_requests_are_resubmitted_then_fail_typed() {
    let mock = MockServer::start(MockConfig {
        fail_rate: 1.0,
        ..MockConfig::default()
    })
    .await
    .unwrap();
    let store = BatchStore::new();
    let options = BatchOptions {
        max_resubmits: 1,
        ..BatchOptions::default()
    };
    let judge = batch_judge(
        settings(&mock, T),
        &store,
        options,
        None,
        config(CacheMode::Off),
    );
    let requests = batch("t", 3, "f");
    let (results, rounds) = batch_passes(&judge, &store, &client(&mock), &requests).await;
    assert_eq!(rounds, 2, "one batch, one resubmission");
    for result in results {
        let error = result.unwrap_err();
        assert!(
            matches!(
                &error,
                JudgeError::BatchItem {
                    status: Some(500),
                    ..
                }
            ),
            "{error}"
        );
        assert!(!error.is_stop());
    }
    assert_eq!(store.counts().resubmitted, 3);
    assert_eq!(mock.stats().batches_created, 2);
}

#[tokio::test]
async fn sync_fallback_answers_what_the_batch_did_not() {
    let mock = expiring_mock(1).await;
    let store = BatchStore::new();
    let options = BatchOptions {
        failed_items: FailedItems::Sync,
        ..BatchOptions::default()
    };
    let judge = batch_judge(
        settings(&mock, T),
        &store,
        options,
        None,
        config(CacheMode::Off),
    );
    let requests = batch("t", 4, "s");
    let (results, rounds) = batch_passes(&judge, &store, &client(&mock), &requests).await;
    assert_eq!(rounds, 1);
    assert!(results.iter().all(Result::is_ok));
    assert_eq!(store.counts().sync_fallbacks, 3);
    assert_eq!(mock.stats().chat_requests, 3);
}

#[tokio::test]
async fn exported_files_answered_like_vllm_run_batch_import_cleanly() {
    let mock = MockServer::start(scripted(|body, _| {
        if last_user_text(body).contains("reject") {
            Reply::Status(400, "unsupported request".into())
        } else {
            Reply::Content(GOOD.into())
        }
    }))
    .await
    .unwrap();
    let mut requests = batch("t", 5, "v");
    requests.push(request("t", "Statement reject holds."));
    let sync = crate::support::judge(settings(&mock, T), None, config(CacheMode::Off));
    let expected = sync.ask_all::<Verdict>(requests.clone()).await;

    let store = BatchStore::new();
    let judge = batch_judge(
        settings(&mock, T),
        &store,
        BatchOptions::default(),
        None,
        config(CacheMode::Off),
    );
    let _ = judge.ask_all::<Verdict>(requests.clone()).await;
    let limits = BatchLimits {
        max_requests_per_file: 4,
        ..BatchLimits::default()
    };
    let files = split_requests(&store.take_pending(), &limits).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let paths = write_request_files(&dir.path().join("requests"), "stage-1", &files).unwrap();
    assert_eq!(paths.len(), 2);
    for path in &paths {
        let output = mock.run_batch_file(&std::fs::read_to_string(path).unwrap());
        let answers = path.with_extension("out.jsonl");
        std::fs::write(&answers, output).unwrap();
        store.load(read_output_file(&answers).unwrap());
    }
    let results = judge.ask_all::<Verdict>(requests.clone()).await;
    assert_eq!(store.pending_len(), 0);
    for (got, want) in results.iter().zip(&expected) {
        match (got, want) {
            (Ok(got), Ok(want)) => assert_eq!(got.value, want.value),
            (Err(got), Err(want)) => {
                let client_error =
                    |e: &JudgeError| matches!(e, JudgeError::Status { status: 400, .. });
                assert!(client_error(got) && client_error(want), "{got} / {want}");
            }
            other => panic!("batch and synchronous paths differ: {other:?}"),
        }
    }
}

#[tokio::test]
async fn answers_through_a_batch_cost_half() {
    let mock = MockServer::start(MockConfig {
        model: "gpt-4o-mini".into(),
        ..MockConfig::default()
    })
    .await
    .unwrap();
    let mut endpoint = settings(&mock, T);
    endpoint.model = "gpt-4o-mini".into();
    let requests = batch("t", 5, "c");
    let sync = crate::support::judge(endpoint.clone(), None, config(CacheMode::Off));
    let _ = sync.ask_all::<Verdict>(requests.clone()).await;

    let store = BatchStore::new();
    let prices = PriceTable::builtin().for_batch();
    let judge = batch_judge(
        endpoint.clone(),
        &store,
        BatchOptions::default(),
        None,
        JudgeConfig {
            prices,
            ..config(CacheMode::Off)
        },
    );
    let batch_client = BatchClient::new(endpoint).unwrap();
    let _ = batch_passes(&judge, &store, &batch_client, &requests).await;
    let (sync_usage, batch_usage) = (sync.usage().total, judge.usage().total);
    assert_eq!(
        (
            sync_usage.calls,
            sync_usage.prompt_tokens,
            sync_usage.completion_tokens
        ),
        (
            batch_usage.calls,
            batch_usage.prompt_tokens,
            batch_usage.completion_tokens
        )
    );
    assert!(sync_usage.cost_usd > 0.0);
    assert_eq!(store.counts().replayed, 0);
    let ratio = batch_usage.cost_usd / sync_usage.cost_usd;
    assert!((ratio - 0.5).abs() < 1e-12, "{ratio}");
}

#[tokio::test]
async fn batch_errors_never_show_the_key() {
    let mock = MockServer::start(MockConfig {
        api_key: Some("sk-right-key".into()),
        ..MockConfig::default()
    })
    .await
    .unwrap();
    let mut endpoint = settings(&mock, T);
    endpoint.api_key = Some(rageval_judge::ApiKey::new("sk-wrong-secret"));
    let client = BatchClient::new(endpoint).unwrap();
    let error = client.upload("x.jsonl", b"{}\n").await.unwrap_err();
    assert!(
        matches!(error, JudgeError::Status { status: 401, .. }),
        "{error}"
    );
    let shown = format!("{error} {error:?} {client:?}");
    assert!(!shown.contains("sk-wrong-secret"), "{shown}");
}
