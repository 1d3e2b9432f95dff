//! Single flight: identical calls that overlap in time make one request.
//!
//! Calls are identical when their cache keys are (same backend, model, template, messages,
//! sampling, schema). The first caller leads and makes the request; the others wait for
//! its answer. If the leader fails or is dropped, the next waiter takes over and tries
//! itself, so an error is never handed to a caller whose own attempt might have succeeded,
//! and a cancelled leader never strands its followers. The leader's answer stays in flight
//! until it lets go of its [`Hold`], which it does after storing the answer in the cache (or
//! deciding not to): a call that comes in between shares it rather than find neither an
//! entry nor a cached answer and ask again. Later calls go to the cache (or, with the cache
//! off, make a fresh request): only overlapping duplicates merge.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use tokio::sync::OnceCell;

use crate::cache::CacheKey;
use crate::error::JudgeError;

/// One call's answer, once it has one.
type Entry<T> = Arc<OnceCell<T>>;
type Calls<T> = Mutex<HashMap<CacheKey, Entry<T>>>;

/// Calls in flight, by cache key, each answering a `T`.
#[derive(Debug)]
pub(crate) struct Flights<T> {
    calls: Arc<Calls<T>>,
}

impl<T> Default for Flights<T> {
    fn default() -> Self {
        Flights {
            calls: Arc::default(),
        }
    }
}

/// A led call's answer kept in flight until this is dropped: its caller holds it until the
/// answer is stored (or judged not worth storing).
#[derive(Debug)]
#[must_use = "dropping the hold ends the flight; keep it until the answer is stored"]
pub(crate) struct Hold<T> {
    /// The map, the key and the entry this caller led; `None` for a follower.
    led: Option<(Arc<Calls<T>>, CacheKey, Entry<T>)>,
}

impl<T> Hold<T> {
    /// The hold of an answer that never flew (a cache hit).
    pub(crate) fn none() -> Self {
        Hold { led: None }
    }
}

impl<T> Drop for Hold<T> {
    fn drop(&mut self) {
        if let Some((calls, key, cell)) = self.led.take() {
            let mut calls = lock(&calls);
            if calls
                .get(&key)
                .is_some_and(|current| Arc::ptr_eq(current, &cell))
            {
                calls.remove(&key);
            }
        }
    }
}

/// How a caller got its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// It made the request.
    Led,
    /// Another caller's request answered it.
    Followed,
}

impl<T: Clone> Flights<T> {
    /// The answer for `key`: from an identical call in flight, else from `call`. A caller
    /// that led gets the [`Hold`] that keeps its answer in flight; a follower's holds nothing.
    pub(crate) async fn run<F>(
        &self,
        key: CacheKey,
        call: impl FnOnce() -> F,
    ) -> Result<(T, Role, Hold<T>), JudgeError>
    where
        F: Future<Output = Result<T, JudgeError>>,
    {
        let cell = Arc::clone(lock(&self.calls).entry(key).or_default());
        let mut role = Role::Followed;
        let result = cell
            .get_or_try_init(|| {
                role = Role::Led;
                call()
            })
            .await
            .cloned();
        match result {
            Ok(answer) => {
                let led = (role == Role::Led).then(|| (Arc::clone(&self.calls), key, cell));
                Ok((answer, role, Hold { led }))
            }
            Err(error) => {
                // After a failure the entry goes only if nobody else waits on it (a waiter
                // takes over and leads).
                let mut calls = lock(&self.calls);
                let ours = calls
                    .get(&key)
                    .is_some_and(|current| Arc::ptr_eq(current, &cell));
                if ours && Arc::strong_count(&cell) == 2 {
                    calls.remove(&key);
                }
                Err(error)
            }
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        lock(&self.calls).len()
    }
}

fn lock<T>(calls: &Calls<T>) -> std::sync::MutexGuard<'_, HashMap<CacheKey, Entry<T>>> {
    // The map is consistent between statements, so a poisoned lock is still usable.
    calls
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::ChatResponse;
    use crate::chat::Usage;
    use serde_json::json;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::time::Duration;

