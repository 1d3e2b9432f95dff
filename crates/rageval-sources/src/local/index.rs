//! Building a local index directory: documents → chunks → a tantivy BM25 index (and, with an
//! embedder, a vector file) → the manifest.
//!
//! Layout of an index directory:
//!
//! | file | what |
//! |---|---|
//! | `rageval-index.json` | the [`Manifest`]: format version, splitter settings, documents with their SHA-256, chunk count, embedding model; written last |
//! | `tantivy/` | the full-text index: id, text, source, chunk number and lines of every chunk |
//! | `vectors.f32` | optional: one unit vector per chunk, in chunk order |
//!
//! The index is built in a sibling directory and renamed into place only when complete, so
//! a crash leaves no directory that looks like an index; an existing index is replaced only
//! with `overwrite`, and only after the new one is complete.

use std::path::{Path, PathBuf};

use rageval_judge::{Embedder, RetryPolicy};
use serde::{Deserialize, Serialize};
use tantivy::schema::{
    FAST, Field, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::{Index, IndexWriter, TantivyDocument};

use super::loader::{Content, Document};
use super::splitter::Splitter;
use super::tokenizer::{TOKENIZER_NAME, WordsTokenizer};
use super::vectors::{VECTORS_FILE, Vectors};
use crate::error::SourceError;

/// File name of the manifest.
pub const MANIFEST_FILE: &str = "rageval-index.json";
/// Sub-directory of the tantivy index.
pub const TANTIVY_DIR: &str = "tantivy";
/// Version of the directory layout; an index of another version must be rebuilt.
pub const FORMAT_VERSION: u32 = 1;
/// Texts per embedding request while building: enough to keep an endpoint busy, few enough
/// that progress moves every few seconds when the embedded model runs on a CPU.
pub const EMBED_BATCH: usize = 16;
/// Memory budget of the tantivy writer (its minimum is 15 MB per thread).
const WRITER_MEMORY: usize = 64 * 1024 * 1024;

/// What an index directory holds, in its `rageval-index.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`FORMAT_VERSION`] of the writer.
    pub format_version: u32,
    /// The tool that wrote it.
    pub created_by: String,
    /// The tokenizer of the text field.
    pub tokenizer: String,
    /// Splitter chunk size, in characters.
    pub chunk_size: usize,
    /// Splitter overlap, in characters.
    pub chunk_overlap: usize,
    /// Chunks in the index.
    pub chunks: usize,
    /// The documents, in indexing order (empty ones included, with 0 chunks).
    pub documents: Vec<DocumentEntry>,
    /// Files left out because their content could not be read, in indexing order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<SkippedEntry>,
    /// The embedding model of `vectors.f32`, when there is one.
    pub embedding: Option<EmbeddingEntry>,
}

/// One indexed document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocumentEntry {
    /// Path as given when indexing.
    pub path: String,
    /// Kind (`pdf`, `docx`, `chunks`, ...).
    pub kind: String,
    /// SHA-256 of its bytes.
    pub sha256: String,
    /// Chunks it gave (0: the document has no text).
    pub chunks: usize,
    /// The encoding a text-like file was read in; absent for PDF and DOCX.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
}

/// A file left out of the index, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedEntry {
    /// Path as given when indexing.
    pub path: String,
    /// What is wrong with its content.
    pub reason: String,
}

/// What became of one file given to [`IndexBuilder::add_file`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOutcome {
    /// Its chunks were queued.
    Indexed {
        /// How many.
        chunks: usize,
        /// The encoding a text-like file was read in.
        encoding: Option<&'static str>,
    },
    /// It holds no text (an empty file, a PDF without a text layer); listed with 0 chunks.
    Empty,
    /// Its content cannot be read (undecodable text, a malformed PDF or DOCX); left out and
    /// listed in [`Manifest::skipped`].
    Skipped {
        /// Why.
        reason: String,
    },
}

/// The model that embedded the chunks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmbeddingEntry {
    /// Backend kind (`openai`, ...).
    pub kind: String,
    /// Model name; queries must be embedded by the same model.
    pub model: String,
    /// Dimensions.
    pub dims: usize,
}

