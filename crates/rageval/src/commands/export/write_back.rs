//! The write-backs an `eval` does when it finishes (`--annotate`, `--otlp-json`,
//! `--otlp-endpoint`, `--mlflow` or the configuration file's `[mlflow]` table): each one's
//! outcome on stderr, failures as warnings, never the run's error.

use std::path::Path;

use anyhow::{Context as _, bail};
use rageval_export::mlflow::{self, MlflowFileSettings};
use rageval_export::{ExportRun, Writes, otlp};
use rageval_run::commands::eval::EvalOptions;
use rageval_run::engine::words::counted;

use super::{
    annotate, log_mlflow, mlflow_lines, otlp_endpoint, phoenix_url, skipped_text, warn_failed,
};
use crate::cli::WriteBackArgs;
use crate::commands::hint_for;
use crate::commands::sources::runtime;
use crate::ui::Ui;

/// Checks, before anything runs, that the write-backs asked for can be done.
pub fn check_write_back(args: &WriteBackArgs, phoenix_source: bool) -> anyhow::Result<()> {
    if args.annotate && args.phoenix_url.is_none() && !phoenix_source {
        bail!(
            "--annotate writes to the Phoenix the traces came from: give the dataset as \
             phoenix://HOST:PORT/PROJECT, or name the server with --phoenix-url"
        );
    }
    otlp_endpoint(&args.otlp)?;
    Ok(())
}

/// What a dry run says of the write-backs.
pub fn dry_run_notes(args: &WriteBackArgs, ui: &Ui) {
    if args.annotate {
        ui.note("--annotate: one Phoenix span annotation per scored cell would be written once the run is scored (`rageval export phoenix RUN --dry-run` counts them for a run)");
    }
}

/// Where a finished `eval` logs its run: `--mlflow`, else the `[mlflow]` table of the
/// judge's configuration file (the file rubrics are read from too); the experiment likewise.
/// A configuration file that does not read is an error before anything runs.
pub fn mlflow_choice(
    args: &WriteBackArgs,
    options: &EvalOptions,
) -> anyhow::Result<Option<MlflowChoice>> {
    let files =
        rageval_run::engine::rubrics::rubric_files(&[], &options.judge.flags, &crate::judge::env);
    let mut settings = MlflowFileSettings::default();
    if let Some(file) = files.first() {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("cannot read {}", file.display()))?;
        settings = MlflowFileSettings::parse(file, &text)?;
    }
    let Some(tracking_uri) = args.mlflow.clone().or(settings.tracking_uri) else {
        return Ok(None);
    };
    let experiment = args
        .mlflow_experiment
        .clone()
        .or(settings.experiment)
        .unwrap_or_else(|| mlflow::DEFAULT_EXPERIMENT.to_owned());
    Ok(Some(MlflowChoice {
        tracking_uri,
        experiment,
    }))
}

/// The MLflow server and experiment a finished `eval` logs to.
#[derive(Debug, Clone)]
pub struct MlflowChoice {
    pub tracking_uri: String,
    pub experiment: String,
}

/// The write-backs of a finished `eval`: each one's outcome on stderr; failures are
/// warnings, never the run's error.
pub fn write_back(run_dir: &Path, args: &WriteBackArgs, mlflow: Option<&MlflowChoice>, ui: &Ui) {
    let wanted =
        args.annotate || args.otlp_json || args.otlp.otlp_endpoint.is_some() || mlflow.is_some();
    if !wanted {
        return;
    }
    let run = match ExportRun::open(run_dir) {
        Ok(run) => run,
        Err(error) => {
            ui.warn(&format!(
                "warning: cannot read {} to write its scores back: {error}",
                run_dir.display()
            ));
            return;
        }
    };
    if args.otlp_json {
        match otlp::write_file(&run) {
            Ok((path, events)) => ui.note(&format!(
                "wrote {} ({})",
                path.display(),
                counted(events, "gen_ai.evaluation.result events")
            )),
            Err(error) => ui.warn(&format!("warning: {error}")),
        }
    }
    if args.annotate {
        let url = phoenix_url(run_dir, args.phoenix_url.as_deref());
        match url.and_then(|url| Ok((annotate(&run, &url)?, url))) {
            Ok((writes, url)) => note_writes(
                &writes,
                "annotations",
                &format!("Phoenix at {url}"),
                run_dir,
                "phoenix",
                ui,
            ),
            Err(error) => warn_error(&error, "annotations", run_dir, "phoenix", ui),
        }
    }
    if args.otlp.otlp_endpoint.is_some() {
        match otlp_endpoint(&args.otlp).and_then(|endpoint| {
            let endpoint = endpoint.context("no OTLP endpoint")?;
            Ok((
                runtime()?.block_on(otlp::push(&run, &endpoint)),
                endpoint.url(),
            ))
        }) {
            Ok((writes, url)) => note_writes(&writes, "events", &url, run_dir, "otlp", ui),
            Err(error) => warn_error(&error, "events", run_dir, "otlp", ui),
        }
    }
    if let Some(choice) = mlflow {
        match log_mlflow(run_dir, &choice.tracking_uri, &choice.experiment) {
            Ok(logged) => {
                for line in mlflow_lines(&logged) {
                    ui.note(&line);
                }
                if logged.artifacts.failed > 0 {
                    warn_failed(&logged.artifacts, "artifact uploads", run_dir, "mlflow", ui);
                }
            }
            Err(error) => warn_error(&error, "the MLflow run", run_dir, "mlflow", ui),
        }
    }
}

/// `eval`'s note of a write-back.
fn note_writes(writes: &Writes, items: &str, place: &str, run_dir: &Path, target: &str, ui: &Ui) {
    ui.note(&format!(
        "wrote {} to {place}{}",
        counted(writes.written, items),
        skipped_text(writes)
    ));
    if writes.failed > 0 {
        warn_failed(writes, items, run_dir, target, ui);
    }
}

fn warn_error(error: &anyhow::Error, items: &str, run_dir: &Path, target: &str, ui: &Ui) {
    let mut text = format!("warning: {items} not written: {error}");
    for cause in error.chain().skip(1) {
        text.push_str(&format!(": {cause}"));
    }
    ui.warn(&text);
    if let Some(hint) = hint_for(error) {
        ui.warn(&format!("hint: {hint}"));
    }
    ui.warn(&format!(
        "the run is whole: `rageval export {target} {}` writes them later",
        run_dir.display()
    ));
}
