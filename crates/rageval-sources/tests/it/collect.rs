//! `collect` end to end: seed S4's 20 questions through the local index and an HTTP RAG
//! service into a dataset that the dataset reader (what `rageval eval` uses) reads back;
//! resuming after a crash that cut a line; failures that skip a question and failures that
//! stop the run.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rageval_core::dataset::{ReadOptions, read_all};
use rageval_sources::json_path::JsonPath;
use rageval_sources::local::{LocalIndex, Ranking, load};
use rageval_sources::response::{ContextFields, ResponseShape};
use rageval_sources::{
    CollectOptions, ContextSource, HttpMethod, IndexBuilder, LocalRetriever, RagService,
    ServiceSettings, SourceError, Splitter, Template, collect,
};
use serde_json::{Value, json};

use super::fixtures::{BigramEmbedder, kids_dir};
use super::service::{Seen, TestServer, whole};

pub(super) fn questions() -> Vec<rageval_core::Sample> {
    read_all(&kids_dir().join("qa_test_20.json"), &ReadOptions::default()).unwrap()
}

pub(super) async fn retriever(dir: &std::path::Path) -> ContextSource {
    let mut builder = IndexBuilder::new(Splitter::default());
    builder
        .add(&load(&kids_dir().join("doc_chunks.jsonl")).unwrap())
        .unwrap();
    let out = dir.join("kids.index");
    builder
        .write(&out, false, None::<&BigramEmbedder>)
        .await
        .unwrap();
    let index = Arc::new(LocalIndex::open(&out).unwrap());
    ContextSource::Retriever(Arc::new(
        LocalRetriever::new(index, 3, Ranking::Bm25, None).unwrap(),
    ))
}

/// A RAG service that answers with the first line of the first context it was given.
fn echo_service(url: &str) -> Arc<RagService> {
    let mut s =
        ServiceSettings::new(Template::text(&format!("{url}/answer"), "service.url").unwrap());
    s.method = HttpMethod::Post;
    s.body = Some(
        Template::json(
            r#"{"q": "{{question}}", "contexts": "{{contexts}}"}"#,
            "body",
        )
        .unwrap(),
    );
    s.response = ResponseShape::Json {
        answer: JsonPath::parse("answer"),
        contexts: None,
    };
    s.retry.base_delay = std::time::Duration::from_millis(1);
    Arc::new(RagService::new(s).unwrap())
}

