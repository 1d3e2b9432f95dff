//! The one error type of the trec_eval-compatible evaluator.
//!
//! Every variant names what the user must fix: the file (as the caller called it), the line
//! and the offending value, or the measure argument. This file holds no parsing logic.

use std::io;

/// What can go wrong while reading qrels or runs, or while choosing measures.
#[derive(Debug, thiserror::Error)]
pub enum TrecError {
    /// The reader failed underneath us.
    #[error("cannot read {source_name}")]
    Read {
        source_name: String,
        #[source]
        cause: io::Error,
    },
    /// A line has the wrong number of whitespace-separated columns.
    #[error("{source_name}:{line}: expected {expected} columns, found {found}")]
    ColumnCount {
        source_name: String,
        line: usize,
        expected: &'static str,
        found: usize,
    },
    /// A column that must hold a number holds something else.
    #[error("{source_name}:{line}: {field} `{value}` is not a valid number")]
    NotANumber {
        source_name: String,
        line: usize,
        field: &'static str,
        value: String,
    },
    /// A relevance value too large to keep a per-level count for.
    #[error("{source_name}:{line}: relevance {value} is larger than the supported {max}")]
    RelevanceTooLarge {
        source_name: String,
        line: usize,
        value: i64,
        max: i64,
    },
    /// The file holds no data line at all.
    #[error("{source_name}: empty file, no data lines")]
    Empty { source_name: String },
    /// The same document appears twice for one topic.
    #[error("{source_name}: document `{docno}` appears twice for topic `{qid}`")]
    DuplicateDocument {
        source_name: String,
        qid: String,
        docno: String,
    },
    /// The input is larger than the evaluator's 32-bit text offsets allow (4 GiB of ids).
    #[error("{source_name}: more than 4 GiB of document ids")]
    TooLarge { source_name: String },
    /// A `-m` argument names no trec_eval measure or nickname.
    #[error("unknown measure `{measure}`")]
    UnknownMeasure { measure: String },
    /// A measure parameter cannot be parsed or makes no sense for that measure.
    #[error("measure `{measure}`: bad parameter `{parameter}`: {reason}")]
    BadParameter {
        measure: String,
        parameter: String,
        reason: &'static str,
    },
    /// No topic has both judgments and results (and `-c` was not given).
    #[error("no topic has both results in {run} and judgments in {qrels}")]
    NoQueries { qrels: String, run: String },
}
