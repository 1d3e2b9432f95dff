//! The judge's one error type, and which of its cases are worth retrying.
//!
//! Variants carry the endpoint (as [`display_endpoint`](crate::settings::display_endpoint)
//! prints it: no user info, no query), the HTTP status and the first line of the body, never
//! a key or a header value. Messages are lowercase with no trailing period.

use std::time::Duration;

use crate::accounting::Cap;

/// Everything that can go wrong on the way from a request to a typed answer.
#[derive(Debug, thiserror::Error)]
pub enum JudgeError {
    /// Settings could not be resolved (missing model, malformed header list, ...).
    #[error("judge settings: {0}")]
    Settings(String),

    /// The HTTP client could not be built.
    #[error("cannot build http client for {endpoint}")]
    Client {
        /// Endpoint, redacted.
        endpoint: String,
        /// Why.
        #[source]
        source: reqwest::Error,
    },

    /// The server answered with a non-success status.
    #[error("{endpoint} answered http {status}: {first_line}")]
    Status {
        /// Endpoint, redacted.
        endpoint: String,
        /// HTTP status code.
        status: u16,
        /// First line of the body, shortened, with the key redacted.
        first_line: String,
        /// The server's `Retry-After` (or `retry-after-ms`), if it sent one.
        retry_after: Option<Duration>,
    },

    /// One HTTP attempt took longer than the per-call timeout.
    #[error("request to {endpoint} timed out after {}s", timeout.as_secs_f64())]
    Timeout {
        /// Endpoint, redacted.
        endpoint: String,
        /// The per-call timeout that expired.
        timeout: Duration,
    },

    /// The connection failed, was refused or was reset.
    #[error("connection to {endpoint} failed")]
    Transport {
        /// Endpoint, redacted.
        endpoint: String,
        /// The transport error, with its URL removed.
        #[source]
        source: reqwest::Error,
    },

    /// A success status whose body is not an OpenAI-shaped answer.
    #[error("unexpected response from {endpoint}: {detail}")]
    Protocol {
        /// Endpoint, redacted.
        endpoint: String,
        /// What was wrong.
        detail: String,
    },

    /// Offline mode and the cache holds no answer for this request.
    #[error("offline: no cached answer for {template} (cache key {key})")]
    OfflineMiss {
        /// Prompt template id and version.
        template: String,
        /// Hex cache key, to find the request among others.
        key: String,
    },

    /// Every retry failed; `last` is the final attempt's error.
    #[error("gave up after {attempts} attempts")]
    RetriesExhausted {
        /// Attempts made.
        attempts: u32,
        /// The last attempt's error.
        #[source]
        last: Box<JudgeError>,
    },

    /// The answer never matched the schema, even after the re-ask. The raw text is kept.
    #[error("answer for {template} does not match its schema after a re-ask: {reason}")]
    Unparsed {
        /// Prompt template id and version.
        template: String,
        /// The parse or validation error of the last answer.
        reason: String,
        /// The last answer's raw text.
        raw: String,
    },

    /// The SQLite cache failed.
    #[error("judge cache {path}")]
    Cache {
        /// The cache file.
        path: String,
        /// Why.
        #[source]
        source: rusqlite::Error,
    },

