//! The RAG-service client against a local HTTP/1.1 server that answers each request with a
//! script of writes and pauses: every response shape (text, JSON, streamed lines, SSE) and
//! every failure (non-200, empty answers, a stream that hangs).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rageval_core::Sample;
use rageval_sources::json_path::JsonPath;
use rageval_sources::response::{ContextFields, ResponseShape, StreamMode};
use rageval_sources::{HttpMethod, RagService, ServiceSettings, SourceError, Template};
use serde_json::{Map, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// What the server does for one request.
#[derive(Clone)]
pub enum Step {
    /// Writes these bytes.
    Write(Vec<u8>),
    /// Waits.
    Pause(Duration),
}

/// A request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub head: String,
    pub body: String,
}

pub type Script = Arc<dyn Fn(usize, &Seen) -> Vec<Step> + Send + Sync>;

pub struct TestServer {
    pub url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl TestServer {
    /// Serves requests; the n-th (0-based) gets `script(n, request)`.
    pub async fn start(script: Script) -> TestServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let log = Arc::clone(&seen);
        tokio::spawn(async move {
            loop {
                let (mut socket, _) = listener.accept().await.unwrap();
                let script = Arc::clone(&script);
                let log = Arc::clone(&log);
                tokio::spawn(async move {
                    let request = read_request(&mut socket).await;
                    let n = {
                        let mut log = log.lock().unwrap();
                        log.push(request.clone());
                        log.len() - 1
                    };
                    for step in script(n, &request) {
                        match step {
                            Step::Write(bytes) => {
                                if socket.write_all(&bytes).await.is_err() {
                                    return;
                                }
                                let _ = socket.flush().await;
                            }
                            Step::Pause(d) => tokio::time::sleep(d).await,
                        }
                    }
                    let _ = socket.shutdown().await;
                });
            }
        });
        TestServer { url, seen }
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

async fn read_request(socket: &mut tokio::net::TcpStream) -> Seen {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        let n = socket.read(&mut chunk).await.unwrap();
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        assert!(n > 0, "connection closed mid-request");
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let length = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().parse::<usize>().unwrap())
        })
        .unwrap_or(0);
    while buf.len() < head_end + length {
        let n = socket.read(&mut chunk).await.unwrap();
        buf.extend_from_slice(&chunk[..n]);
    }
    Seen {
        head,
        body: String::from_utf8_lossy(&buf[head_end..]).to_string(),
    }
}

