//! The Elasticsearch retriever against a real ES-compatible server (noida-db): the
//! kids-coding chunks bulk-loaded, seed S3's query shape, ids, order, `_source` filtering,
//! and the errors a user meets (401, missing index, a bad query) — retried only when
//! retrying can help.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use rageval_core::Sample;
use rageval_judge::ApiKey;
use rageval_sources::{EsAuth, EsRetriever, EsSettings, Retriever, SourceError, Template};
use serde_json::{Map, Value, json};

use super::fixtures::kids_chunks;
use super::noida::EsServer;

const COLLECTION: &str = "kids-coding";

/// Seed S3's query: a `must` phrase filter on the collection field, a boosted `should`
/// match of the question on the content field.
const S3_TEMPLATE: &str = r#"{
  "query": {
    "bool": {
      "must": [{"match_phrase": {"collection_info.collect_id": "{{company_name}}"}}],
      "should": [{"match": {"metadata.content": {"query": "{{question}}", "boost": 8}}}]
    }
  }
}"#;

fn mapping() -> Value {
    json!({"properties": {
        "collection_info": {"properties": {"collect_id": {"type": "keyword"}}},
        "metadata": {"properties": {"content": {"type": "text"}}},
        "uuid": {"type": "keyword"},
        "chunk_index": {"type": "integer"},
        "content_embedding": {"type": "dense_vector", "dims": 4},
        "keywords_embedding": {"type": "dense_vector", "dims": 4}
    }})
}

/// The kids-coding chunks in the `kids-coding` collection, and a decoy collection holding
/// copies of the first 20 chunks (same text, other ids): the `must` filter has to keep them out.
async fn load_kids(server: &EsServer, index: &str) {
    let mut docs = Vec::new();
    for (i, chunk) in kids_chunks().iter().enumerate() {
        docs.push((
            format!("es-{i}"),
            json!({"uuid": chunk.uuid, "chunk_index": i,
                   "collection_info": {"collect_id": COLLECTION},
                   "metadata": {"content": chunk.text},
                   "content_embedding": [0.1, 0.2, 0.3, 0.4],
                   "keywords_embedding": [0.4, 0.3, 0.2, 0.1]}),
        ));
    }
    for (i, chunk) in kids_chunks().iter().take(20).enumerate() {
        docs.push((
            format!("decoy-{i}"),
            json!({"uuid": format!("decoy-{i}"), "chunk_index": i,
                   "collection_info": {"collect_id": "another-report"},
                   "metadata": {"content": chunk.text}}),
        ));
    }
    server.load(index, mapping(), &docs).await;
}

fn settings(url: &str, index: &str) -> EsSettings {
    let template = Template::json(S3_TEMPLATE, "s3-query.json").unwrap();
    let mut settings = EsSettings::new(url, index, template, "metadata.content");
    settings.size = 10;
    settings.source_excludes = vec!["content_embedding".into(), "keywords_embedding".into()];
    settings.id_field = Some(rageval_sources::json_path::JsonPath::parse("uuid"));
    settings
}

