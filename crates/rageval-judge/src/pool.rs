//! Several endpoints serving one model behind one scheduler: [`EndpointPool`].
//!
//! Each endpoint has a weight (its share of the traffic when all are healthy), its own
//! [`Limiter`] (adaptive concurrency, rpm, tpm, `Retry-After` pauses: a 429 from one replica
//! slows that replica only) and a health record. A call goes to the endpoint chosen by
//! smooth weighted round-robin over the endpoints that are up and have a free slot (when
//! none has, it waits for a slot anywhere rather than queueing behind a slow or paused
//! one), each weight scaled by the endpoint's health (a moving average of its recent
//! outcomes, so an endpoint answering 429s, 5xx or timeouts gets less traffic). After
//! [`HealthPolicy::down_after`] such failures in a row an endpoint is down: skipped until a
//! cooldown passes, then sent one probe call; a failed probe doubles the cooldown. When
//! every endpoint is down, calls go to the one due back first, so the judge's back-off — not
//! the pool — paces them.
//!
//! Cache identity: the pool reports one model name (and the backend kind its endpoints
//! share), never an endpoint, so an answer is cached once whichever replica gave it, and a
//! run through a pool replays offline through a single endpoint of that model and the
//! reverse. Replicas must therefore serve the same model; an endpoint may send another name
//! on the wire (a deployment name) without changing the identity.
//!
//! One call here is still one attempt: the [`Judge`](crate::Judge) retries, and its retry
//! naturally lands on a healthier endpoint.

use std::fmt;
use std::future::Future;
use std::pin::pin;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use serde::Serialize;
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::chat::{ChatModel, ChatRequest, ChatResponse, Embedder};
use crate::error::JudgeError;
use crate::limiter::{Limiter, LimiterConfig, rough_tokens};
use crate::openai::OpenAiBackend;

/// Weight of the latest outcome in an endpoint's health average.
const HEALTH_ALPHA: f64 = 0.3;
/// Health never falls below this, so an endpoint that is up still gets a trickle.
const MIN_HEALTH: f64 = 0.05;
/// While no endpoint has room, look again at least this often (a `Retry-After` pause or a
/// cooldown may have ended without any call finishing).
const ROOM_POLL: Duration = Duration::from_millis(20);

/// When an endpoint counts as down and how long it stays so.
#[derive(Debug, Clone)]
pub struct HealthPolicy {
    /// Failures in a row (429, 5xx, timeouts, connection errors) that take it down.
    pub down_after: u32,
    /// How long it stays down the first time.
    pub first_cooldown: Duration,
    /// Cap on the cooldown, which doubles after each failed probe.
    pub max_cooldown: Duration,
}

impl Default for HealthPolicy {
    fn default() -> Self {
        HealthPolicy {
            down_after: 3,
            first_cooldown: Duration::from_secs(1),
            max_cooldown: Duration::from_secs(30),
        }
    }
}

/// One endpoint of a pool.
#[derive(Debug, Clone)]
pub struct PoolEndpoint<B> {
    /// How to reach it.
    pub backend: B,
    /// Its share of the traffic, relative to the others' (finite, > 0).
    pub weight: f64,
    /// Its own limits.
    pub limits: LimiterConfig,
}

/// How an endpoint is doing, for reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EndpointHealth {
    /// Where it lives, redacted.
    pub endpoint: String,
    /// Configured weight.
    pub weight: f64,
    /// Moving average of recent outcomes, in [0.05, 1].
    pub health: f64,
    /// Not in a cooldown.
    pub up: bool,
    /// Attempts sent to it.
    pub attempts: u64,
    /// Of those, failures that count against its health.
    pub failures: u64,
    /// Its adaptive concurrency limit now.
    pub current_limit: usize,
}

/// Endpoints serving one model; implements [`ChatModel`] and [`Embedder`].
pub struct EndpointPool<B = OpenAiBackend> {
    model: String,
    kind: String,
    members: Vec<Member<B>>,
    policy: HealthPolicy,
    state: Mutex<PoolState>,
    /// Signalled whenever an attempt ends, freeing a slot somewhere.
    freed: Notify,
}

