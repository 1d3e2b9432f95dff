//! Whether the judge is answering at all: a call that fails in a way no other call can
//! escape (401/403/404, a model the server does not know, an embedded model that cannot
//! load), a call that failed after its retries (connection refused, 5xx, timeouts) before
//! the judge ever answered one, or a run of such calls in a row, halts the judge. From then on every call fails at once with
//! [`JudgeError::Unavailable`], which is a *stop*, not a failed judgement: callers end the
//! run with the cause instead of recording a cell as failed, so no money is spent on a judge
//! that cannot answer and no finding is made of its silence.
//!
//! Answers that do not parse are not counted here: the judge answered, badly, and that is a
//! failed cell with the raw text. Requests refused for their own content (400, a prompt too
//! long) are not counted either: other requests may pass.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;

use crate::error::JudgeError;

/// Calls in a row that failed after their retries, with no answer between them, that halt
/// the judge by default.
pub const DEFAULT_HALT_AFTER: u32 = 8;

/// Why the judge was halted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Halt {
    /// The endpoint (redacted) or local model that failed.
    pub endpoint: String,
    /// The model name.
    pub model: String,
    /// The HTTP status of the failure that halted it, when there was one.
    pub status: Option<u16>,
    /// The failure, with its causes.
    pub cause: String,
    /// Calls that failed in a row, this one included.
    pub failed_in_a_row: u64,
    /// Calls the judge answered before the halt.
    pub answered_before: u64,
}

impl std::fmt::Display for Halt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the judge {} at {} ", self.model, self.endpoint)?;
        if self.answered_before == 0 {
            write!(f, "has not answered any call: {}", self.cause)
        } else if self.failed_in_a_row > 1 {
            write!(
                f,
                "failed {} calls in a row with no answer: {}",
                self.failed_in_a_row, self.cause
            )
        } else {
            write!(f, "refused a call: {}", self.cause)
        }
    }
}

/// The judge's health, shared by every call.
#[derive(Debug, Default)]
pub struct Health {
    /// `None`: never halt.
    halt_after: Option<u32>,
    answered: AtomicU64,
    failed_in_a_row: AtomicU64,
    halted: Mutex<Option<Halt>>,
}

impl Health {
    /// Halts after `halt_after` calls in a row fail (and at once on a failure no call can
    /// escape); `None` never halts.
    pub fn new(halt_after: Option<u32>) -> Self {
        Health {
            halt_after,
            ..Health::default()
        }
    }

    /// Fails with [`JudgeError::Unavailable`] once halted.
    pub fn check(&self) -> Result<(), JudgeError> {
        match self.halted() {
            Some(halt) => Err(JudgeError::Unavailable(Box::new(halt))),
            None => Ok(()),
        }
    }

    /// Why the judge was halted, if it was.
    pub fn halted(&self) -> Option<Halt> {
        self.lock().clone()
    }

    /// A call was answered.
    pub fn answered(&self) {
        self.answered.fetch_add(1, Ordering::Relaxed);
        self.failed_in_a_row.store(0, Ordering::Relaxed);
    }

