//! Errors of reading and writing run directories.

use std::path::PathBuf;

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
}
