//! One function per command: `run(args, ui, out) -> Result<Exit>`. A command says how it
//! ended ([`Exit`]); `main` alone turns that into the process's exit code.

pub mod cache;
pub mod calibrate;
pub mod collect;
pub mod compare;
mod compare_confirm;
mod compare_gate;
mod disk_full;
pub mod eval;
pub mod export;
mod features;
mod hints;
pub use disk_full::is_disk_full;
pub use hints::hint_for;
pub mod index;
pub mod judge_check;
pub mod label;
mod label_review;
pub mod merge;
pub mod metrics;
pub mod pairwise;
pub mod rank;
pub mod report;
pub mod search;
pub mod serve;
mod sources;
pub mod testset;
pub mod trec;
mod watch;

use std::path::PathBuf;
use std::process::ExitCode;

use rageval_run::{Ended, Stop, Stopped};

use crate::cli::Command;
use crate::ui::Ui;

/// How a command ended, each with its documented exit code (README, "Exit codes").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: done.
    Success,
    /// 1: a quality gate (`--fail-under`) failed.
    GateFailed,
    /// 2: bad usage, bad input, or a failure to write.
    Error,
    /// 3: a judge cap (`--max-calls`, `--max-cost`) stopped the run; resumable.
    CapReached,
    /// 4: the judge refused or could not answer (unreachable, 401/403/404, an unknown
    /// model, every call failing), or every judged cell failed; resumable.
    JudgeFailed,
    /// 5: batch mode wrote the next stage's judge requests out (`--export-requests`);
    /// resumable with their answers (`--import-responses`).
    RequestsExported,
    /// 74: the machine could not write: the disk (or the quota on it) is full. What was
    /// journaled is kept; the same command resumes once space is freed. 74 is
    /// `EX_IOERR` of sysexits.h.
    DiskFull,
    /// 130: Ctrl-C stopped the run; resumable.
    Interrupted,
    /// 143: SIGTERM (a CI job's cancel, a pod's end) stopped the run; resumable.
    Terminated,
}

impl Exit {
    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::GateFailed => 1,
            Exit::Error => 2,
            Exit::CapReached => 3,
            Exit::JudgeFailed => 4,
            Exit::RequestsExported => 5,
            Exit::DiskFull => 74,
            Exit::Interrupted => 130,
            Exit::Terminated => 143,
        }
    }

    /// The exit of a run stopped for `stop`.
    pub fn of_stop(stop: &Stop) -> Exit {
        match stop {
            Stop::Cancelled => Exit::Interrupted,
            Stop::CapReached(_) => Exit::CapReached,
            Stop::JudgeUnavailable(_) => Exit::JudgeFailed,
            Stop::RequestsExported { .. } => Exit::RequestsExported,
        }
    }

    /// The exit code of commands that still return one, as an exit.
    pub fn of_code(code: ExitCode) -> Exit {
        if code == ExitCode::SUCCESS {
            Exit::Success
        } else if code == ExitCode::from(Exit::GateFailed.code()) {
            Exit::GateFailed
        } else {
            Exit::Error
        }
    }
}

/// A dry run's estimate on stdout, how it was made on stderr.
pub fn estimate(
    estimate: rageval_run::Estimate,
    ui: &Ui,
    out: &mut dyn std::io::Write,
) -> anyhow::Result<Exit> {
    use anyhow::Context as _;
    for method in estimate.methods() {
        ui.note(method);
    }
    out.write_all(estimate.render().as_bytes())
        .context("cannot write to stdout")?;
    Ok(Exit::Success)
}

/// Says how a stopped run stopped, and how to go on; the exit it earns.
pub fn stopped(stopped: &Stopped, ui: &Ui) -> Exit {
    ui.warn(&stopped.footer);
    ui.warn(&stopped.message);
    match Exit::of_stop(&stopped.stop) {
        // The cancel token does not say who tripped it; the signal handler does.
        Exit::Interrupted
            if crate::signals::stop_signal() == Some(crate::signals::StopSignal::Terminate) =>
        {
            Exit::Terminated
        }
        exit => exit,
    }
}

/// The completed value of `ended`, or the exit of its stop (after saying why).
pub fn completed<T>(ended: Ended<T>, ui: &Ui) -> Result<T, Exit> {
    match ended {
        Ended::Complete(done) => Ok(done),
        Ended::Stopped(stop) => Err(stopped(&stop, ui)),
    }
}

/// Runs `command`; `metric_files` (`--metric-file`) are the rubric files of the commands
/// that build metrics (eval, judge-check, pipeline, metrics).
pub fn dispatch(command: Command, metric_files: &[PathBuf], ui: &Ui) -> anyhow::Result<Exit> {
    let mut stdout = std::io::stdout().lock();
    let out = &mut stdout;
    Ok(match command {
        Command::Eval(args) => eval::run(&args, metric_files, ui, out)?,
        Command::Metrics(args) => Exit::of_code(metrics::run(&args, metric_files, out)?),
        Command::Trec(args) => Exit::of_code(trec::run(&args, out)?),
        Command::Report(args) => report::run(&args, ui, out)?,
        Command::Compare(args) => compare::run(&args, metric_files, ui, out)?,
        Command::Serve(args) => Exit::of_code(serve::run(&args)?),
        Command::Index(args) => index::run(&args, ui, out)?,
        Command::Search(args) => search::run(&args, ui, out)?,
        Command::Collect(args) => collect::run(&args, ui, out)?,
        Command::JudgeCheck(args) => judge_check::run(&args, metric_files, ui, out)?,
        Command::Calibrate(args) => calibrate::run(&args, ui, out)?,
        Command::Label(args) => label::run(&args, ui, out)?,
        Command::Rank(args) => rank::run(&args, ui, out)?,
        Command::Pairwise(args) => pairwise::run(&args, metric_files, ui, out)?,
        Command::Reference(args) => rank::reference::run(&args, ui, out)?,
        Command::Testset(args) => testset::run(&args, ui, out)?,
        Command::Pipeline(args) => rank::pipeline::run(*args, metric_files, ui, out)?,
        Command::Merge(args) => merge::run(&args, ui, out)?,
        Command::Cache(args) => cache::run(&args, ui)?,
        Command::Export(args) => export::run(&args, ui, out)?,
    })
}