fn answer_from_contexts(request: &Seen) -> Vec<super::service::Step> {
    let body: Value = serde_json::from_str(&request.body).unwrap();
    let first = body["contexts"][0].as_str().unwrap_or("不知道");
    let line = first.lines().next().unwrap_or("");
    whole(
        "200 OK",
        "application/json",
        &json!({"answer": format!("根据资料：{line}")}).to_string(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_questions_become_a_dataset_eval_reads() {
    if super::fixtures::skip_without_kids("twenty_questions_become_a_dataset_eval_reads") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(Arc::new(|_, r| answer_from_contexts(r))).await;
    let out = dir.path().join("data.jsonl");
    let progress = std::sync::Mutex::new(Vec::new());
    let report = collect(
        questions(),
        retriever(dir.path()).await,
        echo_service(&server.url),
        &out,
        &CollectOptions {
            concurrency: 4,
            ..CollectOptions::default()
        },
        &|p| progress.lock().unwrap().push(p.finished),
    )
    .await
    .unwrap();
    assert_eq!(
        (report.already_done, report.written, report.failed.len()),
        (0, 20, 0)
    );
    assert_eq!(progress.lock().unwrap().len(), 20);
    assert_eq!(server.seen().len(), 20);

    let samples = read_all(&out, &ReadOptions::default()).unwrap();
    assert_eq!(samples.len(), 20);
    let by_id: std::collections::HashMap<_, _> =
        samples.iter().map(|s| (s.id.clone(), s)).collect();
    for original in questions() {
        let got = by_id[&original.id];
        assert_eq!(got.question, original.question);
        assert_eq!(
            got.references, original.references,
            "the reference answer is kept"
        );
        assert_eq!(got.reference_statements, original.reference_statements);
        assert_eq!(got.contexts.len(), 3);
        assert!(
            got.contexts
                .iter()
                .all(|c| c.id.is_some() && c.score.is_some())
        );
        let first_line = got.contexts[0].text.lines().next().unwrap();
        assert_eq!(
            got.answer.as_deref(),
            Some(format!("根据资料：{first_line}").as_str())
        );
        let collected = &got.metadata["collected"];
        assert!(
            collected["retriever"]
                .as_str()
                .unwrap()
                .contains("local index"),
            "{collected}"
        );
        assert!(
            collected["generator"]
                .as_str()
                .unwrap()
                .starts_with("http ")
        );
        assert_eq!(collected["attempts"], json!(1));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rerun_after_a_crash_asks_only_what_is_missing() {
    if super::fixtures::skip_without_kids("a_rerun_after_a_crash_asks_only_what_is_missing") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(Arc::new(|_, r| answer_from_contexts(r))).await;
    let out = dir.path().join("data.jsonl");
    let source = retriever(dir.path()).await;
    let service = echo_service(&server.url);
    let options = CollectOptions::default();
    let quiet = |_: rageval_sources::Progress| {};
    let run = || {
        collect(
            questions(),
            source.clone(),
            service.clone(),
            &out,
            &options,
            &quiet,
        )
    };
    run().await.unwrap();

    // A crash: the last 4 records never written, the one before cut half-way.
    let text = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut damaged: Vec<u8> = lines[..15]
        .iter()
        .flat_map(|l| format!("{l}\n").into_bytes())
        .collect();
    // Cut at a byte, as a crash does: possibly inside a character.
    damaged.extend_from_slice(&lines[15].as_bytes()[..lines[15].len() / 2 + 1]);
    std::fs::write(&out, damaged).unwrap();

    let before = server.seen().len();
    let report = run().await.unwrap();
    assert_eq!((report.already_done, report.written), (15, 5));
    assert_eq!(
        server.seen().len() - before,
        5,
        "only the missing questions were asked"
    );
    let samples = read_all(&out, &ReadOptions::default()).unwrap();
    assert_eq!(samples.len(), 20, "every id once, the cut line gone");

    let report = run().await.unwrap();
    assert_eq!((report.already_done, report.written), (20, 0));

    std::fs::write(&out, "{\"id\": \"1\"}\nnot json\n").unwrap();
    let err = run().await.unwrap_err();
    assert!(err.to_string().ends_with("data.jsonl:2: not a json record (expected ident at line 1 column 2); is this the output of `rageval collect`?"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_question_is_skipped_and_asked_again_next_time() {
    if super::fixtures::skip_without_kids("a_failing_question_is_skipped_and_asked_again_next_time")
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let healthy = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&healthy);
    let server = TestServer::start(Arc::new(move |_, r| {
        let broken = r.body.contains("国家政策") && !flag.load(Ordering::SeqCst);
        if broken {
            whole(
                "500 Internal Server Error",
                "text/plain",
                "generation failed",
            )
        } else {
            answer_from_contexts(r)
        }
    }))
    .await;
    let out = dir.path().join("data.jsonl");
    let source = retriever(dir.path()).await;
    let service = echo_service(&server.url);
    let report = collect(
        questions(),
        source.clone(),
        service.clone(),
        &out,
        &CollectOptions::default(),
        &|_| {},
    )
    .await
    .unwrap();
    assert_eq!(report.written, 19);
    assert_eq!(report.failed.len(), 1);
    let (id, error) = &report.failed[0];
    assert!(
        matches!(error, SourceError::RetriesExhausted { .. }),
        "{error:?}"
    );
    healthy.store(true, Ordering::SeqCst);
    let report = collect(
        questions(),
        source,
        service,
        &out,
        &CollectOptions::default(),
        &|_| {},
    )
    .await
    .unwrap();
    assert_eq!((report.already_done, report.written), (19, 1));
    let samples = read_all(&out, &ReadOptions::default()).unwrap();
    assert!(samples.iter().any(|s| &s.id == id));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_credentials_stop_the_run_early() {
    if super::fixtures::skip_without_kids("bad_credentials_stop_the_run_early") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(Arc::new(|_, _| {
        whole("401 Unauthorized", "text/plain", "invalid token")
    }))
    .await;
    let out = dir.path().join("data.jsonl");
    let err = collect(
        questions(),
        retriever(dir.path()).await,
        echo_service(&server.url),
        &out,
        &CollectOptions {
            concurrency: 2,
            ..CollectOptions::default()
        },
        &|_| {},
    )
    .await
    .unwrap_err();
    assert!(
        matches!(err, SourceError::Unauthorized { status: 401, .. }),
        "{err:?}"
    );
    assert!(
        server.seen().len() <= 2,
        "{} questions were asked",
        server.seen().len()
    );
    assert!(!out.exists(), "no record, no file");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contexts_can_come_from_the_service_answer() {
    if super::fixtures::skip_without_kids("contexts_can_come_from_the_service_answer") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(Arc::new(|_, _| {
        let body = json!({"answer": "约488亿元", "sources": [
            {"chunk_id": "c-1", "text": "2024年市场规模约488亿元", "relevance": 0.9}]});
        whole("200 OK", "application/json", &body.to_string())
    }))
    .await;
    let mut s = ServiceSettings::new(Template::text(&server.url, "service.url").unwrap());
    s.response = ResponseShape::Json {
        answer: JsonPath::parse("answer"),
        contexts: Some(ContextFields {
            path: JsonPath::parse("sources"),
            text: None,
            id: Some(JsonPath::parse("chunk_id")),
            score: Some(JsonPath::parse("relevance")),
        }),
    };
    let out = dir.path().join("data.jsonl");
    let report = collect(
        questions().into_iter().take(3).collect(),
        ContextSource::Generator,
        Arc::new(RagService::new(s).unwrap()),
        &out,
        &CollectOptions::default(),
        &|_| {},
    )
    .await
    .unwrap();
    assert_eq!(report.written, 3);
    assert_eq!(
        server.seen().len(),
        3,
        "one request per question serves both"
    );
    let samples = read_all(&out, &ReadOptions::default()).unwrap();
    assert_eq!(samples[0].contexts[0].id.as_deref(), Some("c-1"));
    assert_eq!(samples[0].contexts[0].score, Some(0.9));
}
