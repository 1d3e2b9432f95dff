//! A run of rageval: every judged command — `eval`, `judge-check`, `rank`, `reference`,
//! `pipeline`, and `collect`'s baseline answers — runs, stops, resumes, shows progress and
//! fails the same way because it runs here.
//!
//! - [`judges`]: who judges ([`JudgeOptions`] → [`JudgeSetup`]: endpoint, local GGUF,
//!   offline routing), and [`Stop`], why a run must stop (cancel, a cap, a judge halted as
//!   unavailable).
//! - [`identity`]: [`RunIdentity`], what makes two sessions the same run (typed: data,
//!   metrics, settings, judge kind, model, endpoints, GGUF hash, prompt versions, labels).
//! - [`resume`]: a run directory started or resumed, journals compacted; [`cells`]: the
//!   compact set of finished cells a resumed or multi-pass run keeps.
//! - [`session`]: each session's judge accounts in the manifest, and the footer line.
//! - [`units`]: the one loop — units in, bounded concurrency, results journaled in input
//!   order, nothing new started once stopping.
//! - [`score`]: scoring samples with metrics over that loop (`eval`, `judge-check`);
//!   [`results`]: results journals read back line by line, and their summary.
//! - [`rubrics`]: which rubric files a run reads, and the run's
//!   [`MetricCatalogue`](rageval_metrics::MetricCatalogue) they make (never process-wide).
//! - [`plan`]: `--dry-run` estimates of every stage, without a request or a file.
//! - [`observe`]: [`Event`]s for the caller to show (notes, stages, progress).
//! - [`eval`], [`judge_check`], [`rank`], [`reference`](mod@reference), [`pipeline`],
//!   [`testset`]: the commands.
//! - [`forecast`]: before a run that asks an in-process GGUF model, its measured speed and
//!   the time the run will take.
//! - [`calibrate`]: human labels on some samples and the judge's scores on all turned into
//!   a calibrated mean (PPI++) with its interval.
//! - [`shard`]: `eval --shard i/n`; [`merge`]: shards joined into one run.
//! - [`watch`]: `eval --watch` — a growing source polled into one rolling run: new samples
//!   sampled by id, scored by `eval`, cost caps per hour and day, alerts when a metric's
//!   latest window drops below its baseline.
//! - [`batch`]: batch mode — passes whose judge requests go out as batch jobs or files.
//! - [`reports`]: a finished run's human files and gate.
//! - [`ended`]: [`Ended`], how a command ends when no error stops it.
//! - [`words`]: counts in words (`1 question`, `3 questions`) for the lines people read.
//!
//! Rules every command keeps: a judge that fails is never a finding (cells or questions it
//! did not answer are held back, not recorded); every judged path can be dry-run, capped,
//! cancelled and resumed; a stopped run's directory says it is unfinished. This crate never
//! prints and never exits: it returns [`Ended`] or a [`RunError`] and emits [`Event`]s;
//! the binary chooses the words' place and the exit codes.

pub mod batch;
pub mod budget;
pub mod calibrate;
pub mod cells;
pub mod ended;
pub mod error;
pub mod eval;
pub mod forecast;
pub mod identity;
pub mod judge_check;
pub mod judges;
pub mod merge;
pub mod observe;
pub mod pipeline;
pub mod plan;
pub mod rank;
pub mod reference;
pub mod reports;
pub mod results;
pub mod resume;
pub mod rubrics;
pub mod score;
pub mod session;
pub mod shard;
mod shell;
pub mod testset;
pub mod units;
pub mod watch;
pub mod words;

pub use ended::{Ended, Stopped};
pub use error::RunError;
pub use identity::{JudgeIdentity, RunIdentity};
pub use judges::{JudgeOptions, JudgeSetup, LocalJudge, Stop};
pub use observe::{Event, Observer, Progress};
pub use plan::Estimate;

/// Says, before a run, how long the in-process GGUF model of `setup` will take over the
/// plan `estimate` makes (nothing when no GGUF model answers, or the plan asks it nothing).
pub(crate) fn forecast_gguf(
    setup: &JudgeSetup,
    estimate: impl FnOnce() -> error::Result<Estimate>,
    observer: &dyn Observer,
) -> error::Result<()> {
    if setup.gguf.is_none() || setup.chat.is_none() {
        return Ok(());
    }
    let estimate = estimate()?;
    if estimate.total().tally.calls == 0 {
        return Ok(());
    }
    if let Some(speed) = forecast::measure(setup) {
        observer.note(forecast::note(&speed, &estimate));
    }
    Ok(())
}

/// Writes a run file whole or not at all ([`rageval_core::files`]); the error names it.
pub(crate) fn write_atomically(
    path: &std::path::Path,
    bytes: impl AsRef<[u8]>,
) -> error::Result<()> {
    rageval_core::files::write_atomically(path, bytes.as_ref())
        .map_err(error::RunError::write(path))
}

/// A multi-threaded runtime for one command's judge calls.
pub fn runtime() -> error::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(error::RunError::Runtime)
}
