//! Test-only helpers for rageval: an OpenAI-compatible mock server with latency, fault
//! injection and counters, so the judge pipeline can be tested for real over HTTP without
//! reaching any outside service.
//!
//! - [`MockServer::start`] binds 127.0.0.1 on a random port; [`MockServer::base_url`] is the
//!   `.../v1` URL to give a client; [`MockServer::stats`] reads the counters.
//! - [`MockConfig`]: latency; fault rates (500, 429 with `Retry-After`, hangs, garbage or
//!   truncated JSON) drawn deterministically from (seed, request content, times seen), as in
//!   the bench mock `shared/bench/mock_llm.py`; an optional required API key; a [`Script`]
//!   closure for scripted answers instead of the schema-driven ones.
//!
//! Only for tests and benchmarks: it never binds anything but loopback, and it is not the
//! neutral referee for comparisons with other tools (the bench mock is).

mod fill;
mod server;

pub use server::{FaultCounts, GARBAGE_SENTENCE, MockConfig, MockServer, MockStats, Reply, Script};
