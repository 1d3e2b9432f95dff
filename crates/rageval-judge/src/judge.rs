//! [`Judge`]: the one pipeline every model call goes through — cache, then limiter, then the
//! backend with retries, then (for structured calls) the parse ladder. Embeddings take the
//! same path, cached per input.
//!
//! Cache hits never touch the limiter or the network. Offline mode answers from the cache or
//! fails with [`JudgeError::OfflineMiss`], making no request. Identical calls in flight at
//! the same time make one request (single flight). Every request is first allowed by the
//! caps ([`crate::accounting`]) and booked after; [`Judge::cancel`] aborts what is in flight.
//! Every call ends either with an answer or with an error that says why; nothing is dropped
//! silently and nothing is printed.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::task::JoinSet;

use crate::accounting::{Budget, Cap, EMBEDDING_TEMPLATE, Ledger, PriceTable, UsageReport};
use crate::cache::{CACHE_FORMAT, Cache, CacheKey, CacheMode};
use crate::cancel::CancelToken;
use crate::chat::{
    ChatModel, ChatRequest, ChatResponse, Embedder, Message, OutputSchema, Role, Usage,
};
use crate::error::JudgeError;
use crate::flight::{Flights, Role as FlightRole};
use crate::health::{Halt, Health};
use crate::limiter::{Limiter, LimiterConfig, rough_tokens};
use crate::retry::RetryPolicy;
use crate::structured::{
    Rung, RungCounts, StructuredRequest, TemplateId, interpret, reask_instruction,
    schema_instruction,
};
use crate::tokens;

/// Climbs of the ladder after a first one that ended with no parsable answer. Each climb is
/// a fresh ask and one re-ask; the answers of a failed climb are never cached, so a new
/// climb (or a later run, `--retry-failed`) gets a fresh answer instead of the same garbage.
pub const FRESH_ROUNDS: u32 = 1;

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

/// The temperature the judge's requests ask for.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub enum Temperature {
    /// The task's own (0, for repeatable verdicts).
    #[default]
    Task,
    /// This value.
    Value(f32),
    /// None sent: the server's default (all that OpenAI's reasoning models take).
    Omit,
}

impl std::str::FromStr for Temperature {
    type Err = String;

    /// `omit` (or `none`), or a number from 0 to 2.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("omit") || text.eq_ignore_ascii_case("none") {
            return Ok(Temperature::Omit);
        }
        match text.parse::<f32>() {
            Ok(value) if (0.0..=2.0).contains(&value) => Ok(Temperature::Value(value)),
            _ => Err(format!(
                "temperature must be a number from 0 to 2, or `omit`; got `{text}`"
            )),
        }
    }
}

impl std::fmt::Display for Temperature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Temperature::Task => write!(f, "0 (default)"),
            Temperature::Value(value) => write!(f, "{value}"),
            Temperature::Omit => write!(f, "omit"),
        }
    }
}

/// The judge's own request settings, laid over each task's sampling.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestSettings {
    /// The temperature.
    pub temperature: Temperature,
    /// A cap on generated tokens (thinking included), when set.
    pub max_tokens: Option<u32>,
    /// `reasoning_effort`, sent as given (`none` turns thinking off on Ollama).
    pub reasoning_effort: Option<String>,
    /// Thinking on or off, where the server's chat template takes a switch.
    pub thinking: Option<bool>,
}

impl RequestSettings {
    /// `sampling` with these settings over it.
    pub fn apply(&self, sampling: &mut crate::chat::Sampling) {
        match self.temperature {
            Temperature::Task => {}
            Temperature::Value(value) => sampling.temperature = Some(value),
            Temperature::Omit => sampling.temperature = None,
        }
        if self.max_tokens.is_some() {
            sampling.max_tokens = self.max_tokens;
        }
        if self.reasoning_effort.is_some() {
            sampling.reasoning_effort.clone_from(&self.reasoning_effort);
        }
        if self.thinking.is_some() {
            sampling.thinking = self.thinking;
        }
    }
}

/// A structured answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer<T> {
    /// The typed value.
    pub value: T,
    /// The text it was parsed from (the re-ask's text when there was one).
    pub raw: String,
    /// Where on the ladder it was obtained.
    pub rung: Rung,
    /// Tokens of every call it took (first ask and re-ask), cached ones included.
    pub usage: Usage,
    /// Whether every call it took was answered from the cache.
    pub cached: bool,
    /// Where the model's thinking was, when the answer came after thinking.
    pub thinking: Option<crate::reasoning::Thinking>,
}

