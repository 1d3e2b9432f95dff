//! [`BatchClient`]: the files and batches endpoints of an OpenAI-compatible server (OpenAI,
//! Azure OpenAI, and servers that copy them), over the same [`EndpointSettings`] and the
//! same HTTP plumbing as the synchronous backend — base URL, key and headers marked
//! sensitive, errors with the key redacted, the same retryable-or-not classification.
//!
//! Idempotent calls (upload, retrieve, list, cancel, download) are retried on retryable
//! errors with the [`RetryPolicy`]; creating a batch is retried only on a 429, when the
//! server surely made nothing, because a retry after a lost answer could start the same
//! job twice. [`BatchClient::wait`] polls with a growing interval and reports each change
//! of state to a callback. The client never writes to disk and never prints.

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::future::Future;
use std::time::Duration;

use reqwest::Method;
use reqwest::header::CONTENT_TYPE;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::batch::lines::{
    BATCH_FAILED, BatchItem, CHAT_COMPLETIONS_URL, ItemFailure, ItemOutcome, MISSING_FROM_OUTPUT,
    parse_output,
};
use crate::error::JudgeError;
use crate::openai::OpenAiBackend;
use crate::retry::RetryPolicy;
use crate::settings::EndpointSettings;

/// The only completion window OpenAI offers.
pub const DEFAULT_COMPLETION_WINDOW: &str = "24h";
/// Longest one file upload or download may take: the per-call timeout of chat calls is far
/// too short for a 200 MB file.
pub const FILE_TRANSFER_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// First wait between two polls of a batch.
pub const DEFAULT_FIRST_POLL: Duration = Duration::from_secs(5);
/// Longest wait between two polls of a batch.
pub const DEFAULT_MAX_POLL: Duration = Duration::from_secs(60);

/// A file on the server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileObject {
    /// `file-...`.
    pub id: String,
    /// Size in bytes.
    #[serde(default, deserialize_with = "null_as_default")]
    pub bytes: u64,
    /// The name it was uploaded under.
    #[serde(default, deserialize_with = "null_as_default")]
    pub filename: String,
    /// `batch`, `batch_output`, ...
    #[serde(default, deserialize_with = "null_as_default")]
    pub purpose: String,
}

/// Where a batch job is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BatchStatus {
    /// The input file is being checked.
    Validating,
    /// The input file was rejected: nothing ran.
    Failed,
    /// Requests are being answered.
    InProgress,
    /// Answers are being written to the output files.
    Finalizing,
    /// Done; the output and error files are ready.
    Completed,
    /// The completion window passed; what ran is in the files, the rest expired.
    Expired,
    /// Cancelling; what ran will be in the files.
    Cancelling,
    /// Cancelled; what ran is in the files.
    Cancelled,
    /// A status this client does not know.
    #[serde(other)]
    Unknown,
}

impl BatchStatus {
    /// Whether the job is over and its files (if any) are final.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            BatchStatus::Failed
                | BatchStatus::Completed
                | BatchStatus::Expired
                | BatchStatus::Cancelled
        )
    }

    /// The API's name for it.
    pub fn as_str(self) -> &'static str {
        match self {
            BatchStatus::Validating => "validating",
            BatchStatus::Failed => "failed",
            BatchStatus::InProgress => "in_progress",
            BatchStatus::Finalizing => "finalizing",
            BatchStatus::Completed => "completed",
            BatchStatus::Expired => "expired",
            BatchStatus::Cancelling => "cancelling",
            BatchStatus::Cancelled => "cancelled",
            BatchStatus::Unknown => "unknown",
        }
    }
}

impl fmt::Display for BatchStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How many requests of a job are done.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestCounts {
    /// Requests in the job.
    #[serde(default, deserialize_with = "null_as_default")]
    pub total: u64,
    /// Answered with a success.
    #[serde(default, deserialize_with = "null_as_default")]
    pub completed: u64,
    /// Answered with an error.
    #[serde(default, deserialize_with = "null_as_default")]
    pub failed: u64,
}

/// One reason a job failed as a whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchJobError {
    /// Error code.
    #[serde(default)]
    pub code: Option<String>,
    /// What is wrong.
    #[serde(default)]
    pub message: Option<String>,
    /// The input file's line, when the error is about one.
    #[serde(default)]
    pub line: Option<u64>,
}

/// The errors of a failed job.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchJobErrors {
    /// Each error.
    #[serde(default, deserialize_with = "null_as_default")]
    pub data: Vec<BatchJobError>,
}

