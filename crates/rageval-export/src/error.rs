//! The one error type of `rageval-export`. Variants name the run directory, the file or the
//! server (its URL redacted, as `rageval-sources`' REST client names it); a failed write to
//! a server is never an error of the run itself — writers count it ([`crate::Writes`]).

use std::path::PathBuf;

/// What can stop an export before it writes anything.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The run directory could not be read.
    #[error(transparent)]
    Report(#[from] rageval_report::ReportError),

    /// A server could not be reached or refused a request that every write needs (the
    /// experiment, the run).
    #[error(transparent)]
    Source(#[from] rageval_sources::SourceError),

    /// A file beside the run could not be written or read.
    #[error("{}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A setting is unusable (an endpoint, a protocol, a header).
    #[error("{what}: {detail}")]
    Config { what: String, detail: String },

    /// A server answered in a shape this writer does not know.
    #[error("unexpected answer from {endpoint}: {detail}")]
    Answer { endpoint: String, detail: String },
}

impl ExportError {
    /// How to fix the error, where that is known.
    pub fn hint(&self) -> Option<String> {
        match self {
            ExportError::Source(error) => error.hint(),
            _ => None,
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        ExportError::Io {
            path: path.into(),
            source,
        }
    }
}
