//! Run directories: where a run's results live, in a shape other tools can read.
//!
//! A run directory holds `manifest.json` (what ran, on which data, with which settings),
//! `results.jsonl` (the journal: one line per sample × metric, appended as results arrive)
//! and `summary.json` (per metric: mean, counts of scored / undefined / failed samples and
//! a seeded bootstrap 95% interval). `summary.json` is written last and atomically, and the
//! manifest says `"status": "complete"` only then, so a directory left by a crash never looks
//! finished.
//!
//! - [`RunDir`]: creates, finishes or abandons a run directory.
//! - [`Manifest`], [`ResultRecord`], [`Summary`]: the files' contents.
//! - [`Aggregator`]: turns outcomes into a [`Summary`].
//! - [`render_summary_table`]: the summary as a text table for a terminal.
//!
//! This crate knows no model and no metric formula; it stores what metrics return.

mod error;
mod journal;
mod manifest;
mod run_dir;
mod summary;
mod table;
mod time;

pub use error::ReportError;
pub use journal::{JournalWriter, ResultRecord};
pub use manifest::{DatasetInfo, Manifest, MetricRecord, RunStatus, ToolInfo};
pub use run_dir::{MANIFEST_FILE, RESULTS_FILE, RunDir, SUMMARY_FILE, sha256_file};
pub use summary::{Aggregator, MetricSummary, Summary};
pub use table::render_summary_table;
pub use time::utc_timestamp;
