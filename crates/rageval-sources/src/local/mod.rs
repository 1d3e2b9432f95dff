//! The local corpus index: the embedded default retriever, with no server.
//!
//! - [`loader`]: PDF, DOCX, HTML, Markdown, plain text and JSONL chunk files into text;
//!   [`encoding`] decodes text-like files, [`normalize`] normalises every text (NFKC and the
//!   CJK radicals it leaves), documents and queries alike.
//! - [`splitter`]: seed S4's recursive character splitter (500 / 50 by default).
//! - [`tokenizer`]: the tantivy tokenizer (rageval's jieba-backed word splitter).
//! - [`index`]: [`IndexBuilder`] writes an index directory and its [`Manifest`].
//! - [`vectors`]: optional chunk embeddings and reciprocal rank fusion.
//! - [`search`]: [`LocalIndex`] (BM25, vector or hybrid search) and [`LocalRetriever`].
//! - [`chunks`]: every chunk of an index, a folder or a file ([`corpus_chunks`]), for
//!   `rageval testset`.
//!
//! Embeddings come from any [`rageval_judge::Embedder`]; this module never talks to a model
//! itself.

pub mod chunks;
mod docx;
pub mod encoding;
mod html;
pub mod index;
pub mod loader;
pub mod normalize;
pub mod search;
pub mod splitter;
pub mod tokenizer;
pub mod vectors;

pub use chunks::{CorpusChunks, CorpusKind, corpus_chunks};
pub use index::{FileOutcome, IndexBuilder, IndexedChunk, Manifest, SkippedEntry};
pub use loader::{Content, Document, DocumentKind, InputFile, expand_inputs, load};
pub use normalize::normalize_text;
pub use search::{LocalIndex, LocalRetriever, Ranking};
pub use splitter::{Chunk, Splitter};
