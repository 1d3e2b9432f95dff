//! How many calls may be in flight and how fast they may start.
//!
//! A [`Limiter`] combines a concurrency limit that adapts (halved on a 429, grown
//! back by one after a run of successes), requests-per-minute and tokens-per-minute token
//! buckets, and a shared pause that honours a server's `Retry-After` for every caller, not
//! just the one that was told. It never sleeps on behalf of a cache hit: the judge consults
//! the cache first. Dropping a [`Permit`] (even by cancelling the future holding it) returns
//! the slot.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use crate::chat::ChatRequest;
use crate::error::JudgeError;
use crate::tokens::completion_allowance;

/// Default cap on calls in flight.
pub const DEFAULT_MAX_CONCURRENCY: usize = 16;
/// Successes in a row (since the last cut) before the limit grows by one.
pub const DEFAULT_GROW_AFTER: u32 = 8;
/// After a cut, further overload signals are ignored this long: the calls already in flight
/// when the server got busy report it too, and one episode should halve the limit once.
pub const DEFAULT_CUT_COOLDOWN: Duration = Duration::from_millis(250);
/// A rate bucket holds this many seconds' worth of its per-minute rate, the largest burst.
const BURST_SECONDS: f64 = 10.0;

/// Limits for one endpoint.
#[derive(Debug, Clone)]
pub struct LimiterConfig {
    /// Most calls in flight, and where the adaptive limit starts.
    pub max_concurrency: usize,
    /// The adaptive limit never goes below this.
    pub min_concurrency: usize,
    /// Requests per minute, when the provider imposes one.
    pub requests_per_minute: Option<u32>,
    /// Tokens (prompt + completion) per minute, when the provider imposes one.
    pub tokens_per_minute: Option<u32>,
    /// Successes in a row before the limit grows by one.
    pub grow_after: u32,
    /// Minimum time between two cuts.
    pub cut_cooldown: Duration,
}

impl Default for LimiterConfig {
    fn default() -> Self {
        LimiterConfig {
            max_concurrency: DEFAULT_MAX_CONCURRENCY,
            min_concurrency: 1,
            requests_per_minute: None,
            tokens_per_minute: None,
            grow_after: DEFAULT_GROW_AFTER,
            cut_cooldown: DEFAULT_CUT_COOLDOWN,
        }
    }
}

/// Shared limiter; clones share state.
#[derive(Debug, Clone)]
pub struct Limiter {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    semaphore: Arc<Semaphore>,
    config: LimiterConfig,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// The adaptive concurrency limit now.
    limit: usize,
    /// Permits to retire as they come back, after a cut below what is in flight.
    debt: usize,
    successes: u32,
    last_cut: Option<Instant>,
    paused_until: Option<Instant>,
    requests: Option<Bucket>,
    tokens: Option<Bucket>,
    cuts: u64,
}

#[derive(Debug)]
struct Bucket {
    capacity: f64,
    per_second: f64,
    available: f64,
    refilled: Instant,
}

impl Bucket {
    fn per_minute(rate: u32, now: Instant) -> Self {
        let per_second = f64::from(rate.max(1)) / 60.0;
        let capacity = (per_second * BURST_SECONDS).max(1.0);
        Bucket {
            capacity,
            per_second,
            available: capacity,
            refilled: now,
        }
    }

    fn refill(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.refilled).as_secs_f64();
        self.available = (self.available + elapsed * self.per_second).min(self.capacity);
        self.refilled = now;
    }

    /// Time until `need` is available (zero when it is now).
    fn wait_for(&self, need: f64) -> Duration {
        let need = need.min(self.capacity);
        if self.available >= need {
            Duration::ZERO
        } else {
            Duration::from_secs_f64((need - self.available) / self.per_second)
        }
    }
}

/// A slot for one call; dropping it frees the slot (or retires it after a cut).
#[derive(Debug)]
pub struct Permit {
    permit: Option<OwnedSemaphorePermit>,
    inner: Arc<Inner>,
}

