//! The call pipeline every model call goes through: the cache, then an identical call in
//! flight (single flight), then the caps' permission ([`crate::accounting`]), the health
//! check ([`crate::health`]), a limiter slot, and the backend, retried with back-off. A
//! reply cut off at the token cap before any answer is asked once more with a larger cap.
//!
//! Cache hits never touch the limiter or the network; offline mode answers from the cache
//! or fails with [`JudgeError::OfflineMiss`]. What a call used is booked after it answers.

use std::future::Future;

use super::Judge;
use super::stats::bump;
use crate::cache::{CacheKey, CacheMode};
use crate::chat::{ChatModel, ChatRequest, ChatResponse, Usage};
use crate::error::JudgeError;
use crate::flight::{Hold as FlightHold, Role as FlightRole};
use crate::limiter::rough_tokens;
use crate::structured::TemplateId;
use crate::tokens;

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

/// Keeps a fresh answer in flight until its caller has stored it (or decided not to).
pub(super) type Hold = FlightHold<Flown>;

/// What a call in flight hands every caller that shares it.
#[derive(Debug, Clone)]
pub(super) struct Flown {
    response: ChatResponse,
    source: Source,
}

/// Where a flown answer came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// The backend answered.
    Backend,
    /// The cache held it (the leader found it there after all); `other_endpoint` when
    /// another endpoint wrote it.
    Cache { other_endpoint: bool },
}

impl Completion {
    /// Whether this caller made the request, so the answer is its to store.
    pub(super) fn fresh(&self) -> bool {
        !self.cached && !self.shared
    }
}

/// What a request is expected to take, for the limiter and the caps.
pub(super) struct Estimate {
    /// Rough tokens for the tokens-per-minute bucket.
    pub(super) limiter_tokens: u64,
    /// Tokens for the cost cap (zero when no cost cap is set).
    pub(super) budget: Usage,
}

/// What one model call is, for the books.
pub(super) struct CallSite<'a> {
    pub(super) template: &'a str,
    pub(super) model: &'a str,
    /// Where the request goes (redacted), for a halt to name.
    pub(super) endpoint: &'a str,
    /// The backend runs its own per-endpoint limiters (see [`ChatModel::limits_itself`]).
    pub(super) limits_itself: bool,
}

impl<M> Judge<M> {
    /// The one retry loop: the caps' permission, a limiter slot, one attempt, then the books
    /// or the retry decision. `usage` reads (and, when the server sent none, fills in) the
    /// token usage of a success. Each attempt's outcome goes to the health, and a halt
    /// aborts the attempt or the back-off under way.
    pub(super) async fn with_retries<R, Fut>(
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
            let result = inner.health.unless_halted(call()).await;
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
                Err(error @ JudgeError::Unavailable(_)) => return Err(error),
                Err(error) => error,
            };
            drop(reservation);
            bump(&inner.counters.failed_attempts);
            inner
                .health
                .attempt_failed(&error, site.endpoint, site.model);
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
                    let back_off = async {
                        tokio::time::sleep(wait).await;
                        Ok(())
                    };
                    inner.health.unless_halted(back_off).await?;
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

impl<M: ChatModel> Judge<M> {
    /// One raw completion: from the cache, from an identical call in flight, or from the
    /// backend (allowed by the caps, limited, retried, cancellable), then stored.
    pub async fn complete(
        &self,
        template: &TemplateId,
        request: &ChatRequest,
    ) -> Result<Completion, JudgeError> {
        let key = self.cache_key(template, request);
        let (completion, _hold) = self.fetch(template, request, key).await?;
        if completion.fresh() {
            self.store(template, key, &completion.response).await;
        }
        Ok(completion)
    }

