//! The in-process GGUF chat model (`--judge gguf:PATH`). Its options and its name in cache
//! keys and manifests are known to every build; `GgufChat`, any GGUF chat model run by
//! llama.cpp (`llama-cpp-2`) with answers constrained by a grammar derived from the JSON
//! schema, only to a build with the `gguf` feature: llama.cpp is a C++ build that needs
//! cmake and libclang, the largest unit of a cold build.
//!
//! A build without the feature refuses a GGUF model before a run starts
//! ([`crate::local::gguf_chat`] answers [`JudgeError::NotBuilt`](crate::JudgeError::NotBuilt)),
//! so a model it cannot run is never mistaken for a judge that failed.

#[cfg(feature = "gguf")]
mod engine;

#[cfg(feature = "gguf")]
pub use engine::GgufChat;
#[cfg(feature = "gguf")]
pub(crate) use engine::{check_gguf_header, model_name};

/// How a `GgufChat` runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GgufOptions {
    /// CPU threads for decoding. Default: [`DEFAULT_GGUF_THREADS`]. More threads help a
    /// larger model on an idle machine; on a shared one every token waits for the slowest
    /// thread, and a busy neighbour slowed 2 threads to a quarter of 1 thread's speed here
    /// (BENCHMARKS.md).
    pub threads: usize,
    /// Context window in tokens, prompt and answer together (capped at the model's training
    /// context). A longer prompt fails with an error that says so.
    pub context_tokens: u32,
}

/// Decoding threads by default: one, the only count whose speed held steady while other
/// builds shared the cores (see [`GgufOptions::threads`]).
pub const DEFAULT_GGUF_THREADS: usize = 1;
/// The backend kind of a GGUF chat model (in cache keys and manifests).
pub const KIND: &str = "gguf";
/// Answer tokens when the request sets no `max_tokens`: room for every typed task's answer
/// (a few statements or verdicts with one-sentence reasons).
pub const DEFAULT_GGUF_MAX_TOKENS: usize = 512;
/// Context window by default (see [`GgufOptions::context_tokens`]).
pub const DEFAULT_GGUF_CONTEXT: u32 = 8192;

impl Default for GgufOptions {
    fn default() -> Self {
        GgufOptions {
            threads: DEFAULT_GGUF_THREADS,
            context_tokens: DEFAULT_GGUF_CONTEXT,
        }
    }
}
