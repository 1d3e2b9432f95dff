//! Batch mode inside the judge pipeline: [`BatchModel`] is a [`ChatModel`] that answers a
//! call from a [`BatchStore`] of batch answers, or records the request as pending and fails
//! the call with [`JudgeError::Pending`] — a stop, so the caller holds the work back.
//!
//! It reports the wrapped model's kind and name, so a [`Judge`](crate::Judge) over it
//! computes the same cache keys as over the wrapped model: a batch answer climbs the same
//! structured-output ladder and lands in the same cache as a synchronous one, and a re-ask
//! is just one more pending request. A scoring pass is then: run the metrics, take the
//! pending requests ([`BatchStore::take_pending`]), have a batch answer them, load the
//! answers ([`BatchStore::load`]), run again — until nothing is pending.
//!
//! Requests are keyed by [`batch_key`]: the SHA-256 of the backend kind and the exact body
//! sent, which is the `custom_id` of the request's batch line. Loaded answers stay in
//! memory for the store's life (an answer that did not parse is asked again by the next
//! pass's ladder before its re-ask). This module makes no HTTP call; the
//! [`BatchClient`](crate::batch::BatchClient) or a file import supplies the answers.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Value, json};

use crate::batch::lines::{BatchItem, BatchRequest, ItemFailure, ItemOutcome};
use crate::cache::{CACHE_FORMAT, CacheKey};
use crate::chat::{ChatModel, ChatRequest, ChatResponse, Usage};
use crate::error::JudgeError;
use crate::openai::chat_body;

/// How often a request whose batch did not answer it (expired, cancelled, 429, 5xx) goes
/// into another batch before its call fails.
pub const DEFAULT_MAX_RESUBMITS: u32 = 2;

/// The key of a request in batch mode, its batch line's `custom_id`: the SHA-256 of the
/// backend kind and the exact body sent.
pub fn batch_key(kind: &str, body: &Value) -> CacheKey {
    CacheKey::of(&json!({"format": CACHE_FORMAT, "backend": kind, "batch_body": body}))
}

/// What becomes of a call whose request a batch did not answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FailedItems {
    /// Resubmitted in the next batch while it may succeed and resubmits are left, then the
    /// call fails with the batch's error.
    #[default]
    Resubmit,
    /// Asked synchronously of the wrapped model at once (whatever the failure).
    Sync,
}

impl FailedItems {
    /// Both, in the order help texts list them.
    pub const ALL: [FailedItems; 2] = [FailedItems::Resubmit, FailedItems::Sync];

    /// The name `--batch-fallback` and the Python package's `batch_fallback` take.
    pub fn name(self) -> &'static str {
        match self {
            FailedItems::Resubmit => "resubmit",
            FailedItems::Sync => "sync",
        }
    }
}

/// `resubmit` or `sync`.
impl std::str::FromStr for FailedItems {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        FailedItems::ALL
            .into_iter()
            .find(|items| items.name() == text.trim())
            .ok_or_else(|| "expected resubmit or sync".to_owned())
    }
}

/// How a [`BatchModel`] treats failures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchOptions {
    /// Resubmit or go synchronous.
    pub failed_items: FailedItems,
    /// Most resubmits of one request ([`FailedItems::Resubmit`] only).
    pub max_resubmits: u32,
}

impl Default for BatchOptions {
    fn default() -> Self {
        BatchOptions {
            failed_items: FailedItems::Resubmit,
            max_resubmits: DEFAULT_MAX_RESUBMITS,
        }
    }
}

/// What the store did, for the run's books and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BatchCounts {
    /// Calls answered from a loaded answer.
    pub answered: u64,
    /// Of `answered`, answers handed out before: the first answer of a climb whose re-ask
    /// waited for another batch, or any answer when the judge has no cache. The judge
    /// books each hand-out as an answered call, so these were booked more than once.
    pub replayed: u64,
    /// Tokens of the replayed answers (to take off the judge's books).
    pub replayed_usage: Usage,
    /// Calls that failed with a batch's error.
    pub failed: u64,
    /// Calls that found their request pending or submitted.
    pub pending_calls: u64,
    /// Requests put back in the pending set after their batch did not answer them.
    pub resubmitted: u64,
    /// Calls sent to the wrapped model ([`FailedItems::Sync`]).
    pub sync_fallbacks: u64,
    /// Answers loaded.
    pub loaded: u64,
}

