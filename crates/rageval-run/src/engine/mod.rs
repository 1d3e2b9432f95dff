//! The engine half: what every judged command runs on. It never names a command
//! (`tests/it/walls.rs`); a helper a command and the engine both need lives here.
//!
//! - [`judges`]: who judges ([`JudgeOptions`](judges::JudgeOptions) →
//!   [`JudgeSetup`](judges::JudgeSetup): endpoint, cascade, local GGUF, offline routing), and
//!   [`Stop`](judges::Stop), why a run must stop (cancel, a cap, a judge halted as
//!   unavailable).
//! - [`identity`]: what makes two sessions the same run (typed: data, metrics, settings,
//!   judge kind, model, endpoints, GGUF hash, prompt versions, labels).
//! - [`resume`]: a run directory started or resumed, journals compacted; [`cells`]: the
//!   compact set of finished cells a resumed or multi-pass run keeps; [`files`]: run files
//!   written whole or not at all.
//! - [`session`]: each session's judge accounts in the manifest, and the footer line.
//! - [`shell`]: the session shell every command's work runs in (a runtime, Ctrl-C tied to the
//!   judges, the work raced against cancellation) and the one way a session ends: stopped
//!   resumably, or failed by one rule for what its directory keeps.
//! - [`units`]: the one loop — units in, bounded concurrency, results journaled in input
//!   order, nothing new started once stopping; [`questions`]: a run directory worked one
//!   question at a time on it (`rank`, `reference`, `testset`, `pipeline`'s stages).
//! - [`score`]: scoring samples with metrics over that loop (`eval`, `judge-check`);
//!   [`budget`]: the contexts scored under the judge's window; [`results`]: results
//!   journals read back line by line, and their summary.
//! - [`rubrics`]: which rubric files a run reads, and the run's
//!   [`MetricCatalogue`](rageval_metrics::MetricCatalogue) they make (never process-wide).
//! - [`plan`]: `--dry-run` estimates of every stage, without a request or a file;
//!   [`forecast`]: before a run that asks an in-process GGUF model, the time it will take.
//! - [`batch`]: batch mode — passes whose judge requests go out as batch jobs or files;
//!   [`shard`]: `eval --shard i/n`.
//! - [`reports`]: a finished run's human files and gate.
//! - [`observe`]: [`Event`](observe::Event)s for the caller to show (notes, stages,
//!   progress); [`ended`]: how a command ends when no error stops it; [`error`]: the crate's
//!   errors; [`words`]: counts in words for the lines people read.

pub mod batch;
pub mod budget;
pub mod cells;
pub mod ended;
pub mod error;
pub mod files;
pub mod forecast;
pub mod identity;
pub mod judges;
pub mod observe;
pub mod plan;
pub mod questions;
pub mod reports;
pub mod results;
pub mod resume;
pub mod rubrics;
pub mod score;
pub mod session;
pub mod shard;
pub mod shell;
pub mod units;
pub mod words;
