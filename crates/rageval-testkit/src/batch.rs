//! The mock's OpenAI-compatible files and batches endpoints: `POST /v1/files` (multipart,
//! `purpose=batch`), `GET /v1/files/{id}`, `GET /v1/files/{id}/content`, `POST /v1/batches`,
//! `GET /v1/batches` (newest first, `limit`, `after`), `GET /v1/batches/{id}` and
//! `POST /v1/batches/{id}/cancel`.
//!
//! A job is validated when created (a bad line fails it, with the line named) and then moves
//! validating → in_progress → finalizing → completed on the clock ([`MockBatchConfig`]);
//! its requests are answered in order during `in_progress`, each exactly as the
//! synchronous `/v1/chat/completions` would answer it — scripted or schema-driven, with the
//! same fault draws (a 500 or 429 draw, a `strict-params` refusal, or a script's status,
//! puts the request in the error file; a garbage draw garbles its answer; a hang draw is
//! answered at once), and the same reasoning layout. A job
//! can be made to expire after some requests, and a cancelled job keeps what ran. Output
//! and error files use OpenAI's batch output format. State advances lazily, whenever a job
//! is looked at; nothing runs in the background.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, RawQuery, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::multipart;
use crate::server::{Fault, Scripted, Shared, scripted_content};

/// The endpoint batch lines must name.
const CHAT_URL: &str = "/v1/chat/completions";
/// Largest upload accepted (axum's default limit is 2 MB).
const MAX_UPLOAD_BYTES: usize = 512 * 1024 * 1024;

/// How batch jobs progress and end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MockBatchConfig {
    /// Time spent validating.
    pub validating: Duration,
    /// Time to answer every request (they are answered evenly over it, in order).
    pub in_progress: Duration,
    /// Time spent finalizing (and cancelling).
    pub finalizing: Duration,
    /// When set, each job answers at most this many requests, then expires at the end of
    /// `in_progress` with the rest as `batch_expired` errors.
    pub expire_after_requests: Option<usize>,
}

impl Default for MockBatchConfig {
    fn default() -> Self {
        MockBatchConfig {
            validating: Duration::from_millis(10),
            in_progress: Duration::from_millis(20),
            finalizing: Duration::from_millis(10),
            expire_after_requests: None,
        }
    }
}

/// Files and jobs.
#[derive(Default)]
pub(crate) struct BatchState {
    files: HashMap<String, StoredFile>,
    /// Jobs by id, oldest first (the id kept apart so finding one locks no job).
    jobs: Vec<(String, Arc<Mutex<Job>>)>,
    next_id: u64,
}

impl BatchState {
    fn new_id(&mut self, prefix: &str) -> String {
        self.next_id += 1;
        format!("{prefix}{:06}", self.next_id)
    }

    fn add_file(&mut self, filename: String, purpose: &str, data: Vec<u8>) -> Value {
        let id = self.new_id("file-");
        let file = StoredFile {
            id: id.clone(),
            filename,
            purpose: purpose.to_owned(),
            created_at: unix_now(),
            data,
        };
        let object = file.object();
        self.files.insert(id, file);
        object
    }

    fn job(&self, id: &str) -> Option<Arc<Mutex<Job>>> {
        self.jobs
            .iter()
            .find(|(job_id, _)| job_id == id)
            .map(|(_, job)| Arc::clone(job))
    }
}

struct StoredFile {
    id: String,
    filename: String,
    purpose: String,
    created_at: u64,
    data: Vec<u8>,
}

impl StoredFile {
    fn object(&self) -> Value {
        json!({
            "id": self.id, "object": "file", "bytes": self.data.len(),
            "created_at": self.created_at, "filename": self.filename,
            "purpose": self.purpose, "status": "processed"
        })
    }
}

/// One job. Lock order: a job, then the mock's state, never the other way round.
struct Job {
    id: String,
    input_file_id: String,
    metadata: Value,
    created: Instant,
    created_at: u64,
    requests: Vec<(String, Value)>,
    validation_errors: Vec<Value>,
    /// One output line per request answered so far, in order.
    lines: Vec<(bool, Value)>,
    cancelled: Option<Instant>,
    output_file_id: Option<String>,
    error_file_id: Option<String>,
    finished: bool,
}

