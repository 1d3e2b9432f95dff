//! What one request to `serve` may cost, and how many may read at once: the numbers
//! docs/guarantees.md states, each held by a test (`tests/it/defences.rs`, `app`'s unit
//! test of the slots).
//!
//! - A page of samples holds at most [`MAX_SAMPLES_PER_PAGE`] ([`SAMPLES_PER_PAGE`] when
//!   `limit` is not given); `offset` and the answer's `next_offset` page through the rest.
//! - A comparison draws at most [`COMPARE_WORK_BUDGET`] samples in all (bootstrap
//!   resamples and sign-flip permutations, times the samples each draws, over every pair
//!   and metric); past it the request is refused before anything is drawn.
//! - At most [`READS_AT_ONCE`] requests read files at once; one more gets 503 with
//!   `Retry-After: RETRY_AFTER_SECONDS` at once, and none waits in a queue.

/// Samples in an answer of `/api/runs/NAME/samples` when `limit` is not given.
pub const SAMPLES_PER_PAGE: usize = 100;
/// The most samples one answer of `/api/runs/NAME/samples` holds (the run page shows as
/// many rows).
pub const MAX_SAMPLES_PER_PAGE: usize = 1_000;
/// Samples drawn in all by one comparison: at this budget one took 65 to 75 s in a debug
/// build (`benches/serve/run.sh`: 2 metrics × 100,000 samples × 5,000 draws).
pub const COMPARE_WORK_BUDGET: u64 = 1_000_000_000;
/// Requests that read runs (every route but the host and token refusals) at once.
pub const READS_AT_ONCE: usize = 4;
/// What `Retry-After` says to a request refused because every slot was taken.
pub const RETRY_AFTER_SECONDS: u64 = 2;
