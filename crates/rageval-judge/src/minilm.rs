//! The embedded all-MiniLM-L6-v2 embedder: sentence embeddings computed in-process with
//! candle, the same vectors sentence-transformers gives (mean pooling over the attention
//! mask, then L2 normalisation; inputs truncated to 256 tokens). Its names and limits are
//! known to every build; `MiniLmEmbedder` only to a build with the `minilm`
//! feature (candle and tokenizers, pure Rust).
//!
//! Loads `config.json`, `tokenizer.json` and `model.safetensors` from one folder (any BERT
//! sentence model with that layout works). The model is English-only: Chinese text gets a
//! vector, but not a meaningful one.

#[cfg(feature = "minilm")]
mod embedder;

use std::path::Path;

#[cfg(feature = "minilm")]
pub use embedder::MiniLmEmbedder;

/// Longest input in tokens, special tokens included; sentence-transformers' `max_seq_length`
/// for all-MiniLM-L6-v2. Longer inputs are cut.
pub const MAX_TOKENS: usize = 256;
/// Inputs encoded together.
pub const BATCH_SIZE: usize = 32;

/// The backend kind of the embedded embedder (in cache keys and manifests).
pub const KIND: &str = "minilm";

/// The model name an embedding folder is known by (in cache keys and manifests): its name.
pub(crate) fn model_name(dir: &Path) -> String {
    dir.file_name()
        .map_or_else(|| "minilm".to_owned(), |n| n.to_string_lossy().into_owned())
}
