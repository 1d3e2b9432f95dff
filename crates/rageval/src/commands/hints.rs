//! The hints the binary prints under an error whose fix is known: each names the flag, file
//! or command that fixes it. Only the fronts choose words like these; the libraries' errors
//! say what went wrong, not what to type.

use super::{disk_full, features, is_disk_full};

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