    /// The cache directory could not be created.
    #[error("cannot create cache directory {path}")]
    CacheDir {
        /// The directory.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },

    /// No folder holding the embedded model files was found.
    #[error(
        "no models folder found; looked in: {looked}; run scripts/fetch-models.sh to provision one"
    )]
    ModelsNotFound {
        /// Each place looked, with why it did not qualify.
        looked: String,
    },

    /// An embedded model could not be loaded or failed while running.
    #[error("local model {path}: {reason}")]
    LocalModel {
        /// The model file or folder.
        path: String,
        /// What went wrong.
        reason: String,
    },

    /// An embedded backend this build was compiled without (its cargo feature left out).
    /// Known before any call: a usage error, never a judge that failed.
    #[error("{path}: this rageval was built without the `{feature}` feature ({what})")]
    NotBuilt {
        /// The cargo feature that builds it (`gguf`, `minilm`, `checker`).
        feature: &'static str,
        /// What the feature brings, in words.
        what: &'static str,
        /// The model file or folder that was asked for.
        path: String,
    },

    /// The prompt does not fit the model's context window with room for the answer. Not
    /// retryable as is: the caller may ask again with less material (fewer contexts).
    #[error(
        "{model}: the prompt has {prompt_tokens} tokens and the answer needs up to \
         {answer_tokens}; the context window holds {window}"
    )]
    PromptTooLong {
        /// The model (a GGUF file's path).
        model: String,
        /// Tokens of the prompt in the model's own tokenizer.
        prompt_tokens: u64,
        /// Tokens kept free for the answer.
        answer_tokens: u64,
        /// The context window in tokens.
        window: u64,
    },

    /// The reply was cut off at the token cap before any answer came, twice: the first time
    /// at the cap the request asked for, then at a larger one (a reasoning model that spends
    /// every token it is given thinking).
    #[error(
        "the judge's thinking used {} and left no answer ({model} at {endpoint}); asked again, \
         it used {} with no answer again: raise the judge's token cap or lower its reasoning \
         effort",
        used_of(*.used, *.cap), used_of(*.used_again, *.cap_again)
    )]
    CutOff {
        /// Endpoint, redacted.
        endpoint: String,
        /// The model.
        model: String,
        /// Completion tokens of the first reply.
        used: u64,
        /// The first request's cap (`None`: the server's own limit).
        cap: Option<u32>,
        /// Completion tokens of the second reply.
        used_again: u64,
        /// The second request's cap.
        cap_again: Option<u32>,
    },

    /// A background task died (a panic inside the cache thread or a batch member).
    #[error("judge task failed: {0}")]
    Task(String),

    /// A cap (`max_calls`, `max_cost_usd`) is reached: the call was not sent. Calls already
    /// in flight finish and are kept.
    #[error("budget exhausted: {cap} reached ({calls} calls answered, ${cost_usd:.4} spent)")]
    BudgetExhausted {
        /// The cap that stopped the call.
        cap: Cap,
        /// Model calls answered so far.
        calls: u64,
        /// Cost so far, in US dollars.
        cost_usd: f64,
    },

    /// The judge was cancelled (e.g. Ctrl-C): the call was abandoned or never started.
    #[error("cancelled")]
    Cancelled,

    /// The judge was halted because it refuses or cannot answer calls ([`crate::health`]):
    /// the call was not sent.
    #[error("{0}")]
    Unavailable(Box<crate::health::Halt>),

    /// Batch mode: this request has no batch answer yet. It is recorded as pending and goes
    /// out in the next batch job; the caller holds the work back (a stop, not a failure) and
    /// runs it again once the answers are loaded.
    #[error("waiting for a batch answer (request {key})")]
    Pending {
        /// The request's batch key (`custom_id` of its batch input line).
        key: String,
    },

    /// A batch job did not answer this request: it expired or was cancelled first, the job
    /// failed, the answer is missing from the output, or the server answered it with a
    /// status worth another try. Never retried in place: the batch was the attempt, and
    /// resubmitting it is the batch settings' decision.
    #[error("batch request {custom_id} at {endpoint} was not answered: {}", item_failure(*.status, .code, .message))]
    BatchItem {
        /// Endpoint, redacted.
        endpoint: String,
        /// The request's `custom_id`.
        custom_id: String,
        /// The HTTP status the batch recorded for it, if any.
        status: Option<u16>,
        /// The batch's error code (`batch_expired`, `batch_cancelled`, ...), if any.
        code: Option<String>,
        /// What the batch said.
        message: String,
    },

    /// A batch input or output file is malformed.
    #[error("{}", config_location(.file, *.line, "", .message))]
    BatchFile {
        /// The file (a path, or a file id on the server).
        file: String,
        /// 1-based line, when known.
        line: Option<usize>,
        /// What is wrong.
        message: String,
    },

    /// A batch file could not be read or written.
    #[error("batch file {path}")]
    BatchIo {
        /// The file or directory.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },

    /// A line of an exported cache file (`rageval cache import`) is malformed.
    #[error("{}", config_location(.file, *.line, "", .message))]
    CacheFile {
        /// The file.
        file: String,
        /// 1-based line, when known.
        line: Option<usize>,
        /// What is wrong.
        message: String,
    },

    /// An exported cache file could not be read or written.
    #[error("cache file {path}")]
    CacheFileIo {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },

    /// A configuration file is wrong. Values are never quoted: they may be secrets.
    #[error("{}", config_location(.file, *.line, .field, .message))]
    Config {
        /// The file.
        file: String,
        /// 1-based line, when known.
        line: Option<usize>,
        /// The offending key, dotted (`judge.endpoints[1].weight`), or the nearest known.
        field: String,
        /// What is wrong.
        message: String,
    },
}

/// `900 of 1024 tokens`, or `900 tokens (no cap sent)`.
fn used_of(used: u64, cap: Option<u32>) -> String {
    match cap {
        Some(cap) => format!("{used} of {cap} tokens"),
        None => format!("{used} tokens (no cap sent)"),
    }
}

