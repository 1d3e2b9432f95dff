//! [`Judge`]: the one pipeline every model call goes through — the cache, then an identical
//! call in flight, then the caps, the health check, the limiter and the backend with
//! retries, then (for structured calls) the parse ladder. Embeddings take the same path,
//! cached per input.
//!
//! Cache hits never touch the limiter or the network. Offline mode answers from the cache or
//! fails with [`JudgeError::OfflineMiss`](crate::JudgeError::OfflineMiss), making no request. Identical calls in flight at
//! the same time make one request (single flight). Every request is first allowed by the
//! caps ([`crate::accounting`]) and booked after; [`Judge::cancel`] aborts what is in flight.
//! Every call ends either with an answer or with an error that says why; nothing is dropped
//! silently and nothing is printed.
//!
//! Its parts, one file each: `pipeline` (one raw completion from the cache or the backend,
//! [`Judge::complete`], and the retry loop every request shares), `ladder` (structured
//! answers, [`Judge::ask`]), `embed` ([`Judge::embed`]), `request` (what the judge asks over
//! each task's sampling, [`RequestSettings`]) and `stats` ([`Judge::stats`]).

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::accounting::{Budget, Cap, Ledger, PriceTable, UsageReport};
use crate::cache::{CACHE_FORMAT, Cache, CacheKey, CacheMode};
use crate::cancel::CancelToken;
use crate::chat::{ChatModel, ChatRequest};
use crate::flight::Flights;
use crate::health::{Halt, Health};
use crate::limiter::{Limiter, LimiterConfig};
use crate::retry::RetryPolicy;
use crate::structured::{RungCounts, TemplateId};

mod embed;
mod ladder;
mod pipeline;
mod request;
mod stats;

pub use embed::Embeddings;
pub use ladder::{Answer, FRESH_ROUNDS};
pub use pipeline::Completion;
pub use request::{RequestSettings, Temperature};
use stats::Counters;
pub use stats::JudgeStats;

/// How a [`Judge`] behaves.
#[derive(Debug, Clone, Default)]
pub struct JudgeConfig {
    /// Concurrency and rate limits (for a pool: the global caps over all its endpoints).
    pub limiter: LimiterConfig,
    /// Retry policy.
    pub retry: RetryPolicy,
    /// Cache use (read-write by default).
    pub cache_mode: CacheMode,
    /// Caps on calls and cost (none by default).
    pub budget: Budget,
    /// Prices for the cost so far and the cost cap (the built-in table by default).
    pub prices: PriceTable,
    /// Calls failed in a row that halt the judge as unavailable ([`crate::health`]);
    /// `None` (the default here) never halts. Settings resolved for a run
    /// ([`crate::config::JudgeSettings::judge_config`]) halt after
    /// [`crate::health::DEFAULT_HALT_AFTER`].
    pub halt_after: Option<u32>,
    /// What every structured request asks over its task's own sampling: temperature, token
    /// cap, reasoning effort, thinking on or off (part of each request's cache key).
    pub request: RequestSettings,
}

/// The model pipeline. Cheap to clone; clones share cache, limiter and counters.
pub struct Judge<M> {
    inner: Arc<Inner<M>>,
}

impl<M> Clone for Judge<M> {
    fn clone(&self) -> Self {
        Judge {
            inner: Arc::clone(&self.inner),
        }
    }
}

struct Inner<M> {
    model: M,
    /// Set once the server rejected `response_format: json_schema`.
    schema_in_prompt: AtomicBool,
    cache: Option<Cache>,
    config: JudgeConfig,
    limiter: Limiter,
    rungs: Mutex<BTreeMap<String, RungCounts>>,
    counters: Counters,
    ledger: Ledger,
    flights: Flights<pipeline::Flown>,
    cancel: CancelToken,
    health: Health,
}

impl<M: ChatModel> Judge<M> {
    /// A judge over `model`, with `cache` when given (no cache means every call is a miss).
    pub fn new(model: M, cache: Option<Cache>, config: JudgeConfig) -> Self {
        let config_halt_after = config.halt_after;
        let limiter = Limiter::new(config.limiter.clone());
        let ledger = Ledger::new(config.prices.clone(), config.budget);
        Judge {
            inner: Arc::new(Inner {
                model,
                schema_in_prompt: AtomicBool::new(false),
                cache,
                config,
                limiter,
                rungs: Mutex::new(BTreeMap::new()),
                counters: Counters::default(),
                ledger,
                flights: Flights::default(),
                cancel: CancelToken::new(),
                health: Health::new(config_halt_after),
            }),
        }
    }

    /// Cancels the judge: calls in flight abort (their answers, if already received, stay
    /// cached) and every later call fails with
    /// [`JudgeError::Cancelled`](crate::JudgeError::Cancelled). One-way.
    pub fn cancel(&self) {
        self.inner.cancel.cancel();
    }

    /// The judge's cancel switch, to trip from elsewhere (a Ctrl-C handler).
    pub fn cancel_token(&self) -> CancelToken {
        self.inner.cancel.clone()
    }

    /// Tokens and cost so far, per template.
    pub fn usage(&self) -> UsageReport {
        self.inner.ledger.report()
    }

    /// The cap (`max_calls`, `max_cost_usd`) that first refused a call, if one has: from
    /// then on the run is stopping, and results that failed for want of budget are not done.
    pub fn budget_refusal(&self) -> Option<Cap> {
        self.inner.ledger.refused()
    }

    /// Why the judge was halted as unavailable ([`crate::health`]), if it was: from then
    /// on every call fails at once and the run is stopping.
    pub fn halted(&self) -> Option<Halt> {
        self.inner.health.halted()
    }

    /// The backend.
    pub fn model(&self) -> &M {
        &self.inner.model
    }

    /// The answer cache, when this judge reads and writes one (not with `--no-cache`).
    pub fn cache(&self) -> Option<&Cache> {
        self.inner.cache.as_ref()
    }

    /// What every structured request asks over its task's own sampling.
    pub fn request_settings(&self) -> &RequestSettings {
        &self.inner.config.request
    }

    /// The request forms the backend settled on, per endpoint, with what each learned.
    pub fn learned_forms(&self) -> Vec<crate::forms::LearnedForm> {
        self.inner.model.learned_forms()
    }

    /// Starts the backend's endpoints in the forms an earlier session recorded
    /// ([`ChatModel::adopt_forms`]).
    pub fn adopt_forms(&self, forms: &[crate::forms::LearnedForm]) {
        self.inner.model.adopt_forms(forms);
    }

    /// Where each template's calls ended on the ladder, keyed by `id@version`.
    pub fn rung_counts(&self) -> BTreeMap<String, RungCounts> {
        self.inner
            .rungs
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// This judge's origin in the cache (a hash of its endpoint).
    fn origin(&self) -> String {
        crate::cache::origin_of(&self.inner.model.endpoint())
    }

    fn cache_key(&self, template: &TemplateId, request: &ChatRequest) -> CacheKey {
        let model = &self.inner.model;
        CacheKey::of(&json!({
            "format": CACHE_FORMAT,
            "backend": model.kind(),
            "model": model.model(),
            "template": template.id,
            "template_version": template.version,
            "messages": request.messages,
            "sampling": request.sampling,
            "schema": request.response_schema.as_ref().map_or(Value::Null, |s| s.schema.clone()),
        }))
    }
}
