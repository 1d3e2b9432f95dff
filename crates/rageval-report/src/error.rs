//! Errors of reading and writing run directories, reports and comparisons.

use std::path::PathBuf;

/// Everything that can go wrong in this crate; each variant names the file or value at fault.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(
        "run directory {path} already holds a run (pass --overwrite to replace it, or choose another --out)"
    )]
    RunExists { path: PathBuf },
    #[error("{path} exists and is not a directory")]
    NotADirectory { path: PathBuf },
    #[error("cannot write {path}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {path} as parquet: {message}")]
    Parquet { path: PathBuf, message: String },
    #[error("cannot read {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot encode {what} as JSON")]
    Encode {
        what: &'static str,
        #[source]
        source: serde_json::Error,
    },
    #[error("{path}:{line}: not a result record")]
    DecodeLine {
        path: PathBuf,
        line: usize,
        #[source]
        source: serde_json::Error,
    },
    #[error("{path} is not valid JSON of the expected shape")]
    Decode {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{path} is not a run directory (it has no manifest.json)")]
    NotARun { path: PathBuf },
    #[error("run {path} is not complete (its manifest says status `running`)")]
    Incomplete { path: PathBuf },
    #[error("cannot write the spreadsheet {path}")]
    Xlsx {
        path: PathBuf,
        #[source]
        source: rust_xlsxwriter::XlsxError,
    },
    #[error("bad quality gate `{spec}`: {why}")]
    BadGate { spec: String, why: String },
    #[error(
        "quality gate names metric `{metric}`, which the run does not have (it has: {available})"
    )]
    UnknownGateMetric { metric: String, available: String },
    #[error(
        "runs {first} and {other} are over different datasets (sha256 {first_sha256} vs {other_sha256}); compare only runs over the same data"
    )]
    DifferentDatasets {
        first: PathBuf,
        other: PathBuf,
        first_sha256: String,
        other_sha256: String,
    },
    #[error("compare needs at least two runs, got {count}")]
    TooFewRuns { count: usize },
}
