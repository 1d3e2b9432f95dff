//! Every rageval metric over [`Sample`](rageval_core::Sample)s, and the catalogue that names
//! them.
//!
//! - [`Metric`]: one metric, ready to score a sample into an
//!   [`Outcome`](rageval_core::Outcome) (a future: judged metrics ask a model); built from a
//!   user's spec (`rouge_l`, `id_precision@5`, `answer_relevance:embedding`) by [`build`].
//!   Model-free metrics implement the synchronous [`ModelFree`].
//! - [`MetricInfo`]: what a metric needs, its formula, modes and where the formula comes
//!   from; [`catalogue`] lists the built-in ones, and a run's [`MetricCatalogue`] (a value,
//!   never process-wide) adds the run's rubrics, lists and builds them all.
//! - [`scoring`]: [`Judges`] (the run's task router and embedder) and [`ScoringContext`],
//!   one per sample, which computes what several metrics share (statements, usefulness
//!   verdicts, generated questions) exactly once.
//! - [`lexical`]: answer against reference (exact match, edit distances, BLEU, ROUGE, chrF).
//! - [`retrieval`]: retrieved contexts against gold contexts, by id or by string similarity.
//! - [`tools`]: tool calls made against the expected ones (selection, arguments).
//! - [`rubric`]: rubric metrics of one's own, parsed from `[[metric]]` tables
//!   ([`rubric::file`]) and judged through the `custom_rubric` task.
//! - [`judged`]: the model-judged metrics of seeds S0–S4 and ragas (context precision,
//!   recall, relevance, faithfulness, answer relevance and correctness, semantic
//!   similarity, entity recall, noise sensitivity), abstention and citation faithfulness.
//!
//! The arithmetic lives in `rageval-core` (`rank`, `text`) and every judgement in
//! `rageval-tasks`; this crate decides which sample fields feed them, how verdicts become a
//! score, and when a metric does not apply. It reads no files but the rubric files it is
//! handed (which ones, `rageval-run` decides with the judge's settings) and writes no
//! reports: run directories belong to `rageval-report`.

mod catalogue;
pub mod judged;
mod judged_catalogue;
pub mod lexical;
mod metric;
pub mod retrieval;
pub mod rubric;
pub mod scoring;
pub mod tools;

pub use catalogue::{
    MetricCatalogue, build, catalogue, find, measured_for, model_free_defaults, score_range,
    summary_zh,
};
pub use metric::{Input, Metric, MetricError, MetricInfo, ModeInfo, ModelFree, Requirements};
pub use rubric::{DefinedRubric, RubricError};
pub use scoring::{Failure, Judges, ScoringContext};