/// The batch answers of a run and the requests still waiting for one. Cheap to clone;
/// clones share everything.
#[derive(Debug, Clone, Default)]
pub struct BatchStore {
    state: Arc<Mutex<StoreState>>,
}

#[derive(Debug, Default)]
struct StoreState {
    answers: HashMap<String, ItemOutcome>,
    /// Requests asked and not yet taken, by key: sorted, so files come out the same
    /// whatever order the calls ran in.
    pending: BTreeMap<String, BatchRequest>,
    /// Requests taken for a batch whose answer is not loaded yet.
    submitted: HashSet<String>,
    resubmits: HashMap<String, u32>,
    /// Keys whose answer was handed out at least once.
    handed_out: HashSet<String>,
    counts: BatchCounts,
}

/// What the store has for a call.
enum Lookup {
    Answer(ChatResponse),
    Failure(ItemFailure),
    Pending,
}

impl BatchStore {
    /// An empty store.
    pub fn new() -> Self {
        BatchStore::default()
    }

    fn lock(&self) -> MutexGuard<'_, StoreState> {
        // Every update leaves the maps consistent, so a poisoned lock is still usable.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Takes every pending request, sorted by key, and marks it submitted: until its answer
    /// is loaded, calls that ask for it stay pending without queueing it again.
    pub fn take_pending(&self) -> Vec<BatchRequest> {
        let mut state = self.lock();
        let pending = std::mem::take(&mut state.pending);
        state.submitted.extend(pending.keys().cloned());
        pending.into_values().collect()
    }

    /// Requests waiting to be taken.
    pub fn pending_len(&self) -> usize {
        self.lock().pending.len()
    }

    /// Requests taken whose answer is not loaded yet.
    pub fn submitted_len(&self) -> usize {
        self.lock().submitted.len()
    }

    /// Marks requests as submitted (a resumed run's journaled jobs), so that calls asking
    /// for them wait for those jobs instead of queueing them again.
    pub fn mark_submitted(&self, custom_ids: impl IntoIterator<Item = String>) {
        let mut state = self.lock();
        for id in custom_ids {
            state.pending.remove(&id);
            state.submitted.insert(id);
        }
    }

    /// Loads answers (and failures); a later answer for the same request replaces an
    /// earlier one. Returns how many were loaded.
    pub fn load(&self, items: impl IntoIterator<Item = BatchItem>) -> usize {
        let mut state = self.lock();
        let mut loaded = 0;
        for item in items {
            state.submitted.remove(&item.custom_id);
            state.pending.remove(&item.custom_id);
            state.answers.insert(item.custom_id, item.outcome);
            loaded += 1;
        }
        state.counts.loaded += loaded as u64;
        loaded
    }

    /// Answers (and failures) held.
    pub fn answers_len(&self) -> usize {
        self.lock().answers.len()
    }

    /// What the store did so far.
    pub fn counts(&self) -> BatchCounts {
        self.lock().counts
    }

    fn lookup(&self, key: &str, body: impl FnOnce() -> Value, options: &BatchOptions) -> Lookup {
        let mut state = self.lock();
        let state = &mut *state;
        match state.answers.get(key) {
            Some(ItemOutcome::Answered(answer)) => {
                state.counts.answered += 1;
                if !state.handed_out.insert(key.to_owned()) {
                    state.counts.replayed += 1;
                    state.counts.replayed_usage += answer.usage;
                }
                return Lookup::Answer(answer.clone());
            }
            Some(ItemOutcome::Failed(failure)) => {
                let resubmits = state.resubmits.entry(key.to_owned()).or_default();
                let again = options.failed_items == FailedItems::Resubmit
                    && failure.resubmittable()
                    && *resubmits < options.max_resubmits;
                if !again {
                    match options.failed_items {
                        FailedItems::Resubmit => state.counts.failed += 1,
                        FailedItems::Sync => state.counts.sync_fallbacks += 1,
                    }
                    return Lookup::Failure(failure.clone());
                }
                *resubmits += 1;
                state.counts.resubmitted += 1;
                state.answers.remove(key);
            }
            None => {}
        }
        state.counts.pending_calls += 1;
        if !state.submitted.contains(key) && !state.pending.contains_key(key) {
            let request = BatchRequest::with_body(key, body());
            state.pending.insert(key.to_owned(), request);
        }
        Lookup::Pending
    }
}

