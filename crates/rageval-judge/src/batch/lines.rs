//! The two JSONL line formats of OpenAI-compatible batch jobs: the request line of an input
//! file ([`BatchRequest`]) and the line of an output or error file, read into a
//! [`BatchItem`]. The output format is also what `vllm run-batch` writes (errors there carry
//! a status and a string or an error object, all in one file), so both readings are
//! accepted. This module only converts text; it makes no request.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::chat::{ChatRequest, ChatResponse};
use crate::error::JudgeError;
use crate::openai::{chat_body, parse_chat_completion};

/// The endpoint every request line of a chat batch names.
pub const CHAT_COMPLETIONS_URL: &str = "/v1/chat/completions";

/// One line of a batch input file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchRequest {
    /// Matches the answer to the request; unique within a file.
    pub custom_id: String,
    /// Always `POST`.
    pub method: String,
    /// Always [`CHAT_COMPLETIONS_URL`] here.
    pub url: String,
    /// Exactly the body the synchronous backend sends for the same request.
    pub body: Value,
}

impl BatchRequest {
    /// The line for `request` to `model` in the default request form, under `custom_id`.
    pub fn chat(custom_id: impl Into<String>, model: &str, request: &ChatRequest) -> Self {
        BatchRequest::with_body(custom_id, chat_body(model, request, &Default::default()))
    }

    /// The line for a chat body already built.
    pub(crate) fn with_body(custom_id: impl Into<String>, body: Value) -> Self {
        BatchRequest {
            custom_id: custom_id.into(),
            method: "POST".into(),
            url: CHAT_COMPLETIONS_URL.into(),
            body,
        }
    }
}

/// Why a batch did not answer one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemFailure {
    /// The HTTP status recorded for it, when it got one.
    pub status: Option<u16>,
    /// The error code (`batch_expired`, `batch_cancelled`, `request_timeout`, ... or one of
    /// ours: [`MISSING_FROM_OUTPUT`], [`BATCH_FAILED`], [`UNREADABLE_ANSWER`]).
    pub code: Option<String>,
    /// What the batch said.
    pub message: String,
}

/// Code of a request a finished batch's files do not mention.
pub const MISSING_FROM_OUTPUT: &str = "missing_from_output";
/// Code of the requests of a batch that failed as a whole (its input was rejected).
pub const BATCH_FAILED: &str = "batch_failed";
/// Code of a success whose body is not a chat completion.
pub const UNREADABLE_ANSWER: &str = "unreadable_answer";

/// Codes of failures that another batch may well answer.
const RESUBMITTABLE_CODES: [&str; 4] = [
    "batch_expired",
    "batch_cancelled",
    "request_timeout",
    MISSING_FROM_OUTPUT,
];

impl ItemFailure {
    /// Whether sending the request again in another batch may succeed: the same statuses
    /// the synchronous path retries (408, 409, 429, 5xx) and requests the batch never ran
    /// (expired, cancelled, timed out, missing). Never a 4xx client error or a failed job.
    pub fn resubmittable(&self) -> bool {
        let status = self
            .status
            .is_some_and(|s| matches!(s, 408 | 409 | 429) || (500..=599).contains(&s));
        let code = self
            .code
            .as_deref()
            .is_some_and(|c| RESUBMITTABLE_CODES.contains(&c));
        status || code
    }

    /// The error a call gets for this failure. A client error (4xx but 408, 409, 429) is
    /// the [`JudgeError::Status`] the synchronous call would have got, so the judge reacts
    /// the same way (a rejected `response_format` moves the schema into the prompt); every
    /// other failure is a [`JudgeError::BatchItem`], never retried in place.
    pub fn to_error(&self, endpoint: &str, custom_id: &str) -> JudgeError {
        match self.status {
            Some(status) if (400..500).contains(&status) && !self.resubmittable() => {
                JudgeError::Status {
                    endpoint: format!("{endpoint} (batch request {custom_id})"),
                    status,
                    first_line: self.message.clone(),
                    retry_after: None,
                }
            }
            status => JudgeError::BatchItem {
                endpoint: endpoint.to_owned(),
                custom_id: custom_id.to_owned(),
                status,
                code: self.code.clone(),
                message: self.message.clone(),
            },
        }
    }
}

/// What a batch said about one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ItemOutcome {
    /// Answered: the same [`ChatResponse`] the synchronous backend makes of the body.
    Answered(ChatResponse),
    /// Not answered.
    Failed(ItemFailure),
}

/// One line of an output or error file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchItem {
    /// The request's `custom_id`.
    pub custom_id: String,
    /// Its answer or why there is none.
    pub outcome: ItemOutcome,
}

