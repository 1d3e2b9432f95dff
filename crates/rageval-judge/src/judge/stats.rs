//! [`JudgeStats`]: what a judge counted over its lifetime, kept as relaxed atomics that
//! every clone of the judge shares.

use std::sync::atomic::{AtomicU64, Ordering};

use super::Judge;

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
pub(super) struct Counters {
    pub(super) attempts: AtomicU64,
    pub(super) failed_attempts: AtomicU64,
    pub(super) retries: AtomicU64,
    pub(super) cache_hits: AtomicU64,
    pub(super) cache_writes: AtomicU64,
    pub(super) cache_write_errors: AtomicU64,
    pub(super) schema_fallbacks: AtomicU64,
    pub(super) deduplicated: AtomicU64,
    pub(super) cache_hits_other_origin: AtomicU64,
    pub(super) thinking_answers: AtomicU64,
    pub(super) cut_off_retries: AtomicU64,
}

pub(super) fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

impl<M> Judge<M> {
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
}