/// A batch job as the server describes it (fields rageval does not use are dropped).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Batch {
    /// `batch_...`.
    pub id: String,
    /// Where it is.
    pub status: BatchStatus,
    /// The input file.
    #[serde(default, deserialize_with = "null_as_default")]
    pub input_file_id: String,
    /// The answers, once there are any.
    #[serde(default)]
    pub output_file_id: Option<String>,
    /// The failed requests, once there are any.
    #[serde(default)]
    pub error_file_id: Option<String>,
    /// Progress.
    #[serde(default, deserialize_with = "null_as_default")]
    pub request_counts: RequestCounts,
    /// Why it failed, when it did.
    #[serde(default)]
    pub errors: Option<BatchJobErrors>,
    /// What the creator attached.
    #[serde(default)]
    pub metadata: Option<BTreeMap<String, String>>,
}

/// One page of [`BatchClient::list`], newest first.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct BatchPage {
    /// The jobs.
    #[serde(default)]
    pub data: Vec<Batch>,
    /// Whether older jobs follow (ask again with `after` = the last id).
    #[serde(default)]
    pub has_more: bool,
}

fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// How often [`BatchClient::wait`] asks: `first`, doubling after each poll up to `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PollPolicy {
    /// Wait before the second poll.
    pub first: Duration,
    /// Longest wait.
    pub max: Duration,
}

impl Default for PollPolicy {
    fn default() -> Self {
        PollPolicy {
            first: DEFAULT_FIRST_POLL,
            max: DEFAULT_MAX_POLL,
        }
    }
}

/// A client for the files and batches endpoints of one server.
#[derive(Debug, Clone)]
pub struct BatchClient {
    http: OpenAiBackend,
    retry: RetryPolicy,
}

impl BatchClient {
    /// A client over `settings` (the model named there is the one batch lines ask for).
    pub fn new(settings: EndpointSettings) -> Result<Self, JudgeError> {
        Ok(BatchClient {
            http: OpenAiBackend::new(settings)?,
            retry: RetryPolicy::default(),
        })
    }

    /// Replaces the retry policy of the idempotent calls.
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// The endpoint, redacted, for messages.
    pub fn endpoint(&self) -> String {
        self.http.settings().endpoint_for_display()
    }

    /// Uploads one input file (`purpose=batch`) under `file_name`.
    pub async fn upload(&self, file_name: &str, jsonl: &[u8]) -> Result<FileObject, JudgeError> {
        let (content_type, body) = multipart_upload(file_name, jsonl);
        let value = self
            .retrying(JudgeError::is_retryable, || async {
                let request = self
                    .http
                    .request(Method::POST, "files")
                    .timeout(FILE_TRANSFER_TIMEOUT)
                    .header(CONTENT_TYPE, content_type.as_str())
                    .body(body.clone());
                let response = self.http.send(request).await?;
                self.http.json_body(response).await
            })
            .await?;
        self.read(value, "a file object")
    }

    /// Starts a job over an uploaded input file, for `/v1/chat/completions` in 24 hours,
    /// with `metadata` attached (a run can find its own jobs again by it).
    pub async fn create(
        &self,
        input_file_id: &str,
        metadata: &BTreeMap<String, String>,
    ) -> Result<Batch, JudgeError> {
        let mut body = json!({
            "input_file_id": input_file_id,
            "endpoint": CHAT_COMPLETIONS_URL,
            "completion_window": DEFAULT_COMPLETION_WINDOW,
        });
        if !metadata.is_empty() {
            body["metadata"] = json!(metadata);
        }
        let refused = |e: &JudgeError| matches!(e, JudgeError::Status { status: 429, .. });
        let value = self
            .retrying(refused, || self.call(Method::POST, "batches", Some(&body)))
            .await?;
        self.read(value, "a batch")
    }

    /// The job now.
    pub async fn retrieve(&self, batch_id: &str) -> Result<Batch, JudgeError> {
        self.idempotent(Method::GET, &format!("batches/{batch_id}"), "a batch")
            .await
    }

    /// Asks the server to cancel the job; answered requests stay in its files.
    pub async fn cancel(&self, batch_id: &str) -> Result<Batch, JudgeError> {
        let path = format!("batches/{batch_id}/cancel");
        self.idempotent(Method::POST, &path, "a batch").await
    }

    /// One page of the account's jobs, newest first, starting after the job `after`.
    pub async fn list(&self, after: Option<&str>, limit: u32) -> Result<BatchPage, JudgeError> {
        let mut path = format!("batches?limit={limit}");
        if let Some(after) = after {
            path.push_str(&format!("&after={after}"));
        }
        self.idempotent(Method::GET, &path, "a list of batches")
            .await
    }