#[derive(Deserialize)]
struct WireOutputLine {
    custom_id: String,
    #[serde(default)]
    response: Option<WireResponse>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct WireResponse {
    #[serde(default = "ok_status")]
    status_code: u16,
    #[serde(default)]
    body: Option<Value>,
}

fn ok_status() -> u16 {
    200
}

/// Longest error message kept from a batch file, in characters.
const MAX_MESSAGE_CHARS: usize = 300;

/// Reads every line of an output or error file (blank lines skipped). `file` names it in
/// errors (a path, or a file id). A line that is not an output line fails the whole file,
/// naming the line: its answer cannot be matched to a request.
pub fn parse_output(text: &str, file: &str) -> Result<Vec<BatchItem>, JudgeError> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(index, line)| {
            let wire: WireOutputLine =
                serde_json::from_str(line).map_err(|e| JudgeError::BatchFile {
                    file: file.to_owned(),
                    line: Some(index + 1),
                    message: format!("not a batch output line: {e}"),
                })?;
            Ok(BatchItem {
                custom_id: wire.custom_id,
                outcome: outcome(wire.response, wire.error),
            })
        })
        .collect()
}

/// Reads an output or error file from disk (what `vllm run-batch -o` writes, or a file
/// downloaded from a provider).
pub fn read_output_file(path: &Path) -> Result<Vec<BatchItem>, JudgeError> {
    parse_output(&read_text(path)?, &path.display().to_string())
}

/// Reads the request lines of an input file (blank lines skipped), e.g. to learn which
/// requests a journaled file holds.
pub fn parse_requests(text: &str, file: &str) -> Result<Vec<BatchRequest>, JudgeError> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(index, line)| {
            serde_json::from_str(line).map_err(|e| JudgeError::BatchFile {
                file: file.to_owned(),
                line: Some(index + 1),
                message: format!("not a batch request line: {e}"),
            })
        })
        .collect()
}

/// Reads an input file from disk.
pub fn read_request_file(path: &Path) -> Result<Vec<BatchRequest>, JudgeError> {
    parse_requests(&read_text(path)?, &path.display().to_string())
}

fn read_text(path: &Path) -> Result<String, JudgeError> {
    std::fs::read_to_string(path).map_err(|source| JudgeError::BatchIo {
        path: path.display().to_string(),
        source,
    })
}

fn outcome(response: Option<WireResponse>, error: Option<Value>) -> ItemOutcome {
    let error = error.filter(|e| !e.is_null());
    match response {
        Some(WireResponse {
            status_code: 200..=299,
            body: Some(body),
        }) if error.is_none() => match parse_chat_completion(body) {
            Ok(answer) => ItemOutcome::Answered(answer),
            Err(detail) => ItemOutcome::Failed(ItemFailure {
                status: None,
                code: Some(UNREADABLE_ANSWER.into()),
                message: detail,
            }),
        },
        Some(response) => ItemOutcome::Failed(ItemFailure {
            status: Some(response.status_code),
            code: error_code(error.as_ref(), response.body.as_ref()),
            message: error_message(error.as_ref(), response.body.as_ref()),
        }),
        None => ItemOutcome::Failed(ItemFailure {
            status: None,
            code: error_code(error.as_ref(), None),
            message: error_message(error.as_ref(), None),
        }),
    }
}

/// The error object inside `value`: `value.error` when there is one (OpenAI's error bodies,
/// vLLM's `ErrorResponse`), else `value` itself.
fn error_object(value: &Value) -> &Value {
    value
        .get("error")
        .filter(|e| e.is_object())
        .unwrap_or(value)
}

fn error_code(error: Option<&Value>, body: Option<&Value>) -> Option<String> {
    [error, body].into_iter().flatten().find_map(|value| {
        let object = error_object(value);
        ["code", "type"]
            .into_iter()
            .find_map(|name| object.get(name)?.as_str().map(str::to_owned))
    })
}

