//! Cancellation of a whole judge: one [`CancelToken`] that any clone can trip (a Ctrl-C
//! handler, a deadline), after which calls in flight abort and new calls fail with
//! [`JudgeError::Cancelled`].
//!
//! Tripping is one-way. An abandoned call never half-writes the cache: a write is a single
//! SQLite transaction that either finished before the abort or never started. This module
//! only signals; the [`Judge`](crate::Judge) decides where calls stop.

use std::future::{Future, poll_fn};
use std::pin::pin;
use std::task::Poll;

use tokio::sync::watch;

use crate::error::JudgeError;

/// A shared cancel switch. Cheap to clone; clones share the switch.
#[derive(Debug, Clone)]
pub struct CancelToken {
    sender: std::sync::Arc<watch::Sender<bool>>,
}

impl Default for CancelToken {
    fn default() -> Self {
        CancelToken::new()
    }
}

impl CancelToken {
    /// A token not yet tripped.
    pub fn new() -> Self {
        CancelToken {
            sender: std::sync::Arc::new(watch::Sender::new(false)),
        }
    }

    /// Trips the switch: every call in flight aborts and every later call fails.
    pub fn cancel(&self) {
        self.sender.send_replace(true);
    }

    /// Whether the switch is tripped.
    pub fn is_cancelled(&self) -> bool {
        *self.sender.borrow()
    }

    /// Resolves once the switch is tripped (at once if it already is).
    pub async fn cancelled(&self) {
        let mut receiver = self.sender.subscribe();
        // The sender lives in `self`, so waiting cannot fail for want of one.
        let _ = receiver.wait_for(|tripped| *tripped).await;
    }

    /// Fails with [`JudgeError::Cancelled`] when tripped.
    pub fn check(&self) -> Result<(), JudgeError> {
        if self.is_cancelled() {
            Err(JudgeError::Cancelled)
        } else {
            Ok(())
        }
    }

    /// Runs `work` unless the switch trips first, in which case `work` is dropped (its
    /// HTTP request is aborted) and the result is [`JudgeError::Cancelled`].
    pub async fn run<T>(
        &self,
        work: impl Future<Output = Result<T, JudgeError>>,
    ) -> Result<T, JudgeError> {
        self.run_or(work, || JudgeError::Cancelled).await
    }

    /// Like [`CancelToken::run`], with `tripped` making the error when the switch trips
    /// (before `work` starts, or while it runs).
    pub(crate) async fn run_or<T>(
        &self,
        work: impl Future<Output = Result<T, JudgeError>>,
        tripped: impl FnOnce() -> JudgeError,
    ) -> Result<T, JudgeError> {
        if self.is_cancelled() {
            return Err(tripped());
        }
        let mut work = pin!(work);
        let mut switch = pin!(self.cancelled());
        let mut tripped = Some(tripped);
        poll_fn(|cx| {
            if switch.as_mut().poll(cx).is_ready() {
                let error = tripped.take().map_or(JudgeError::Cancelled, |make| make());
                return Poll::Ready(Err(error));
            }
            work.as_mut().poll(cx)
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn run_aborts_pending_work_and_refuses_new_work() {
        let token = CancelToken::new();
        let trip = token.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(1)).await;
            trip.cancel();
        });
        let slow = token.run(async {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok(1)
        });
        assert!(matches!(slow.await, Err(JudgeError::Cancelled)));
        assert!(token.is_cancelled());
        let fast = token.run(async { Ok(2) }).await;
        assert!(matches!(fast, Err(JudgeError::Cancelled)));
        token.cancelled().await;
    }

    #[tokio::test]
    async fn untripped_work_completes() {
        let token = CancelToken::new();
        assert_eq!(token.run(async { Ok(5) }).await.unwrap(), 5);
        assert!(token.check().is_ok());
    }
}