    /// Polls the job until it is over, calling `on_change` with the first state seen and
    /// with every state whose status or counts differ from the one before. Waits follow
    /// `poll`; a poll that fails with a retryable error is retried (the retry policy's
    /// attempts apply to consecutive failures). Dropping the future stops polling, nothing
    /// else: the job runs on.
    pub async fn wait(
        &self,
        batch_id: &str,
        poll: &PollPolicy,
        mut on_change: impl FnMut(&Batch),
    ) -> Result<Batch, JudgeError> {
        let mut last: Option<(BatchStatus, RequestCounts)> = None;
        let mut interval = poll.first;
        loop {
            let batch = self.retrieve(batch_id).await?;
            let state = (batch.status, batch.request_counts);
            if last != Some(state) {
                on_change(&batch);
                last = Some(state);
            }
            if batch.status.is_terminal() {
                return Ok(batch);
            }
            tokio::time::sleep(interval).await;
            interval = (interval * 2).min(poll.max.max(poll.first));
        }
    }

    /// The content of a file.
    pub async fn download(&self, file_id: &str) -> Result<Vec<u8>, JudgeError> {
        let path = format!("files/{file_id}/content");
        self.retrying(JudgeError::is_retryable, || async {
            let request = self
                .http
                .request(Method::GET, &path)
                .timeout(FILE_TRANSFER_TIMEOUT);
            let response = self.http.send(request).await?;
            self.http.bytes_body(response).await
        })
        .await
    }

    /// Every answer of a finished job: its output and error files read, and each request of
    /// `submitted` (the job's `custom_id`s) that neither file mentions reported as failed —
    /// `batch_expired` / `batch_cancelled` for a job that expired or was cancelled,
    /// [`BATCH_FAILED`] with the job's errors for one that failed, else
    /// [`MISSING_FROM_OUTPUT`]. Refuses a job that is not over.
    pub async fn results(
        &self,
        batch: &Batch,
        submitted: &[String],
    ) -> Result<Vec<BatchItem>, JudgeError> {
        if !batch.status.is_terminal() {
            return Err(JudgeError::Settings(format!(
                "batch {} is {}, not over: wait for it before reading its answers",
                batch.id, batch.status
            )));
        }
        let mut items = Vec::new();
        for file_id in [&batch.output_file_id, &batch.error_file_id]
            .into_iter()
            .flatten()
        {
            let name = format!("file {file_id} of batch {}", batch.id);
            let bytes = self.download(file_id).await?;
            let text = String::from_utf8(bytes).map_err(|_| JudgeError::BatchFile {
                file: name.clone(),
                line: None,
                message: "not utf-8 text".into(),
            })?;
            items.extend(parse_output(&text, &name)?);
        }
        let answered: HashSet<&str> = items.iter().map(|i| i.custom_id.as_str()).collect();
        let failure = unanswered(batch);
        let missing: Vec<BatchItem> = submitted
            .iter()
            .filter(|id| !answered.contains(id.as_str()))
            .map(|id| BatchItem {
                custom_id: id.clone(),
                outcome: ItemOutcome::Failed(failure.clone()),
            })
            .collect();
        items.extend(missing);
        Ok(items)
    }

    async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, JudgeError> {
        let mut request = self.http.request(method, path);
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = self.http.send(request).await?;
        self.http.json_body(response).await
    }

    /// A bodiless call that may be repeated safely, retried on retryable errors, its answer
    /// read as `what`.
    async fn idempotent<T: serde::de::DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        what: &str,
    ) -> Result<T, JudgeError> {
        let value = self
            .retrying(JudgeError::is_retryable, || {
                self.call(method.clone(), path, None)
            })
            .await?;
        self.read(value, what)
    }

    fn read<T: serde::de::DeserializeOwned>(
        &self,
        value: Value,
        what: &str,
    ) -> Result<T, JudgeError> {
        serde_json::from_value(value).map_err(|e| self.http.protocol(format!("not {what}: {e}")))
    }

    /// Runs `call` until it succeeds, fails with an error `retry_on` refuses, or the retry
    /// policy gives up.
    async fn retrying<T, Fut>(
        &self,
        retry_on: impl Fn(&JudgeError) -> bool,
        call: impl Fn() -> Fut,
    ) -> Result<T, JudgeError>
    where
        Fut: Future<Output = Result<T, JudgeError>>,
    {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let error = match call().await {
                Ok(value) => return Ok(value),
                Err(error) => error,
            };
            let wait = if retry_on(&error) {
                self.retry.next_delay(attempt, &error)
            } else {
                None
            };
            match wait {
                Some(wait) => tokio::time::sleep(wait).await,
                None if attempt > 1 => {
                    return Err(JudgeError::RetriesExhausted {
                        attempts: attempt,
                        last: Box::new(error),
                    });
                }
                None => return Err(error),
            }
        }
    }
}

