//! `results.jsonl`: one line per sample × metric, appended and flushed as each result
//! arrives, so a crash loses at most the line being written.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use rageval_core::Outcome;
use serde::{Deserialize, Serialize};

use crate::ReportError;

/// One line of the journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultRecord {
    pub sample_id: String,
    pub metric: String,
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// Appends records to a run's journal.
pub struct JournalWriter {
    path: PathBuf,
    out: BufWriter<File>,
}

impl JournalWriter {
    pub(crate) fn append_to(path: &Path) -> Result<Self, ReportError> {
        let file = File::options()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|source| ReportError::Write {
                path: path.to_path_buf(),
                source,
            })?;
        Ok(Self {
            path: path.to_path_buf(),
            out: BufWriter::new(file),
        })
    }

    /// Writes one record as one line.
    pub fn append(&mut self, record: &ResultRecord) -> Result<(), ReportError> {
        let line = serde_json::to_string(record).map_err(|source| ReportError::Encode {
            what: "a result record",
            source,
        })?;
        writeln!(self.out, "{line}").map_err(|source| self.write_error(source))
    }

    /// Pushes buffered lines to the file; called after each sample.
    pub fn flush(&mut self) -> Result<(), ReportError> {
        self.out.flush().map_err(|source| self.write_error(source))
    }

    fn write_error(&self, source: std::io::Error) -> ReportError {
        ReportError::Write {
            path: self.path.clone(),
            source,
        }
    }
}
