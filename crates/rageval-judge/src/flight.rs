//! Single flight: identical calls that overlap in time make one request.
//!
//! Calls are identical when their cache keys are (same backend, model, template, messages,
//! sampling, schema). The first caller leads and makes the request; the others wait for
//! its answer. If the leader fails or is dropped, the next waiter takes over and tries
//! itself, so an error is never handed to a caller whose own attempt might have succeeded,
//! and a cancelled leader never strands its followers. The entry is removed once answered,
//! so later calls go to the cache (or, with the cache off, make a fresh request): only
//! concurrent duplicates merge.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use tokio::sync::OnceCell;

use crate::cache::CacheKey;
use crate::chat::ChatResponse;
use crate::error::JudgeError;

/// Calls in flight, by cache key.
#[derive(Debug, Default)]
pub(crate) struct Flights {
    calls: Mutex<HashMap<CacheKey, Arc<OnceCell<ChatResponse>>>>,
}

/// How a caller got its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// It made the request.
    Led,
    /// Another caller's request answered it.
    Followed,
}

impl Flights {
    /// The answer for `key`: from an identical call in flight, else from `call`.
    pub(crate) async fn run<F>(
        &self,
        key: CacheKey,
        call: impl FnOnce() -> F,
    ) -> Result<(ChatResponse, Role), JudgeError>
    where
        F: Future<Output = Result<ChatResponse, JudgeError>>,
    {
        let cell = Arc::clone(self.lock().entry(key).or_default());
        let mut role = Role::Followed;
        let result = cell
            .get_or_try_init(|| {
                role = Role::Led;
                call()
            })
            .await
            .cloned();
        let mut calls = self.lock();
        if let Some(current) = calls.get(&key) {
            // Remove the entry once answered; after a failure only if nobody else waits on
            // it (a waiter takes over and will remove it itself).
            let ours = Arc::ptr_eq(current, &cell);
            if ours && (result.is_ok() || Arc::strong_count(&cell) == 2) {
                calls.remove(&key);
            }
        }
        drop(calls);
        result.map(|answer| (answer, role))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<CacheKey, Arc<OnceCell<ChatResponse>>>> {
        // The map is consistent between statements, so a poisoned lock is still usable.
        self.calls
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
        let flights = Arc::new(Flights::default());
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
            let (response, role) = task.await.unwrap().unwrap();
            assert_eq!(response.text, "a");
            roles.push(role);
        }
        assert_eq!(made.load(Ordering::SeqCst), 1);
        assert_eq!(roles.iter().filter(|r| **r == Role::Led).count(), 1);
        assert_eq!(flights.len(), 0);
        let (_, role) = flights
            .run(key, || async { Ok(answer("b")) })
            .await
            .unwrap();
        assert_eq!(role, Role::Led);
    }

    #[tokio::test(start_paused = true)]
    async fn a_failed_or_dropped_leader_hands_over_to_a_waiter() {
        let flights = Arc::new(Flights::default());
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
        let (response, role) = follower.await.unwrap();
        assert_eq!((response.text.as_str(), role), ("mine", Role::Led));
        assert!(matches!(leader.await.unwrap(), Err(JudgeError::Cancelled)));

        // A leader whose future is dropped mid-call.
        let stuck = flights.run(key, std::future::pending);
        assert!(
            tokio::time::timeout(Duration::from_millis(10), stuck)
                .await
                .is_err()
        );
        let (response, _) = flights
            .run(key, || async { Ok(answer("after")) })
            .await
            .unwrap();
        assert_eq!(response.text, "after");
        assert_eq!(flights.len(), 0);
    }
}