/// One raw completion and whether it came from the cache.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    /// The answer.
    pub response: ChatResponse,
    /// Answered from the cache, without a request.
    pub cached: bool,
    /// Answered by an identical call in flight: its caller made the request and stores the
    /// answer, so this one must not store it again.
    pub shared: bool,
}

impl Completion {
    /// Whether this caller made the request, so the answer is its to store.
    fn fresh(&self) -> bool {
        !self.cached && !self.shared
    }
}

/// Embedding vectors, in input order.
#[derive(Debug, Clone, PartialEq)]
pub struct Embeddings {
    /// One vector per input.
    pub vectors: Vec<Vec<f32>>,
    /// How many came from the cache.
    pub cached: usize,
}

/// Counters over a judge's lifetime.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JudgeStats {
    /// HTTP attempts made (retries included).
    pub attempts: u64,
    /// Attempts that failed.
    pub failed_attempts: u64,
    /// Retries scheduled.
    pub retries: u64,
    /// Completions answered from the cache.
    pub cache_hits: u64,
    /// Completions stored in the cache.
    pub cache_writes: u64,
    /// Answers that could not be stored (the answer was still returned).
    pub cache_write_errors: u64,
    /// Times a server rejected `response_format: json_schema` and the schema moved into the
    /// prompt (at most once per judge, unless calls race).
    pub schema_fallbacks: u64,
    /// Times the adaptive concurrency limit was cut.
    pub limit_cuts: u64,
    /// The concurrency limit now.
    pub current_limit: u64,
    /// Calls answered by an identical call in flight, without a request of their own.
    pub deduplicated: u64,
    /// Of the completions answered from the cache, those another endpoint wrote (another
    /// server under the same model name; answers stored before origins were kept count as
    /// this judge's own).
    pub cache_hits_other_origin: u64,
    /// Answers that came after thinking, split from it ([`crate::reasoning`]).
    pub thinking_answers: u64,
    /// Replies cut off at the token cap before any answer, asked again with a larger cap.
    pub cut_off_retries: u64,
}

#[derive(Debug, Default)]
struct Counters {
    attempts: AtomicU64,
    failed_attempts: AtomicU64,
    retries: AtomicU64,
    cache_hits: AtomicU64,
    cache_writes: AtomicU64,
    cache_write_errors: AtomicU64,
    schema_fallbacks: AtomicU64,
    deduplicated: AtomicU64,
    cache_hits_other_origin: AtomicU64,
    thinking_answers: AtomicU64,
    cut_off_retries: AtomicU64,
}

fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
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
    flights: Flights,
    cancel: CancelToken,
    health: Health,
}

/// What a request is expected to take, for the limiter and the caps.
struct Estimate {
    /// Rough tokens for the tokens-per-minute bucket.
    limiter_tokens: u64,
    /// Tokens for the cost cap (zero when no cost cap is set).
    budget: Usage,
}

/// What one model call is, for the books.
struct CallSite<'a> {
    template: &'a str,
    model: &'a str,
    /// The backend runs its own per-endpoint limiters (see [`ChatModel::limits_itself`]).
    limits_itself: bool,
}

