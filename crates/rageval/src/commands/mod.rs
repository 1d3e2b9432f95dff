//! One function per command: `run(args, ui, out) -> Result<Exit>`. A command says how it
//! ended ([`Exit`]); `main` alone turns that into the process's exit code.

pub mod cache;
pub mod calibrate;
pub mod collect;
pub mod compare;
mod disk_full;
pub mod eval;
pub mod export;
mod features;
pub use disk_full::is_disk_full;
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
        Command::Compare(args) => Exit::of_code(compare::run(&args, out)?),
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

/// A hint for errors whose fix is known.
pub fn hint_for(error: &anyhow::Error) -> Option<String> {
    use rageval_run::RunError;
    if is_disk_full(error) {
        return Some(disk_full::HINT.into());
    }
    for cause in error.chain() {
        // `RunError` wraps other crates' errors transparently: look inside.
        let cause: &(dyn std::error::Error + 'static) = match cause.downcast_ref::<RunError>() {
            Some(RunError::Report(inner)) => inner,
            Some(RunError::Metric(inner)) => inner,
            Some(RunError::ResumeRefused(inner)) => inner,
            Some(RunError::MergeRefused(inner)) => inner,
            Some(RunError::Dataset(inner)) => inner,
            _ => cause,
        };
        if let Some(hint) = cause
            .downcast_ref::<rageval_sources::SourceError>()
            .and_then(sources_hint)
        {
            return Some(hint);
        }
        if let Some(hint) = cause
            .downcast_ref::<rageval_export::ExportError>()
            .and_then(rageval_export::ExportError::hint)
        {
            return Some(hint);
        }
        if let Some(rageval_metrics::MetricError::Unknown { .. }) =
            cause.downcast_ref::<rageval_metrics::MetricError>()
        {
            return Some("`rageval metrics` lists every metric".into());
        }
        if let Some(rageval_report::ReportError::RunExists { .. }) =
            cause.downcast_ref::<rageval_report::ReportError>()
        {
            return Some("pass --overwrite, or --out with a new directory".into());
        }
        if let Some(rageval_report::ReportError::RunLocked { .. }) =
            cause.downcast_ref::<rageval_report::ReportError>()
        {
            return Some(
                "wait for the other process to end (or stop it: it resumes later), or give \
                 --out a new directory"
                    .into(),
            );
        }
        if cause
            .downcast_ref::<rageval_run::commands::merge::MergeRefused>()
            .is_some()
        {
            return Some(
                "give every shard's run directory once (`eval --shard i/n` of the same command \
                 for i = 1..n, each finished)"
                    .into(),
            );
        }
        if let Some(RunError::Batch { .. }) = cause.downcast_ref::<RunError>() {
            return Some(
                "the batch jobs started so far are journaled in the run directory: run the same \
                 command again to resume them"
                    .into(),
            );
        }
        if cause
            .downcast_ref::<rageval_run::engine::resume::ResumeRefused>()
            .is_some()
        {
            return Some("pass --overwrite to start over, or --out with a new directory".into());
        }
        if let Some(rageval_judge::JudgeError::CacheRefused { .. }) =
            cause.downcast_ref::<rageval_judge::JudgeError>()
        {
            return Some(
                "the file was left as it is: pass --cache with another file (or --no-cache); \
                 to start a new cache there, move this one away or delete it"
                    .into(),
            );
        }
        if let Some(rageval_judge::JudgeError::NotBuilt { feature, .. }) =
            cause.downcast_ref::<rageval_judge::JudgeError>()
        {
            return Some(features::build_with(feature));
        }
        if let Some(RunError::NoWritingModel { .. }) = cause.downcast_ref::<RunError>() {
            return Some(format!(
                "name a judge model that writes: --judge-base-url URL --judge-model NAME (or \
                 {} and {}, or [judge] in rageval.toml), or --judge gguf:PATH for a local GGUF \
                 chat model you choose; the embedded 135M model is not used for this unasked",
                rageval_judge::settings::ENV_JUDGE_BASE_URL,
                rageval_judge::settings::ENV_JUDGE_MODEL
            ));
        }
        if let Some(rageval_report::ReportError::StageRun { .. }) =
            cause.downcast_ref::<rageval_report::ReportError>()
        {
            return Some(
                "`compare` and `report` take `eval` runs (a pipeline's is its `eval/`); \
                 `rageval serve` lists rank runs with their retriever-versus-judge figures"
                    .into(),
            );
        }
        if let Some(rageval_report::ReportError::NotARun { .. }) =
            cause.downcast_ref::<rageval_report::ReportError>()
        {
            return Some(
                "give the directory `rageval eval --out` wrote, or a `rageval pipeline` folder \
                 (its `eval/` run is used)"
                    .into(),
            );
        }
        if let Some(rageval_report::ReportError::Incomplete { .. }) =
            cause.downcast_ref::<rageval_report::ReportError>()
        {
            return Some(
                "run the command that wrote it (`rageval eval`, `rageval judge-check`) into it \
                 again to finish the run"
                    .into(),
            );
        }
    }
    None
}

/// Hints for the sources' errors whose fix is known.
fn sources_hint(error: &rageval_sources::SourceError) -> Option<String> {
    use rageval_sources::SourceError;
    use rageval_sources::config::{ENV_ES_API_KEY, ENV_ES_PASSWORD, ENV_ES_USER};
    Some(match error {
        SourceError::Unauthorized { .. } => format!(
            "check the credentials: {ENV_ES_USER} and {ENV_ES_PASSWORD}, or {ENV_ES_API_KEY}, for \
             Elasticsearch; `{{{{env.NAME}}}}` header values for the service"
        ),
        SourceError::MissingIndex { .. } => {
            "check [elasticsearch] index; `GET /_cat/indices` lists the indices".into()
        }
        SourceError::Exists { .. } => "pass --overwrite to replace it".into(),
        SourceError::MissingVariable { .. } => {
            "each column of the questions file that is not a sample field fills the placeholder \
             of the same name: add the column, or change the template"
                .into()
        }
        _ => return error.hint(),
    })
}