/// A chat model in batch mode: answers from its [`BatchStore`], else records the request
/// as pending and fails the call with [`JudgeError::Pending`].
#[derive(Debug, Clone)]
pub struct BatchModel<M> {
    inner: M,
    store: BatchStore,
    options: BatchOptions,
}

impl<M: ChatModel> BatchModel<M> {
    /// `inner` in batch mode over `store`, with the default options.
    pub fn new(inner: M, store: BatchStore) -> Self {
        BatchModel::with_options(inner, store, BatchOptions::default())
    }

    /// `inner` in batch mode over `store`.
    pub fn with_options(inner: M, store: BatchStore, options: BatchOptions) -> Self {
        BatchModel {
            inner,
            store,
            options,
        }
    }

    /// The store it answers from.
    pub fn store(&self) -> &BatchStore {
        &self.store
    }

    /// The wrapped model.
    pub fn inner(&self) -> &M {
        &self.inner
    }
}

impl<M: ChatModel> ChatModel for BatchModel<M> {
    fn kind(&self) -> &str {
        self.inner.kind()
    }
    fn model(&self) -> &str {
        self.inner.model()
    }
    fn endpoint(&self) -> String {
        self.inner.endpoint()
    }
    fn supports_response_schema(&self) -> bool {
        self.inner.supports_response_schema()
    }
    fn limits_itself(&self) -> bool {
        self.inner.limits_itself()
    }
    fn learned_forms(&self) -> Vec<crate::forms::LearnedForm> {
        self.inner.learned_forms()
    }
    fn adopt_forms(&self, forms: &[crate::forms::LearnedForm]) {
        self.inner.adopt_forms(forms);
    }
    fn learn_from_refusal(&self, body: &str, sent: &serde_json::Value) -> bool {
        self.inner.learn_from_refusal(body, sent)
    }
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, JudgeError> {
        let mut lessons = 0;
        loop {
            // The form the endpoint settled on (configured, learned, or recorded by an
            // earlier session and adopted) is applied before the key is computed: a resumed
            // batch rebuilds the body that was answered, not one the server refused.
            let form = self
                .inner
                .learned_forms()
                .into_iter()
                .next()
                .map(|learned| learned.form)
                .unwrap_or_default();
            let body = chat_body(self.inner.model(), request, &form);
            let key = batch_key(self.inner.kind(), &body).hex();
            let sent = body.clone();
            match self.store.lookup(&key, || body, &self.options) {
                Lookup::Answer(answer) => return Ok(answer),
                Lookup::Pending => return Err(JudgeError::Pending { key }),
                // A batch line refused for a parameter (a reasoning model's `max_tokens`):
                // the form learns, and the request, written anew, waits for the next batch.
                Lookup::Failure(failure)
                    if matches!(failure.status, Some(400 | 422))
                        && lessons < crate::forms::MAX_LESSONS_PER_CALL
                        && self
                            .inner
                            .learn_from_refusal(&refusal_body(&failure), &sent) =>
                {
                    lessons += 1;
                }
                Lookup::Failure(_) if self.options.failed_items == FailedItems::Sync => {
                    return self.inner.chat(request).await;
                }
                Lookup::Failure(failure) => {
                    return Err(failure.to_error(&self.inner.endpoint(), &key));
                }
            }
        }
    }
}

