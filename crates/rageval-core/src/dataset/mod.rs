//! Dataset readers: JSONL, Parquet and Arrow IPC (streamed), JSON, CSV/TSV, XLSX and seed S3
//! `GT_*`/`FULL_*` directories, all producing [`Sample`](crate::Sample)s.
//!
//! | format | picked by | notes |
//! |---|---|---|
//! | [`Format::Jsonl`] | `.jsonl`, `.ndjson` | streamed line by line; blank lines skipped |
//! | [`Format::Json`] | `.json` | an array of objects; JSON Lines in a `.json` file also read |
//! | [`Format::Csv`] | `.csv`, `.tsv` | header row; list cells as JSON or Python list reprs |
//! | [`Format::Xlsx`] | `.xlsx` | first sheet, or [`ReadOptions::sheet`] |
//! | [`Format::Parquet`] | `.parquet` | streamed batch by batch; snappy, gzip, lz4 codecs |
//! | [`Format::Arrow`] | `.arrow`, `.arrows`, `.feather`, `.ipc` | IPC file or stream layout, streamed |
//! | seed S3 | a directory | one sample per `FULL_*.json`, else `GT_*.json` |
//! | [`Format::OpenInference`] | `--format openinference` | Phoenix span exports (JSONL, JSON, Parquet, Arrow); a sample per trace and per hop |
//! | [`Format::Langfuse`] | `--format langfuse` | Langfuse trace exports (JSONL or JSON); a sample per trace and per hop |
//!
//! Column names are matched per record against one alias table ([`Field::aliases`]):
//! ours and ragas ≥ 0.2 (`user_input`, `retrieved_contexts`, `response`, `reference`, …),
//! ragas 0.1 (`question`, `contexts`, `answer`, `ground_truth(s)`), seed S4 (`retrievedContext`,
//! `referenceAnswer`, …). `--map field=column` ([`FieldMap`]) overrides a match, and
//! `--map field=` switches a field off. Keys that fill no field land in `Sample::metadata`
//! unchanged. Contexts may be strings, `{text|content|page_content, id?, score?}` objects,
//! or one string; a reference may be a string or a list. Ids are the data's own, else the
//! 1-based record number; a repeated id is an error.
//!
//! A JSONL or JSON record holding a whole chat (ragas's multi-turn `user_input`, OpenAI
//! `messages`, DeepEval `turns`) becomes one sample per assistant turn, with its history
//! (see `conversation.rs`).
//!
//! Every failure is a [`DatasetError`] naming file, line (or sheet row) and field. A UTF-8
//! BOM, CRLF line endings and trailing blank lines are accepted everywhere. The readers
//! never print and never panic on input, and know nothing of metrics: those live in
//! `rageval-metrics`.
//!
//! ```no_run
//! use rageval_core::dataset::{FieldMap, ReadOptions, read_all};
//! let options = ReadOptions {
//!     field_map: FieldMap::parse(&["reference=gold".to_string()])?,
//!     ..ReadOptions::default()
//! };
//! let samples = read_all("eval.jsonl".as_ref(), &options)?;
//! # Ok::<(), rageval_core::dataset::DatasetError>(())
//! ```

mod columnar;
mod conversation;
mod csv;
mod error;
mod field;
mod json;
mod jsonl;
mod langfuse;
mod openinference;
mod reader;
mod seed_files;
mod traces;
mod turns;
mod value;
mod xlsx;

pub use error::{DatasetError, DatasetErrorKind};
pub use field::{Field, FieldMap};
pub use reader::{DatasetReader, Format, ReadOptions, UnknownFormat, open, read_all};