/// The outcome of one look at the endpoints.
enum Pick {
    /// Use this endpoint.
    Now(usize),
    /// Every endpoint that is up is full or paused.
    Wait,
}

struct Member<B> {
    backend: B,
    weight: f64,
    limiter: Limiter,
}

#[derive(Debug)]
struct PoolState {
    health: Vec<Health>,
    /// Smooth weighted round-robin counters.
    current: Vec<f64>,
}

#[derive(Debug, Clone)]
struct Health {
    score: f64,
    failures_in_a_row: u32,
    down_until: Option<Instant>,
    cooldown: Duration,
    probing: bool,
    attempts: u64,
    failures: u64,
}

impl<B: ChatModel> EndpointPool<B> {
    /// A pool answering as `model`, with the default [`HealthPolicy`]. Fails when there is
    /// no endpoint or a weight is not a positive number.
    pub fn new(
        model: impl Into<String>,
        endpoints: Vec<PoolEndpoint<B>>,
    ) -> Result<Self, JudgeError> {
        Self::with_policy(model, endpoints, HealthPolicy::default())
    }

    /// A pool with an explicit health policy.
    pub fn with_policy(
        model: impl Into<String>,
        endpoints: Vec<PoolEndpoint<B>>,
        policy: HealthPolicy,
    ) -> Result<Self, JudgeError> {
        if endpoints.is_empty() {
            return Err(JudgeError::Settings(
                "an endpoint pool needs an endpoint".into(),
            ));
        }
        if let Some((i, e)) = endpoints
            .iter()
            .enumerate()
            .find(|(_, e)| !(e.weight.is_finite() && e.weight > 0.0))
        {
            return Err(JudgeError::Settings(format!(
                "endpoint {} ({}) has weight {}; weights must be positive numbers",
                i + 1,
                e.backend.endpoint(),
                e.weight
            )));
        }
        let first_kind = endpoints[0].backend.kind().to_owned();
        let kind = if endpoints.iter().all(|e| e.backend.kind() == first_kind) {
            first_kind
        } else {
            "pool".to_owned()
        };
        let health = Health {
            score: 1.0,
            failures_in_a_row: 0,
            down_until: None,
            cooldown: policy.first_cooldown,
            probing: false,
            attempts: 0,
            failures: 0,
        };
        let state = PoolState {
            health: vec![health; endpoints.len()],
            current: vec![0.0; endpoints.len()],
        };
        let members = endpoints
            .into_iter()
            .map(|e| Member {
                backend: e.backend,
                weight: e.weight,
                limiter: Limiter::new(e.limits),
            })
            .collect();
        Ok(EndpointPool {
            model: model.into(),
            kind,
            members,
            policy,
            state: Mutex::new(state),
            freed: Notify::new(),
        })
    }

    /// Each endpoint's health now, in configuration order.
    pub fn health(&self) -> Vec<EndpointHealth> {
        let state = self.lock();
        let now = Instant::now();
        self.members
            .iter()
            .zip(&state.health)
            .map(|(member, health)| EndpointHealth {
                endpoint: member.backend.endpoint(),
                weight: member.weight,
                health: health.score,
                up: health.down_until.is_none_or(|until| until <= now),
                attempts: health.attempts,
                failures: health.failures,
                current_limit: member.limiter.current_limit(),
            })
            .collect()
    }
}

impl<B> EndpointPool<B> {
    fn lock(&self) -> MutexGuard<'_, PoolState> {
        // Every update leaves the state consistent, so a poisoned lock is still usable.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The endpoint for the next attempt, waiting while every endpoint that is up is full.
    async fn choose(&self) -> usize {
        loop {
            let mut freed = pin!(self.freed.notified());
            // Registered before looking, so a slot freed in between is not missed.
            freed.as_mut().enable();
            match self.pick() {
                Pick::Now(index) => return index,
                Pick::Wait => {
                    let _ = tokio::time::timeout(ROOM_POLL, freed).await;
                }
            }
        }
    }