/// A batch line's failure as the error body a synchronous call would have got, for
/// [`ChatModel::learn_from_refusal`].
fn refusal_body(failure: &ItemFailure) -> String {
    serde_json::json!({"error": {"message": failure.message, "code": failure.code}}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::{Message, Sampling};

    struct Echo;

    impl ChatModel for Echo {
        fn kind(&self) -> &str {
            "openai"
        }
        fn model(&self) -> &str {
            "m"
        }
        fn endpoint(&self) -> String {
            "http://127.0.0.1/v1".into()
        }
        fn supports_response_schema(&self) -> bool {
            true
        }
        async fn chat(&self, _: &ChatRequest) -> Result<ChatResponse, JudgeError> {
            Ok(answer("sync"))
        }
    }

    fn answer(text: &str) -> ChatResponse {
        ChatResponse {
            text: text.into(),
            usage: Usage::default(),
            finish_reason: None,
            thinking: None,
            thinking_text: String::new(),
        }
    }

    fn request(text: &str) -> ChatRequest {
        ChatRequest {
            messages: vec![Message::user(text)],
            sampling: Sampling::default(),
            response_schema: None,
        }
    }

    fn failed(id: &str, code: &str) -> BatchItem {
        BatchItem {
            custom_id: id.into(),
            outcome: ItemOutcome::Failed(ItemFailure {
                status: None,
                code: Some(code.into()),
                message: "gone".into(),
            }),
        }
    }

    #[tokio::test]
    async fn pending_once_then_answered_and_identical_requests_share_a_line() {
        let store = BatchStore::new();
        let model = BatchModel::new(Echo, store.clone());
        for _ in 0..3 {
            let error = model.chat(&request("a")).await.unwrap_err();
            assert!(error.is_stop(), "{error}");
        }
        let pending = store.take_pending();
        assert_eq!(pending.len(), 1);
        assert_eq!(
            pending[0].body,
            chat_body("m", &request("a"), &Default::default())
        );
        // Taken but not answered: still pending, not queued again.
        assert!(model.chat(&request("a")).await.is_err());
        assert_eq!((store.pending_len(), store.submitted_len()), (0, 1));
        let key = pending[0].custom_id.clone();
        store.load([BatchItem {
            custom_id: key,
            outcome: ItemOutcome::Answered(answer("batch")),
        }]);
        assert_eq!(store.submitted_len(), 0);
        assert_eq!(model.chat(&request("a")).await.unwrap().text, "batch");
        assert_eq!(model.chat(&request("a")).await.unwrap().text, "batch");
        let counts = store.counts();
        assert_eq!(
            (counts.answered, counts.pending_calls, counts.loaded),
            (2, 4, 1)
        );
        assert_eq!(counts.replayed, 1);
    }

    #[tokio::test]
    async fn expired_requests_are_resubmitted_then_fail_typed() {
        let store = BatchStore::new();
        let options = BatchOptions {
            max_resubmits: 1,
            ..BatchOptions::default()
        };
        let model = BatchModel::with_options(Echo, store.clone(), options);
        assert!(model.chat(&request("a")).await.is_err());
        let key = store.take_pending().remove(0).custom_id;
        store.load([failed(&key, "batch_expired")]);
        let again = model.chat(&request("a")).await.unwrap_err();
        assert!(matches!(again, JudgeError::Pending { .. }), "{again}");
        assert_eq!(store.take_pending()[0].custom_id, key);
        store.load([failed(&key, "batch_expired")]);
        let error = model.chat(&request("a")).await.unwrap_err();
        assert!(
            matches!(&error, JudgeError::BatchItem { code: Some(c), .. } if c == "batch_expired"),
            "{error}"
        );
        assert!(!error.is_stop() && !error.is_retryable());
        assert_eq!(store.counts().resubmitted, 1);
        // A failed job is never resubmitted.
        assert!(model.chat(&request("b")).await.is_err());
        let other = store.take_pending().remove(0).custom_id;
        store.load([failed(&other, crate::batch::BATCH_FAILED)]);
        assert!(matches!(
            model.chat(&request("b")).await,
            Err(JudgeError::BatchItem { .. })
        ));
    }

    #[tokio::test]
    async fn sync_fallback_asks_the_wrapped_model() {
        let store = BatchStore::new();
        let options = BatchOptions {
            failed_items: FailedItems::Sync,
            ..BatchOptions::default()
        };
        let model = BatchModel::with_options(Echo, store.clone(), options);
        assert!(model.chat(&request("a")).await.is_err());
        let key = store.take_pending().remove(0).custom_id;
        store.load([failed(&key, "batch_cancelled")]);
        assert_eq!(model.chat(&request("a")).await.unwrap().text, "sync");
        assert_eq!(store.counts().sync_fallbacks, 1);
    }

    #[tokio::test]
    async fn marked_submitted_requests_are_not_queued_again() {
        let store = BatchStore::new();
        let model = BatchModel::new(Echo, store.clone());
        let key = batch_key(
            "openai",
            &chat_body("m", &request("a"), &Default::default()),
        )
        .hex();
        store.mark_submitted([key]);
        assert!(model.chat(&request("a")).await.is_err());
        assert_eq!(store.pending_len(), 0);
    }
}