/// One chunk on its way into the index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedChunk {
    /// Unique id: `path#n` for split documents, the given id for JSONL chunks.
    pub id: String,
    /// Text.
    pub text: String,
    /// Source document path.
    pub source: String,
    /// Position within its document (0-based).
    pub chunk_index: usize,
    /// First and last line in the document (split documents), or the JSONL line.
    pub lines: (usize, usize),
}

/// The fields of the tantivy schema.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fields {
    pub ord: Field,
    pub id: Field,
    pub text: Field,
    pub source: Field,
    pub chunk_index: Field,
    pub line_from: Field,
    pub line_to: Field,
}

impl Fields {
    pub(crate) fn schema() -> (Schema, Fields) {
        let mut builder = Schema::builder();
        let text_options = TextOptions::default()
            .set_indexing_options(
                TextFieldIndexing::default()
                    .set_tokenizer(TOKENIZER_NAME)
                    .set_index_option(IndexRecordOption::WithFreqsAndPositions),
            )
            .set_stored();
        let fields = Fields {
            ord: builder.add_u64_field("ord", STORED | FAST),
            id: builder.add_text_field("id", STRING | STORED),
            text: builder.add_text_field("text", text_options),
            source: builder.add_text_field("source", STORED),
            chunk_index: builder.add_u64_field("chunk_index", STORED),
            line_from: builder.add_u64_field("line_from", STORED),
            line_to: builder.add_u64_field("line_to", STORED),
        };
        (builder.build(), fields)
    }
}

/// Registers the tokenizer every local index uses.
pub(crate) fn register_tokenizer(index: &Index) {
    index.tokenizers().register(TOKENIZER_NAME, WordsTokenizer);
}

/// Collects chunks from documents, then writes the index.
#[derive(Debug, Clone)]
pub struct IndexBuilder {
    splitter: Splitter,
    chunks: Vec<IndexedChunk>,
    documents: Vec<DocumentEntry>,
    skipped: Vec<SkippedEntry>,
}

impl IndexBuilder {
    /// A builder that splits text with `splitter`.
    pub fn new(splitter: Splitter) -> Self {
        IndexBuilder {
            splitter,
            chunks: Vec::new(),
            documents: Vec::new(),
            skipped: Vec::new(),
        }
    }

    /// Loads one file and queues its chunks under the file's name in the index
    /// ([`InputFile`](super::InputFile)). A file whose content cannot be read is left out
    /// and recorded, not an error; a file that cannot be opened is.
    pub fn add_file(&mut self, path: &Path, name: &str) -> Result<FileOutcome, SourceError> {
        match super::loader::load(path) {
            Ok(mut document) => {
                document.path = PathBuf::from(name);
                let chunks = self.add(&document)?;
                Ok(if chunks == 0 {
                    FileOutcome::Empty
                } else {
                    FileOutcome::Indexed {
                        chunks,
                        encoding: document.encoding,
                    }
                })
            }
            Err(SourceError::Document { detail, .. }) => {
                self.skipped.push(SkippedEntry {
                    path: name.to_string(),
                    reason: detail.clone(),
                });
                Ok(FileOutcome::Skipped { reason: detail })
            }
            Err(error) => Err(error),
        }
    }

    /// Splits a document (or takes its given chunks) and queues its chunks. A repeated
    /// chunk id is an error naming both sources.
    pub fn add(&mut self, document: &Document) -> Result<usize, SourceError> {
        let source = document.path.display().to_string();
        let before = self.chunks.len();
        match &document.content {
            Content::Text(text) => {
                for (i, chunk) in self.splitter.split(text).into_iter().enumerate() {
                    self.chunks.push(IndexedChunk {
                        id: format!("{source}#{i}"),
                        text: chunk.text,
                        source: source.clone(),
                        chunk_index: i,
                        lines: (chunk.line_from, chunk.line_to),
                    });
                }
            }
            Content::Chunks(given) => {
                for (i, chunk) in given.iter().enumerate() {
                    self.chunks.push(IndexedChunk {
                        id: chunk.id.clone().unwrap_or_else(|| format!("{source}#{i}")),
                        text: chunk.text.clone(),
                        source: source.clone(),
                        chunk_index: i,
                        lines: (chunk.line, chunk.line),
                    });
                }
            }
        }
        let added = self.chunks.len() - before;
        self.documents.push(DocumentEntry {
            path: source,
            kind: document.kind.name().into(),
            sha256: document.sha256.clone(),
            chunks: added,
            encoding: document.encoding.map(str::to_owned),
        });
        Ok(added)
    }

