//! Run directories: where a run's results live, in a shape other tools can read, and the
//! reports people read.
//!
//! A run directory holds `manifest.json` (what ran, on which data, with which settings),
//! `results.jsonl` (the journal: one line per sample × metric, appended as results arrive)
//! and `summary.json` (per metric: mean, counts of scored / undefined / failed samples and
//! a seeded bootstrap 95% interval). `summary.json` is written last and atomically, and the
//! manifest says `"status": "complete"` only then, so a directory left by a crash never looks
//! finished. Beside them, the human files: `report.html` (one self-contained page),
//! `report.md` and `results.xlsx`.
//!
//! - [`RunDir`]: creates, finishes or abandons a run directory.
//! - [`Manifest`], [`ResultRecord`], [`Summary`]: the files' contents.
//! - [`Aggregator`]: turns outcomes into a [`Summary`].
//! - [`JudgeAccount`], [`Session`]: what the judge was asked, per `eval` session (in the
//!   manifest) and summed (in the summary).
//! - [`Agreement`]: a `judge-check` run's `agreement.json` (figures with intervals, counts,
//!   one verdict per item, stability); [`AgreementDelta`] two judges on the same labels.
//! - [`RunData`]: a finished run read back; [`write_reports`] writes its human files.
//! - [`render_html`], [`render_markdown`], [`write_xlsx`]: each human file alone;
//!   [`render_run_summary`], [`render_agreement`], [`render_sample_table`] and
//!   [`render_compare_body`] are pieces of the pages for other HTML (`rageval serve`), and
//!   [`html_document`] their shell.
//! - [`Gate`]: `--fail-under` thresholds; [`render_junit`] the CI report of a gate.
//! - [`Comparison`]: two or more runs over one dataset, with paired statistics per metric.
//! - [`render_summary_table`]: the summary as a text table for a terminal.
//! - [`write_results_parquet`]: `results.jsonl` as `results.parquet` for Spark or pandas.
//! - `testing` (feature `test-support`): writes complete run directories for tests.
//!
//! This crate knows no model and no metric formula; it stores and shows what metrics
//! return. Reading datasets is `rageval-core`'s job: writers take the samples as given.

mod accounting;
mod agreement;
mod agreement_render;
mod calibrated;
mod compare;
mod compare_render;
mod error;
mod escape;
mod gate;
mod html;
mod journal;
mod judge_report;
mod manifest;
mod markdown;
mod page;
mod rank_agreement;
mod reader;
mod reports;
mod results_parquet;
mod run_dir;
mod summary;
mod svg;
mod table;
#[cfg(any(test, feature = "test-support"))]
pub mod testing;
mod time;
mod xlsx;

pub use accounting::{
    CallTally, JudgeAccount, JudgeModel, JudgeUsage, ModelPrice, RungTally, Session, SessionEnd,
    TaskTally,
};
pub use agreement::{
    AGREEMENT_FILE, Agreement, AgreementDelta, AgreementFigure, FigureDelta, ItemLabel, ItemResult,
    ItemVerdict, LabelShape, NOTE_CROSS_VALIDATED, NOTE_THRESHOLD, NOTE_WARNING, Stability,
    UnstableItem, VerdictChange, chance_level,
};
pub use agreement_render::render_agreement;
pub use calibrated::Calibrated;
pub use compare::{CompareSettings, Comparison, MetricDelta, PairComparison, SampleFlip};
pub use compare_render::{
    compare_title, render_compare_body, render_compare_html, render_compare_markdown,
};
pub use error::ReportError;
pub use escape::{escape_html, escape_markdown_cell};
pub use gate::{FailingSample, Gate, GateCheck, GateOutcome, Threshold, render_junit};
pub use html::{render_html, render_run_summary, render_sample_table};
pub use journal::{JournalWriter, ResultRecord};
pub use manifest::{DatasetInfo, Manifest, MetricRecord, RunStatus, ToolInfo};
pub use markdown::render_markdown;
pub use page::html_document;
pub use rank_agreement::{RANK_AGREEMENT_FILE, RankAgreementRow};
pub use reader::{RunData, read_results};
pub use reports::{HTML_FILE, MARKDOWN_FILE, XLSX_FILE, write_reports};
pub use results_parquet::{RESULTS_PARQUET_FILE, write_results_parquet};
pub use run_dir::{MANIFEST_FILE, RESULTS_FILE, RunDir, SUMMARY_FILE, sha256_bytes, sha256_file};
pub use summary::{Aggregator, MetricSummary, Summary};
pub use svg::{IntervalRow, histogram, interval_chart};
pub use table::render_summary_table;
pub use time::utc_timestamp;
pub use xlsx::{RESULTS_SHEET_COLUMNS, write_xlsx};