impl<M> Judge<M> {
    /// The one retry loop: the caps' permission, a limiter slot, one attempt, then the books
    /// or the retry decision. `usage` reads (and, when the server sent none, fills in) the
    /// token usage of a success.
    async fn with_retries<R, Fut>(
        &self,
        site: CallSite<'_>,
        estimate: Estimate,
        call: impl Fn() -> Fut,
        usage: impl Fn(&mut R) -> (Usage, bool),
    ) -> Result<R, JudgeError>
    where
        Fut: Future<Output = Result<R, JudgeError>>,
    {
        let inner = &self.inner;
        let mut attempt = 0;
        loop {
            attempt += 1;
            inner.health.check()?;
            let reservation = inner.ledger.reserve(site.model, estimate.budget)?;
            let permit = inner.limiter.acquire(estimate.limiter_tokens).await?;
            bump(&inner.counters.attempts);
            let result = call().await;
            drop(permit);
            let error = match result {
                Ok(mut value) => {
                    let (used, counted) = usage(&mut value);
                    inner.health.answered();
                    inner.limiter.on_success();
                    inner
                        .limiter
                        .settle_tokens(estimate.limiter_tokens, used.total());
                    inner
                        .ledger
                        .answered(reservation, site.model, site.template, used, counted);
                    return Ok(value);
                }
                Err(error) => error,
            };
            drop(reservation);
            bump(&inner.counters.failed_attempts);
            if !site.limits_itself {
                if error.is_overload() {
                    inner.limiter.on_overload(error.retry_after());
                } else if error.is_retryable() {
                    // A timeout or a 5xx is not a request to slow down: a reasoning judge
                    // that thinks past the timeout would otherwise be throttled and its
                    // thinking billed again at a lower concurrency. Growth only pauses.
                    inner.limiter.on_transient();
                }
            }
            let retry = &inner.config.retry;
            match retry.next_delay_for(attempt, &error, !site.limits_itself) {
                Some(wait) => {
                    bump(&inner.counters.retries);
                    tracing::debug!(
                        template = site.template,
                        model = site.model,
                        attempt,
                        wait_ms = wait.as_millis() as u64,
                        %error,
                        "judge call failed; retrying after a back-off"
                    );
                    tokio::time::sleep(wait).await;
                }
                None if attempt > 1 && error.is_retryable() => {
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

impl<M: ChatModel + Embedder> Judge<M> {
    /// Embeds `inputs` through the pipeline: vectors already in the cache are reused (no
    /// request, no limiter), the rest go out in one request (limited, retried) and are
    /// stored. Offline mode fails on the first missing vector. Vectors come back in input
    /// order.
    pub async fn embed(&self, inputs: &[String]) -> Result<Embeddings, JudgeError> {
        let inner = &self.inner;
        inner.cancel.check()?;
        let mode = inner.config.cache_mode;
        let keys: Vec<CacheKey> = inputs
            .iter()
            .map(|input| {
                CacheKey::of(&json!({
                    "format": CACHE_FORMAT,
                    "backend": inner.model.embedding_kind(),
                    "model": inner.model.embedding_model(),
                    "embedding_input": input,
                }))
            })
            .collect();
        let mut vectors: Vec<Option<Vec<f32>>> = vec![None; inputs.len()];
        if let (Some(cache), CacheMode::ReadWrite | CacheMode::Offline) = (&inner.cache, mode) {
            for (slot, key) in vectors.iter_mut().zip(&keys) {
                *slot = cache.get_vector(*key).await?;
            }
        }
        let missing: Vec<usize> = (0..inputs.len())
            .filter(|&i| vectors[i].is_none())
            .collect();
        let cached = inputs.len() - missing.len();
        inner
            .counters
            .cache_hits
            .fetch_add(cached as u64, Ordering::Relaxed);
        if cached > 0 {
            let model = inner.model.embedding_model();
            let tokens: u64 = (0..inputs.len())
                .filter(|i| vectors[*i].is_some())
                .map(|i| tokens::count_tokens(model, &inputs[i]))
                .sum();
            let usage = Usage::new(tokens, 0);
            inner
                .ledger
                .cached(EMBEDDING_TEMPLATE, cached as u64, usage);
        }
        if let Some(&first) = missing.first() {
            if mode == CacheMode::Offline {
                return Err(JudgeError::OfflineMiss {
                    template: "embedding".into(),
                    key: keys[first].hex(),
                });
            }
            let batch: Vec<String> = missing.iter().map(|&i| inputs[i].clone()).collect();
            let model = &inner.model;
            let name = model.embedding_model();
            let prompt_tokens: u64 = batch.iter().map(|t| tokens::count_tokens(name, t)).sum();
            let used = Usage::new(prompt_tokens, 0);
            let estimate = Estimate {
                limiter_tokens: prompt_tokens,
                budget: used,
            };
            let site = CallSite {
                template: EMBEDDING_TEMPLATE,
                model: name,
                limits_itself: model.embedding_limits_itself(),
            };
            let batch_ref = &batch;
            let call = self.with_retries(
                site,
                estimate,
                move || model.embed(batch_ref),
                |_| (used, true),
            );
            let fresh = inner.cancel.run(call).await;
            if let Err(error) = &fresh {
                inner.health.failed(error, &model.endpoint(), name);
            }
            let fresh = fresh?;
            if fresh.len() != batch.len() {
                return Err(JudgeError::Protocol {
                    endpoint: inner.model.endpoint(),
                    detail: format!("{} embeddings for {} inputs", fresh.len(), batch.len()),
                });
            }
            let mut to_store = Vec::with_capacity(missing.len());
            for (&i, vector) in missing.iter().zip(fresh) {
                to_store.push((keys[i], vector.clone()));
                vectors[i] = Some(vector);
            }
            if let (Some(cache), CacheMode::ReadWrite) = (&inner.cache, mode) {
                let count = to_store.len() as u64;
                match cache
                    .put_vectors(inner.model.embedding_model().to_owned(), to_store)
                    .await
                {
                    Ok(()) => {
                        inner
                            .counters
                            .cache_writes
                            .fetch_add(count, Ordering::Relaxed);
                    }
                    Err(_) => bump(&inner.counters.cache_write_errors),
                }
            }
        }
        Ok(Embeddings {
            vectors: vectors.into_iter().map(Option::unwrap_or_default).collect(),
            cached,
        })
    }
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
    /// cached) and every later call fails with [`JudgeError::Cancelled`]. One-way.
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

    /// One raw completion: from the cache, from an identical call in flight, or from the
    /// backend (allowed by the caps, limited, retried, cancellable), then stored.
    pub async fn complete(
        &self,
        template: &TemplateId,
        request: &ChatRequest,
    ) -> Result<Completion, JudgeError> {
        let key = self.cache_key(template, request);
        let completion = self.fetch(template, request, key).await?;
        if completion.fresh() {
            self.store(template, key, &completion.response).await;
        }
        Ok(completion)
    }

    /// A completion from the cache, from an identical call in flight, or from the backend —
    /// never stored here: the caller stores it once it is known to be worth keeping.
    async fn fetch(
        &self,
        template: &TemplateId,
        request: &ChatRequest,
        key: CacheKey,
    ) -> Result<Completion, JudgeError> {
        let inner = &self.inner;
        inner.cancel.check()?;
        let mode = inner.config.cache_mode;
        let template = template.to_string();
        if let (Some(cache), CacheMode::ReadWrite | CacheMode::Offline) = (&inner.cache, mode) {
            if let Some((response, origin)) = cache.get_with_origin(key).await? {
                bump(&inner.counters.cache_hits);
                if origin.is_some_and(|origin| origin != self.origin()) {
                    bump(&inner.counters.cache_hits_other_origin);
                }
                inner.ledger.cached(&template, 1, response.usage);
                return Ok(Completion {
                    response,
                    cached: true,
                    shared: false,
                });
            }
        }
        if mode == CacheMode::Offline {
            return Err(JudgeError::OfflineMiss {
                template,
                key: key.hex(),
            });
        }
        let (response, role) = inner
            .flights
            .run(key, || {
                inner.cancel.run(self.call_with_retries(&template, request))
            })
            .await?;
        let shared = role == FlightRole::Followed;
        if shared {
            bump(&inner.counters.deduplicated);
            inner.ledger.shared(&template);
        }
        Ok(Completion {
            response,
            cached: false,
            shared,
        })
    }

    /// Stores a fresh answer (read-write mode only) in one transaction, so cancelling never
    /// leaves half an entry; a failure to store is counted, never fatal.
    async fn store(&self, template: &TemplateId, key: CacheKey, response: &ChatResponse) {
        let inner = &self.inner;
        if let (Some(cache), CacheMode::ReadWrite) = (&inner.cache, inner.config.cache_mode) {
            let stored = cache
                .put_with_origin(
                    key,
                    template.to_string(),
                    inner.model.model().to_owned(),
                    Some(self.origin()),
                    response.clone(),
                )
                .await;
            match stored {
                Ok(()) => bump(&inner.counters.cache_writes),
                Err(_) => bump(&inner.counters.cache_write_errors),
            }
        }
    }

    async fn call_with_retries(
        &self,
        template: &str,
        request: &ChatRequest,
    ) -> Result<ChatResponse, JudgeError> {
        let model = &self.inner.model;
        let name = model.model();
        let budget = if self.inner.ledger.caps_cost() {
            Usage::new(
                tokens::prompt_tokens(name, request),
                tokens::completion_allowance(request),
            )
        } else {
            Usage::default()
        };
        let site = CallSite {
            template,
            model: name,
            limits_itself: model.limits_itself(),
        };
        let estimate = Estimate {
            limiter_tokens: rough_tokens(request),
            budget,
        };
        let result = self
            .with_retries(
                site,
                estimate,
                move || model.chat(request),
                |response: &mut ChatResponse| count_usage(name, request, response),
            )
            .await;
        let result = match result {
            Ok(response) if response.cut_off() => {
                self.ask_past_cut_off(template, request, response).await
            }
            other => other,
        };
        if let Err(error) = &result {
            self.inner.health.failed(error, &model.endpoint(), name);
        }
        result
    }

    /// A reply cut off at the token cap before any answer (a reasoning model that spent the
    /// cap thinking) is asked once more with a larger cap: none when one was set, else twice
    /// what the reply used. Cut off again, the call fails saying how much the thinking used.
    async fn ask_past_cut_off(
        &self,
        template: &str,
        request: &ChatRequest,
        cut: ChatResponse,
    ) -> Result<ChatResponse, JudgeError> {
        bump(&self.inner.counters.cut_off_retries);
        let model = &self.inner.model;
        let name = model.model();
        let first_cap = request.sampling.max_tokens;
        let mut larger = request.clone();
        larger.sampling.max_tokens = match first_cap {
            Some(_) => None,
            None => Some(
                u32::try_from(cut.usage.completion_tokens.saturating_mul(2))
                    .unwrap_or(u32::MAX)
                    .max(MIN_CAP_AFTER_CUT_OFF),
            ),
        };
        let site = CallSite {
            template,
            model: name,
            limits_itself: model.limits_itself(),
        };
        let estimate = Estimate {
            limiter_tokens: rough_tokens(&larger),
            budget: Usage::default(),
        };
        let larger_ref = &larger;
        let again = self
            .with_retries(
                site,
                estimate,
                move || model.chat(larger_ref),
                |response: &mut ChatResponse| count_usage(name, larger_ref, response),
            )
            .await?;
        if again.cut_off() {
            return Err(JudgeError::CutOff {
                endpoint: model.endpoint(),
                model: name.to_owned(),
                used: cut.usage.completion_tokens,
                cap: first_cap,
                used_again: again.usage.completion_tokens,
                cap_again: larger.sampling.max_tokens,
            });
        }
        Ok(again)
    }

    /// Asks for a value of type `T` matching `request.schema`, climbing the ladder: schema
    /// (in `response_format`, or in the prompt when the backend has no such option or the
    /// server rejects it with a 400 naming `response_format`, which is then remembered) →
    /// tolerant parse → validation → one re-ask; when that still does not parse, the whole
    /// climb once more afresh ([`FRESH_ROUNDS`]) → [`JudgeError::Unparsed`] with the raw text.
    /// Only answers that parsed are cached.
    pub async fn ask<T: DeserializeOwned>(
        &self,
        request: &StructuredRequest,
    ) -> Result<Answer<T>, JudgeError> {
        let result = self.ask_inner(request).await;
        let rung = match &result {
            Ok(answer) => answer.rung,
            // A call refused by a cap or abandoned on cancel never reached an end: it is not
            // on the ladder (JudgeStats and the usage report count what did happen).
            Err(error) if error.is_stop() => return result,
            Err(JudgeError::Unparsed { .. }) => Rung::Failed,
            Err(_) => Rung::Errored,
        };
        self.inner
            .rungs
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .entry(request.template.to_string())
            .or_default()
            .add(rung);
        result
    }

    async fn ask_inner<T: DeserializeOwned>(
        &self,
        request: &StructuredRequest,
    ) -> Result<Answer<T>, JudgeError> {
        let mut round = 0;
        loop {
            round += 1;
            // Usage is that of the climb that answered, as a replay from the cache reports it.
            let mut usage = Usage::default();
            match self.ladder::<T>(request, &mut usage).await? {
                Ok(answer) => return Ok(answer),
                Err(failure) if round > FRESH_ROUNDS => return Err(failure),
                // Nothing of a failed climb was cached, so this round asks afresh.
                Err(_) => {}
            }
        }
    }

    /// One climb of the ladder: ask, parse, re-ask once. The outer `Err` is an error with no
    /// answer (transport, offline miss); the inner one an answer that never parsed. Only a
    /// climb that ends in a parsed answer is stored in the cache (both of its calls when it
    /// took a re-ask), so a replay follows the same path and a failed climb is asked afresh
    /// next time rather than replayed.
    async fn ladder<T: DeserializeOwned>(
        &self,
        request: &StructuredRequest,
        usage: &mut Usage,
    ) -> Result<Result<Answer<T>, JudgeError>, JudgeError> {
        let template = &request.template;
        let mut first_request = self.render(request);
        let mut first_key = self.cache_key(template, &first_request);
        let first = match self.fetch(template, &first_request, first_key).await {
            Err(error) if first_request.response_schema.is_some() && rejects_schema(&error) => {
                // The server does not take `response_format: json_schema` (DeepSeek, older
                // Ollama): write the schema into the prompt from now on.
                self.inner.schema_in_prompt.store(true, Ordering::Relaxed);
                bump(&self.inner.counters.schema_fallbacks);
                first_request = self.render(request);
                first_key = self.cache_key(template, &first_request);
                self.fetch(template, &first_request, first_key).await?
            }
            other => other?,
        };
        *usage += first.response.usage;
        self.note_thinking(&first);
        let reason = match interpret::<T>(&first.response.text, &request.schema) {
            Ok((value, rung)) => {
                self.inner.health.usable_answer();
                if first.fresh() {
                    self.store(template, first_key, &first.response).await;
                }
                return Ok(Ok(Answer {
                    value,
                    raw: first.response.text,
                    rung,
                    usage: *usage,
                    cached: first.cached,
                    thinking: first.response.thinking,
                }));
            }
            Err(reason) => {
                self.unusable(&first, &reason);
                reason
            }
        };
        // The answer alone goes back, never the thinking: it doubles the prompt, and some
        // servers refuse a conversation that carries it.
        let mut again = first_request;
        again
            .messages
            .push(Message::assistant(first.response.text.clone()));
        again
            .messages
            .push(Message::user(reask_instruction(&reason)));
        let again_key = self.cache_key(template, &again);
        let second = match self.fetch(template, &again, again_key).await {
            Ok(second) => second,
            Err(error) if error.is_stop() => return Err(error),
            Err(error) => {
                return Ok(Err(JudgeError::Unparsed {
                    template: template.to_string(),
                    reason: format!("{reason}; the re-ask failed: {error}"),
                    raw: first.response.text,
                }));
            }
        };
        *usage += second.response.usage;
        self.note_thinking(&second);
        match interpret::<T>(&second.response.text, &request.schema) {
            Ok((value, _)) => {
                self.inner.health.usable_answer();
                if first.fresh() {
                    self.store(template, first_key, &first.response).await;
                }
                if second.fresh() {
                    self.store(template, again_key, &second.response).await;
                }
                Ok(Ok(Answer {
                    value,
                    raw: second.response.text,
                    rung: Rung::Reasked,
                    usage: *usage,
                    cached: first.cached && second.cached,
                    thinking: second.response.thinking,
                }))
            }
            Err(reason) => {
                self.unusable(&second, &reason);
                Ok(Err(JudgeError::Unparsed {
                    template: template.to_string(),
                    reason,
                    raw: second.response.text,
                }))
            }
        }
    }

    /// Counts an answer that came after thinking.
    fn note_thinking(&self, completion: &Completion) {
        if completion.response.thinking.is_some() {
            bump(&self.inner.counters.thinking_answers);
        }
    }

    /// An answer that does not parse: one more in a row for [`crate::health`], which halts
    /// a judge whose answers are never usable. Cached answers parsed once, so only fresh
    /// ones count.
    fn unusable(&self, completion: &Completion, reason: &str) {
        if completion.cached {
            return;
        }
        let model = &self.inner.model;
        let what = if completion.response.text.trim().is_empty() {
            "an empty answer".to_owned()
        } else {
            format!("an answer that does not parse ({reason})")
        };
        self.inner
            .health
            .unusable_answer(&what, &model.endpoint(), model.model());
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

    /// Runs [`Judge::ask`] on every request concurrently (bounded by the limiter) and returns
    /// the results in the order of `requests`, one per request.
    pub async fn ask_all<T: DeserializeOwned + Send + 'static>(
        &self,
        requests: Vec<StructuredRequest>,
    ) -> Vec<Result<Answer<T>, JudgeError>> {
        let count = requests.len();
        let mut tasks = JoinSet::new();
        let mut index_of = std::collections::HashMap::new();
        for (index, request) in requests.into_iter().enumerate() {
            let judge = self.clone();
            let handle = tasks.spawn(async move { (index, judge.ask::<T>(&request).await) });
            index_of.insert(handle.id(), index);
        }
        let mut results: Vec<Option<Result<Answer<T>, JudgeError>>> =
            (0..count).map(|_| None).collect();
        while let Some(joined) = tasks.join_next().await {
            match joined {
                Ok((index, result)) => results[index] = Some(result),
                Err(error) => {
                    if let Some(&index) = index_of.get(&error.id()) {
                        results[index] = Some(Err(JudgeError::Task(error.to_string())));
                    }
                }
            }
        }
        results
            .into_iter()
            .map(|slot| slot.unwrap_or_else(|| Err(JudgeError::Task("task vanished".into()))))
            .collect()
    }

    /// Where each template's calls ended on the ladder, keyed by `id@version`.
    pub fn rung_counts(&self) -> BTreeMap<String, RungCounts> {
        self.inner
            .rungs
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Counters so far.
    pub fn stats(&self) -> JudgeStats {
        let c = &self.inner.counters;
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        JudgeStats {
            attempts: load(&c.attempts),
            failed_attempts: load(&c.failed_attempts),
            retries: load(&c.retries),
            cache_hits: load(&c.cache_hits),
            cache_writes: load(&c.cache_writes),
            cache_write_errors: load(&c.cache_write_errors),
            schema_fallbacks: load(&c.schema_fallbacks),
            limit_cuts: self.inner.limiter.cuts(),
            current_limit: self.inner.limiter.current_limit() as u64,
            deduplicated: load(&c.deduplicated),
            cache_hits_other_origin: load(&c.cache_hits_other_origin),
            thinking_answers: load(&c.thinking_answers),
            cut_off_retries: load(&c.cut_off_retries),
        }
    }

    /// The chat request for a structured call: the schema in `response_format` when the
    /// backend takes it, else written at the end of the last user message.
    fn render(&self, request: &StructuredRequest) -> ChatRequest {
        let mut messages = request.messages.clone();
        let in_prompt = self.inner.schema_in_prompt.load(Ordering::Relaxed);
        let response_schema = if self.inner.model.supports_response_schema() && !in_prompt {
            Some(OutputSchema {
                name: schema_name(&request.template),
                schema: request.schema.clone(),
            })
        } else {
            let instruction = schema_instruction(&request.schema);
            match messages.iter_mut().rev().find(|m| m.role == Role::User) {
                Some(last_user) => last_user.content.push_str(&instruction),
                None => messages.push(Message::user(instruction.trim_start())),
            }
            None
        };
        let mut sampling = request.sampling.clone();
        self.inner.config.request.apply(&mut sampling);
        ChatRequest {
            messages,
            sampling,
            response_schema,
        }
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

/// The smallest cap a cut-off reply is asked again with, when no cap was set.
const MIN_CAP_AFTER_CUT_OFF: u32 = 4096;

/// The usage of a fresh reply, for the books: the server's, with its thinking's tokens
/// counted here where the server did not count them (a `<think>` block in `content`), and
/// every count made here when it sent no usage at all. The count is stored with the answer,
/// so a replay reports the same tokens. Returns the usage and whether it was counted here.
fn count_usage(model: &str, request: &ChatRequest, response: &mut ChatResponse) -> (Usage, bool) {
    let thinking = std::mem::take(&mut response.thinking_text);
    let mut counted = false;
    if response.usage.total() == 0 {
        let mut usage = tokens::count_usage(model, request, &response.text);
        if !thinking.is_empty() {
            let thought = tokens::count_tokens(model, &thinking);
            usage.completion_tokens += thought;
            usage.reasoning_tokens = Some(thought);
        }
        response.usage = usage;
        counted = true;
    } else if response.usage.reasoning_tokens.is_none() && !thinking.is_empty() {
        response.usage.reasoning_tokens =
            Some(tokens::count_tokens(model, &thinking).min(response.usage.completion_tokens));
    }
    (response.usage, counted)
}

/// A 400 (or 422) that blames the structured-output request itself.
fn rejects_schema(error: &JudgeError) -> bool {
    match error {
        JudgeError::Status {
            status: 400 | 422,
            first_line,
            ..
        } => {
            let line = first_line.to_lowercase();
            line.contains("response_format") || line.contains("json_schema")
        }
        _ => false,
    }
}

/// The API's schema name: letters, digits, `_` and `-`, at most 64 characters.
fn schema_name(template: &TemplateId) -> String {
    let name: String = template
        .id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if name.is_empty() {
        "answer".into()
    } else {
        name
    }
}