    /// One look at the endpoints (see the module doc).
    fn pick(&self) -> Pick {
        let now = Instant::now();
        let mut state = self.lock();
        let available: Vec<usize> = (0..self.members.len())
            .filter(|&i| {
                let h = &state.health[i];
                h.down_until.is_none_or(|until| until <= now && !h.probing)
            })
            .collect();
        if available.is_empty() {
            let due_first = (0..self.members.len())
                .min_by_key(|&i| state.health[i].down_until)
                .unwrap_or(0);
            state.health[due_first].attempts += 1;
            return Pick::Now(due_first);
        }
        let candidates: Vec<usize> = available
            .into_iter()
            .filter(|&i| self.members[i].limiter.has_room())
            .collect();
        if candidates.is_empty() {
            return Pick::Wait;
        }
        let mut total = 0.0;
        let mut best = candidates[0];
        for &i in &candidates {
            let effective = self.members[i].weight * state.health[i].score;
            total += effective;
            state.current[i] += effective;
            if state.current[i] > state.current[best] {
                best = i;
            }
        }
        state.current[best] -= total;
        let health = &mut state.health[best];
        health.attempts += 1;
        if health.down_until.is_some() {
            health.probing = true;
        }
        Pick::Now(best)
    }

    /// Updates the chosen endpoint's health with an attempt's outcome.
    fn record(&self, index: usize, outcome: Option<&JudgeError>) {
        let now = Instant::now();
        let mut state = self.lock();
        let health = &mut state.health[index];
        let was_probe = std::mem::take(&mut health.probing);
        match outcome {
            None => {
                health.score = health.score * (1.0 - HEALTH_ALPHA) + HEALTH_ALPHA;
                health.failures_in_a_row = 0;
                health.down_until = None;
                health.cooldown = self.policy.first_cooldown;
            }
            Some(error) if error.is_retryable() => {
                health.score = (health.score * (1.0 - HEALTH_ALPHA)).max(MIN_HEALTH);
                health.failures_in_a_row += 1;
                health.failures += 1;
                if was_probe {
                    health.cooldown = (health.cooldown * 2).min(self.policy.max_cooldown);
                    health.down_until = Some(now + health.cooldown);
                } else if health.failures_in_a_row >= self.policy.down_after
                    && health.down_until.is_none()
                {
                    health.down_until = Some(now + health.cooldown);
                }
            }
            // A client error (400, 401, ...) says nothing about the endpoint's load.
            Some(_) => {}
        }
    }

    /// One attempt on the picked endpoint, through its limiter, with the bookkeeping.
    async fn attempt<'a, R, Fut>(
        &'a self,
        estimate: u64,
        call: impl FnOnce(&'a B) -> Fut,
        used: impl FnOnce(&R) -> u64,
    ) -> Result<R, JudgeError>
    where
        Fut: Future<Output = Result<R, JudgeError>>,
    {
        let index = self.choose().await;
        let mut pending = PendingOutcome {
            pool: self,
            index,
            open: true,
        };
        let member = &self.members[index];
        let permit = member.limiter.acquire(estimate).await?;
        let result = call(&member.backend).await;
        drop(permit);
        self.freed.notify_waiters();
        match &result {
            Ok(value) => {
                member.limiter.on_success();
                member.limiter.settle_tokens(estimate, used(value));
            }
            Err(error) if error.is_overload() => member.limiter.on_overload(error.retry_after()),
            Err(error) if error.is_retryable() => member.limiter.on_transient(),
            Err(_) => {}
        }
        pending.open = false;
        self.record(index, result.as_ref().err());
        result
    }
}

/// Clears a probe mark when an attempt is abandoned (its future dropped) before an outcome.
struct PendingOutcome<'a, B> {
    pool: &'a EndpointPool<B>,
    index: usize,
    open: bool,
}

