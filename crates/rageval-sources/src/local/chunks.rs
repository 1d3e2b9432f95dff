//! Every chunk of a corpus, for `rageval testset`: from a local index (`rageval index`), a
//! folder of documents or one document (loaded and split in memory, as `rageval index` would),
//! or a JSONL file of chunks (taken as they are, ids included).
//!
//! Reading only: nothing is written, no model is asked. Choosing which chunks to ask about is
//! the sampling plan's job (`rageval_core::testset::plan`).

use std::collections::HashSet;
use std::path::Path;

use rageval_core::testset::SourceChunk;

use super::index::{IndexedChunk, MANIFEST_FILE, SkippedEntry};
use super::{FileOutcome, IndexBuilder, LocalIndex, Splitter, expand_inputs};
use crate::error::SourceError;

/// What a corpus path was read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CorpusKind {
    /// A directory written by `rageval index`.
    Index,
    /// A folder of documents, split in memory.
    Folder,
    /// One file: a document split in memory, or a JSONL file of chunks.
    File,
}

impl CorpusKind {
    /// `index`, `folder` or `file`.
    pub fn name(self) -> &'static str {
        match self {
            CorpusKind::Index => "index",
            CorpusKind::Folder => "folder",
            CorpusKind::File => "file",
        }
    }
}

/// The chunks of a corpus, in the order its documents and chunks were read.
#[derive(Debug, Clone)]
pub struct CorpusChunks {
    pub kind: CorpusKind,
    pub chunks: Vec<SourceChunk>,
    /// Files whose content could not be read, and why (folders and files only).
    pub skipped: Vec<SkippedEntry>,
}

/// Reads every chunk at `path`: an index directory (it holds `rageval-index.json`), a folder
/// of documents, or one file; documents are split with `splitter`. A corpus without a chunk
/// of text, or with two chunks of one id, is an error naming the path.
pub fn corpus_chunks(path: &Path, splitter: Splitter) -> Result<CorpusChunks, SourceError> {
    let (kind, chunks, skipped) = if path.join(MANIFEST_FILE).is_file() {
        let index = LocalIndex::open(path)?;
        (CorpusKind::Index, index.all_chunks()?, Vec::new())
    } else {
        let kind = if path.is_dir() {
            CorpusKind::Folder
        } else {
            CorpusKind::File
        };
        let mut builder = IndexBuilder::new(splitter);
        let mut skipped = Vec::new();
        for file in expand_inputs(&[path.to_path_buf()])? {
            if let FileOutcome::Skipped { reason } = builder.add_file(&file.path, &file.name)? {
                skipped.push(SkippedEntry {
                    path: file.name.clone(),
                    reason,
                });
            }
        }
        let chunks = builder.chunks().iter().map(source_chunk).collect();
        (kind, chunks, skipped)
    };
    let chunks: Vec<SourceChunk> = chunks
        .into_iter()
        .filter(|c: &SourceChunk| !c.text.trim().is_empty())
        .collect();
    if chunks.is_empty() {
        return Err(SourceError::Document {
            path: path.to_path_buf(),
            detail: "holds no chunk of text to write questions from".into(),
        });
    }
    let mut ids = HashSet::new();
    if let Some(twice) = chunks.iter().find(|c| !ids.insert(c.id.as_str())) {
        return Err(SourceError::Document {
            path: path.to_path_buf(),
            detail: format!(
                "two chunks have the id `{}`: gold chunk ids must be unique",
                twice.id
            ),
        });
    }
    Ok(CorpusChunks {
        kind,
        chunks,
        skipped,
    })
}

/// An indexed chunk as a test set's source chunk.
pub(crate) fn source_chunk(chunk: &IndexedChunk) -> SourceChunk {
    SourceChunk {
        id: chunk.id.clone(),
        document: chunk.source.clone(),
        location: location(chunk.lines),
        text: chunk.text.clone(),
    }
}

/// `line 4`, or `lines 3-9`.
pub(crate) fn location((from, to): (usize, usize)) -> String {
    if from == to {
        format!("line {from}")
    } else {
        format!("lines {from}-{to}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jsonl_file_of_chunks_keeps_its_ids_and_lines() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let file = dir.path().join("chunks.jsonl");
        std::fs::write(
            &file,
            "{\"uuid\": \"u1\", \"text\": \"第一段文字。\"}\n{\"uuid\": \"u2\", \"text\": \"Second.\"}\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let splitter = Splitter::new(500, 50).unwrap_or_else(|| panic!("splitter"));
        let corpus = corpus_chunks(&file, splitter).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(corpus.kind, CorpusKind::File);
        let ids: Vec<&str> = corpus.chunks.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["u1", "u2"]);
        assert_eq!(corpus.chunks[1].location, "line 2");
        assert_eq!(corpus.chunks[0].document, "chunks.jsonl");
    }

    #[test]
    fn a_folder_is_split_and_an_empty_one_is_an_error() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let splitter = Splitter::new(40, 0).unwrap_or_else(|| panic!("splitter"));
        std::fs::create_dir(dir.path().join("docs")).unwrap_or_else(|e| panic!("{e}"));
        assert!(corpus_chunks(&dir.path().join("docs"), splitter).is_err());
        let text = "Scratch is a block language.\n\nPython comes later for most children.\n";
        std::fs::write(dir.path().join("docs/a.md"), text).unwrap_or_else(|e| panic!("{e}"));
        let corpus =
            corpus_chunks(&dir.path().join("docs"), splitter).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(corpus.kind, CorpusKind::Folder);
        assert!(corpus.chunks.len() >= 2);
        assert!(corpus.chunks.iter().all(|c| c.document == "a.md"));
        assert_eq!(corpus.chunks[0].id, "a.md#0");
    }
}