fn question(id: &str, text: &str) -> Sample {
    let mut metadata = Map::new();
    metadata.insert("company_name".into(), json!(COLLECTION));
    Sample {
        id: id.into(),
        question: text.into(),
        metadata,
        ..Sample::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_query_returns_filtered_ranked_chunks_of_the_collection() {
    if super::fixtures::skip_without_kids(
        "s3_query_returns_filtered_ranked_chunks_of_the_collection",
    ) {
        return;
    }
    let server = EsServer::start().await;
    load_kids(&server, "kids").await;
    let retriever = EsRetriever::new(settings(&server.url, "kids")).unwrap();
    let uuids: std::collections::HashSet<String> =
        kids_chunks().into_iter().map(|c| c.uuid).collect();
    let questions = super::fixtures::kids_questions();
    let mut gold_in_top10 = 0;
    for (i, (text, gold)) in questions.iter().enumerate() {
        let hits = retriever
            .retrieve(&question(&i.to_string(), text))
            .await
            .unwrap();
        assert!(
            !hits.is_empty() && hits.len() <= 10,
            "{text}: {} hits",
            hits.len()
        );
        for pair in hits.windows(2) {
            assert!(
                pair[0].score >= pair[1].score,
                "{text}: scores out of order"
            );
        }
        for hit in &hits {
            assert!(
                uuids.contains(&hit.id),
                "{text}: `{}` is not a kids-coding chunk",
                hit.id
            );
            assert!(
                !hit.fields.contains_key("content_embedding"),
                "{:?}",
                hit.fields.keys()
            );
            assert!(!hit.fields.contains_key("keywords_embedding"));
            assert_eq!(
                hit.fields["collection_info"]["collect_id"],
                json!(COLLECTION)
            );
            assert!(hit.score.is_some_and(|s| s > 0.0));
        }
        if hits.iter().any(|h| &h.id == gold) {
            gold_in_top10 += 1;
        }
    }
    // Measured: 89 of 100 with noida-db 0.2.3 (standard analyzer: one token per Han character).
    eprintln!("elasticsearch: gold chunk in the top 10 for {gold_in_top10} of 100");
    assert!(
        gold_in_top10 >= 80,
        "gold chunk in the top 10 for {gold_in_top10} of 100"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn order_ids_and_source_includes_are_as_elasticsearch_gives_them() {
    let server = EsServer::start().await;
    let docs: Vec<(String, Value)> = [("c", 1), ("a", 3), ("b", 2)]
        .into_iter()
        .map(|(id, repeat)| {
            let content = format!("{} filler words here", "scratch ".repeat(repeat));
            (
                format!("_{id}"),
                json!({"uuid": id, "chunk_index": repeat, "title": format!("doc {id}"),
                       "collection_info": {"collect_id": COLLECTION},
                       "metadata": {"content": content}}),
            )
        })
        .collect();
    server.load("order", mapping(), &docs).await;
    let mut s = settings(&server.url, "order");
    s.source_excludes.clear();
    s.source_includes = vec!["chunk_index".into()];
    let retriever = EsRetriever::new(s).unwrap();
    let hits = retriever.retrieve(&question("1", "scratch")).await.unwrap();
    let ids: Vec<&str> = hits.iter().map(|h| h.id.as_str()).collect();
    assert_eq!(
        ids,
        ["a", "b", "c"],
        "more occurrences of the term rank higher"
    );
    assert!(hits[0].score > hits[1].score && hits[1].score > hits[2].score);
    // Includes: chunk_index, plus the text and id fields the retriever needs; not `title`.
    let mut keys: Vec<&str> = hits[0].fields.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["chunk_index", "metadata", "uuid"]);
    // `_id` is the id when no id field is set.
    let mut s = settings(&server.url, "order");
    s.id_field = None;
    let hits = EsRetriever::new(s)
        .unwrap()
        .retrieve(&question("1", "scratch"))
        .await
        .unwrap();
    assert_eq!(hits[0].id, "_a");
}

/// Seed S3's query with a collection name that matches nothing gives no hits: `collect`
/// writes the records and counts them. A text field the hits do not have stops `collect` at
/// the first question, with the fields the hits do have.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_no_hits_are_counted_and_a_wrong_text_field_stops_collect() {
    let server = EsServer::start().await;
    let docs: Vec<(String, Value)> = (0..3)
        .map(|i| {
            (
                format!("d{i}"),
                json!({"uuid": format!("u{i}"), "collection_info": {"collect_id": COLLECTION},
                       "metadata": {"content": format!("少儿编程 市场 第{i}段")}}),
            )
        })
        .collect();
    server.load("few", mapping(), &docs).await;
    let asked = |company: &str| -> Vec<Sample> {
        (1..=3)
            .map(|i| {
                let mut s = question(&i.to_string(), "少儿编程市场");
                s.metadata.insert("company_name".into(), json!(company));
                s
            })
            .collect()
    };
    let collect_with = |settings: EsSettings, questions: Vec<Sample>, out: std::path::PathBuf| async move {
        rageval_sources::collect(
            questions,
            rageval_sources::ContextSource::Retriever(Arc::new(
                EsRetriever::new(settings).unwrap(),
            )),
            Arc::new(super::collect_results::Echo {
                empty_for: Vec::new(),
            }),
            &out,
            &rageval_sources::CollectOptions::default(),
            &|_| {},
        )
        .await
    };
    let dir = tempfile::tempdir().unwrap();

    let report = collect_with(
        settings(&server.url, "few"),
        asked(COLLECTION),
        dir.path().join("found.jsonl"),
    )
    .await
    .unwrap();
    assert!(report.without_contexts.is_empty(), "{report:?}");

    let report = collect_with(
        settings(&server.url, "few"),
        asked("no-such-collection"),
        dir.path().join("none.jsonl"),
    )
    .await
    .unwrap();
    assert_eq!((report.written, report.without_contexts.len()), (3, 3));

    let mut wrong = settings(&server.url, "few");
    wrong.text_field = rageval_sources::json_path::JsonPath::parse("content");
    let err = collect_with(wrong, asked(COLLECTION), dir.path().join("wrong.jsonl"))
        .await
        .unwrap_err();
    assert!(
        matches!(err, SourceError::MissingTextField { .. }),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains("has no text field `content` in its _source (its fields: "),
        "{text}"
    );
    assert!(
        ["collection_info", "metadata", "uuid"]
            .iter()
            .all(|f| text.contains(f)),
        "{text}"
    );
    assert!(err.hint().unwrap().contains("text_field"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_index_and_bad_query_are_clear_and_not_retried() {
    let server = EsServer::start().await;
    server
        .load(
            "small",
            mapping(),
            &[("1".into(), json!({"metadata": {"content": "x"}}))],
        )
        .await;
    let proxy = Proxy::start(&server.url, None).await;
    let err = EsRetriever::new(settings(&proxy.url, "no-such-index"))
        .unwrap()
        .retrieve(&question("1", "q"))
        .await
        .unwrap_err();
    assert!(matches!(err, SourceError::MissingIndex { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!("{} has no index `no-such-index`", proxy.url)
    );
    assert_eq!(proxy.forwarded(), 1, "a missing index is not retried");

    let bad = Template::json(
        r#"{"query": {"mtch": {"metadata.content": "{{question}}"}}}"#,
        "bad.json",
    )
    .unwrap();
    let mut s = EsSettings::new(&proxy.url, "small", bad, "metadata.content");
    s.retry.base_delay = std::time::Duration::from_millis(1);
    let err = EsRetriever::new(s)
        .unwrap()
        .retrieve(&question("2", "q"))
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("http 400: parsing_exception: unknown query [mtch]"),
        "{text}"
    );
    assert_eq!(proxy.forwarded(), 2, "a 400 is not retried");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_are_checked_sent_and_never_shown() {
    if super::fixtures::skip_without_kids("credentials_are_checked_sent_and_never_shown") {
        return;
    }
    let server = EsServer::start().await;
    load_kids(&server, "kids").await;
    let proxy = Proxy::start(&server.url, Some(("elastic", "right-horse-battery"))).await;

    let mut s = settings(&proxy.url, "kids");
    s.auth = EsAuth::Basic {
        user: "elastic".into(),
        password: ApiKey::new("wrong-password-123"),
    };
    let err = EsRetriever::new(s.clone())
        .unwrap()
        .retrieve(&question("1", "少儿编程"))
        .await
        .unwrap_err();
    let text = format!("{err} {err:?}");
    assert!(
        matches!(err, SourceError::Unauthorized { status: 401, .. }),
        "{text}"
    );
    assert!(
        text.contains("unable to authenticate user [elastic]"),
        "{text}"
    );
    assert!(!text.contains("wrong-password-123"), "{text}");
    assert!(err.is_fatal() && !err.is_retryable());
    assert_eq!(proxy.forwarded(), 0);

    s.auth = EsAuth::Basic {
        user: "elastic".into(),
        password: ApiKey::new("right-horse-battery"),
    };
    let retriever = EsRetriever::new(s).unwrap();
    assert!(!format!("{retriever:?}").contains("right-horse-battery"));
    let hits = retriever
        .retrieve(&question("1", "少儿编程"))
        .await
        .unwrap();
    assert_eq!(hits.len(), 10);

    let mut s = settings(&proxy.url, "kids");
    s.auth = EsAuth::ApiKey(ApiKey::new("bm9wZTpub3Bl"));
    let err = EsRetriever::new(s)
        .unwrap()
        .retrieve(&question("1", "q"))
        .await
        .unwrap_err();
    assert!(matches!(err, SourceError::Unauthorized { .. }), "{err:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unavailable_answers_are_retried_until_the_server_recovers() {
    if super::fixtures::skip_without_kids(
        "unavailable_answers_are_retried_until_the_server_recovers",
    ) {
        return;
    }
    let server = EsServer::start().await;
    load_kids(&server, "kids").await;
    let proxy = Proxy::start(&server.url, None).await;
    proxy.fail_next(2);
    let mut s = settings(&proxy.url, "kids");
    s.retry.base_delay = std::time::Duration::from_millis(5);
    let hits = EsRetriever::new(s.clone())
        .unwrap()
        .retrieve(&question("1", "市场规模"))
        .await
        .unwrap();
    assert_eq!(hits.len(), 10);
    assert_eq!(
        proxy.forwarded(),
        1,
        "two 503s, then one request reached the server"
    );

    proxy.fail_next(5);
    let err = EsRetriever::new(s)
        .unwrap()
        .retrieve(&question("1", "q"))
        .await
        .unwrap_err();
    assert!(
        matches!(err, SourceError::RetriesExhausted { attempts: 3, .. }),
        "{err:?}"
    );
}

/// A reverse proxy in front of the test server: Elasticsearch's security layer (noida-db
/// has none) answering 401 as Elasticsearch does, and injected 503s.
struct Proxy {
    url: String,
    state: Arc<ProxyState>,
    _server: tokio::task::JoinHandle<()>,
}

struct ProxyState {
    upstream: String,
    accepted: Vec<String>,
    forwarded: AtomicUsize,
    fail_next: AtomicUsize,
    client: reqwest::Client,
}

impl Proxy {
    async fn start(upstream: &str, basic: Option<(&str, &str)>) -> Proxy {
        let accepted = match basic {
            Some((user, password)) => {
                // What a client sends for these credentials, as reqwest encodes them.
                let request = crate::test_client()
                    .get("http://127.0.0.1/")
                    .basic_auth(user, Some(password))
                    .build()
                    .unwrap();
                vec![
                    request.headers()["authorization"]
                        .to_str()
                        .unwrap()
                        .to_owned(),
                ]
            }
            None => Vec::new(),
        };
        let state = Arc::new(ProxyState {
            upstream: upstream.to_owned(),
            accepted,
            forwarded: AtomicUsize::new(0),
            fail_next: AtomicUsize::new(0),
            client: crate::test_client(),
        });
        let app = Router::new()
            .fallback(forward)
            .with_state(Arc::clone(&state));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Proxy {
            url,
            state,
            _server: server,
        }
    }

    fn forwarded(&self) -> usize {
        self.state.forwarded.load(Ordering::SeqCst)
    }

    fn fail_next(&self, n: usize) {
        self.state.fail_next.store(n, Ordering::SeqCst);
        self.state.forwarded.store(0, Ordering::SeqCst);
    }
}

async fn forward(
    State(state): State<Arc<ProxyState>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if !state.accepted.is_empty() {
        let given = headers.get("authorization").and_then(|v| v.to_str().ok());
        if !given.is_some_and(|g| state.accepted.iter().any(|a| a == g)) {
            let body = json!({"error": {"root_cause": [{"type": "security_exception",
                "reason": "unable to authenticate user [elastic] for REST request [/kids/_search]"}],
                "type": "security_exception",
                "reason": "unable to authenticate user [elastic] for REST request [/kids/_search]"},
                "status": 401});
            return Response::builder()
                .status(StatusCode::UNAUTHORIZED)
                .header(
                    "www-authenticate",
                    "Basic realm=\"security\" charset=\"UTF-8\"",
                )
                .body(Body::from(body.to_string()))
                .unwrap();
        }
    }
    if state
        .fail_next
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok()
    {
        return Response::builder()
            .status(StatusCode::SERVICE_UNAVAILABLE)
            .body(Body::from("{\"error\":\"unavailable\",\"status\":503}"))
            .unwrap();
    }
    state.forwarded.fetch_add(1, Ordering::SeqCst);
    let url = format!("{}{}", state.upstream, uri);
    let upstream = state
        .client
        .request(method, url)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    let status = upstream.status();
    let bytes = upstream.bytes().await.unwrap();
    Response::builder()
        .status(status)
        .body(Body::from(bytes))
        .unwrap()
}
