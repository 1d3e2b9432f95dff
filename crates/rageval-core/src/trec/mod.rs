//! trec_eval-compatible evaluation of ranked runs against relevance judgments.
//!
//! Read judgments with [`Qrels::parse`] and a run with [`Run::parse`], pick measures in
//! [`TrecOptions`] exactly as on trec_eval's command line (`map`, `P.5,10`, `ndcg_cut.10`,
//! `all_trec`, `official`), call [`evaluate`], and print with [`TrecReport::write`]: the text
//! is byte-identical to trec_eval 10.0's for the measures implemented (every measure of
//! `all_trec`, plus `dcg` and `ideal_dcg`). Preference-based and judgment-group measures
//! (`-R prefs`, `qrels_jg`) and z-scores are not implemented.
//!
//! - `lines`: streaming line reader and the id arena shared by the readers.
//! - `qrels`, `run`: the two input formats.
//! - `judge`: ranking a topic (score, then docno descending; `-M`) and judging it (`-l`).
//! - `measures`: the measure table, nicknames and parameter parsing.
//! - `compute`, `gain`: per-topic formulas.
//! - `evaluate`: topic selection (`-c`) and averaging; `report`: the output format (text,
//!   and JSON at full precision).
//! - `files`: both files read from disk, a large run on two threads ([`read_files`]).
//!
//! Apart from [`read_files`], this module reads from readers and writes to writers it is
//! given; it never prints or exits — the `rageval trec` command does that.

mod compute;
mod error;
mod evaluate;
mod files;
mod gain;
mod judge;
mod lines;
mod measures;
mod qrels;
mod report;
mod run;

pub use error::TrecError;
pub use evaluate::{TrecOptions, evaluate, evaluate_named};
pub use files::{SPLIT_RUN_BYTES, read_files};
pub use qrels::{MAX_RELEVANCE, Qrels};
pub use report::TrecReport;
pub use run::Run;