impl<B> Drop for PendingOutcome<'_, B> {
    fn drop(&mut self) {
        if self.open {
            self.pool.lock().health[self.index].probing = false;
            self.pool.freed.notify_waiters();
        }
    }
}

impl<B> fmt::Debug for EndpointPool<B>
where
    B: ChatModel,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let endpoints: Vec<(String, f64)> = self
            .members
            .iter()
            .map(|m| (m.backend.endpoint(), m.weight))
            .collect();
        f.debug_struct("EndpointPool")
            .field("model", &self.model)
            .field("kind", &self.kind)
            .field("endpoints", &endpoints)
            .finish()
    }
}

impl<B: ChatModel> ChatModel for EndpointPool<B> {
    fn kind(&self) -> &str {
        &self.kind
    }
    fn model(&self) -> &str {
        &self.model
    }
    fn endpoint(&self) -> String {
        let all: Vec<String> = self.members.iter().map(|m| m.backend.endpoint()).collect();
        format!("pool[{}]", all.join(", "))
    }
    fn supports_response_schema(&self) -> bool {
        // All or none: the request, hence the cache key, must not depend on the replica.
        self.members
            .iter()
            .all(|m| m.backend.supports_response_schema())
    }
    fn limits_itself(&self) -> bool {
        true
    }
    fn learned_forms(&self) -> Vec<crate::forms::LearnedForm> {
        self.members
            .iter()
            .flat_map(|m| m.backend.learned_forms())
            .collect()
    }
    fn adopt_forms(&self, forms: &[crate::forms::LearnedForm]) {
        for member in &self.members {
            member.backend.adopt_forms(forms);
        }
    }
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, JudgeError> {
        self.attempt(
            rough_tokens(request),
            |backend| backend.chat(request),
            |response: &ChatResponse| response.usage.total(),
        )
        .await
    }
}

impl<B: ChatModel + Embedder> Embedder for EndpointPool<B> {
    fn embedding_kind(&self) -> &str {
        &self.kind
    }
    fn embedding_model(&self) -> &str {
        &self.model
    }
    fn embedding_limits_itself(&self) -> bool {
        true
    }
    async fn embed(&self, inputs: &[String]) -> Result<Vec<Vec<f32>>, JudgeError> {
        let estimate = inputs
            .iter()
            .map(|t| t.len() as u64)
            .sum::<u64>()
            .div_ceil(4);
        self.attempt(estimate, |backend| backend.embed(inputs), |_| estimate)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::{Message, Sampling, Usage};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

    /// A backend that answers or fails on command and counts its calls.
    #[derive(Clone)]
    struct Fake {
        name: &'static str,
        broken: Arc<AtomicBool>,
        calls: Arc<AtomicU64>,
    }

    impl Fake {
        fn new(name: &'static str) -> Self {
            Fake {
                name,
                broken: Arc::new(AtomicBool::new(false)),
                calls: Arc::new(AtomicU64::new(0)),
            }
        }
        fn calls(&self) -> u64 {
            self.calls.load(Ordering::SeqCst)
        }
    }

    impl ChatModel for Fake {
        fn kind(&self) -> &str {
            "fake"
        }
        fn model(&self) -> &str {
            "m"
        }
        fn endpoint(&self) -> String {
            self.name.into()
        }
        fn supports_response_schema(&self) -> bool {
            true
        }
        async fn chat(&self, _: &ChatRequest) -> Result<ChatResponse, JudgeError> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            if self.broken.load(Ordering::SeqCst) {
                return Err(JudgeError::Status {
                    endpoint: self.name.into(),
                    status: 503,
                    first_line: "down".into(),
                    retry_after: None,
                });
            }
            Ok(ChatResponse {
                text: self.name.into(),
                usage: Usage::default(),
                finish_reason: None,
                thinking: None,
                thinking_text: String::new(),
            })
        }
    }

