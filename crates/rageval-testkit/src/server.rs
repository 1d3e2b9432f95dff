//! The mock server: an axum app on 127.0.0.1 at a random port, speaking enough of the
//! OpenAI API (`/v1/chat/completions`, `/v1/embeddings`, `/v1/models`, and the files and
//! batches endpoints of [`crate::batch`]) for rageval's tests.
//!
//! Faults are drawn like the bench mock's: one draw per request from a hash of (seed, the
//! request's content, how many times that content was seen), so a retried request gets a
//! fresh draw and a run is reproducible whatever order requests arrive in. With
//! [`MockConfig::reasoning`] set, chat answers are laid out as a reasoning model's
//! ([`crate::reasoning`]). `GET /stats` returns the counters as JSON. It binds only to
//! loopback and never reaches out.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use crate::batch::{BatchState, MockBatchConfig};
use crate::fill::{
    Rng, find_schema, hash_u64, instance, message_texts, opposite_instance, sentence_pool,
    unit_draw,
};
use crate::reasoning::{ReasoningModes, lay_out, strict_params_refusal, thinking};
use crate::stats::MockStats;

/// The text a garbage answer holds when it does not cut valid JSON in half.
pub const GARBAGE_SENTENCE: &str = "I'm sorry, I can't produce that in the requested format.";

/// What a scripted answerer returns for one chat request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// A 200 answer with this message content.
    Content(String),
    /// An error status with this body (a 429 carries the configured `Retry-After`).
    Status(u16, String),
    /// Hang for [`MockConfig::hang`], then answer schema-driven.
    Hang,
    /// A 200 whose headers come at once and whose body never ends: one space (leading
    /// whitespace a JSON reader skips) every [`MockConfig::trickle_every`], forever — a
    /// reply that a timeout on reads alone never stops.
    Trickle,
    /// Answer schema-driven, as the mock does without a script (so a script can single out
    /// some requests and leave the rest to the mock).
    Schema,
}

/// A closure that answers chat requests (given the parsed request body).
pub type Script = Arc<dyn Fn(&Value) -> Reply + Send + Sync>;

/// How the mock answers and misbehaves.
#[derive(Clone)]
pub struct MockConfig {
    /// Seed of every draw.
    pub seed: u64,
    /// Sleep before every answer (not before an injected 429).
    pub latency: Duration,
    /// Probability of a 500 (after the latency).
    pub fail_rate: f64,
    /// Probability of an immediate 429 with `Retry-After`.
    pub rate_limit_rate: f64,
    /// Probability of hanging for [`MockConfig::hang`] before answering.
    pub hang_rate: f64,
    /// Probability (chat only) of a 200 holding non-JSON or JSON cut in half.
    pub garbage_rate: f64,
    /// Wait requested with each 429 (`retry-after-ms`, and `Retry-After` in whole seconds).
    pub retry_after: Duration,
    /// How long a hang lasts.
    pub hang: Duration,
    /// How often a trickling reply ([`Reply::Trickle`]) sends its next byte.
    pub trickle_every: Duration,
    /// When set, requests without `Authorization: Bearer <key>` get a 401.
    pub api_key: Option<String>,
    /// When set, requests without this header (name, value) get a 400.
    pub require_header: Option<(String, String)>,
    /// Scripted answers instead of schema-driven ones.
    pub script: Option<Script>,
    /// Model id reported by `/v1/models` and in answers.
    pub model: String,
    /// Embedding dimension.
    pub embedding_dim: usize,
    /// How batch jobs progress and end.
    pub batch: MockBatchConfig,
    /// Answer chat requests as a reasoning model (empty: a plain chat model).
    pub reasoning: ReasoningModes,
}

impl Default for MockConfig {
    fn default() -> Self {
        MockConfig {
            seed: 0,
            latency: Duration::ZERO,
            fail_rate: 0.0,
            rate_limit_rate: 0.0,
            hang_rate: 0.0,
            garbage_rate: 0.0,
            retry_after: Duration::from_secs(1),
            hang: Duration::from_secs(600),
            trickle_every: Duration::from_millis(100),
            api_key: None,
            require_header: None,
            script: None,
            model: "mock-chat".into(),
            embedding_dim: 8,
            batch: MockBatchConfig::default(),
            reasoning: ReasoningModes::default(),
        }
    }
}