fn error_message(error: Option<&Value>, body: Option<&Value>) -> String {
    let found = [error, body]
        .into_iter()
        .flatten()
        .find_map(|value| match value {
            Value::String(text) => Some(text.clone()),
            Value::Null => None,
            other => Some(match error_object(other).get("message") {
                Some(Value::String(message)) => message.clone(),
                _ => other.to_string(),
            }),
        })
        .unwrap_or_else(|| "no detail given".into());
    found.chars().take(MAX_MESSAGE_CHARS).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::{Message, Sampling, Usage};

    fn only(text: &str) -> ItemOutcome {
        let mut items = parse_output(text, "out.jsonl").unwrap();
        assert_eq!(items.len(), 1, "{text}");
        items.remove(0).outcome
    }

    #[test]
    fn request_line_carries_the_synchronous_body() {
        let request = ChatRequest {
            messages: vec![Message::user("is it so?")],
            sampling: Sampling {
                seed: Some(7),
                ..Sampling::default()
            },
            response_schema: None,
        };
        let line = BatchRequest::chat("k1", "gpt-4o-mini", &request);
        assert_eq!(
            line.body,
            chat_body("gpt-4o-mini", &request, &Default::default())
        );
        let text = serde_json::to_string(&line).unwrap();
        assert!(
            text.starts_with(
                r#"{"custom_id":"k1","method":"POST","url":"/v1/chat/completions","body":{"#
            ),
            "{text}"
        );
        assert_eq!(parse_requests(&text, "in.jsonl").unwrap(), vec![line]);
    }

    #[test]
    fn openai_success_reads_text_and_usage() {
        // The example line of OpenAI's "request output object" reference.
        let line = r#"{"id": "batch_req_wnaDys", "custom_id": "request-2", "response": {"status_code": 200, "request_id": "req_c187b3", "body": {"id": "chatcmpl-9758Iw", "object": "chat.completion", "created": 1711475054, "model": "gpt-4o-mini", "choices": [{"index": 0, "message": {"role": "assistant", "content": "2 + 2 equals 4."}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 24, "completion_tokens": 15, "total_tokens": 39}, "system_fingerprint": null}}, "error": null}"#;
        let expected = ChatResponse {
            text: "2 + 2 equals 4.".into(),
            usage: Usage {
                prompt_tokens: 24,
                completion_tokens: 15,
                reasoning_tokens: None,
            },
            finish_reason: Some("stop".into()),
            thinking: None,
            thinking_text: String::new(),
        };
        assert_eq!(only(line), ItemOutcome::Answered(expected));
    }

    #[test]
    fn failures_in_openai_and_vllm_shapes() {
        let expired = r#"{"id": "r1", "custom_id": "a", "response": null, "error": {"code": "batch_expired", "message": "This request could not be executed before the completion window expired."}}"#;
        let ItemOutcome::Failed(failure) = only(expired) else {
            panic!("expired is a failure")
        };
        assert_eq!(failure.code.as_deref(), Some("batch_expired"));
        assert!(failure.resubmittable());
        let error = failure.to_error("http://h/v1", "a");
        assert!(matches!(error, JudgeError::BatchItem { .. }), "{error}");
        assert!(!error.is_retryable() && !error.is_stop());

        let server = r#"{"id": "r2", "custom_id": "b", "response": {"status_code": 500, "request_id": "q", "body": {"error": {"message": "boom", "type": "server_error"}}}, "error": null}"#;
        let ItemOutcome::Failed(failure) = only(server) else {
            panic!("a 500 is a failure")
        };
        assert_eq!(
            (
                failure.status,
                failure.code.as_deref(),
                failure.message.as_str()
            ),
            (Some(500), Some("server_error"), "boom")
        );
        assert!(failure.resubmittable());

        // vLLM: a 400 with the error as a plain string, or as its ErrorResponse.
        let vllm = r#"{"id": "vllm-1", "custom_id": "c", "response": {"status_code": 400, "request_id": "vllm-batch-1", "body": null}, "error": "response_format is not supported"}"#;
        let ItemOutcome::Failed(failure) = only(vllm) else {
            panic!("a 400 is a failure")
        };
        assert!(!failure.resubmittable());
        let error = failure.to_error("http://h/v1", "c");
        let JudgeError::Status {
            status: 400,
            first_line,
            ..
        } = &error
        else {
            panic!("a client error keeps its status: {error}")
        };
        assert_eq!(first_line, "response_format is not supported");
        let response = r#"{"id": "vllm-2", "custom_id": "d", "response": {"status_code": 404, "request_id": "x"}, "error": {"error": {"message": "model not found", "type": "NotFoundError", "code": 404}}}"#;
        let ItemOutcome::Failed(failure) = only(response) else {
            panic!("a 404 is a failure")
        };
        assert_eq!(failure.message, "model not found");
        assert_eq!(failure.code.as_deref(), Some("NotFoundError"));
    }

    #[test]
    fn a_malformed_line_names_file_and_line() {
        let text = "\n{\"custom_id\": \"a\", \"error\": {\"code\": \"x\"}}\nnot json\n";
        let error = parse_output(text, "answers.jsonl").unwrap_err();
        let message = error.to_string();
        assert!(
            message.starts_with("answers.jsonl:3: not a batch output line"),
            "{message}"
        );
        let odd =
            r#"{"custom_id": "a", "response": {"status_code": 200, "body": {"no": "choices"}}}"#;
        let ItemOutcome::Failed(failure) = only(odd) else {
            panic!("an odd body is a failure")
        };
        assert_eq!(failure.code.as_deref(), Some(UNREADABLE_ANSWER));
    }
}
