//! Whether the judge is answering at all: a call that fails in a way no other call can
//! escape (401/403/404, a model the server does not know, an embedded model that cannot
//! load), a call that failed after its retries (connection refused, 5xx, timeouts) before
//! the judge ever answered one, or a run of such calls in a row, halts the judge. From then on every call fails at once with
//! [`JudgeError::Unavailable`], which is a *stop*, not a failed judgement: callers end the
//! run with the cause instead of recording a cell as failed, so no money is spent on a judge
//! that cannot answer and no finding is made of its silence.
//!
//! Two more streaks halt it, because they too are a judge that cannot serve the run rather
//! than findings about the data: requests refused with 400 or 422 (once the request forms
//! were tried, [`crate::forms`]) [`DEFAULT_HALT_AFTER`] times in a row before any answer (or
//! [`REFUSALS_AFTER_ANSWERS`] times as many after answers), and [`UNUSABLE_HALT_AFTER`] fresh answers in a row that never parse or are
//! empty (garbage, a reasoning model cut off while thinking), with no usable answer between.
//! A single refusal or garbage answer is a failed cell with its raw text, as before.
//!
//! Silence is counted per request, not per call: a request that got no answer within its
//! timeout (or whose connection failed) is no answer at all, so [`SILENT_HALT_AFTER`]
//! such requests in a row before the judge ever answered (or the configured count after
//! answers) halt it, however the calls' retries interleave. A halt aborts every call in
//! flight or queued ([`Health::unless_halted`]), so a silent judge stops a run within a few
//! timeouts rather than after every call's retries have each waited theirs.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;

use crate::cancel::CancelToken;
use crate::error::JudgeError;

/// Calls in a row that failed after their retries, with no answer between them, that halt
/// the judge by default.
pub const DEFAULT_HALT_AFTER: u32 = 8;

/// Fresh answers in a row that do not parse (or are empty), with no usable answer between,
/// that halt the judge. Counted per answer, not per call, so a judge that never answers
/// usably stops after about this many requests (plus those already in flight), whatever
/// the concurrency; a judge with a 30% garbage rate reaches it about once in 10⁶ runs.
pub const UNUSABLE_HALT_AFTER: u64 = 12;

/// How many times [`DEFAULT_HALT_AFTER`] (or the configured count) refusals in a row halt a
/// judge that answered before: one sample's requests alone cannot halt it.
pub const REFUSALS_AFTER_ANSWERS: u64 = 4;

/// Requests in a row that got no answer (timed out, or their connection failed) that halt
/// a judge which has not answered yet. One that answered before takes the configured count
/// ([`DEFAULT_HALT_AFTER`]), so calls in flight together timing out once do not halt it.
pub const SILENT_HALT_AFTER: u64 = 3;

/// What kind of failure halted the judge.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HaltReason {
    /// It could not be reached, failed, or refused in a way no call escapes.
    #[default]
    Unavailable,
    /// It refused the requests (400 or 422) call after call.
    Refused,
    /// Its answers were never usable (not parsable, empty, cut off).
    Unusable,
    /// It gave no answer at all: requests timed out or could not connect, one after another.
    Silent,
}

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
    /// What kind of failure it was.
    pub reason: HaltReason,
}

