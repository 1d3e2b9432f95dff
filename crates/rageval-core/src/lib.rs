//! The lowest layer of rageval: what a sample is, what a score is, and the exact math that
//! needs no model.
//!
//! - [`sample`]: [`Sample`] (question, retrieved contexts, answer, references, precomputed
//!   statements) and [`Context`].
//! - [`conversation`]: what a sample knows around its question: earlier [`Turn`]s of a
//!   chat, the retrieval [`Hop`] it is, [`ToolCall`]s made and expected, its [`Position`].
//! - [`outcome`]: [`Outcome`], the only way a metric reports a result — a finite score with
//!   its [`Evidence`], `Undefined` with a reason, or `Failed` with an error. Never NaN.
//! - [`dataset`]: readers for JSONL (streamed), JSON, CSV and XLSX with field aliases for
//!   ragas, the seeds and user mappings; every error names file, line and field.
//! - [`rank`]: average precision (ragas, exact, strict), cut-off measures, nDCG, rank
//!   correlations, overlaps, ID- and string-based context precision/recall.
//! - [`trec`]: trec_eval-compatible qrels/run evaluation.
//! - [`text`]: Unicode-aware tokenisation (jieba for Chinese), language detection, string
//!   distances, BLEU, ROUGE, chrF.
//! - [`files`]: the one writer of files whole or not at all (a temporary file, then a
//!   rename), used by every run file, labels file and journal rewrite.
//! - [`stats`]: seeded bootstrap confidence intervals, Wilson intervals of proportions.
//! - [`abstention`]: the abstention 2×2 table ([`Quadrant`], [`AbstentionTable`]) a run's
//!   summary counts from the quadrant its metric names per sample.
//! - [`sampling`]: [`SampleRate`](sampling::SampleRate), consistent sampling by a hash of
//!   the id (`--sample 10%`: the same traces for every metric and every rerun).
//! - [`testset`]: the pure parts of a generated test set: sampling plan, duplicates, lexical
//!   gates.
//! - [`agreement`]: a judge's agreement with human labels (pairwise accuracy, balanced
//!   accuracy, AUROC, cross-validated thresholds, Cohen's κ, bootstrap of any statistic).
//! - [`calibration`]: calibrated means from a few human labels (PPI++), the labels file as
//!   it reads it, and labels matched to a run's samples by id.
//! - [`preference`]: versions judged head to head — the both-orders rule, win rates with
//!   intervals, sign test, position and length bias, Bradley–Terry strengths.
//!
//! This crate knows no model, no network and no file format of a run: judging lives in
//! `rageval-judge`, metrics over samples in `rageval-metrics`, run directories in
//! `rageval-report`.

pub mod abstention;
pub mod agreement;
pub mod calibration;
pub mod conversation;
pub mod dataset;
pub mod files;
pub mod outcome;
pub mod position;
pub mod preference;
pub mod rank;
pub mod sample;
pub mod sampling;
pub mod stats;
pub mod testset;
pub mod text;
pub mod trec;

pub use abstention::{ABSTENTION_QUADRANT, AbstentionTable, Quadrant};
pub use conversation::{Hop, Position, Role, ToolCall, ToolCallOrder, Turn};
pub use outcome::{Evidence, Outcome, Verdict, VerdictTarget};
pub use sample::{Context, Sample};
