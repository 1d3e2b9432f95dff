//! Integration tests of the judge pipeline against the in-process mock server
//! (`rageval-testkit`), over real HTTP on 127.0.0.1, and against the embedded local models
//! from the models folder (`scripts/fetch-models.sh`).

mod batch;
mod cancel;
mod caps;
#[cfg(feature = "checker")]
mod checker;
mod dedupe;
#[cfg(feature = "minilm")]
mod e5;
mod faults;
#[cfg(feature = "gguf")]
mod gguf;
#[cfg(all(feature = "gguf", feature = "minilm"))]
mod local_bench;
#[cfg(feature = "minilm")]
mod minilm;
mod pipeline;
mod pool;
mod secrets;
mod support;
mod throughput;