/// What a finished job says about a request its files do not mention.
fn unanswered(batch: &Batch) -> ItemFailure {
    let (code, message) = match batch.status {
        BatchStatus::Expired => (
            "batch_expired",
            "the completion window ended before the request ran".to_owned(),
        ),
        BatchStatus::Cancelled | BatchStatus::Cancelling => (
            "batch_cancelled",
            "the batch was cancelled before the request ran".to_owned(),
        ),
        BatchStatus::Failed => {
            let errors = batch
                .errors
                .as_ref()
                .map(|e| e.data.as_slice())
                .unwrap_or(&[]);
            let reasons: Vec<String> = errors
                .iter()
                .map(|e| {
                    let line = e.line.map(|l| format!("line {l}: ")).unwrap_or_default();
                    format!("{line}{}", e.message.as_deref().unwrap_or("no detail"))
                })
                .collect();
            let reasons = if reasons.is_empty() {
                "no reason given".to_owned()
            } else {
                reasons.join("; ")
            };
            (BATCH_FAILED, format!("the batch failed: {reasons}"))
        }
        status => (
            MISSING_FROM_OUTPUT,
            format!("the batch ended {status} without answering it"),
        ),
    };
    ItemFailure {
        status: None,
        code: Some(code.into()),
        message,
    }
}

/// A `multipart/form-data` body with `purpose=batch` and the file (RFC 7578), and its
/// content type. Written by hand: two parts do not justify a multipart dependency. The
/// boundary is derived from the content and lengthened until the content does not hold it.
fn multipart_upload(file_name: &str, jsonl: &[u8]) -> (String, Vec<u8>) {
    let digest = Sha256::digest(jsonl);
    let mut boundary = format!(
        "rageval-{}",
        digest[..12]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    );
    while jsonl
        .windows(boundary.len())
        .any(|w| w == boundary.as_bytes())
    {
        boundary.push('x');
    }
    let name: String = file_name
        .chars()
        .map(|c| {
            if matches!(c, '"' | '\\' | '\r' | '\n') {
                '_'
            } else {
                c
            }
        })
        .collect();
    let mut body = Vec::with_capacity(jsonl.len() + 512);
    body.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n\
             --{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n\
             Content-Type: application/jsonl\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(jsonl);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_objects_read_with_nulls_and_unknown_states() {
        let value = json!({
            "id": "batch_1", "object": "batch", "status": "in_progress",
            "input_file_id": "file-1", "output_file_id": null, "error_file_id": null,
            "request_counts": {"total": 3, "completed": 1, "failed": 0},
            "errors": null, "metadata": null, "created_at": 1
        });
        let batch: Batch = serde_json::from_value(value).unwrap();
        assert_eq!(batch.status, BatchStatus::InProgress);
        assert!(!batch.status.is_terminal());
        assert_eq!(batch.request_counts.completed, 1);
        let odd: Batch =
            serde_json::from_value(json!({"id": "b", "status": "paused", "request_counts": null}))
                .unwrap();
        assert_eq!(odd.status, BatchStatus::Unknown);
        assert_eq!(odd.request_counts, RequestCounts::default());
    }

    #[test]
    fn multipart_body_has_both_parts_and_a_boundary_absent_from_the_file() {
        let file = b"{\"a\":1}\n{\"b\":\"x\\\"y\"}\n";
        let (content_type, body) = multipart_upload("stage\"1.jsonl", file);
        let boundary = content_type.split("boundary=").nth(1).unwrap();
        assert!(
            !file
                .windows(boundary.len())
                .any(|w| w == boundary.as_bytes())
        );
        let text = String::from_utf8(body).unwrap();
        assert!(text.contains("name=\"purpose\"\r\n\r\nbatch\r\n"), "{text}");
        assert!(text.contains("filename=\"stage_1.jsonl\""), "{text}");
        assert!(text.ends_with(&format!("\r\n--{boundary}--\r\n")));
    }

    #[test]
    fn unanswered_requests_of_a_failed_job_quote_its_errors() {
        let batch: Batch = serde_json::from_value(json!({
            "id": "b", "status": "failed",
            "errors": {"object": "list", "data": [{"code": "invalid", "message": "bad url", "line": 2}]}
        }))
        .unwrap();
        let failure = unanswered(&batch);
        assert_eq!(failure.code.as_deref(), Some(BATCH_FAILED));
        assert!(
            failure.message.contains("line 2: bad url"),
            "{}",
            failure.message
        );
        assert!(!failure.resubmittable());
    }
}