impl Job {
    /// A job created now over these requests (and validation errors).
    fn new(
        id: String,
        input_file_id: String,
        requests: Vec<(String, Value)>,
        validation_errors: Vec<Value>,
    ) -> Self {
        Job {
            id,
            input_file_id,
            metadata: Value::Null,
            created: Instant::now(),
            created_at: unix_now(),
            requests,
            validation_errors,
            lines: Vec::new(),
            cancelled: None,
            output_file_id: None,
            error_file_id: None,
            finished: false,
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The files and batches routes, behind the mock's key and header checks.
pub(crate) fn routes(shared: Arc<Shared>) -> Router<Arc<Shared>> {
    Router::new()
        .route(
            "/v1/files",
            post(upload).layer(DefaultBodyLimit::max(MAX_UPLOAD_BYTES)),
        )
        .route("/v1/files/{id}", get(file_object))
        .route("/v1/files/{id}/content", get(file_content))
        .route("/v1/batches", post(create).get(list))
        .route("/v1/batches/{id}", get(retrieve))
        .route("/v1/batches/{id}/cancel", post(cancel))
        .route_layer(middleware::from_fn_with_state(shared, check_access))
}

/// Refuses a request as the mock's other endpoints do (401 without the key, 400 without
/// the required header).
async fn check_access(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    match shared.refusal(request.headers()) {
        Some((status, message)) => error(status, &message),
        None => next.run(request).await,
    }
}

fn error(status: u16, message: &str) -> Response {
    let code = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let body = json!({"error": {"message": message, "type": "invalid_request_error"}});
    (
        code,
        [("content-type", "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn ok(body: Value) -> Response {
    (
        StatusCode::OK,
        [("content-type", "application/json")],
        body.to_string(),
    )
        .into_response()
}

async fn upload(State(shared): State<Arc<Shared>>, headers: HeaderMap, raw: Bytes) -> Response {
    let content_type = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let parts = match multipart::parse(content_type, &raw) {
        Ok(parts) => parts,
        Err(why) => return error(400, &format!("mock: {why}")),
    };
    let purpose = parts
        .iter()
        .find(|p| p.name == "purpose")
        .map(|p| String::from_utf8_lossy(&p.data).into_owned());
    let file = parts.into_iter().find(|p| p.name == "file");
    let (Some(purpose), Some(file)) = (purpose, file) else {
        return error(400, "mock: an upload needs `purpose` and `file`");
    };
    let mut state = shared.lock();
    state.stats.files_uploaded += 1;
    let name = file.filename.unwrap_or_else(|| "upload.jsonl".into());
    ok(state.batch.add_file(name, &purpose, file.data))
}

async fn file_object(State(shared): State<Arc<Shared>>, Path(id): Path<String>) -> Response {
    match shared.lock().batch.files.get(&id) {
        Some(file) => ok(file.object()),
        None => error(404, &format!("mock: no file {id}")),
    }
}

async fn file_content(State(shared): State<Arc<Shared>>, Path(id): Path<String>) -> Response {
    match shared.lock().batch.files.get(&id) {
        Some(file) => (
            StatusCode::OK,
            [("content-type", "application/octet-stream")],
            file.data.clone(),
        )
            .into_response(),
        None => error(404, &format!("mock: no file {id}")),
    }
}

async fn create(State(shared): State<Arc<Shared>>, raw: Bytes) -> Response {
    let Ok(body) = serde_json::from_slice::<Value>(&raw) else {
        return error(400, "mock: body is not json");
    };
    let field = |name: &str| body.get(name).and_then(Value::as_str).unwrap_or("");
    if field("endpoint") != CHAT_URL {
        return error(400, &format!("mock: endpoint must be {CHAT_URL}"));
    }
    if field("completion_window") != "24h" {
        return error(400, "mock: completion_window must be 24h");
    }
    let input_file_id = field("input_file_id").to_owned();
    let mut state = shared.lock();
    let (requests, validation_errors) = match state.batch.files.get(&input_file_id) {
        Some(file) if file.purpose == "batch" => read_requests(&file.data),
        Some(_) => return error(400, "mock: the input file's purpose is not batch"),
        None => return error(400, &format!("mock: no file {input_file_id}")),
    };
    state.stats.batches_created += 1;
    let mut job = Job::new(
        state.batch.new_id("batch_"),
        input_file_id,
        requests,
        validation_errors,
    );
    job.metadata = body.get("metadata").cloned().unwrap_or(Value::Null);
    let object = describe(&job, &shared.config.batch, Instant::now());
    state
        .batch
        .jobs
        .push((job.id.clone(), Arc::new(Mutex::new(job))));
    ok(object)
}

/// The requests of an input file, and its validation errors (OpenAI's shape).
fn read_requests(data: &[u8]) -> (Vec<(String, Value)>, Vec<Value>) {
    let mut requests = Vec::new();
    let mut errors = Vec::new();
    let mut seen = HashSet::new();
    let text = String::from_utf8_lossy(data);
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let problem = match serde_json::from_str::<Value>(line) {
            Err(e) => Some(format!("line is not json: {e}")),
            Ok(value) => {
                let id = value.get("custom_id").and_then(Value::as_str);
                match id {
                    None => Some("custom_id is missing".to_owned()),
                    Some(id) if !seen.insert(id.to_owned()) => {
                        Some(format!("custom_id {id} is not unique"))
                    }
                    Some(_) if value.get("method").and_then(Value::as_str) != Some("POST") => {
                        Some("method must be POST".to_owned())
                    }
                    Some(_) if value.get("url").and_then(Value::as_str) != Some(CHAT_URL) => {
                        Some(format!("url must be {CHAT_URL}"))
                    }
                    Some(_) if !value.get("body").is_some_and(Value::is_object) => {
                        Some("body must be an object".to_owned())
                    }
                    Some(id) => {
                        requests.push((id.to_owned(), value["body"].clone()));
                        None
                    }
                }
            }
        };
        if let Some(message) = problem {
            errors.push(json!({"code": "invalid_request", "message": message, "line": index + 1}));
        }
    }
    if requests.is_empty() && errors.is_empty() {
        errors.push(json!({"code": "empty_file", "message": "the input file has no request"}));
    }
    (requests, errors)
}

/// The job's object at `now` (brought up to date by [`Shared::advance`] first).
fn describe(job: &Job, config: &MockBatchConfig, now: Instant) -> Value {
    let (status, _) = progress(job, config, now);
    let counts = |ok: bool| {
        job.lines
            .iter()
            .filter(|(answered, _)| *answered == ok)
            .count()
    };
    json!({
        "id": job.id, "object": "batch", "endpoint": CHAT_URL,
        "errors": if job.validation_errors.is_empty() { Value::Null } else {
            json!({"object": "list", "data": job.validation_errors})
        },
        "input_file_id": job.input_file_id, "completion_window": "24h", "status": status,
        "output_file_id": job.output_file_id, "error_file_id": job.error_file_id,
        "created_at": job.created_at,
        "request_counts": {
            "total": job.requests.len(), "completed": counts(true), "failed": counts(false)
        },
        "metadata": job.metadata,
    })
}

/// The status at `now` and how many requests should have run by then.
fn progress(job: &Job, config: &MockBatchConfig, now: Instant) -> (&'static str, usize) {
    let total = job.requests.len();
    let limit = config.expire_after_requests.unwrap_or(total).min(total);
    let since = |start: Instant, offset: Duration| now.saturating_duration_since(start + offset);
    let validated = job.created + config.validating;
    if !job.validation_errors.is_empty() {
        let status = if now < validated {
            "validating"
        } else {
            "failed"
        };
        return (status, 0);
    }
    if let Some(cancelled) = job.cancelled {
        let done = job.lines.len();
        let status = if now < cancelled + config.finalizing {
            "cancelling"
        } else {
            "cancelled"
        };
        return (status, done);
    }
    if now < validated {
        return ("validating", 0);
    }
    let running = since(job.created, config.validating);
    if running < config.in_progress {
        let share = running.as_secs_f64() / config.in_progress.as_secs_f64();
        return ("in_progress", ((total as f64 * share) as usize).min(limit));
    }
    if limit < total {
        return ("expired", limit);
    }
    let finalizing = since(validated, config.in_progress);
    if finalizing < config.finalizing {
        ("finalizing", total)
    } else {
        ("completed", total)
    }
}

impl Shared {
    /// Brings `job` up to `now`: answers the requests due, and writes its files once over.
    fn advance(&self, job: &mut Job, now: Instant) {
        let (status, due) = progress(job, &self.config.batch, now);
        while job.lines.len() < due {
            let index = job.lines.len();
            let (custom_id, body) = &job.requests[index];
            let line = self.answer_line(&format!("{}_{index}", job.id), custom_id, body);
            job.lines.push(line);
        }
        let terminal = matches!(status, "failed" | "completed" | "expired" | "cancelled");
        if !terminal || job.finished {
            return;
        }
        job.finished = true;
        if status == "failed" {
            return;
        }
        let (code, message) = if status == "expired" {
            (
                "batch_expired",
                "the completion window ended before the request ran",
            )
        } else {
            (
                "batch_cancelled",
                "the batch was cancelled before the request ran",
            )
        };
        for index in job.lines.len()..job.requests.len() {
            let custom_id = &job.requests[index].0;
            let line = json!({
                "id": format!("batch_req_{}_{index}", job.id), "custom_id": custom_id,
                "response": null, "error": {"code": code, "message": message}
            });
            job.lines.push((false, line));
        }
        let mut state = self.lock();
        state.stats.batch_requests_failed +=
            (job.requests.len() - due.min(job.requests.len())) as u64;
        for answered in [true, false] {
            let text: String = job
                .lines
                .iter()
                .filter(|(ok, _)| *ok == answered)
                .map(|(_, line)| format!("{line}\n"))
                .collect();
            if text.is_empty() {
                continue;
            }
            let name = format!(
                "{}_{}.jsonl",
                job.id,
                if answered { "output" } else { "error" }
            );
            let object = state
                .batch
                .add_file(name, "batch_output", text.into_bytes());
            let id = object["id"].as_str().map(str::to_owned);
            if answered {
                job.output_file_id = id;
            } else {
                job.error_file_id = id;
            }
        }
    }

    /// One request answered as the synchronous endpoint would: `(true, line)` for a success,
    /// `(false, line)` for the error file.
    fn answer_line(&self, line_id: &str, custom_id: &str, body: &Value) -> (bool, Value) {
        let (answered, status, response_body) = self.answer_request(body);
        let mut state = self.lock();
        if answered {
            state.stats.batch_requests_answered += 1;
        } else {
            state.stats.batch_requests_failed += 1;
        }
        let line = json!({
            "id": format!("batch_req_{line_id}"), "custom_id": custom_id,
            "response": {"status_code": status, "request_id": format!("req_{line_id}"), "body": response_body},
            "error": null
        });
        (answered, line)
    }

    /// The status and body the synchronous endpoint would answer `body` with, fault draw
    /// included; `true` for a success.
    fn answer_request(&self, body: &Value) -> (bool, u16, Value) {
        let (fault, body_hash, occurrence) = self.draw(true, body);
        let failure = |status: u16, message: &str, kind: &str| {
            (
                false,
                status,
                json!({"error": {"message": message, "type": kind}}),
            )
        };
        match fault {
            Some(Fault::Fail) => {
                self.count_fault(Fault::Fail);
                return failure(500, "mock: injected server error", "server_error");
            }
            Some(Fault::RateLimit) => {
                self.count_fault(Fault::RateLimit);
                return failure(429, "mock: injected rate limit", "rate_limit_error");
            }
            _ => {}
        }
        // A reasoning model refuses chat-model parameters line by line, as OpenAI's batch
        // output records each request's own error.
        if let Some(refusal) = self.param_refusal(body) {
            return (false, 400, json!({ "error": refusal }));
        }
        match scripted_content(&self.config, body) {
            Ok(
                Scripted::Content(content)
                | Scripted::HangThenContent(content)
                | Scripted::Trickle(content),
            ) => {
                let completion = self.completion(body, content, fault, &body_hash, occurrence);
                (true, 200, completion)
            }
            Err((status, text)) => {
                let body = serde_json::from_str(&text).unwrap_or_else(
                    |_| json!({"error": {"message": text, "type": "invalid_request_error"}}),
                );
                (false, status, body)
            }
        }
    }

    /// Answers every line of a batch input file the way `vllm run-batch` does: one output
    /// line per request, in order, failures included (status, `body: null`, the error
    /// message as a string).
    pub(crate) fn run_batch_file(&self, input: &str) -> String {
        let (requests, _) = read_requests(input.as_bytes());
        let mut output = String::new();
        for (index, (custom_id, body)) in requests.iter().enumerate() {
            let (answered, status, response_body) = self.answer_request(body);
            let id = format!("vllm-{index}");
            let line = if answered {
                json!({"id": id, "custom_id": custom_id, "error": null,
                    "response": {"status_code": status, "request_id": id, "body": response_body}})
            } else {
                let message = response_body
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .map_or_else(|| response_body.to_string(), str::to_owned);
                json!({"id": id, "custom_id": custom_id, "error": message,
                    "response": {"status_code": status, "request_id": id, "body": null}})
            };
            output.push_str(&format!("{line}\n"));
        }
        output
    }

    /// The job `id` brought up to now, and its object; `None` when there is no such job.
    fn current(&self, id: &str) -> Option<(Arc<Mutex<Job>>, Value)> {
        let job = self.lock().batch.job(id)?;
        let object = {
            let mut guard = lock(&job);
            let now = Instant::now();
            self.advance(&mut guard, now);
            describe(&guard, &self.config.batch, now)
        };
        Some((job, object))
    }
}

async fn retrieve(State(shared): State<Arc<Shared>>, Path(id): Path<String>) -> Response {
    match shared.current(&id) {
        Some((_, object)) => ok(object),
        None => error(404, &format!("mock: no batch {id}")),
    }
}

async fn cancel(State(shared): State<Arc<Shared>>, Path(id): Path<String>) -> Response {
    let Some((job, _)) = shared.current(&id) else {
        return error(404, &format!("mock: no batch {id}"));
    };
    let mut guard = lock(&job);
    let now = Instant::now();
    let (status, _) = progress(&guard, &shared.config.batch, now);
    if !matches!(status, "validating" | "in_progress" | "finalizing") {
        return error(
            400,
            &format!("mock: cannot cancel a batch that is {status}"),
        );
    }
    guard.cancelled = Some(now);
    shared.advance(&mut guard, now);
    ok(describe(&guard, &shared.config.batch, now))
}

async fn list(State(shared): State<Arc<Shared>>, RawQuery(query): RawQuery) -> Response {
    let params: BTreeMap<&str, &str> = query
        .as_deref()
        .unwrap_or("")
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .collect();
    let limit = params
        .get("limit")
        .and_then(|l| l.parse::<usize>().ok())
        .unwrap_or(20)
        .clamp(1, 100);
    let ids: Vec<String> = {
        let state = shared.lock();
        state
            .batch
            .jobs
            .iter()
            .rev()
            .map(|(id, _)| id.clone())
            .collect()
    };
    let start = match params.get("after") {
        Some(after) => ids
            .iter()
            .position(|id| id == after)
            .map_or(ids.len(), |i| i + 1),
        None => 0,
    };
    let page: Vec<Value> = ids
        .iter()
        .skip(start)
        .take(limit)
        .filter_map(|id| shared.current(id).map(|(_, object)| object))
        .collect();
    let has_more = start + page.len() < ids.len();
    ok(json!({
        "object": "list", "data": page, "has_more": has_more,
        "first_id": page.first().map(|b| b["id"].clone()),
        "last_id": page.last().map(|b| b["id"].clone()),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(lines: &str) -> Job {
        let (requests, validation_errors) = read_requests(lines.as_bytes());
        Job::new(
            "batch_1".into(),
            "file-1".into(),
            requests,
            validation_errors,
        )
    }

    fn requests(n: usize) -> String {
        (0..n)
            .map(|i| {
                format!(
                    "{{\"custom_id\": \"r{i}\", \"method\": \"POST\", \"url\": \"{CHAT_URL}\", \"body\": {{}}}}\n"
                )
            })
            .collect()
    }

    #[test]
    fn batch_lines_carry_the_reasoning_layout_and_strict_params_refusals() {
        let shared = Shared::new(crate::MockConfig {
            reasoning: "field,strict-params".parse().unwrap(),
            ..crate::MockConfig::default()
        });
        let chat = |extra: &str| {
            format!(
                "{{\"custom_id\": \"c\", \"method\": \"POST\", \"url\": \"{CHAT_URL}\", \
                 \"body\": {{\"messages\": [{{\"role\": \"user\", \"content\": \"Item 3 is tall.\"}}]{extra}}}}}"
            )
        };
        let refused: Value = serde_json::from_str(&chat(", \"temperature\": 0")).unwrap();
        let allowed: Value = serde_json::from_str(&chat(", \"temperature\": 1")).unwrap();
        // The OpenAI batch: the refusal goes to the error file with its status and body.
        let (answered, line) = shared.answer_line("b_0", "c", &refused["body"]);
        assert!(!answered);
        assert_eq!(line["response"]["status_code"], 400);
        let error = &line["response"]["body"]["error"];
        assert_eq!(
            (error["param"].clone(), error["code"].clone()),
            (json!("temperature"), json!("unsupported_value"))
        );
        let (answered, line) = shared.answer_line("b_1", "c", &allowed["body"]);
        assert!(answered);
        let body = &line["response"]["body"];
        let message = &body["choices"][0]["message"];
        assert_eq!(message["content"], "Item 3 is tall.");
        assert!(
            message["reasoning_content"]
                .as_str()
                .unwrap()
                .contains("My draft: Item 3 is tall.")
        );
        assert!(body["usage"]["completion_tokens_details"]["reasoning_tokens"].as_u64() > Some(0));
        // The `vllm run-batch` file: the refusal inline, its message as the line's error.
        let output = shared.run_batch_file(&format!(
            "{}\n{}\n",
            chat(", \"max_tokens\": 9"),
            chat("").replace("\"c\"", "\"d\"")
        ));
        let lines: Vec<Value> = output
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines[0]["response"]["status_code"], 400);
        assert!(
            lines[0]["error"]
                .as_str()
                .unwrap()
                .contains("max_completion_tokens")
        );
        assert_eq!(lines[1]["response"]["status_code"], 200);
        assert!(
            lines[1]["response"]["body"]["choices"][0]["message"]["reasoning_content"].is_string()
        );
        let stats = shared.lock().stats.clone();
        assert_eq!(stats.faults.param_400, 2);
        assert_eq!(
            (stats.batch_requests_answered, stats.batch_requests_failed),
            (1, 1)
        );
    }

    #[test]
    fn jobs_move_through_their_states_on_the_clock() {
        let ms = Duration::from_millis;
        let mut config = MockBatchConfig {
            validating: ms(10),
            in_progress: ms(100),
            finalizing: ms(10),
            expire_after_requests: None,
        };
        let ten = job(&requests(10));
        let at = |job: &Job, config: &MockBatchConfig, t: u64| {
            progress(job, config, job.created + ms(t))
        };
        assert_eq!(at(&ten, &config, 0), ("validating", 0));
        assert_eq!(at(&ten, &config, 60), ("in_progress", 5));
        assert_eq!(at(&ten, &config, 115), ("finalizing", 10));
        assert_eq!(at(&ten, &config, 200), ("completed", 10));
        config.expire_after_requests = Some(3);
        assert_eq!(at(&ten, &config, 60), ("in_progress", 3));
        assert_eq!(at(&ten, &config, 200), ("expired", 3));
        let bad = job(&format!("{}not json\n", requests(1)));
        assert_eq!(bad.validation_errors[0]["line"], 2);
        assert_eq!(at(&bad, &config, 5), ("validating", 0));
        assert_eq!(at(&bad, &config, 20), ("failed", 0));
        let doubled = job(&format!("{}{}", requests(1), requests(1)));
        assert!(
            doubled.validation_errors[0]["message"]
                .as_str()
                .unwrap()
                .contains("not unique")
        );
    }
}