    /// A completion from the cache, from an identical call in flight, or from the backend —
    /// never stored here: the caller stores it once it is known to be worth keeping, and
    /// keeps the [`Hold`] until then, so identical calls meanwhile share the answer.
    pub(super) async fn fetch(
        &self,
        template: &TemplateId,
        request: &ChatRequest,
        key: CacheKey,
    ) -> Result<(Completion, Hold), JudgeError> {
        let inner = &self.inner;
        inner.cancel.check()?;
        let mode = inner.config.cache_mode;
        let template = template.to_string();
        let reads_cache =
            inner.cache.is_some() && matches!(mode, CacheMode::ReadWrite | CacheMode::Offline);
        if reads_cache {
            if let Some(hit) = self.cache_hit(key).await? {
                return Ok((self.count_hit(&template, hit), Hold::none()));
            }
        }
        if mode == CacheMode::Offline {
            return Err(JudgeError::OfflineMiss {
                template,
                key: key.hex(),
            });
        }
        let (flown, role, hold) = inner
            .flights
            .run(key, || async {
                // The leader reads the cache again: an identical call may have stored its
                // answer and left the flight since the lookup above.
                if reads_cache {
                    if let Some(hit) = self.cache_hit(key).await? {
                        return Ok(hit);
                    }
                }
                let response = inner
                    .cancel
                    .run(self.call_with_retries(&template, request))
                    .await?;
                Ok(Flown {
                    response,
                    source: Source::Backend,
                })
            })
            .await?;
        if matches!(flown.source, Source::Cache { .. }) {
            return Ok((self.count_hit(&template, flown), hold));
        }
        let shared = role == FlightRole::Followed;
        if shared {
            bump(&inner.counters.deduplicated);
            inner.ledger.shared(&template);
        }
        let completion = Completion {
            response: flown.response,
            cached: false,
            shared,
        };
        Ok((completion, hold))
    }

    /// The cached answer for `key`, if any.
    async fn cache_hit(&self, key: CacheKey) -> Result<Option<Flown>, JudgeError> {
        let Some(cache) = &self.inner.cache else {
            return Ok(None);
        };
        let hit = cache.get_with_origin(key).await?;
        Ok(hit.map(|(response, origin)| Flown {
            response,
            source: Source::Cache {
                other_endpoint: origin.is_some_and(|origin| origin != self.origin()),
            },
        }))
    }

    /// Books an answer read from the cache.
    fn count_hit(&self, template: &str, hit: Flown) -> Completion {
        let inner = &self.inner;
        bump(&inner.counters.cache_hits);
        if matches!(
            hit.source,
            Source::Cache {
                other_endpoint: true
            }
        ) {
            bump(&inner.counters.cache_hits_other_origin);
        }
        inner.ledger.cached(template, 1, hit.response.usage);
        Completion {
            response: hit.response,
            cached: true,
            shared: false,
        }
    }

    /// Stores a fresh answer (read-write mode only) in one transaction, so cancelling never
    /// leaves half an entry; a failure to store is counted, never fatal.
    pub(super) async fn store(
        &self,
        template: &TemplateId,
        key: CacheKey,
        response: &ChatResponse,
    ) {
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
                Err(error) => {
                    tracing::debug!(%error, "answer not stored in the cache");
                    bump(&inner.counters.cache_write_errors);
                }
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
                self.inner.ledger.completion_reserve(template, request),
            )
        } else {
            Usage::default()
        };
        let result = match self.chat(template, request, budget).await {
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

    /// One chat request through the retry loop, `budget` held against the cost cap, its
    /// usage counted for the books.
    async fn chat(
        &self,
        template: &str,
        request: &ChatRequest,
        budget: Usage,
    ) -> Result<ChatResponse, JudgeError> {
        let model = &self.inner.model;
        let name = model.model();
        let endpoint = model.endpoint();
        let site = CallSite {
            template,
            model: name,
            endpoint: &endpoint,
            limits_itself: model.limits_itself(),
        };
        let estimate = Estimate {
            limiter_tokens: rough_tokens(request),
            budget,
        };
        self.with_retries(
            site,
            estimate,
            move || model.chat(request),
            |response: &mut ChatResponse| count_usage(name, request, response),
        )
        .await
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
        let again = self.chat(template, &larger, Usage::default()).await?;
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
