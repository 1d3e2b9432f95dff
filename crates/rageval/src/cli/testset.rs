//! `rageval testset`: a question set written from one's own documents.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::values::at_least_one;
use super::{JudgeArgs, OutputArgs, RunDirArgs};

/// What `testset` does with an item the model answers without its passage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ClosedBookArg {
    /// Leave it out of the set
    Drop,
    /// Keep it, its closed_book gate marked failed
    Mark,
}

/// Arguments of `rageval testset`.
#[derive(Debug, Args)]
pub struct TestsetArgs {
    /// A local index directory (`rageval index`), a folder of documents, one document, or
    /// a JSONL file of chunks (`text` and `id` or `uuid` per line)
    pub source: PathBuf,

    /// Items to plan; gates and duplicates may leave fewer
    #[arg(long, value_name = "N", default_value_t = 50, value_parser = at_least_one::<usize>)]
    pub size: usize,

    /// Target category shares, e.g. `fact=0.4,numeric=0.2,multi_hop=0.2,unanswerable=0.2`
    /// (categories: fact, numeric, multi_hop, comparison, unanswerable, follow_up; the
    /// default gives 0.30, 0.15, 0.20, 0.10, 0.15, 0.10)
    #[arg(long, value_name = "CATEGORY=SHARE,...")]
    pub shares: Option<String>,

    /// Items one document may give, at most (default: no cap; documents are covered
    /// round-robin either way)
    #[arg(long, value_name = "N", value_parser = at_least_one::<usize>)]
    pub per_document: Option<usize>,

    /// Chunks shorter than this many characters are never asked about
    #[arg(long, value_name = "CHARS",
          default_value_t = rageval_core::testset::plan::DEFAULT_MIN_CHUNK_CHARS)]
    pub min_chunk_chars: usize,

    /// An item the model answers correctly without its passage is dropped, or kept and
    /// marked
    #[arg(long, value_enum, default_value_t = ClosedBookArg::Drop)]
    pub closed_book: ClosedBookArg,

    /// Estimated word-shingle Jaccard similarity (MinHash) from which two questions are
    /// near duplicates; the later one is dropped
    #[arg(long, value_name = "SIMILARITY",
          default_value_t = rageval_core::testset::minhash::DEFAULT_NEAR_DUPLICATE)]
    pub near_duplicate: f64,

    /// Folders and documents: characters per chunk
    #[arg(long, default_value_t = rageval_sources::local::splitter::DEFAULT_CHUNK_SIZE)]
    pub chunk_size: usize,

    /// Folders and documents: characters shared by neighbouring chunks
    #[arg(long, default_value_t = rageval_sources::local::splitter::DEFAULT_CHUNK_OVERLAP)]
    pub chunk_overlap: usize,

    #[command(flatten)]
    pub run_dir: RunDirArgs,

    #[command(flatten)]
    pub judge: JudgeArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}