/// A complete response with a body.
pub fn whole(status: &str, content_type: &str, body: &str) -> Vec<Step> {
    vec![Step::Write(
        format!(
            "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
    )]
}

/// A chunked response: each piece is sent as one chunk, with `pause` before it.
fn streamed(content_type: &str, pieces: &[&str], pause: Duration) -> Vec<Step> {
    let mut steps = vec![Step::Write(
        format!("HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n").into_bytes(),
    )];
    for piece in pieces {
        steps.push(Step::Pause(pause));
        steps.push(Step::Write(
            format!("{:x}\r\n{piece}\r\n", piece.len()).into_bytes(),
        ));
    }
    steps.push(Step::Write(b"0\r\n\r\n".to_vec()));
    steps
}

fn sample() -> Sample {
    let mut metadata = Map::new();
    metadata.insert("company_name".into(), json!("多鲸教育"));
    Sample {
        id: "q1".into(),
        question: "2024年少儿编程市场规模是多少？".into(),
        metadata,
        ..Sample::default()
    }
}

/// One question asked of a client built from `s`.
async fn ask(s: ServiceSettings) -> Result<rageval_sources::Generated, SourceError> {
    RagService::new(s).unwrap().ask(&sample(), &[]).await
}

fn settings(url: &str, response: ResponseShape) -> ServiceSettings {
    let mut s = ServiceSettings::new(Template::text(url, "service.url").unwrap());
    s.response = response;
    s.retry.base_delay = Duration::from_millis(5);
    s.empty_delay = Duration::from_millis(5);
    s.timeout = Duration::from_secs(10);
    s
}

#[tokio::test]
async fn get_with_templated_query_and_secret_header_reads_plain_text() {
    let server = TestServer::start(Arc::new(|_, _| {
        whole("200 OK", "text/plain", "约488亿元\n")
    }))
    .await;
    let mut s = settings(&format!("{}/qa", server.url), ResponseShape::Text);
    s.query = vec![
        (
            "message".into(),
            Template::text("{{question}}", "q.message").unwrap(),
        ),
        (
            "company_name".into(),
            Template::text("{{company_name}}", "q.company").unwrap(),
        ),
    ];
    s.headers = vec![(
        "Authorization".into(),
        Template::text("Bearer {{env.RAG_TOKEN}}", "h.auth").unwrap(),
    )];
    s.env = Arc::new(|name| (name == "RAG_TOKEN").then(|| "tok-123456".to_string()));
    let generated = ask(s).await.unwrap();
    assert_eq!(generated.answer, "约488亿元");
    assert_eq!(generated.attempts, 1);
    let seen = server.seen();
    let request_line = seen[0].head.lines().next().unwrap();
    assert!(
        request_line.starts_with("GET /qa?message=2024%E5%B9%B4"),
        "{request_line}"
    );
    assert!(
        request_line.contains("&company_name=%E5%A4%9A%E9%B2%B8"),
        "{request_line}"
    );
    assert!(
        seen[0]
            .head
            .to_ascii_lowercase()
            .contains("authorization: bearer tok-123456")
    );
}

#[tokio::test]
async fn post_json_body_and_answer_with_contexts_at_paths() {
    let server = TestServer::start(Arc::new(|_, request| {
        let asked: serde_json::Value = serde_json::from_str(&request.body).unwrap();
        let answer = json!({"code": 0, "data": {
            "answer": format!("回答：{}", asked["query"].as_str().unwrap()),
            "docs": [{"page_content": "规模约488亿", "metadata": {"id": "c-7"}, "score": 0.83},
                     {"page_content": "渗透率约5%", "metadata": {"id": "c-9"}, "score": 0.41}]}});
        whole("200 OK", "application/json", &answer.to_string())
    }))
    .await;
    let mut s = settings(
        &format!("{}/chat", server.url),
        ResponseShape::Json {
            answer: JsonPath::parse("data.answer"),
            contexts: Some(ContextFields {
                path: JsonPath::parse("data.docs"),
                text: None,
                id: Some(JsonPath::parse("metadata.id")),
                score: None,
            }),
        },
    );
    s.method = HttpMethod::Post;
    s.body = Some(
        Template::json(
            r#"{"query": "{{question}}", "top_k": 3, "ctx": "{{contexts}}"}"#,
            "body.json",
        )
        .unwrap(),
    );
    let generated = ask(s).await.unwrap();
    assert_eq!(generated.answer, "回答：2024年少儿编程市场规模是多少？");
    let contexts = generated.contexts.unwrap();
    assert_eq!(
        contexts.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        ["c-7", "c-9"]
    );
    assert_eq!(contexts[0].text, "规模约488亿");
    assert_eq!(contexts[1].score, Some(0.41));
    let body: serde_json::Value = serde_json::from_str(&server.seen()[0].body).unwrap();
    assert_eq!(
        body,
        json!({"query": "2024年少儿编程市场规模是多少？", "top_k": 3, "ctx": []})
    );
    assert!(server.seen()[0].head.starts_with("POST /chat "));
}

#[tokio::test]
async fn streamed_lines_keep_the_last_line_as_seed_s3_does() {
    let server = TestServer::start(Arc::new(|_, _| {
        streamed(
            "text/plain; charset=utf-8",
            &[
                "2024年",
                "\n2024年市场规模",
                "\n\n2024年市场规模约488亿元。\n",
            ],
            Duration::from_millis(30),
        )
    }))
    .await;
    let last = settings(
        &server.url,
        ResponseShape::Lines {
            mode: StreamMode::Last,
            path: None,
        },
    );
    let generated = ask(last).await.unwrap();
    assert_eq!(generated.answer, "2024年市场规模约488亿元。");
    let join = settings(
        &server.url,
        ResponseShape::Lines {
            mode: StreamMode::Join,
            path: None,
        },
    );
    let generated = ask(join).await.unwrap();
    assert_eq!(
        generated.answer,
        "2024年\n2024年市场规模\n2024年市场规模约488亿元。"
    );
}

#[tokio::test]
async fn server_sent_events_concatenate_deltas_until_done() {
    let events = [
        ": ping\n\n",
        "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n",
        "data: {\"choices\":[{\"delta\":{\"content\":\"约\"}}]}\n\n",
        "data: {\"choices\":[{\"delta\":{\"content\":\"488亿\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"元\"}}]}\n\n",
        "data: [DONE]\n\n",
    ];
    let server = TestServer::start(Arc::new(move |_, _| {
        streamed("text/event-stream", &events, Duration::from_millis(20))
    }))
    .await;
    let s = settings(
        &server.url,
        ResponseShape::Sse {
            mode: StreamMode::Concat,
            path: Some(JsonPath::parse("choices.0.delta.content")),
        },
    );
    let generated = ask(s).await.unwrap();
    assert_eq!(generated.answer, "约488亿元");
}

#[tokio::test]
async fn non_200_is_an_error_with_status_and_first_line_retried_only_when_worth_it() {
    let server = TestServer::start(Arc::new(|_, request| {
        if request.head.starts_with("GET /missing") {
            whole(
                "404 Not Found",
                "text/plain",
                "no route /missing\nsecond line",
            )
        } else {
            whole(
                "500 Internal Server Error",
                "text/plain",
                "\nmodel crashed: key tok-123456 invalid\ntrace...",
            )
        }
    }))
    .await;
    let s = settings(&format!("{}/missing", server.url), ResponseShape::Text);
    let err = ask(s).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}/missing answered http 404: no route /missing",
            server.url
        )
    );
    assert_eq!(server.seen().len(), 1, "a 404 is not retried");

    let mut s = settings(&format!("{}/broken", server.url), ResponseShape::Text);
    s.headers = vec![(
        "X-Key".into(),
        Template::text("{{env.RAG_TOKEN}}", "h").unwrap(),
    )];
    s.env = Arc::new(|_| Some("tok-123456".to_string()));
    let err = ask(s).await.unwrap_err();
    let SourceError::RetriesExhausted { attempts: 3, last } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(
        last.to_string(),
        format!(
            "{}/broken answered http 500: model crashed: key **** invalid",
            server.url
        )
    );
    assert_eq!(server.seen().len(), 4);
}