    fn answer(text: &str) -> ChatResponse {
        ChatResponse {
            text: text.into(),
            usage: Usage::default(),
            finish_reason: None,
            thinking: None,
            thinking_text: String::new(),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn overlapping_calls_share_one_request_and_later_ones_do_not() {
        let flights = Arc::new(Flights::<ChatResponse>::default());
        let made = Arc::new(AtomicU32::new(0));
        let key = CacheKey::of(&json!({"k": 1}));
        let mut tasks = Vec::new();
        for _ in 0..5 {
            let (flights, made) = (Arc::clone(&flights), Arc::clone(&made));
            tasks.push(tokio::spawn(async move {
                flights
                    .run(key, || async {
                        made.fetch_add(1, Ordering::SeqCst);
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        Ok(answer("a"))
                    })
                    .await
            }));
        }
        let mut roles = Vec::new();
        for task in tasks {
            let (response, role, _hold) = task.await.unwrap().unwrap();
            assert_eq!(response.text, "a");
            roles.push(role);
        }
        assert_eq!(made.load(Ordering::SeqCst), 1);
        assert_eq!(roles.iter().filter(|r| **r == Role::Led).count(), 1);
        assert_eq!(flights.len(), 0);
        let (_, role, _hold) = flights
            .run(key, || async { Ok(answer("b")) })
            .await
            .unwrap();
        assert_eq!(role, Role::Led);
    }

    #[tokio::test(start_paused = true)]
    async fn a_failed_or_dropped_leader_hands_over_to_a_waiter() {
        let flights = Arc::new(Flights::<ChatResponse>::default());
        let key = CacheKey::of(&json!({"k": 2}));
        let leader = {
            let flights = Arc::clone(&flights);
            tokio::spawn(async move {
                flights
                    .run(key, || async {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        Err(JudgeError::Cancelled)
                    })
                    .await
            })
        };
        tokio::time::sleep(Duration::from_millis(10)).await;
        let follower = flights.run(key, || async { Ok(answer("mine")) });
        let (response, role, hold) = follower.await.unwrap();
        assert_eq!((response.text.as_str(), role), ("mine", Role::Led));
        assert!(matches!(leader.await.unwrap(), Err(JudgeError::Cancelled)));
        drop(hold);

        // A leader whose future is dropped mid-call.
        let stuck = flights.run(key, std::future::pending);
        assert!(
            tokio::time::timeout(Duration::from_millis(10), stuck)
                .await
                .is_err()
        );
        let (response, _, hold) = flights
            .run(key, || async { Ok(answer("after")) })
            .await
            .unwrap();
        assert_eq!(response.text, "after");
        drop(hold);
        assert_eq!(flights.len(), 0);
    }

    /// Regression (CI, 2026-12-07): the leader's answer left the flight the moment it came,
    /// before its caller stored it, so an identical call in that gap found neither and asked
    /// again. It now stays until the leader lets go.
    #[tokio::test(start_paused = true)]
    async fn a_call_after_the_answer_but_before_it_is_stored_shares_it() {
        let flights = Flights::<ChatResponse>::default();
        let key = CacheKey::of(&json!({"k": 3}));
        let (_, role, hold) = flights
            .run(key, || async { Ok(answer("first")) })
            .await
            .unwrap();
        assert_eq!(role, Role::Led);
        let (response, role, follower_hold) = flights
            .run(key, || async { Ok(answer("second")) })
            .await
            .unwrap();
        assert_eq!((response.text.as_str(), role), ("first", Role::Followed));
        drop(follower_hold);
        assert_eq!(flights.len(), 1, "a follower's hold keeps nothing");
        drop(hold);
        assert_eq!(flights.len(), 0);
        let (response, role, _hold) = flights
            .run(key, || async { Ok(answer("third")) })
            .await
            .unwrap();
        assert_eq!((response.text.as_str(), role), ("third", Role::Led));
    }
}
