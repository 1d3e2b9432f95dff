//! When to try a failed call again and how long to wait first.
//!
//! Only errors that [`JudgeError::is_retryable`] accepts are retried (429, 5xx, timeouts,
//! connection failures) — never a 400/401/403/404. The wait is jittered exponential back-off,
//! and never shorter than the server's `Retry-After`. This module decides; it does not sleep.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::error::JudgeError;

/// First back-off step.
pub const DEFAULT_BASE_DELAY: Duration = Duration::from_millis(500);
/// Longest back-off step.
pub const DEFAULT_MAX_DELAY: Duration = Duration::from_secs(30);
/// Longest `Retry-After` we honour; a server asking for more gets this.
pub const DEFAULT_MAX_RETRY_AFTER: Duration = Duration::from_secs(120);
/// Attempts per call, the first included.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 6;

/// How many times to try and how long to wait in between.
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// Attempts per call, the first included (1 = never retry).
    pub max_attempts: u32,
    /// Back-off before the first retry (doubled each time, before jitter).
    pub base_delay: Duration,
    /// Cap on a back-off step.
    pub max_delay: Duration,
    /// Cap on an honoured `Retry-After`.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            base_delay: DEFAULT_BASE_DELAY,
            max_delay: DEFAULT_MAX_DELAY,
            max_retry_after: DEFAULT_MAX_RETRY_AFTER,
        }
    }
}

impl RetryPolicy {
    /// After the `attempt`-th failure (1-based) with `error`: `None` to stop, or the wait
    /// before the next attempt.
    pub fn next_delay(&self, attempt: u32, error: &JudgeError) -> Option<Duration> {
        self.next_delay_for(attempt, error, true)
    }

    /// Like [`RetryPolicy::next_delay`]; with `honour_retry_after` false the server's
    /// `Retry-After` is not a floor — for a pool, where that endpoint's own limiter pauses
    /// and the retry can go to another one.
    pub fn next_delay_for(
        &self,
        attempt: u32,
        error: &JudgeError,
        honour_retry_after: bool,
    ) -> Option<Duration> {
        if attempt >= self.max_attempts || !error.is_retryable() {
            return None;
        }
        let backoff = self.backoff(attempt, jitter_unit());
        let server = error
            .retry_after()
            .filter(|_| honour_retry_after)
            .map(|d| d.min(self.max_retry_after))
            .unwrap_or_default();
        Some(backoff.max(server))
    }

    /// "Equal jitter": half the exponential step plus a uniform share of the other half, so
    /// that waits never collapse to zero yet many clients spread out. `unit` is in [0, 1).
    pub fn backoff(&self, attempt: u32, unit: f64) -> Duration {
        let exponent = attempt.saturating_sub(1).min(20);
        let step = self
            .base_delay
            .saturating_mul(1u32 << exponent)
            .min(self.max_delay);
        step / 2 + step.mul_f64(unit.clamp(0.0, 1.0) / 2.0)
    }
}

/// A cheap, thread-safe uniform draw in [0, 1) for jitter (splitmix64 over a shared counter
/// seeded from the clock). Jitter only spreads waits; nothing observable depends on it.
fn jitter_unit() -> f64 {
    static STATE: AtomicU64 = AtomicU64::new(0);
    let mut seed = STATE.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed);
    if seed == 0 {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
        STATE.store(now | 1, Ordering::Relaxed);
        seed = now;
    }
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: u16, retry_after: Option<Duration>) -> JudgeError {
        JudgeError::Status {
            endpoint: "e".into(),
            status: code,
            first_line: String::new(),
            retry_after,
        }
    }

    #[test]
    fn backoff_doubles_within_jitter_bounds_and_caps() {
        let p = RetryPolicy {
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(1000),
            ..RetryPolicy::default()
        };
        assert_eq!(p.backoff(1, 0.0), Duration::from_millis(50));
        assert_eq!(p.backoff(2, 0.0), Duration::from_millis(100));
        let high = p.backoff(3, 0.999_999);
        assert!(high > Duration::from_millis(399) && high < Duration::from_millis(400));
        assert_eq!(p.backoff(30, 0.0), Duration::from_millis(500));
    }

    #[test]
    fn never_retries_client_errors_and_stops_at_max_attempts() {
        let p = RetryPolicy::default();
        assert!(p.next_delay(1, &status(401, None)).is_none());
        assert!(p.next_delay(1, &status(400, None)).is_none());
        assert!(p.next_delay(1, &status(503, None)).is_some());
        assert!(p.next_delay(p.max_attempts, &status(503, None)).is_none());
    }

    #[test]
    fn retry_after_is_a_floor_and_capped() {
        let p = RetryPolicy {
            base_delay: Duration::from_millis(1),
            max_retry_after: Duration::from_secs(5),
            ..RetryPolicy::default()
        };
        let wait = p.next_delay(1, &status(429, Some(Duration::from_secs(2))));
        assert_eq!(wait, Some(Duration::from_secs(2)));
        let capped = p.next_delay(1, &status(429, Some(Duration::from_secs(600))));
        assert_eq!(capped, Some(Duration::from_secs(5)));
        let pooled = p.next_delay_for(1, &status(429, Some(Duration::from_secs(2))), false);
        assert!(
            pooled.is_some_and(|d| d < Duration::from_millis(2)),
            "{pooled:?}"
        );
    }

    #[test]
    fn jitter_is_in_unit_interval() {
        for _ in 0..1000 {
            let u = jitter_unit();
            assert!((0.0..1.0).contains(&u));
        }
    }
}