#[tokio::test]
async fn empty_answers_are_asked_again_a_bounded_number_of_times() {
    let server = TestServer::start(Arc::new(|n, _| {
        let body = if n < 2 { "  \n" } else { "终于有答案" };
        whole("200 OK", "text/plain", body)
    }))
    .await;
    let s = settings(&server.url, ResponseShape::Text);
    let generated = ask(s.clone()).await.unwrap();
    assert_eq!(
        (generated.answer.as_str(), generated.attempts),
        ("终于有答案", 3)
    );

    let always_empty = TestServer::start(Arc::new(|_, _| {
        whole(
            "200 OK",
            "application/json",
            "{\"data\": {\"answer\": null}}",
        )
    }))
    .await;
    let mut s = settings(
        &always_empty.url,
        ResponseShape::Json {
            answer: JsonPath::parse("data.answer"),
            contexts: None,
        },
    );
    s.empty_attempts = 2;
    let err = ask(s).await.unwrap_err();
    assert!(
        matches!(err, SourceError::EmptyAnswer { attempts: 2, .. }),
        "{err:?}"
    );
    assert_eq!(always_empty.seen().len(), 2);
}

/// Issue 25, item 4: a 5xx answered by a 200 on the retry counted one attempt; the
/// record's `collected.attempts` now counts every request the question took.
#[tokio::test]
async fn regression_issue_25_retries_after_a_5xx_count_in_attempts() {
    let server = TestServer::start(Arc::new(|n, _| match n {
        0 => whole("503 Service Unavailable", "text/plain", "busy"),
        1 => whole("200 OK", "text/plain", " "),
        _ => whole("200 OK", "text/plain", "约488亿元"),
    }))
    .await;
    let generated = ask(settings(&server.url, ResponseShape::Text))
        .await
        .unwrap();
    assert_eq!(
        (generated.answer.as_str(), generated.attempts),
        ("约488亿元", 3),
        "a 503, an empty answer, then the answer"
    );
    assert_eq!(server.seen().len(), 3);

    let always_busy_then_empty = TestServer::start(Arc::new(|n, _| match n {
        0 => whole("500 Internal Server Error", "text/plain", "oops"),
        _ => whole("200 OK", "text/plain", ""),
    }))
    .await;
    let mut s = settings(&always_busy_then_empty.url, ResponseShape::Text);
    s.empty_attempts = 2;
    let err = ask(s).await.unwrap_err();
    assert!(
        matches!(
            err,
            SourceError::EmptyAnswer {
                attempts: 2,
                requests: 3,
                ..
            }
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_stream_that_hangs_times_out() {
    let server = TestServer::start(Arc::new(|_, _| {
        let mut steps = streamed("text/plain", &["partial line\n"], Duration::ZERO);
        steps.pop();
        steps.push(Step::Pause(Duration::from_secs(30)));
        steps
    }))
    .await;
    let mut s = settings(
        &server.url,
        ResponseShape::Lines {
            mode: StreamMode::Last,
            path: None,
        },
    );
    s.timeout = Duration::from_millis(400);
    s.retry.max_attempts = 1;
    let started = Instant::now();
    let err = ask(s).await.unwrap_err();
    assert!(matches!(err, SourceError::Timeout { .. }), "{err:?}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(err.to_string().ends_with("timed out after 0.4s"), "{err}");
}