pub(crate) struct Shared {
    pub(crate) config: MockConfig,
    state: Mutex<MockState>,
}

#[derive(Default)]
pub(crate) struct MockState {
    pub(crate) stats: MockStats,
    seen: HashMap<String, u64>,
    pub(crate) batch: BatchState,
}

impl Shared {
    pub(crate) fn new(config: MockConfig) -> Arc<Shared> {
        Arc::new(Shared {
            config,
            state: Mutex::new(MockState::default()),
        })
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, MockState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A running mock; stops when dropped.
pub struct MockServer {
    /// `http://127.0.0.1:PORT/v1`.
    pub base_url: String,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

impl MockServer {
    /// Binds 127.0.0.1 on a free port and serves on the current tokio runtime.
    pub async fn start(config: MockConfig) -> std::io::Result<MockServer> {
        let shared = Shared::new(config);
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let port = listener.local_addr()?.port();
        let app = router(Arc::clone(&shared));
        let task = tokio::spawn(async move {
            // An accept error ends the mock; the test then sees connection failures.
            let _ = axum::serve(listener, app).await;
        });
        Ok(MockServer {
            base_url: format!("http://127.0.0.1:{port}/v1"),
            shared,
            task,
        })
    }

    /// Counters so far.
    pub fn stats(&self) -> MockStats {
        self.shared.lock().stats.clone()
    }

    /// Answers a batch input file (JSONL request lines) the way `vllm run-batch` does: one
    /// output line per request, in order, failures inline with their status and the error
    /// as a string. Each request is answered as `/v1/chat/completions` would answer it,
    /// fault draws included.
    pub fn run_batch_file(&self, input: &str) -> String {
        self.shared.run_batch_file(input)
    }

    /// Zeroes the counters and the fault-draw memory (a repeated run draws the same faults).
    /// Files and batch jobs stay, so a resumed run can still poll and download them.
    pub fn reset(&self) {
        let mut state = self.shared.lock();
        let in_flight = state.stats.in_flight;
        state.stats = MockStats::default();
        state.seen.clear();
        state.stats.in_flight = in_flight;
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The mock's routes, for in-process use (`tower::ServiceExt::oneshot`) or serving.
pub(crate) fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/v1/chat/completions", post(chat))
        .route("/v1/embeddings", post(embeddings))
        .route("/v1/models", get(models))
        .route("/health", get(|| async { "ok" }))
        .route("/stats", get(stats))
        .merge(crate::batch::routes(Arc::clone(&shared)))
        .with_state(shared)
}

/// Counts a request in flight; notices a client that hung up (the handler future is dropped
/// before it finished).
struct InFlight {
    shared: Arc<Shared>,
    finished: AtomicBool,
}

impl InFlight {
    fn enter(shared: &Arc<Shared>, chat: bool) -> Self {
        let mut state = shared.lock();
        let stats = &mut state.stats;
        stats.requests += 1;
        if chat {
            stats.chat_requests += 1;
        } else {
            stats.embedding_requests += 1;
        }
        stats.in_flight += 1;
        stats.max_in_flight = stats.max_in_flight.max(stats.in_flight);
        drop(state);
        InFlight {
            shared: Arc::clone(shared),
            finished: AtomicBool::new(false),
        }
    }

    fn answer(&self, status: u16, headers: HeaderMap, body: String) -> Response {
        self.finished.store(true, Ordering::Relaxed);
        *self
            .shared
            .lock()
            .stats
            .status_counts
            .entry(status)
            .or_default() += 1;
        let code = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut headers = headers;
        headers.insert("content-type", HeaderValue::from_static("application/json"));
        (code, headers, body).into_response()
    }

    /// A 200 whose body sends one space every `every` and never ends; the request stays in
    /// flight until the client hangs up.
    fn trickle(self, every: Duration) -> Response {
        *self
            .shared
            .lock()
            .stats
            .status_counts
            .entry(200)
            .or_default() += 1;
        let drip = futures_util::stream::unfold(self, move |guard| async move {
            tokio::time::sleep(every).await;
            Some((
                Ok::<_, std::convert::Infallible>(Bytes::from_static(b" ")),
                guard,
            ))
        });
        let mut response = Response::new(axum::body::Body::from_stream(drip));
        response
            .headers_mut()
            .insert("content-type", HeaderValue::from_static("application/json"));
        response
    }

    fn error(&self, status: u16, message: &str, kind: &str, headers: HeaderMap) -> Response {
        let body = json!({"error": {"message": message, "type": kind}}).to_string();
        self.answer(status, headers, body)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        state.stats.in_flight = state.stats.in_flight.saturating_sub(1);
        if !self.finished.load(Ordering::Relaxed) {
            state.stats.client_disconnects += 1;
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fault {
    Fail,
    RateLimit,
    Hang,
    Garbage,
}

/// The canonical text an answer and a fault draw depend on: content, not sampling knobs.
fn request_key(chat: bool, body: &Value) -> String {
    let pick = |k: &str| body.get(k).cloned().unwrap_or(Value::Null);
    let key = if chat {
        json!({"m": pick("messages"), "rf": pick("response_format"), "tools": pick("tools")})
    } else {
        json!({"input": pick("input"), "model": pick("model")})
    };
    // serde_json's map sorts keys unless `preserve_order` is on; either way the text is
    // stable for a given body, which is all a draw needs.
    key.to_string()
}

fn approx_tokens(chars: usize) -> u64 {
    (chars as u64).div_ceil(4)
}

impl Shared {
    /// One fault draw for this request, counting it as seen once more.
    pub(crate) fn draw(&self, chat: bool, body: &Value) -> (Option<Fault>, String, u64) {
        let key = request_key(chat, body);
        let body_hash = format!("{:016x}", hash_u64(&[&key]));
        let occurrence = {
            let mut state = self.lock();
            let seen = state.seen.entry(body_hash.clone()).or_default();
            let occurrence = *seen;
            *seen += 1;
            occurrence
        };
        let c = &self.config;
        let u = unit_draw(&[
            "fault",
            &c.seed.to_string(),
            &body_hash,
            &occurrence.to_string(),
        ]);
        let garbage = if chat { c.garbage_rate } else { 0.0 };
        let edges = [
            (Fault::Fail, c.fail_rate),
            (Fault::RateLimit, c.rate_limit_rate),
            (Fault::Hang, c.hang_rate),
            (Fault::Garbage, garbage),
        ];
        let mut acc = 0.0;
        for (fault, p) in edges {
            acc += p;
            if u < acc {
                return (Some(fault), body_hash, occurrence);
            }
        }
        (None, body_hash, occurrence)
    }

    /// The `error` object of a `strict-params` 400 for this chat request, counted.
    pub(crate) fn param_refusal(&self, body: &Value) -> Option<Value> {
        let refusal = strict_params_refusal(self.config.reasoning, body)?;
        self.lock().stats.faults.param_400 += 1;
        Some(refusal)
    }

    pub(crate) fn count_fault(&self, fault: Fault) {
        let mut state = self.lock();
        let f = &mut state.stats.faults;
        match fault {
            Fault::Fail => f.fail += 1,
            Fault::RateLimit => f.rate_limit += 1,
            Fault::Hang => f.hang += 1,
            Fault::Garbage => f.garbage += 1,
        }
    }

    fn authorized(&self, headers: &HeaderMap) -> bool {
        match &self.config.api_key {
            None => true,
            Some(key) => {
                headers.get("authorization").and_then(|v| v.to_str().ok())
                    == Some(format!("Bearer {key}").as_str())
            }
        }
    }

    /// The status and message a request is refused with: 401 without the configured key
    /// (echoing the `Authorization` it got, as some providers do, so that tests see whether
    /// a client keeps such a body out of what it shows), 400 without the required header.
    pub(crate) fn refusal(&self, headers: &HeaderMap) -> Option<(u16, String)> {
        if !self.authorized(headers) {
            let got = headers
                .get("authorization")
                .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
                .unwrap_or_else(|| "none".into());
            return Some((401, format!("mock: invalid api key (Authorization: {got})")));
        }
        if let Some((name, value)) = &self.config.require_header {
            if headers.get(name.as_str()).and_then(|v| v.to_str().ok()) != Some(value.as_str()) {
                return Some((400, format!("mock: missing header {name}")));
            }
        }
        None
    }
}

/// `retry-after-ms` (what OpenAI sends) and `Retry-After` in whole seconds, rounded up.
fn retry_after_headers(wait: Duration) -> HeaderMap {
    let mut h = HeaderMap::new();
    let ms = wait.as_millis().to_string();
    let secs = wait.as_secs_f64().ceil().to_string();
    if let (Ok(ms), Ok(secs)) = (HeaderValue::from_str(&ms), HeaderValue::from_str(&secs)) {
        h.insert("retry-after-ms", ms);
        h.insert("retry-after", secs);
    }
    h
}

/// Runs the shared part of both endpoints: auth, parse, fault draw, latency. `Err` is the
/// response to send instead of an answer.
async fn prelude(
    shared: &Arc<Shared>,
    guard: &InFlight,
    chat: bool,
    headers: &HeaderMap,
    raw: &Bytes,
) -> Result<(Value, Option<Fault>, String, u64), Response> {
    if let Some((status, message)) = shared.refusal(headers) {
        return Err(guard.error(status, &message, "invalid_request_error", HeaderMap::new()));
    }
    let body: Value = serde_json::from_slice(raw).map_err(|e| {
        guard.error(
            400,
            &format!("mock: body is not json: {e}"),
            "invalid_request_error",
            HeaderMap::new(),
        )
    })?;
    let (fault, body_hash, occurrence) = shared.draw(chat, &body);
    let config = &shared.config;
    match fault {
        Some(Fault::RateLimit) => {
            shared.count_fault(Fault::RateLimit);
            let h = retry_after_headers(config.retry_after);
            return Err(guard.error(429, "mock: injected rate limit", "rate_limit_error", h));
        }
        Some(Fault::Hang) => {
            shared.count_fault(Fault::Hang);
            tokio::time::sleep(config.hang).await;
        }
        _ if !config.latency.is_zero() => tokio::time::sleep(config.latency).await,
        _ => {}
    }
    if fault == Some(Fault::Fail) {
        shared.count_fault(Fault::Fail);
        return Err(guard.error(
            500,
            "mock: injected server error",
            "server_error",
            HeaderMap::new(),
        ));
    }
    Ok((body, fault, body_hash, occurrence))
}

async fn chat(State(shared): State<Arc<Shared>>, headers: HeaderMap, raw: Bytes) -> Response {
    let guard = InFlight::enter(&shared, true);
    let (body, fault, body_hash, occurrence) =
        match prelude(&shared, &guard, true, &headers, &raw).await {
            Ok(parts) => parts,
            Err(response) => return response,
        };
    if let Some(refusal) = shared.param_refusal(&body) {
        let text = json!({ "error": refusal }).to_string();
        return guard.answer(400, HeaderMap::new(), text);
    }
    let config = &shared.config;
    let content = match scripted_content(config, &body) {
        Ok(Scripted::Content(content)) => content,
        Ok(Scripted::HangThenContent(content)) => {
            tokio::time::sleep(config.hang).await;
            content
        }
        Ok(Scripted::Trickle(_)) => return guard.trickle(config.trickle_every),
        Err((429, text)) => {
            return guard.answer(429, retry_after_headers(config.retry_after), text);
        }
        Err((status, text)) => return guard.answer(status, HeaderMap::new(), text),
    };
    let answer = shared.completion(&body, content, fault, &body_hash, occurrence);
    guard.answer(200, HeaderMap::new(), answer.to_string())
}

/// The content a chat request gets, before garbling.
pub(crate) enum Scripted {
    /// Answer with it.
    Content(String),
    /// The script asked for a hang first (the synchronous endpoint sleeps, a batch does not).
    HangThenContent(String),
    /// The script asked for a body that never ends (a batch answers with the content,
    /// schema-driven, instead).
    Trickle(String),
}

/// What the script (or, without one, the schema) answers for `body`; `Err` is the status
/// and body a script chose instead.
pub(crate) fn scripted_content(
    config: &MockConfig,
    body: &Value,
) -> Result<Scripted, (u16, String)> {
    match &config.script {
        Some(script) => match script(body) {
            Reply::Content(text) => Ok(Scripted::Content(text)),
            Reply::Status(status, text) => Err((status, text)),
            Reply::Hang => Ok(Scripted::HangThenContent(schema_answer(config.seed, body))),
            Reply::Trickle => Ok(Scripted::Trickle(schema_answer(config.seed, body))),
            Reply::Schema => Ok(Scripted::Content(schema_answer(config.seed, body))),
        },
        None => Ok(Scripted::Content(schema_answer(config.seed, body))),
    }
}

impl Shared {
    /// The chat completion for `content` (garbled when the draw said so, then laid out as
    /// the reasoning modes say), its usage counted in the stats: what the synchronous
    /// endpoint returns and a batch line's body holds.
    pub(crate) fn completion(
        &self,
        body: &Value,
        content: String,
        fault: Option<Fault>,
        body_hash: &str,
        occurrence: u64,
    ) -> Value {
        let config = &self.config;
        let content = if fault == Some(Fault::Garbage) {
            self.count_fault(Fault::Garbage);
            garble(&content, config.seed, body_hash, occurrence)
        } else {
            content
        };
        let prompt_chars: usize = message_texts(body)
            .iter()
            .map(|(_, t)| t.chars().count())
            .sum::<usize>()
            + body
                .get("response_format")
                .filter(|f| f.get("type").and_then(Value::as_str) == Some("json_schema"))
                .map_or(0, |f| f.to_string().chars().count());
        let modes = config.reasoning;
        let thought = if modes.is_empty() {
            String::new()
        } else {
            thinking(&draft_answer(config.seed, body, &content))
        };
        let laid_out = lay_out(modes, &content, &thought, body);
        let prompt_tokens = approx_tokens(prompt_chars);
        let reasoning_tokens = approx_tokens(laid_out.reasoning_chars);
        let completion_tokens = approx_tokens(laid_out.answer_chars) + reasoning_tokens;
        {
            let mut state = self.lock();
            state.stats.prompt_tokens += prompt_tokens;
            state.stats.completion_tokens += completion_tokens;
            state.stats.reasoning_tokens += reasoning_tokens;
            if laid_out.truncated() {
                state.stats.faults.truncated += 1;
            }
        }
        let mut usage = json!({
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens
        });
        if !modes.is_empty() {
            usage["completion_tokens_details"] = json!({"reasoning_tokens": reasoning_tokens});
        }
        json!({
            "id": format!("chatcmpl-{body_hash}-{occurrence}"),
            "object": "chat.completion",
            "created": 0,
            "model": config.model,
            "choices": [{
                "index": 0,
                "message": laid_out.message,
                "finish_reason": laid_out.finish_reason
            }],
            "usage": usage
        })
    }
}

/// The schema-driven answer: an instance of the request's schema, `{"answer": ...}` for a
/// bare `json_object` request, else one sentence of the material.
fn schema_answer(seed: u64, body: &Value) -> String {
    let key = request_key(true, body);
    let mut rng = Rng::new(hash_u64(&["content", &seed.to_string(), &key]));
    match find_schema(body) {
        Some((schema, at)) => {
            let sentences = sentence_pool(body, at);
            instance(&schema, &mut rng, &sentences).to_string()
        }
        None => {
            let sentences = sentence_pool(body, None);
            let pick = (rng.next_u64() % sentences.len().max(1) as u64) as usize;
            let sentence = sentences.get(pick).cloned().unwrap_or_default();
            let json_object = body
                .pointer("/response_format/type")
                .and_then(Value::as_str)
                == Some("json_object");
            if json_object {
                json!({"answer": sentence}).to_string()
            } else {
                sentence
            }
        }
    }
}

/// The answer a reasoning model drafts while thinking: the request's schema filled with the
/// verdicts turned around, or the answer itself when there is no schema to fill. Like the
/// answer it depends only on the request's content and the seed.
fn draft_answer(seed: u64, body: &Value, answer: &str) -> String {
    let Some((schema, at)) = find_schema(body) else {
        return answer.to_owned();
    };
    let key = request_key(true, body);
    let mut rng = Rng::new(hash_u64(&["draft", &seed.to_string(), &key]));
    opposite_instance(&schema, &mut rng, &sentence_pool(body, at)).to_string()
}

/// Non-JSON, or the answer cut in half — chosen deterministically.
fn garble(text: &str, seed: u64, body_hash: &str, occurrence: u64) -> String {
    let u = unit_draw(&[
        "garbage-kind",
        &seed.to_string(),
        body_hash,
        &occurrence.to_string(),
    ]);
    let was_json = serde_json::from_str::<Value>(text).is_ok();
    if was_json && u < 0.5 && text.chars().count() > 2 {
        text.chars()
            .take((text.chars().count() / 2).max(1))
            .collect()
    } else {
        GARBAGE_SENTENCE.to_owned()
    }
}

async fn embeddings(State(shared): State<Arc<Shared>>, headers: HeaderMap, raw: Bytes) -> Response {
    let guard = InFlight::enter(&shared, false);
    let (body, ..) = match prelude(&shared, &guard, false, &headers, &raw).await {
        Ok(parts) => parts,
        Err(response) => return response,
    };
    let inputs: Vec<String> = match body.get("input") {
        Some(Value::String(one)) => vec![one.clone()],
        Some(Value::Array(many)) => many
            .iter()
            .map(|v| v.as_str().unwrap_or_default().to_owned())
            .collect(),
        _ => {
            return guard.error(
                400,
                "mock: `input` must be a string or a list",
                "invalid_request_error",
                HeaderMap::new(),
            );
        }
    };
    let dim = shared.config.embedding_dim.max(1);
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(index, text)| {
            let normalised = text
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .to_lowercase();
            let mut rng = Rng::new(hash_u64(&[
                "embed",
                &shared.config.seed.to_string(),
                &normalised,
            ]));
            let raw: Vec<f64> = (0..dim)
                .map(|_| (rng.next_u64() >> 11) as f64 / 2f64.powi(53) - 0.5)
                .collect();
            let norm = raw
                .iter()
                .map(|x| x * x)
                .sum::<f64>()
                .sqrt()
                .max(f64::MIN_POSITIVE);
            let vector: Vec<f64> = raw.iter().map(|x| x / norm).collect();
            json!({"object": "embedding", "index": index, "embedding": vector})
        })
        .collect();
    let tokens: u64 = inputs
        .iter()
        .map(|t| approx_tokens(t.chars().count()))
        .sum();
    shared.lock().stats.embedding_inputs += inputs.len() as u64;
    let answer = json!({
        "object": "list",
        "data": data,
        "model": body.get("model").cloned().unwrap_or(Value::Null),
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens}
    });
    guard.answer(200, HeaderMap::new(), answer.to_string())
}

async fn stats(State(shared): State<Arc<Shared>>) -> Response {
    let body = shared.lock().stats.to_json();
    (
        StatusCode::OK,
        [("content-type", "application/json")],
        body.to_string(),
    )
        .into_response()
}

async fn models(State(shared): State<Arc<Shared>>) -> Response {
    let body = json!({"object": "list", "data": [{"id": shared.config.model, "object": "model"}]});
    (
        StatusCode::OK,
        [("content-type", "application/json")],
        body.to_string(),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use axum::http::Request;
    use tower::ServiceExt;

    fn mock_app(config: MockConfig) -> (Router, Arc<Shared>) {
        let shared = Shared::new(config);
        (router(Arc::clone(&shared)), shared)
    }

    fn chat_body(text: &str) -> Value {
        json!({
            "model": "m",
            "messages": [{"role": "user", "content": text}],
            "response_format": {"type": "json_schema", "json_schema": {"name": "v", "schema": {
                "type": "object",
                "properties": {"reason": {"type": "string"}, "verdict": {"type": "integer"}},
                "required": ["reason", "verdict"]
            }}}
        })
    }

    async fn send(app: &Router, body: &Value, auth: Option<&str>) -> (u16, HeaderMap, String) {
        let mut request =
            Request::post("/v1/chat/completions").header("content-type", "application/json");
        if let Some(auth) = auth {
            request = request.header("authorization", auth);
        }
        let response = app
            .clone()
            .oneshot(request.body(Body::from(body.to_string())).unwrap())
            .await
            .unwrap();
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        (
            status,
            headers,
            String::from_utf8_lossy(&bytes).into_owned(),
        )
    }

    fn content(answer: &str) -> String {
        let value: Value = serde_json::from_str(answer).unwrap();
        value["choices"][0]["message"]["content"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    #[tokio::test]
    async fn fault_draws_repeat_after_reset_and_follow_the_seed() {
        let faulty = |seed| MockConfig {
            seed,
            fail_rate: 0.3,
            rate_limit_rate: 0.3,
            garbage_rate: 0.2,
            retry_after: Duration::from_millis(1),
            ..MockConfig::default()
        };
        let (app, shared) = mock_app(faulty(1));
        let body = chat_body("Item 1 is blue.");
        let mut first = Vec::new();
        for _ in 0..20 {
            first.push(send(&app, &body, None).await.0);
        }
        // Retries of the same content draw afresh: not all the same outcome.
        assert!(
            first.contains(&200) && first.iter().any(|s| *s != 200),
            "{first:?}"
        );
        shared.lock().seen.clear();
        let mut again = Vec::new();
        for _ in 0..20 {
            again.push(send(&app, &body, None).await.0);
        }
        assert_eq!(first, again);
        let (other, _) = mock_app(faulty(2));
        let mut reseeded = Vec::new();
        for _ in 0..20 {
            reseeded.push(send(&other, &body, None).await.0);
        }
        assert_ne!(first, reseeded);
    }

    #[tokio::test]
    async fn schema_answer_usage_and_counters() {
        let (app, shared) = mock_app(MockConfig::default());
        let body = chat_body("Item 2 is red.");
        let (status, _, answer) = send(&app, &body, None).await;
        assert_eq!(status, 200);
        let value: Value = serde_json::from_str(&content(&answer)).unwrap();
        assert_eq!(value, json!({"reason": "Item 2 is red.", "verdict": 1}));
        let stats = shared.lock().stats.clone();
        let schema_chars = body["response_format"].to_string().chars().count() as u64;
        assert_eq!(stats.prompt_tokens, (14 + schema_chars).div_ceil(4));
        assert_eq!(stats.chat_requests, 1);
        assert_eq!(stats.status_counts.get(&200), Some(&1));
        assert_eq!(stats.in_flight, 0);
        // Same content, same answer.
        assert_eq!(content(&send(&app, &body, None).await.2), content(&answer));
    }

    #[tokio::test]
    async fn rate_limits_carry_retry_after_in_both_forms() {
        let (app, shared) = mock_app(MockConfig {
            rate_limit_rate: 1.0,
            retry_after: Duration::from_millis(1500),
            ..MockConfig::default()
        });
        let (status, headers, _) = send(&app, &chat_body("x"), None).await;
        assert_eq!(status, 429);
        assert_eq!(headers["retry-after-ms"], "1500");
        assert_eq!(headers["retry-after"], "2");
        assert_eq!(shared.lock().stats.faults.rate_limit, 1);
    }

    #[tokio::test]
    async fn garbage_is_never_valid_json_of_the_schema() {
        let (app, _) = mock_app(MockConfig {
            garbage_rate: 1.0,
            ..MockConfig::default()
        });
        let mut cut = 0;
        for i in 0..20 {
            let text = content(&send(&app, &chat_body(&format!("Item {i}.")), None).await.2);
            if text != GARBAGE_SENTENCE {
                cut += 1;
                assert!(serde_json::from_str::<Value>(&text).is_err(), "{text}");
                assert!(text.starts_with("{\"reason\""), "{text}");
            }
        }
        assert!(cut > 0 && cut < 20, "{cut}");
    }

    #[tokio::test]
    async fn a_required_key_is_checked() {
        let (app, _) = mock_app(MockConfig {
            api_key: Some("k-123".into()),
            ..MockConfig::default()
        });
        assert_eq!(send(&app, &chat_body("x"), None).await.0, 401);
        assert_eq!(
            send(&app, &chat_body("x"), Some("Bearer nope")).await.0,
            401
        );
        assert_eq!(
            send(&app, &chat_body("x"), Some("Bearer k-123")).await.0,
            200
        );
    }
}