impl Drop for Permit {
    fn drop(&mut self) {
        if let Some(permit) = self.permit.take() {
            let mut state = lock(&self.inner.state);
            if state.debt > 0 {
                state.debt -= 1;
                permit.forget();
            }
        }
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    // The state stays consistent between statements, so a poisoned lock is still usable.
    state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Limiter {
    /// A limiter with `config` (concurrency clamped to at least 1).
    pub fn new(mut config: LimiterConfig) -> Self {
        config.max_concurrency = config.max_concurrency.max(1);
        config.min_concurrency = config.min_concurrency.clamp(1, config.max_concurrency);
        let now = Instant::now();
        let state = State {
            limit: config.max_concurrency,
            debt: 0,
            successes: 0,
            last_cut: None,
            paused_until: None,
            requests: config
                .requests_per_minute
                .map(|r| Bucket::per_minute(r, now)),
            tokens: config.tokens_per_minute.map(|t| Bucket::per_minute(t, now)),
            cuts: 0,
        };
        Limiter {
            inner: Arc::new(Inner {
                semaphore: Arc::new(Semaphore::new(config.max_concurrency)),
                config,
                state: Mutex::new(state),
            }),
        }
    }

    /// Waits for a concurrency slot, any `Retry-After` pause, and room in the rate buckets
    /// for one request of about `estimated_tokens`.
    pub async fn acquire(&self, estimated_tokens: u64) -> Result<Permit, JudgeError> {
        let permit = Arc::clone(&self.inner.semaphore)
            .acquire_owned()
            .await
            .map_err(|_| JudgeError::Task("limiter closed".into()))?;
        let permit = Permit {
            permit: Some(permit),
            inner: Arc::clone(&self.inner),
        };
        loop {
            let wait = {
                let mut state = lock(&self.inner.state);
                let now = Instant::now();
                let paused = state
                    .paused_until
                    .map(|until| until.saturating_duration_since(now))
                    .unwrap_or_default();
                if !paused.is_zero() {
                    paused
                } else {
                    let need = estimated_tokens as f64;
                    let mut wait = Duration::ZERO;
                    if let Some(bucket) = state.requests.as_mut() {
                        bucket.refill(now);
                        wait = wait.max(bucket.wait_for(1.0));
                    }
                    if let Some(bucket) = state.tokens.as_mut() {
                        bucket.refill(now);
                        wait = wait.max(bucket.wait_for(need));
                    }
                    if wait.is_zero() {
                        if let Some(bucket) = state.requests.as_mut() {
                            bucket.available -= 1.0;
                        }
                        if let Some(bucket) = state.tokens.as_mut() {
                            bucket.available -= need.min(bucket.capacity);
                        }
                        return Ok(permit);
                    }
                    wait
                }
            };
            tokio::time::sleep(wait).await;
        }
    }

    /// Corrects the token bucket once the real usage of a call is known.
    pub fn settle_tokens(&self, estimated: u64, actual: u64) {
        let mut state = lock(&self.inner.state);
        if let Some(bucket) = state.tokens.as_mut() {
            let estimated = (estimated as f64).min(bucket.capacity);
            bucket.available = (bucket.available + estimated - actual as f64).min(bucket.capacity);
        }
    }

    /// A call succeeded: after enough in a row, allow one more in flight.
    pub fn on_success(&self) {
        let mut state = lock(&self.inner.state);
        state.successes += 1;
        if state.successes >= self.inner.config.grow_after
            && state.limit < self.inner.config.max_concurrency
        {
            state.successes = 0;
            state.limit += 1;
            if state.debt > 0 {
                state.debt -= 1;
            } else {
                self.inner.semaphore.add_permits(1);
            }
        }
    }

    /// A call failed in a way worth retrying that is not a request to slow down (a timeout,
    /// a 5xx, a reset connection): the limit keeps its size, only its growth starts over.
    pub fn on_transient(&self) {
        lock(&self.inner.state).successes = 0;
    }

    /// The server is overloaded (a 429): halve the limit, at most once per cooldown, and
    /// pause everyone for `retry_after` when the server asked for it.
    pub fn on_overload(&self, retry_after: Option<Duration>) {
        let mut state = lock(&self.inner.state);
        let now = Instant::now();
        if let Some(wait) = retry_after {
            let until = now + wait;
            state.paused_until = Some(state.paused_until.map_or(until, |p| p.max(until)));
        }
        state.successes = 0;
        let cooling = state
            .last_cut
            .is_some_and(|at| now.saturating_duration_since(at) < self.inner.config.cut_cooldown);
        if cooling {
            return;
        }
        let target = (state.limit / 2).max(self.inner.config.min_concurrency);
        let mut retire = state.limit - target;
        state.limit = target;
        state.last_cut = Some(now);
        state.cuts += 1;
        // Retire idle permits now; the rest as calls in flight finish.
        while retire > 0 {
            match self.inner.semaphore.try_acquire() {
                Ok(idle) => {
                    idle.forget();
                    retire -= 1;
                }
                Err(_) => break,
            }
        }
        state.debt += retire;
    }

    /// Whether a call could start now: a free slot and no `Retry-After` pause. (The rate
    /// buckets are not consulted: they refill continuously.)
    pub fn has_room(&self) -> bool {
        if self.inner.semaphore.available_permits() == 0 {
            return false;
        }
        let state = lock(&self.inner.state);
        state
            .paused_until
            .is_none_or(|until| until <= Instant::now())
    }

    /// The concurrency limit now.
    pub fn current_limit(&self) -> usize {
        lock(&self.inner.state).limit
    }

    /// How many times the limit was cut.
    pub fn cuts(&self) -> u64 {
        lock(&self.inner.state).cuts
    }
}

/// About four bytes per token plus the completion allowance: cheap enough for every call,
/// and only used to pace the tokens-per-minute bucket (settled with the real usage after).
pub(crate) fn rough_tokens(request: &ChatRequest) -> u64 {
    let bytes: usize = request
        .messages
        .iter()
        .map(|m| m.content.len())
        .sum::<usize>()
        + request
            .response_schema
            .as_ref()
            .map_or(0, |s| s.schema.to_string().len());
    (bytes as u64).div_ceil(4) + completion_allowance(request)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(max: usize) -> LimiterConfig {
        LimiterConfig {
            max_concurrency: max,
            grow_after: 2,
            cut_cooldown: Duration::ZERO,
            ..LimiterConfig::default()
        }
    }

    #[tokio::test]
    async fn cut_halves_and_growth_restores_one_at_a_time() {
        let limiter = Limiter::new(config(8));
        let held: Vec<Permit> = futures_held(&limiter, 8).await;
        limiter.on_overload(None);
        assert_eq!(limiter.current_limit(), 4);
        drop(held);
        // Four of the eight returned permits were retired.
        assert_eq!(limiter.inner.semaphore.available_permits(), 4);
        for _ in 0..4 {
            limiter.on_success();
        }
        assert_eq!(limiter.current_limit(), 6);
        assert_eq!(limiter.inner.semaphore.available_permits(), 6);
    }

    /// Regression: a timeout halved the limit, so a judge that thinks past the timeout was
    /// throttled and its thinking billed again at a lower concurrency.
    #[tokio::test]
    async fn a_transient_failure_keeps_the_limit_and_only_restarts_its_growth() {
        let limiter = Limiter::new(config(8));
        limiter.on_overload(None);
        assert_eq!(limiter.current_limit(), 4);
        limiter.on_success();
        limiter.on_transient();
        assert_eq!((limiter.current_limit(), limiter.cuts()), (4, 1));
        // The success before the transient failure no longer counts towards growth.
        limiter.on_success();
        assert_eq!(limiter.current_limit(), 4);
        limiter.on_success();
        assert_eq!(limiter.current_limit(), 5);
    }

    async fn futures_held(limiter: &Limiter, n: usize) -> Vec<Permit> {
        let mut held = Vec::new();
        for _ in 0..n {
            held.push(limiter.acquire(0).await.unwrap());
        }
        held
    }

    #[tokio::test]
    async fn never_below_min_and_cooldown_merges_cuts() {
        let limiter = Limiter::new(LimiterConfig {
            cut_cooldown: Duration::from_secs(60),
            ..config(8)
        });
        limiter.on_overload(None);
        limiter.on_overload(None);
        assert_eq!(limiter.current_limit(), 4);
        assert_eq!(limiter.cuts(), 1);
        let floor = Limiter::new(config(2));
        for _ in 0..5 {
            floor.on_overload(None);
        }
        assert_eq!(floor.current_limit(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn rpm_bucket_spaces_requests_after_the_burst() {
        // 60 rpm = 1/s with a 10-request burst: the 11th waits about a second.
        let limiter = Limiter::new(LimiterConfig {
            requests_per_minute: Some(60),
            ..config(100)
        });
        let start = Instant::now();
        for _ in 0..10 {
            drop(limiter.acquire(0).await.unwrap());
        }
        assert!(start.elapsed() < Duration::from_millis(10));
        drop(limiter.acquire(0).await.unwrap());
        let waited = start.elapsed();
        assert!(waited >= Duration::from_millis(990), "{waited:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn tpm_bucket_waits_for_tokens_and_settles_real_usage() {
        // 600 tokens/min = 10/s, burst 100.
        let limiter = Limiter::new(LimiterConfig {
            tokens_per_minute: Some(600),
            ..config(100)
        });
        let start = Instant::now();
        drop(limiter.acquire(100).await.unwrap());
        // The call really used 40: 60 come back.
        limiter.settle_tokens(100, 40);
        drop(limiter.acquire(60).await.unwrap());
        assert!(start.elapsed() < Duration::from_millis(10));
        // The bucket is empty: 50 tokens take 5 s to refill.
        drop(limiter.acquire(50).await.unwrap());
        let waited = start.elapsed();
        assert!(waited >= Duration::from_millis(4990), "{waited:?}");
        // A request larger than the bucket waits for a full bucket instead of forever.
        drop(limiter.acquire(10_000).await.unwrap());
    }

    #[tokio::test(start_paused = true)]
    async fn retry_after_pauses_every_caller() {
        let limiter = Limiter::new(config(4));
        limiter.on_overload(Some(Duration::from_secs(3)));
        let start = Instant::now();
        drop(limiter.acquire(0).await.unwrap());
        assert!(start.elapsed() >= Duration::from_secs(3));
    }
}
