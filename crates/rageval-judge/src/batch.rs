//! Provider batch jobs (OpenAI, Azure OpenAI, and the file format `vllm run-batch` reads
//! and writes): requests go out as JSONL files, answers come back as files, at about half
//! the price and without rate-limit storms.
//!
//! - [`lines`]: the request line ([`BatchRequest`], whose body is exactly what the
//!   synchronous backend sends) and the output line, read into a [`BatchItem`].
//! - [`files`]: input files cut within a provider's limits ([`BatchLimits`]) and written
//!   atomically.
//! - [`client`]: [`BatchClient`], the files and batches endpoints over the synchronous
//!   backend's settings and HTTP plumbing: upload, create, poll with back-off, cancel,
//!   download, read the answers of a finished job.
//! - [`model`]: [`BatchModel`], the [`ChatModel`](crate::ChatModel) that answers calls from
//!   a [`BatchStore`] or records them as pending ([`JudgeError::Pending`](crate::JudgeError),
//!   a stop), so the judge's cache keys, ladder and cache serve batch answers unchanged.
//!
//! Nothing here decides when a pass runs, journals jobs or prints: the run engine drives
//! passes; this module provides the pieces. Embedding calls have no batch path.

pub mod client;
pub mod files;
pub mod lines;
pub mod model;

pub use client::{
    Batch, BatchClient, BatchJobError, BatchJobErrors, BatchPage, BatchStatus, FileObject,
    PollPolicy, RequestCounts,
};
pub use files::{BatchLimits, RequestFile, split_requests, write_request_files};
pub use lines::{
    BATCH_FAILED, BatchItem, BatchRequest, CHAT_COMPLETIONS_URL, ItemFailure, ItemOutcome,
    MISSING_FROM_OUTPUT, UNREADABLE_ANSWER, parse_output, parse_requests, read_output_file,
    read_request_file,
};
pub use model::{BatchCounts, BatchModel, BatchOptions, BatchStore, FailedItems, batch_key};
