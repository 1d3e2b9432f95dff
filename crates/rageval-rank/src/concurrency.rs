//! One round of judge calls: all of them concurrently, at most a bound in flight, results in
//! the order the calls were listed (so that the outcome never depends on which call finished
//! first).

use std::future::Future;

use futures_util::stream::{self, StreamExt};

/// Concurrent calls of one round unless settings say otherwise. The judge's own limiter
/// (concurrency, requests and tokens per minute) still applies underneath.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 64;

/// Runs `call` on every job, at most `max_in_flight` at once (0 counts as 1), and returns the
/// outputs in job order.
pub(crate) async fn run_round<T, F, Fut>(
    jobs: Vec<T>,
    max_in_flight: usize,
    call: F,
) -> Vec<Fut::Output>
where
    F: FnMut(T) -> Fut,
    Fut: Future,
{
    stream::iter(jobs.into_iter().map(call))
        .buffered(max_in_flight.max(1))
        .collect()
        .await
}