    /// The chunks queued so far.
    pub fn chunks(&self) -> &[IndexedChunk] {
        &self.chunks
    }

    /// Writes the index to `out` (embedding every chunk first when `embedder` is given) and
    /// returns its manifest.
    pub async fn write<E: Embedder>(
        self,
        out: &Path,
        overwrite: bool,
        embedder: Option<&E>,
    ) -> Result<Manifest, SourceError> {
        self.write_observed(out, overwrite, embedder, &|_, _| {})
            .await
    }

    /// [`IndexBuilder::write`], telling `embedded(done, total)` after each batch of chunks
    /// embedded (embedding is the slow part: minutes for a few hundred chunks on a CPU).
    pub async fn write_observed<E: Embedder>(
        self,
        out: &Path,
        overwrite: bool,
        embedder: Option<&E>,
        embedded: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<Manifest, SourceError> {
        check_unique_ids(&self.chunks, out)?;
        if out.exists() && !overwrite {
            return Err(SourceError::Exists {
                path: out.to_owned(),
            });
        }
        let vectors = match embedder {
            Some(embedder) => Some((embed_all(embedder, &self.chunks, embedded).await?, embedder)),
            None => None,
        };
        let staging = sibling(out, "partial");
        if staging.exists() {
            remove_dir(&staging)?;
        }
        let result = self.write_into(&staging, vectors.as_ref().map(|(v, e)| (v, *e)));
        let manifest = match result {
            Ok(manifest) => manifest,
            Err(error) => {
                let _ = std::fs::remove_dir_all(&staging);
                return Err(error);
            }
        };
        replace_dir(&staging, out)?;
        Ok(manifest)
    }

    fn write_into<E: Embedder>(
        &self,
        dir: &Path,
        vectors: Option<(&Vectors, &E)>,
    ) -> Result<Manifest, SourceError> {
        let tantivy_dir = dir.join(TANTIVY_DIR);
        std::fs::create_dir_all(&tantivy_dir).map_err(|e| SourceError::io(&tantivy_dir, e))?;
        let failed = |e: tantivy::TantivyError| SourceError::Index {
            path: dir.to_owned(),
            detail: e.to_string(),
        };
        let (schema, f) = Fields::schema();
        let index = Index::create_in_dir(&tantivy_dir, schema).map_err(failed)?;
        register_tokenizer(&index);
        let mut writer: IndexWriter<TantivyDocument> = index
            .writer_with_num_threads(1, WRITER_MEMORY)
            .map_err(failed)?;
        for (ord, chunk) in self.chunks.iter().enumerate() {
            let mut doc = TantivyDocument::default();
            doc.add_u64(f.ord, ord as u64);
            doc.add_text(f.id, &chunk.id);
            doc.add_text(f.text, &chunk.text);
            doc.add_text(f.source, &chunk.source);
            doc.add_u64(f.chunk_index, chunk.chunk_index as u64);
            doc.add_u64(f.line_from, chunk.lines.0 as u64);
            doc.add_u64(f.line_to, chunk.lines.1 as u64);
            writer.add_document(doc).map_err(failed)?;
        }
        writer.commit().map_err(failed)?;
        writer.wait_merging_threads().map_err(failed)?;
        let embedding = match vectors {
            Some((vectors, embedder)) => {
                vectors.write(&dir.join(VECTORS_FILE))?;
                Some(EmbeddingEntry {
                    kind: embedder.embedding_kind().to_owned(),
                    model: embedder.embedding_model().to_owned(),
                    dims: vectors.dims(),
                })
            }
            None => None,
        };
        let manifest = Manifest {
            format_version: FORMAT_VERSION,
            created_by: format!("rageval {}", env!("CARGO_PKG_VERSION")),
            tokenizer: TOKENIZER_NAME.into(),
            chunk_size: self.splitter.chunk_size,
            chunk_overlap: self.splitter.chunk_overlap,
            chunks: self.chunks.len(),
            documents: self.documents.clone(),
            skipped: self.skipped.clone(),
            embedding,
        };
        let path = dir.join(MANIFEST_FILE);
        let text = serde_json::to_string_pretty(&manifest).map_err(|e| SourceError::Index {
            path: dir.to_owned(),
            detail: e.to_string(),
        })?;
        std::fs::write(&path, text + "\n").map_err(|e| SourceError::io(&path, e))?;
        Ok(manifest)
    }
}

/// Embeds every chunk in batches, retrying what the judge's policy calls retryable.
async fn embed_all<E: Embedder>(
    embedder: &E,
    chunks: &[IndexedChunk],
    embedded: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vectors, SourceError> {
    let policy = RetryPolicy::default();
    let mut rows = Vec::with_capacity(chunks.len());
    for batch in chunks.chunks(EMBED_BATCH) {
        let texts: Vec<String> = batch.iter().map(|c| c.text.clone()).collect();
        let mut attempt = 0;
        let vectors = loop {
            attempt += 1;
            match embedder.embed(&texts).await {
                Ok(vectors) => break vectors,
                Err(error) => match policy.next_delay(attempt, &error) {
                    Some(wait) => tokio::time::sleep(wait).await,
                    None => return Err(SourceError::Embedding(error)),
                },
            }
        };
        if vectors.len() != texts.len() {
            return Err(SourceError::Embedding(
                rageval_judge::JudgeError::Protocol {
                    endpoint: embedder.embedding_model().to_owned(),
                    detail: format!("{} vectors for {} texts", vectors.len(), texts.len()),
                },
            ));
        }
        rows.extend(vectors);
        embedded(rows.len(), chunks.len());
    }
    Vectors::from_rows(rows).map_err(|detail| {
        SourceError::Embedding(rageval_judge::JudgeError::Protocol {
            endpoint: embedder.embedding_model().to_owned(),
            detail,
        })
    })
}

fn check_unique_ids(chunks: &[IndexedChunk], out: &Path) -> Result<(), SourceError> {
    let mut seen: std::collections::HashMap<&str, &IndexedChunk> = Default::default();
    for chunk in chunks {
        if let Some(first) = seen.insert(&chunk.id, chunk) {
            return Err(SourceError::Index {
                path: out.to_owned(),
                detail: format!(
                    "chunk id `{}` appears twice ({} line {} and {} line {})",
                    chunk.id, first.source, first.lines.0, chunk.source, chunk.lines.0
                ),
            });
        }
    }
    Ok(())
}

/// `dir` with `.{tag}-{pid}` appended to its file name.
fn sibling(dir: &Path, tag: &str) -> PathBuf {
    let name = dir
        .file_name()
        .map_or_else(|| "index".into(), |n| n.to_string_lossy().into_owned());
    dir.with_file_name(format!(".{name}.{tag}-{}", std::process::id()))
}

fn remove_dir(dir: &Path) -> Result<(), SourceError> {
    std::fs::remove_dir_all(dir).map_err(|e| SourceError::io(dir, e))
}

/// Moves the complete `staging` directory to `out`, replacing what is there.
fn replace_dir(staging: &Path, out: &Path) -> Result<(), SourceError> {
    if out.exists() {
        let old = sibling(out, "old");
        std::fs::rename(out, &old).map_err(|e| SourceError::io(out, e))?;
        std::fs::rename(staging, out).map_err(|e| SourceError::io(out, e))?;
        remove_dir(&old)
    } else {
        if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| SourceError::io(parent, e))?;
        }
        std::fs::rename(staging, out).map_err(|e| SourceError::io(out, e))
    }
}