impl std::fmt::Display for Halt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the judge {} at {} ", self.model, self.endpoint)?;
        if self.reason == HaltReason::Silent {
            write!(
                f,
                "gave no answer to {} requests in a row: {}",
                self.failed_in_a_row, self.cause
            )
        } else if self.reason == HaltReason::Unusable {
            write!(
                f,
                "gave {} unusable answers in a row: the last was {}",
                self.failed_in_a_row, self.cause
            )
        } else if self.reason == HaltReason::Refused {
            write!(
                f,
                "refused {} calls in a row: {}",
                self.failed_in_a_row, self.cause
            )
        } else if self.answered_before == 0 {
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
    refused_in_a_row: AtomicU64,
    unusable_in_a_row: AtomicU64,
    silent_in_a_row: AtomicU64,
    halted: Mutex<Option<Halt>>,
    /// Tripped by the halt: aborts the calls in flight.
    switch: CancelToken,
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
        self.refused_in_a_row.store(0, Ordering::Relaxed);
        self.silent_in_a_row.store(0, Ordering::Relaxed);
    }

    /// Runs `work` (one request, or a wait before the next) unless the judge is halted
    /// first: then `work` is dropped, its request aborted, and the result is
    /// [`JudgeError::Unavailable`].
    pub async fn unless_halted<T>(
        &self,
        work: impl std::future::Future<Output = Result<T, JudgeError>>,
    ) -> Result<T, JudgeError> {
        let unavailable = || match self.halted() {
            Some(halt) => JudgeError::Unavailable(Box::new(halt)),
            None => JudgeError::Cancelled,
        };
        self.switch.run_or(work, unavailable).await
    }

    /// One request (an attempt of a call) to `endpoint` for `model` failed with `error`:
    /// one that got no answer at all extends the run of silent requests, which halts the
    /// judge at [`SILENT_HALT_AFTER`] before any answer (the configured count after); any
    /// reply from the server, even an error status, ends the run.
    pub fn attempt_failed(&self, error: &JudgeError, endpoint: &str, model: &str) {
        if !is_silence(error) {
            self.silent_in_a_row.store(0, Ordering::Relaxed);
            return;
        }
        let Some(limit) = self.halt_after else {
            return;
        };
        let in_a_row = self.silent_in_a_row.fetch_add(1, Ordering::Relaxed) + 1;
        let enough = if self.answered.load(Ordering::Relaxed) == 0 {
            SILENT_HALT_AFTER
        } else {
            u64::from(limit).max(SILENT_HALT_AFTER)
        };
        // Exactly at the count: of requests failing together, the one that reached it
        // names the halt, so the message says the same count every time.
        if in_a_row == enough {
            self.halt_for(error, (endpoint, model), in_a_row, HaltReason::Silent);
        }
    }

    /// An answer parsed: the judge's answers are usable.
    pub fn usable_answer(&self) {
        self.unusable_in_a_row.store(0, Ordering::Relaxed);
    }

    /// A fresh answer did not parse or was empty (`what` says which).
    pub fn unusable_answer(&self, what: &str, endpoint: &str, model: &str) {
        if self.halt_after.is_none() {
            return;
        }
        let in_a_row = self.unusable_in_a_row.fetch_add(1, Ordering::Relaxed) + 1;
        if in_a_row >= UNUSABLE_HALT_AFTER {
            let at = (endpoint, model);
            self.halt(at, None, what.to_owned(), in_a_row, HaltReason::Unusable);
        }
    }

    /// A call failed after its retries with `error`, sent to `endpoint` for `model`.
    pub fn failed(&self, error: &JudgeError, endpoint: &str, model: &str) {
        let Some(limit) = self.halt_after else {
            return;
        };
        if matches!(error, JudgeError::CutOff { .. }) {
            self.unusable_answer(&chain(error), endpoint, model);
            return;
        }
        if is_refusal(error) && !refuses_every_call(error) {
            let in_a_row = self.refused_in_a_row.fetch_add(1, Ordering::Relaxed) + 1;
            // A judge that never answered and refuses `limit` calls refuses them all; one that
            // answered before may be refusing one sample's requests (a prompt too long for
            // every context of it), so it takes a longer run of refusals.
            let never_answered = self.answered.load(Ordering::Relaxed) == 0;
            let enough = if never_answered {
                u64::from(limit)
            } else {
                REFUSALS_AFTER_ANSWERS * u64::from(limit)
            };
            if in_a_row >= enough {
                self.halt_for(error, (endpoint, model), in_a_row, HaltReason::Refused);
            }
            return;
        }
        let fatal = refuses_every_call(error);
        if !fatal && !is_unanswered(error) {
            return;
        }
        let in_a_row = self.failed_in_a_row.fetch_add(1, Ordering::Relaxed) + 1;
        // A call that ended in silence halts nothing itself: its requests were counted one
        // by one ([`Health::attempt_failed`]), so one rule, not a race of two, decides.
        if is_silence(error) {
            return;
        }
        // A judge that has not answered once and fails a call after all its retries is not
        // there, or not working: going on would fail every other call the same way.
        let never_answered = self.answered.load(Ordering::Relaxed) == 0;
        if !fatal && !never_answered && in_a_row < u64::from(limit) {
            return;
        }
        self.halt_for(error, (endpoint, model), in_a_row, HaltReason::Unavailable);
    }

    /// Halts for `error`, its status and causes kept.
    fn halt_for(&self, error: &JudgeError, at: (&str, &str), in_a_row: u64, reason: HaltReason) {
        self.halt(at, status_of(error), chain(error), in_a_row, reason);
    }

    /// Halts the judge at `(endpoint, model)` for `cause`, unless already halted (the first
    /// cause is the one kept).
    fn halt(
        &self,
        (endpoint, model): (&str, &str),
        status: Option<u16>,
        cause: String,
        failed_in_a_row: u64,
        reason: HaltReason,
    ) {
        let halt = Halt {
            endpoint: endpoint.to_owned(),
            model: model.to_owned(),
            status,
            cause,
            failed_in_a_row,
            answered_before: self.answered.load(Ordering::Relaxed),
            reason,
        };
        let mut halted = self.lock();
        if halted.is_none() {
            tracing::debug!(endpoint = %halt.endpoint, model = %halt.model, cause = %halt.cause, "judge halted");
            *halted = Some(halt);
            drop(halted);
            self.switch.cancel();
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

/// A request the server refused for what it asked (400, 422): other requests may pass, but
/// a run of them means every request is refused.
fn is_refusal(error: &JudgeError) -> bool {
    match error {
        JudgeError::Status { status, .. } => matches!(status, 400 | 413 | 422),
        JudgeError::RetriesExhausted { last, .. } => is_refusal(last),
        _ => false,
    }
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

/// A request (or a call's last request) that got nothing back: no whole answer within its
/// timeout, or no connection.
fn is_silence(error: &JudgeError) -> bool {
    match error {
        JudgeError::Timeout { .. } | JudgeError::Transport { .. } => true,
        JudgeError::RetriesExhausted { last, .. } => is_silence(last),
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
    fn a_bad_request_or_an_unparsed_answer_alone_never_halts() {
        let health = Health::new(Some(DEFAULT_HALT_AFTER));
        health.failed(&status(400, "context length exceeded"), "e", "m");
        let unparsed = JudgeError::Unparsed {
            template: "t@1".into(),
            reason: "not json".into(),
            raw: "garbage".into(),
        };
        health.failed(&unparsed, "e", "m");
        health.unusable_answer("an empty answer", "e", "m");
        assert!(health.halted().is_none());
        let never = Health::new(None);
        never.failed(&status(401, "no"), "e", "m");
        assert!(never.halted().is_none());
    }

    #[test]
    fn refusals_in_a_row_halt_and_an_answer_between_resets_them() {
        let refused = status(400, "Unsupported parameter: 'logit_bias'");
        let never = Health::new(Some(3));
        never.failed(&refused, "e", "m");
        never.failed(&refused, "e", "m");
        assert!(never.check().is_ok());
        never.failed(&refused, "e", "m");
        let halt = never.halted().expect("halted");
        assert_eq!(
            (halt.reason, halt.failed_in_a_row),
            (HaltReason::Refused, 3)
        );
        assert!(
            halt.to_string().contains("refused 3 calls in a row"),
            "{halt}"
        );
        // After answers, one sample's refusals are not the judge refusing everything.
        let health = Health::new(Some(3));
        health.answered();
        for _ in 1..3 * REFUSALS_AFTER_ANSWERS {
            health.failed(&refused, "e", "m");
        }
        health.answered();
        for _ in 1..3 * REFUSALS_AFTER_ANSWERS {
            health.failed(&refused, "e", "m");
        }
        assert!(health.check().is_ok());
        health.failed(&refused, "e", "m");
        assert_eq!(health.halted().expect("halted").reason, HaltReason::Refused);
    }

    fn timeout() -> JudgeError {
        JudgeError::Timeout {
            endpoint: "http://127.0.0.1:9/v1".into(),
            timeout: std::time::Duration::from_secs(2),
        }
    }

    #[test]
    fn issue_40_1_requests_that_get_no_answer_halt_per_request() {
        // Before any answer: three silent requests in a row, whichever calls they belong to.
        let never = Health::new(Some(DEFAULT_HALT_AFTER));
        for _ in 1..SILENT_HALT_AFTER {
            never.attempt_failed(&timeout(), "http://127.0.0.1:9/v1", "m");
        }
        assert!(never.check().is_ok());
        never.attempt_failed(&timeout(), "http://127.0.0.1:9/v1", "m");
        let halt = never.halted().expect("halted");
        assert_eq!(
            (halt.reason, halt.failed_in_a_row),
            (HaltReason::Silent, SILENT_HALT_AFTER)
        );
        assert_eq!(
            halt.to_string(),
            "the judge m at http://127.0.0.1:9/v1 gave no answer to 3 requests in a row: no \
             answer within 2 s from http://127.0.0.1:9/v1"
        );
        // After answers: the configured count, and any reply between (an error status
        // too) starts the count again.
        let health = Health::new(Some(DEFAULT_HALT_AFTER));
        health.answered();
        for _ in 1..DEFAULT_HALT_AFTER {
            health.attempt_failed(&timeout(), "e", "m");
        }
        health.attempt_failed(&status(503, "busy"), "e", "m");
        for _ in 1..DEFAULT_HALT_AFTER {
            health.attempt_failed(&timeout(), "e", "m");
        }
        assert!(health.check().is_ok());
        health.attempt_failed(&timeout(), "e", "m");
        assert_eq!(health.halted().expect("halted").reason, HaltReason::Silent);
        // Without a halt count, never.
        let unhalted = Health::new(None);
        for _ in 0..100 {
            unhalted.attempt_failed(&timeout(), "e", "m");
        }
        assert!(unhalted.halted().is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn issue_40_1_a_halt_aborts_work_in_flight() {
        let health = std::sync::Arc::new(Health::new(Some(DEFAULT_HALT_AFTER)));
        let halting = std::sync::Arc::clone(&health);
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            for _ in 0..SILENT_HALT_AFTER {
                halting.attempt_failed(&timeout(), "e", "m");
            }
        });
        let waiting = health.unless_halted(async {
            tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
            Ok(())
        });
        assert!(matches!(waiting.await, Err(JudgeError::Unavailable(_))));
        let later = health.unless_halted(async { Ok(()) }).await;
        assert!(matches!(later, Err(JudgeError::Unavailable(_))));
    }

    #[test]
    fn unusable_answers_in_a_row_halt_and_a_usable_one_resets_them() {
        let health = Health::new(Some(DEFAULT_HALT_AFTER));
        for _ in 1..UNUSABLE_HALT_AFTER {
            health.answered();
            health.unusable_answer("an empty answer", "e", "m");
        }
        health.usable_answer();
        for _ in 1..UNUSABLE_HALT_AFTER {
            health.unusable_answer("an empty answer", "e", "m");
        }
        assert!(health.check().is_ok());
        health.unusable_answer("an answer that does not parse (not json)", "e", "m");
        let halt = health.halted().expect("halted");
        assert_eq!(halt.reason, HaltReason::Unusable);
        assert!(
            halt.to_string().ends_with(&format!(
                "gave {UNUSABLE_HALT_AFTER} unusable answers in a row: the last was an answer \
                 that does not parse (not json)"
            )),
            "{halt}"
        );
    }
}
