//! Every rageval metric over [`Sample`](rageval_core::Sample)s, and the catalogue that names
//! them.
//!
//! - [`Metric`]: one metric, ready to score a sample into an
//!   [`Outcome`](rageval_core::Outcome); built from a user's spec (`rouge_l`,
//!   `id_precision@5`) by [`build`].
//! - [`MetricInfo`]: what a metric needs, its formula and where the formula comes from;
//!   [`catalogue`] lists them all for `rageval metrics`.
//! - [`lexical`]: answer against reference (exact match, edit distances, BLEU, ROUGE, chrF).
//! - [`retrieval`]: retrieved contexts against gold contexts, by id or by string similarity.
//!
//! The arithmetic itself lives in `rageval-core` (`rank`, `text`); this crate decides which
//! sample fields feed it and when a metric does not apply. It reads no files and writes no
//! reports: run directories belong to `rageval-report`.

mod catalogue;
pub mod lexical;
mod metric;
pub mod retrieval;

pub use catalogue::{build, catalogue, find, model_free_defaults};
pub use metric::{Input, Metric, MetricError, MetricInfo};