/// `http 500, batch_expired: message`, leaving out what is unknown.
fn item_failure(status: Option<u16>, code: &Option<String>, message: &str) -> String {
    let mut parts = Vec::new();
    if let Some(status) = status {
        parts.push(format!("http {status}"));
    }
    if let Some(code) = code {
        parts.push(code.clone());
    }
    if parts.is_empty() {
        message.to_owned()
    } else {
        format!("{}: {message}", parts.join(", "))
    }
}

/// `file:line: field: message`, leaving out what is unknown.
fn config_location(file: &str, line: Option<usize>, field: &str, message: &str) -> String {
    let line = line.map(|l| format!(":{l}")).unwrap_or_default();
    if field.is_empty() {
        format!("{file}{line}: {message}")
    } else {
        format!("{file}{line}: {field}: {message}")
    }
}

impl JudgeError {
    /// Whether trying the same request again may succeed: 408, 409, 429 and 5xx statuses,
    /// timeouts and transport failures. Never 400, 401, 403, 404 or 422: those will fail the
    /// same way every time, and retrying them only burns quota.
    pub fn is_retryable(&self) -> bool {
        match self {
            JudgeError::Status { status, .. } => {
                matches!(status, 408 | 409 | 429) || (500..=599).contains(status)
            }
            JudgeError::Timeout { .. } | JudgeError::Transport { .. } => true,
            _ => false,
        }
    }

    /// Whether the server is telling us to slow down (a 429), which is what makes the
    /// limiter cut its concurrency. A timeout is not: a slow thinker is not an overloaded
    /// server, and cutting its concurrency only re-bills its thinking more slowly.
    pub fn is_overload(&self) -> bool {
        matches!(self, JudgeError::Status { status: 429, .. })
    }

    /// The server's requested wait, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            JudgeError::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// Whether the error means "stop", not "this call failed": a cap was reached, the
    /// judge was cancelled, it was halted as unavailable, or (batch mode) the answer is
    /// pending in the next batch job. Callers end the run or the pass cleanly (keeping what
    /// finished) instead of recording a failed score.
    pub fn is_stop(&self) -> bool {
        matches!(
            self,
            JudgeError::BudgetExhausted { .. }
                | JudgeError::Cancelled
                | JudgeError::Unavailable(_)
                | JudgeError::Pending { .. }
        )
    }

    /// The raw model text this error kept, if any.
    pub fn raw_text(&self) -> Option<&str> {
        match self {
            JudgeError::Unparsed { raw, .. } => Some(raw),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: u16) -> JudgeError {
        JudgeError::Status {
            endpoint: "http://127.0.0.1/v1".into(),
            status: code,
            first_line: "x".into(),
            retry_after: None,
        }
    }

    #[test]
    fn client_errors_are_never_retried() {
        for code in [400, 401, 403, 404, 422] {
            assert!(!status(code).is_retryable(), "{code}");
        }
        for code in [408, 429, 500, 502, 503, 504] {
            assert!(status(code).is_retryable(), "{code}");
        }
        let timeout = JudgeError::Timeout {
            endpoint: "e".into(),
            timeout: Duration::from_millis(5),
        };
        assert!(timeout.is_retryable() && !timeout.is_overload());
        assert!(!status(500).is_overload() && status(429).is_overload());
    }

    #[test]
    fn a_pending_batch_answer_is_a_stop_and_batch_items_say_why() {
        let pending = JudgeError::Pending { key: "ab12".into() };
        assert!(pending.is_stop() && !pending.is_retryable());
        assert_eq!(
            pending.to_string(),
            "waiting for a batch answer (request ab12)"
        );
        let item = JudgeError::BatchItem {
            endpoint: "http://127.0.0.1/v1".into(),
            custom_id: "ab12".into(),
            status: None,
            code: Some("batch_expired".into()),
            message: "too late".into(),
        };
        assert!(!item.is_stop() && !item.is_retryable());
        assert_eq!(
            item.to_string(),
            "batch request ab12 at http://127.0.0.1/v1 was not answered: batch_expired: too late"
        );
        let file = JudgeError::BatchFile {
            file: "out.jsonl".into(),
            line: Some(3),
            message: "not a batch output line".into(),
        };
        assert_eq!(file.to_string(), "out.jsonl:3: not a batch output line");
    }

    #[test]
    fn messages_are_lowercase_and_name_the_endpoint() {
        let msg = status(503).to_string();
        assert_eq!(msg, "http://127.0.0.1/v1 answered http 503: x");
    }
}