    fn endpoint(backend: &Fake, weight: f64) -> PoolEndpoint<Fake> {
        PoolEndpoint {
            backend: backend.clone(),
            weight,
            limits: LimiterConfig::default(),
        }
    }

    fn request() -> ChatRequest {
        ChatRequest {
            messages: vec![Message::user("x")],
            sampling: Sampling::default(),
            response_schema: None,
        }
    }

    #[tokio::test]
    async fn healthy_endpoints_share_traffic_by_weight_exactly() {
        let (a, b, c) = (Fake::new("a"), Fake::new("b"), Fake::new("c"));
        let pool = EndpointPool::new(
            "m",
            vec![endpoint(&a, 3.0), endpoint(&b, 1.0), endpoint(&c, 1.0)],
        )
        .unwrap();
        for _ in 0..500 {
            pool.chat(&request()).await.unwrap();
        }
        assert_eq!((a.calls(), b.calls(), c.calls()), (300, 100, 100));
        assert_eq!(ChatModel::kind(&pool), "fake");
    }

    #[tokio::test(start_paused = true)]
    async fn a_failing_endpoint_goes_down_is_probed_and_comes_back() {
        let (a, b) = (Fake::new("a"), Fake::new("b"));
        let policy = HealthPolicy {
            down_after: 3,
            first_cooldown: Duration::from_secs(1),
            max_cooldown: Duration::from_secs(4),
        };
        let pool =
            EndpointPool::with_policy("m", vec![endpoint(&a, 1.0), endpoint(&b, 1.0)], policy)
                .unwrap();
        a.broken.store(true, Ordering::SeqCst);
        let mut failures = 0;
        for _ in 0..100 {
            failures += u32::from(pool.chat(&request()).await.is_err());
        }
        // Three failures took `a` down; every later call went to `b`.
        assert_eq!((failures, a.calls()), (3, 3));
        assert!(!pool.health()[0].up);
        // After the cooldown one probe goes to `a`; it fails and the cooldown doubles.
        tokio::time::advance(Duration::from_millis(1001)).await;
        for _ in 0..10 {
            let _ = pool.chat(&request()).await;
        }
        assert_eq!(a.calls(), 4);
        tokio::time::advance(Duration::from_millis(1500)).await;
        for _ in 0..10 {
            pool.chat(&request()).await.unwrap();
        }
        assert_eq!(
            a.calls(),
            4,
            "still cooling down (2 s after a failed probe)"
        );
        // Repaired: the next probe succeeds and `a` takes traffic again.
        a.broken.store(false, Ordering::SeqCst);
        tokio::time::advance(Duration::from_millis(600)).await;
        for _ in 0..100 {
            pool.chat(&request()).await.unwrap();
        }
        let health = pool.health();
        assert!(health[0].up);
        assert!(
            a.calls() > 4 + 20,
            "a got {} calls after recovering",
            a.calls()
        );
        assert_eq!(health[0].failures, 4);
    }

    #[tokio::test(start_paused = true)]
    async fn when_all_are_down_calls_still_go_to_the_first_due_back() {
        let (a, b) = (Fake::new("a"), Fake::new("b"));
        let pool = EndpointPool::new("m", vec![endpoint(&a, 1.0), endpoint(&b, 1.0)]).unwrap();
        a.broken.store(true, Ordering::SeqCst);
        b.broken.store(true, Ordering::SeqCst);
        for _ in 0..20 {
            assert!(pool.chat(&request()).await.is_err());
        }
        assert_eq!(a.calls() + b.calls(), 20);
        assert!(pool.health().iter().all(|h| !h.up));
    }

    #[test]
    fn bad_weights_and_empty_pools_are_refused() {
        let a = Fake::new("a");
        assert!(EndpointPool::<Fake>::new("m", vec![]).is_err());
        let err = EndpointPool::new("m", vec![endpoint(&a, 0.0)]).unwrap_err();
        assert!(err.to_string().contains("weight"), "{err}");
        assert!(EndpointPool::new("m", vec![endpoint(&a, f64::NAN)]).is_err());
    }
}