    /// A call failed after its retries with `error`, sent to `endpoint` for `model`.
    pub fn failed(&self, error: &JudgeError, endpoint: &str, model: &str) {
        let Some(limit) = self.halt_after else {
            return;
        };
        let fatal = refuses_every_call(error);
        if !fatal && !is_unanswered(error) {
            return;
        }
        let in_a_row = self.failed_in_a_row.fetch_add(1, Ordering::Relaxed) + 1;
        // A judge that has not answered once and fails a call after all its retries is not
        // there, or not working: going on would fail every other call the same way.
        let never_answered = self.answered.load(Ordering::Relaxed) == 0;
        if !fatal && !never_answered && in_a_row < u64::from(limit) {
            return;
        }
        let mut halted = self.lock();
        if halted.is_none() {
            tracing::debug!(%endpoint, model, in_a_row, error = %chain(error), "judge halted");
            *halted = Some(Halt {
                endpoint: endpoint.to_owned(),
                model: model.to_owned(),
                status: status_of(error),
                cause: chain(error),
                failed_in_a_row: in_a_row,
                answered_before: self.answered.load(Ordering::Relaxed),
            });
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Halt>> {
        self.halted
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A failure that every other call would meet too: bad credentials, a wrong URL or model,
/// an embedded model that cannot run.
fn refuses_every_call(error: &JudgeError) -> bool {
    match error {
        JudgeError::Status {
            status: 401 | 403 | 404,
            ..
        } => true,
        JudgeError::Status {
            status: 400 | 422,
            first_line,
            ..
        } => names_a_missing_model(first_line),
        JudgeError::LocalModel { .. } | JudgeError::ModelsNotFound { .. } => true,
        JudgeError::Client { .. } => true,
        JudgeError::RetriesExhausted { last, .. } => refuses_every_call(last),
        _ => false,
    }
}

/// `model 'x' not found`, `The model x does not exist`, `unknown model`: what servers say
/// for a model they do not serve.
fn names_a_missing_model(line: &str) -> bool {
    let line = line.to_lowercase();
    line.contains("model")
        && [
            "not found",
            "does not exist",
            "unknown model",
            "no such model",
        ]
        .iter()
        .any(|phrase| line.contains(phrase))
}

/// A call the judge never answered: the server failed, timed out or could not be reached.
fn is_unanswered(error: &JudgeError) -> bool {
    match error {
        JudgeError::Status { status, .. } => {
            matches!(status, 408 | 409 | 429) || (500..=599).contains(status)
        }
        JudgeError::Timeout { .. } | JudgeError::Transport { .. } => true,
        JudgeError::RetriesExhausted { last, .. } => is_unanswered(last),
        _ => false,
    }
}

fn status_of(error: &JudgeError) -> Option<u16> {
    match error {
        JudgeError::Status { status, .. } => Some(*status),
        JudgeError::RetriesExhausted { last, .. } => status_of(last),
        _ => None,
    }
}

/// The error and its causes, `: `-separated.
fn chain(error: &JudgeError) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: u16, line: &str) -> JudgeError {
        JudgeError::Status {
            endpoint: "http://127.0.0.1:9/v1".into(),
            status: code,
            first_line: line.into(),
            retry_after: None,
        }
    }

    #[test]
    fn a_refusal_no_call_escapes_halts_at_once() {
        for error in [
            status(401, "invalid api key"),
            status(404, "not found"),
            status(400, "The model `gpt-x` does not exist"),
        ] {
            let health = Health::new(Some(DEFAULT_HALT_AFTER));
            health.answered();
            health.failed(&error, "http://127.0.0.1:9/v1", "m");
            let halt = health.halted().expect("halted");
            assert_eq!(halt.failed_in_a_row, 1);
            assert!(matches!(health.check(), Err(JudgeError::Unavailable(_))));
            assert!(halt.to_string().contains("refused a call"), "{halt}");
        }
    }

    #[test]
    fn a_judge_that_never_answered_halts_at_its_first_failed_call() {
        let health = Health::new(Some(DEFAULT_HALT_AFTER));
        let failure = JudgeError::RetriesExhausted {
            attempts: 6,
            last: Box::new(status(503, "overloaded")),
        };
        health.failed(&failure, "http://127.0.0.1:9/v1", "m");
        let halt = health.halted().expect("halted");
        assert!(
            halt.to_string().contains("has not answered any call"),
            "{halt}"
        );
    }

    #[test]
    fn unanswered_calls_halt_only_in_a_row() {
        let health = Health::new(Some(3));
        health.answered();
        let failure = JudgeError::RetriesExhausted {
            attempts: 4,
            last: Box::new(status(500, "boom")),
        };
        health.failed(&failure, "e", "m");
        health.failed(&failure, "e", "m");
        health.answered();
        health.failed(&failure, "e", "m");
        health.failed(&failure, "e", "m");
        assert!(health.check().is_ok());
        health.failed(&failure, "e", "m");
        let halt = health.halted().expect("halted");
        assert_eq!((halt.status, halt.failed_in_a_row), (Some(500), 3));
        assert!(
            halt.cause.contains("answered http 500: boom"),
            "{}",
            halt.cause
        );
    }

    #[test]
    fn bad_requests_and_unparsed_answers_never_halt() {
        let health = Health::new(Some(1));
        health.failed(&status(400, "context length exceeded"), "e", "m");
        let unparsed = JudgeError::Unparsed {
            template: "t@1".into(),
            reason: "not json".into(),
            raw: "garbage".into(),
        };
        health.failed(&unparsed, "e", "m");
        assert!(health.halted().is_none());
        let never = Health::new(None);
        never.failed(&status(401, "no"), "e", "m");
        assert!(never.halted().is_none());
    }
}
