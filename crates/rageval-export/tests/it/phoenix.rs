//! Span annotations: what each scored cell becomes, and what a writer does when the Phoenix
//! it writes to refuses the key, dies mid-export, or lacks a span — against stand-in
//! servers on loopback that answer as Phoenix's `/v1/span_annotations` does.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use rageval_core::Outcome;
use rageval_export::{ExportRun, phoenix};
use rageval_judge::ApiKey;
use rageval_sources::PhoenixClient;
use rageval_sources::rest::DEFAULT_REST_TIMEOUT;
use serde_json::{Value, json};

use super::fixtures::write_run;

/// What the stand-in answers, given the request's annotations and how many came before.
type Answer = Arc<dyn Fn(&[Value], usize) -> StatusCode + Send + Sync>;

#[derive(Clone)]
struct Stub {
    answer: Answer,
    received: Arc<Mutex<Vec<Vec<Value>>>>,
}

async fn annotate(State(stub): State<Stub>, body: String) -> (StatusCode, String) {
    let body: Value = serde_json::from_str(&body).unwrap();
    let batch = body["data"].as_array().unwrap().clone();
    let before = stub.received.lock().unwrap().len();
    let status = (stub.answer)(&batch, before);
    if status.is_success() {
        stub.received.lock().unwrap().push(batch);
    }
    (status, json!({"detail": "stand-in"}).to_string())
}

/// A stand-in Phoenix on a free port; the handle aborts it.
async fn stand_in(
    answer: Answer,
) -> (
    String,
    Arc<Mutex<Vec<Vec<Value>>>>,
    tokio::task::JoinHandle<()>,
) {
    let received = Arc::new(Mutex::new(Vec::new()));
    let stub = Stub {
        answer,
        received: received.clone(),
    };
    let app = Router::new()
        .route("/v1/span_annotations", post(annotate))
        .with_state(stub);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    (url, received, task)
}

fn install_crypto() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

/// A run of `samples` traced samples, one metric each, with distinct span ids.
fn traced_run(dir: &std::path::Path, samples: usize) {
    let mut dataset = String::new();
    let mut results = Vec::new();
    for i in 0..samples {
        dataset.push_str(
            &json!({"id": format!("s{i}"), "question": "Q?", "trace_id": format!("{:032x}", i + 1), "span_id": format!("{:016x}", i + 1)})
                .to_string(),
        );
        dataset.push('\n');
        results.push((format!("s{i}"), "faithfulness", Outcome::bare(0.5)));
    }
    rageval_report::testing::write_run(
        dir,
        &rageval_report::sha256_bytes(dataset.as_bytes()),
        &results,
    );
    std::fs::write(dir.join("data.jsonl"), dataset).unwrap();
}

#[test]
fn each_scored_cell_becomes_one_annotation_on_its_root_span() {
    let dir = tempfile::tempdir().unwrap();
    write_run(dir.path());
    let run = ExportRun::open(dir.path()).unwrap();
    let (annotations, skipped) = phoenix::annotations(&run);
    assert_eq!(annotations.len(), 5);
    assert_eq!(
        skipped.skipped,
        [
            (phoenix::SKIP_FAILED.to_owned(), 1),
            (phoenix::SKIP_NO_SPAN.to_owned(), 2)
        ]
    );
    let first = &annotations[0];
    let name = dir.path().file_name().unwrap().to_string_lossy();
    assert_eq!(first["span_id"], "a1b2c3d4e5f60001");
    assert_eq!(first["name"], "faithfulness");
    assert_eq!(first["annotator_kind"], "CODE");
    assert_eq!(first["result"]["score"], 1.0);
    assert_eq!(first["result"]["label"], "supported");
    assert_eq!(
        first["result"]["explanation"],
        "1. supported: the context says so"
    );
    assert_eq!(first["identifier"], format!("rageval:{name}"));
    assert_eq!(first["metadata"]["run"], name.as_ref());
    let undefined = annotations
        .iter()
        .find(|a| a["span_id"] == "b000000000000001" && a["name"] == "context_relevance")
        .unwrap();
    assert_eq!(undefined["result"]["score"], Value::Null);
    assert_eq!(undefined["result"]["label"], "undefined");
    assert_eq!(phoenix::plan(&run).written, 5);
}

