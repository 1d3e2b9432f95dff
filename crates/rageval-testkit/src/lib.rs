//! Test-only helpers for rageval: an OpenAI-compatible mock server with latency, fault
//! injection and counters, so the judge pipeline can be tested for real over HTTP without
//! reaching any outside service.
//!
//! - [`MockServer::start`] binds 127.0.0.1 on a random port; [`MockServer::base_url`] is the
//!   `.../v1` URL to give a client; [`MockServer::stats`] reads the counters.
//! - [`MockConfig`]: latency; fault rates (500, 429 with `Retry-After`, hangs, garbage or
//!   truncated JSON) drawn deterministically from (seed, request content, times seen), as in
//!   the bench mock `shared/bench/mock_llm.py`; [`ReasoningModes`] to answer as a
//!   reasoning model does (thinking in `<think>` tags or a reasoning field, a draft with the
//!   opposite verdicts inside it, 400s for `temperature`/`max_tokens`, a token budget that
//!   ends the answer mid-thought); an optional required API key (a 401 echoes the
//!   `Authorization` it got, as some providers do); a [`Script`] closure for scripted
//!   answers instead of the schema-driven ones, among them a judge that never answers
//!   ([`Reply::Hang`]) or whose body never ends ([`Reply::Trickle`]); [`MockBatchConfig`]
//!   for batch jobs (how long each state lasts, expiry after some requests).
//! - The files and batches endpoints (`/v1/files`, `/v1/batches`): jobs answered request by
//!   request exactly as `/v1/chat/completions` would answer them, per-request faults in
//!   the error file, cancellation; [`MockServer::run_batch_file`] answers a request file
//!   the way `vllm run-batch` does.
//!
//! - `rageval-mock` (a binary): the mock as a process for tests outside Rust; it prints its
//!   base URL and serves until killed.
//!
//! Only for tests and benchmarks: it never binds anything but loopback, and it is not the
//! neutral referee for comparisons with other tools (the bench mock is).

mod batch;
mod fill;
mod multipart;
mod reasoning;
mod server;
mod stats;

pub use batch::MockBatchConfig;
pub use reasoning::{ReasoningMode, ReasoningModes, UnknownReasoningMode};
pub use server::{GARBAGE_SENTENCE, MockConfig, MockServer, Reply, Script};
pub use stats::{FaultCounts, MockStats};
