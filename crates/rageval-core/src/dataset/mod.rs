//! Dataset readers: JSONL (streamed), JSON, CSV/TSV, XLSX and seed S3 `GT_*`/`FULL_*`
//! directories, all producing [`Sample`](crate::Sample)s.
//!
//! Column names are matched per record against one alias table ([`Field::aliases`]):
//! ours and ragas ≥ 0.2 (`user_input`, `retrieved_contexts`, `response`, `reference`, …),
//! ragas 0.1 (`question`, `contexts`, `answer`, `ground_truth(s)`), seed S4 (`retrievedContext`,
//! `referenceAnswer`, …). `--map field=column` ([`FieldMap`]) overrides or switches off a
//! match. Keys that fill no field land in `Sample::metadata` unchanged.
//!
//! Every failure is a [`DatasetError`] naming file, line (or sheet row) and field. The
//! readers never print, never panic on input, and know nothing of metrics: those live in
//! `rageval-metrics`.
//!
//! ```no_run
//! use rageval_core::dataset::{ReadOptions, read_all};
//! let samples = read_all("eval.jsonl".as_ref(), &ReadOptions::default())?;
//! # Ok::<(), rageval_core::dataset::DatasetError>(())
//! ```

mod csv;
mod error;
mod field;
mod json;
mod jsonl;
mod reader;
mod seed_files;
mod value;
mod xlsx;

pub use error::{DatasetError, DatasetErrorKind};
pub use field::{Field, FieldMap};
pub use reader::{DatasetReader, Format, ReadOptions, open, read_all};
