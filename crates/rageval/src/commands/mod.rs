//! One function per command: `run(args, …) -> Result<ExitCode>`.
//!
//! Exit codes: 0 success; 2 a usage or input error (bad flags, bad data, a run directory in
//! the way); 1 a quality gate (`--fail-under`) that failed; 130 an `eval` or `judge-check`
//! stopped by Ctrl-C (resumable).

pub mod collect;
pub mod compare;
pub mod eval;
pub mod index;
pub mod judge_check;
pub mod metrics;
pub mod rank;
pub mod report;
pub mod search;
pub mod serve;
mod sources;
pub mod trec;

use std::process::ExitCode;

use crate::cli::{Cli, Command};

/// Exit code of every error: bad usage, bad input, or a failure to write.
pub const EXIT_ERROR: u8 = 2;
/// Exit code of a run whose quality gate (`--fail-under`) failed.
pub const EXIT_GATE_FAILED: u8 = 1;

pub fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    let mut stdout = std::io::stdout().lock();
    match cli.command {
        Command::Eval(args) => eval::run(&args, &mut stdout),
        Command::Metrics(args) => metrics::run(&args, &mut stdout),
        Command::Trec(args) => trec::run(&args, &mut stdout),
        Command::Report(args) => report::run(&args, &mut stdout),
        Command::Compare(args) => compare::run(&args, &mut stdout),
        Command::Serve(args) => serve::run(&args),
        Command::Index(args) => index::run(&args, &mut stdout),
        Command::Search(args) => search::run(&args, &mut stdout),
        Command::Collect(args) => collect::run(&args, &mut stdout),
        Command::JudgeCheck(args) => judge_check::run(&args, &mut stdout),
        Command::Rank(args) => rank::run(&args, &mut stdout),
        Command::Reference(args) => rank::reference::run(&args, &mut stdout),
        Command::Pipeline(args) => rank::pipeline::run(args, &mut stdout),
    }
}

/// A hint for errors whose fix is known.
pub fn hint_for(error: &anyhow::Error) -> Option<String> {
    for cause in error.chain() {
        if let Some(hint) = cause
            .downcast_ref::<rageval_sources::SourceError>()
            .and_then(sources_hint)
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
        if cause.downcast_ref::<eval::ResumeRefused>().is_some() {
            return Some("pass --overwrite to start over, or --out with a new directory".into());
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
