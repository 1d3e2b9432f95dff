//! Scores written where teams look at their traces and experiments: a run directory's cells
//! sent to the stores they already run.
//!
//! - [`cells`]: [`ExportRun`], a run directory read as cells ([`ExportCell`]) with the trace
//!   and span each sample came from, who judged each metric ([`AnnotatorKind`]) and the
//!   judge's identity.
//! - [`otlp`]: OpenTelemetry `gen_ai.evaluation.result` events — an OTLP/JSON file beside
//!   `results.jsonl`, and OTLP/HTTP pushes (protobuf or JSON, logs or traces).
//! - [`phoenix`]: span annotations on the evaluated spans of an Arize Phoenix, idempotent
//!   by identifier.
//! - [`mlflow`]: a run logged to an MLflow tracking server through its REST API: params,
//!   per-metric means with their interval bounds, the summary and reports as artifacts.
//! - [`writes`]: [`Writes`], the tally every writer returns: written, failed (retried, then
//!   counted, never failing the run), skipped with why.
//!
//! Writers read finished (or rolling) run directories and speak HTTP through
//! `rageval-sources`' [`RestClient`](rageval_sources::RestClient), which owns the retry and
//! redaction rules: an API key is sent only in its header and never appears in an error,
//! a log line or a file. Reading a live Phoenix as a dataset is `rageval-sources`' job, and
//! the watch loop is the engine's (`rageval-run`); this crate never prints and never exits.

pub mod cells;
mod error;
pub mod mlflow;
pub mod otlp;
pub mod phoenix;
pub mod writes;

pub use cells::{AnnotatorKind, ExportCell, ExportRun};
pub use error::ExportError;
pub use writes::Writes;