#[tokio::test]
async fn a_refused_key_fails_the_writes_naming_the_server_never_the_key() {
    install_crypto();
    let dir = tempfile::tempdir().unwrap();
    write_run(dir.path());
    let run = ExportRun::open(dir.path()).unwrap();
    let (url, received, _task) = stand_in(Arc::new(|_, _| StatusCode::UNAUTHORIZED)).await;
    let key = ApiKey::new("px-secret-key-0123456789");
    let client = PhoenixClient::new(&url, Some(key), DEFAULT_REST_TIMEOUT).unwrap();
    let writes = phoenix::write(&run, &client).await;
    assert_eq!((writes.written, writes.failed), (0, 5));
    let error = writes.errors.join("\n");
    assert!(
        error.contains(&format!(
            "{url}/v1/span_annotations refused the credentials (http 401)"
        )),
        "{error}"
    );
    assert!(!error.contains("px-secret-key"), "{error}");
    assert!(received.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_server_that_dies_mid_export_leaves_the_rest_counted_as_failed() {
    install_crypto();
    let dir = tempfile::tempdir().unwrap();
    traced_run(dir.path(), 250);
    let run = ExportRun::open(dir.path()).unwrap();
    // It takes the first batch of 100, then answers 503 to every request: the second batch
    // fails after its retries, and the third is counted without being sent.
    let (url, received, _task) = stand_in(Arc::new(|_, before| {
        if before == 0 {
            StatusCode::OK
        } else {
            StatusCode::SERVICE_UNAVAILABLE
        }
    }))
    .await;
    let client = PhoenixClient::new(&url, None, DEFAULT_REST_TIMEOUT).unwrap();
    let writes = phoenix::write(&run, &client).await;
    assert_eq!((writes.written, writes.failed), (100, 150));
    assert_eq!(received.lock().unwrap().len(), 1);
    assert!(writes.errors[0].contains("http 503"), "{:?}", writes.errors);

    // One that is gone altogether: every write counted as failed, the run untouched.
    let (url, _, task) = stand_in(Arc::new(|_, _| StatusCode::OK)).await;
    task.abort();
    let _ = task.await;
    let client = PhoenixClient::new(&url, None, DEFAULT_REST_TIMEOUT).unwrap();
    let writes = phoenix::write(&run, &client).await;
    assert_eq!((writes.written, writes.failed), (0, 250));
    assert!(
        writes.errors[0].contains("connection to"),
        "{:?}",
        writes.errors
    );
    assert_eq!(ExportRun::open(dir.path()).unwrap().cells.len(), 250);
}

#[tokio::test]
async fn a_span_phoenix_lacks_fails_alone() {
    install_crypto();
    let dir = tempfile::tempdir().unwrap();
    traced_run(dir.path(), 5);
    let run = ExportRun::open(dir.path()).unwrap();
    let missing = format!("{:016x}", 3);
    let (url, received, _task) = stand_in(Arc::new(move |batch: &[Value], _| {
        if batch.iter().any(|a| a["span_id"] == missing.as_str()) {
            StatusCode::NOT_FOUND
        } else {
            StatusCode::OK
        }
    }))
    .await;
    let client = PhoenixClient::new(&url, None, DEFAULT_REST_TIMEOUT).unwrap();
    let writes = phoenix::write(&run, &client).await;
    assert_eq!((writes.written, writes.failed), (4, 1));
    assert_eq!(
        received.lock().unwrap().len(),
        4,
        "sent again one at a time"
    );
}
