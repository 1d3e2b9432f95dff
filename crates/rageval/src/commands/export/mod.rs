//! The integrations with trace and experiment stores, as commands: `eval
//! phoenix://HOST:PORT/PROJECT` (the project's traces read into the run directory as its
//! dataset), the write-backs an `eval` does when it finishes (`--annotate`, `--otlp-json`,
//! `--otlp-endpoint`, `--mlflow`), and `rageval export`, which does them for a run already
//! written. The work is `rageval-sources`' (reading Phoenix) and `rageval-export`'s
//! (writing); this module says what happened.
//!
//! A write-back that fails never fails the run: the run directory is whole, the failed
//! writes are counted and named on stderr, and `rageval export` sends them again later.

mod source;
mod write_back;

use std::io::Write;
use std::path::Path;

use anyhow::{Context as _, bail};
use rageval_export::mlflow::{self, ENV_MLFLOW_TRACKING_TOKEN, MlflowTarget};
use rageval_export::otlp::{self, OtlpEndpoint};
use rageval_export::{ExportRun, Writes, phoenix};
use rageval_judge::ApiKey;
use rageval_run::engine::words::counted;
use rageval_sources::PhoenixClient;
use rageval_sources::phoenix::{ENV_PHOENIX_API_KEY, SourceRecord};
use rageval_sources::rest::DEFAULT_REST_TIMEOUT;

use super::Exit;
use super::sources::runtime;
use crate::cli::{
    ExportArgs, ExportMlflowArgs, ExportOtlpArgs, ExportPhoenixArgs, ExportTarget, OtlpArgs,
};
use crate::ui::Ui;

pub use source::read_phoenix_source;
pub use write_back::{check_write_back, dry_run_notes, mlflow_choice, write_back};

/// `rageval export`.
pub fn run(args: &ExportArgs, ui: &Ui, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let writes = match &args.target {
        ExportTarget::Phoenix(args) => to_phoenix(args, ui, out)?,
        ExportTarget::Otlp(args) => to_otlp(args, ui, out)?,
        ExportTarget::Mlflow(args) => to_mlflow(args, ui, out)?,
    };
    Ok(if writes.failed > 0 {
        Exit::Error
    } else {
        Exit::Success
    })
}

fn to_phoenix(args: &ExportPhoenixArgs, ui: &Ui, out: &mut dyn Write) -> anyhow::Result<Writes> {
    let run = ExportRun::open(&args.run)?;
    let url = phoenix_url(&args.run, args.phoenix_url.as_deref())?;
    if args.dry_run {
        let planned = phoenix::plan(&run);
        writeln!(
            out,
            "would write {} to Phoenix at {url}{}",
            counted(planned.written, "annotations"),
            skipped_text(&planned)
        )
        .context("cannot write to stdout")?;
        return Ok(Writes::default());
    }
    let writes = annotate(&run, &url)?;
    report(
        &writes,
        "annotations",
        &format!("Phoenix at {url}"),
        &args.run,
        "phoenix",
        ui,
        out,
    )?;
    Ok(writes)
}

fn to_otlp(args: &ExportOtlpArgs, ui: &Ui, out: &mut dyn Write) -> anyhow::Result<Writes> {
    let run = ExportRun::open(&args.run)?;
    let endpoint = otlp_endpoint(&args.otlp)?;
    if endpoint.is_none() || args.file.is_some() {
        let path = args
            .file
            .clone()
            .unwrap_or_else(|| run.path.join(otlp::OTLP_FILE));
        let events = otlp::write_file_to(&run, &path)?;
        writeln!(
            out,
            "wrote {} ({})",
            path.display(),
            counted(events, "gen_ai.evaluation.result events")
        )
        .context("cannot write to stdout")?;
    }
    let Some(endpoint) = endpoint else {
        return Ok(Writes::default());
    };
    let writes = runtime()?.block_on(otlp::push(&run, &endpoint));
    let what = format!(
        "{} ({} {})",
        endpoint.url(),
        endpoint.signal,
        protocol_name(&args.otlp)
    );
    report(&writes, "events", &what, &args.run, "otlp", ui, out)?;
    Ok(writes)
}

fn to_mlflow(args: &ExportMlflowArgs, ui: &Ui, out: &mut dyn Write) -> anyhow::Result<Writes> {
    let logged = log_mlflow(&args.run, &args.mlflow, &args.mlflow_experiment)?;
    for line in mlflow_lines(&logged) {
        writeln!(out, "{line}").context("cannot write to stdout")?;
    }
    if logged.artifacts.failed > 0 {
        warn_failed(
            &logged.artifacts,
            "artifact uploads",
            &args.run,
            "mlflow",
            ui,
        );
    }
    Ok(logged.artifacts)
}

fn annotate(run: &ExportRun, url: &str) -> anyhow::Result<Writes> {
    let client = PhoenixClient::new(url, api_key(ENV_PHOENIX_API_KEY), DEFAULT_REST_TIMEOUT)?;
    Ok(runtime()?.block_on(phoenix::write(run, &client)))
}

fn log_mlflow(run_dir: &Path, url: &str, experiment: &str) -> anyhow::Result<mlflow::Logged> {
    let target = MlflowTarget {
        tracking_uri: url.to_owned(),
        experiment: experiment.to_owned(),
        token: api_key(ENV_MLFLOW_TRACKING_TOKEN),
    };
    Ok(runtime()?.block_on(mlflow::log_run(run_dir, &target))?)
}

fn mlflow_lines(logged: &mlflow::Logged) -> Vec<String> {
    let record = &logged.record;
    let place = format!(
        "MLflow at {}: experiment {}, run {}",
        record.tracking_uri, record.experiment_id, record.run_id
    );
    if !logged.changed {
        return vec![format!(
            "already logged to {place} (its figures have not changed)"
        )];
    }
    vec![format!(
        "{} {place} ({}, {}, {})",
        if logged.existed {
            "updated"
        } else {
            "logged to"
        },
        counted(logged.params, "params"),
        counted(logged.metrics, "metrics"),
        counted(logged.artifacts.written, "artifacts")
    )]
}

/// `compare`'s line naming the MLflow run of each compared run that was logged to one.
pub fn mlflow_runs_line(runs: &[rageval_report::RunData]) -> Option<String> {
    let named: Vec<String> = runs
        .iter()
        .filter_map(|run| {
            let record = mlflow::logged(&run.path)?;
            let version = run
                .manifest
                .version_name
                .clone()
                .unwrap_or_else(|| run.name());
            Some(format!(
                "{version}: {} (experiment {} at {})",
                record.run_id, record.experiment_id, record.tracking_uri
            ))
        })
        .collect();
    (!named.is_empty()).then(|| format!("MLflow runs: {}", named.join("; ")))
}

/// The Phoenix to write to: the one named, else the one the run's traces came from.
fn phoenix_url(run_dir: &Path, named: Option<&str>) -> anyhow::Result<String> {
    if let Some(url) = named {
        return Ok(url.trim_end_matches('/').to_owned());
    }
    match SourceRecord::read(run_dir) {
        Some(record) => Ok(record.url),
        None => bail!(
            "{} was not read from Phoenix: name the server with --phoenix-url",
            run_dir.display()
        ),
    }
}

fn otlp_endpoint(args: &OtlpArgs) -> anyhow::Result<Option<OtlpEndpoint>> {
    let Some(url) = &args.otlp_endpoint else {
        return Ok(None);
    };
    Ok(Some(OtlpEndpoint::new(
        url,
        args.otlp_signal,
        args.otlp_protocol,
        None,
    )?))
}

fn protocol_name(args: &OtlpArgs) -> &'static str {
    match args.otlp_protocol {
        otlp::Protocol::HttpProtobuf => "http/protobuf",
        otlp::Protocol::HttpJson => "http/json",
    }
}

/// A variable's value as a key, when set and not blank.
pub(super) fn api_key(variable: &str) -> Option<ApiKey> {
    std::env::var(variable)
        .ok()
        .filter(|key| !key.trim().is_empty())
        .map(ApiKey::new)
}

fn skipped_text(writes: &Writes) -> String {
    if writes.skipped.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = writes
        .skipped
        .iter()
        .map(|(why, n)| format!("{n} {why}"))
        .collect();
    format!("; left out: {}", parts.join(", "))
}

/// `rageval export`'s lines: what was written on stdout, failures on stderr.
fn report(
    writes: &Writes,
    items: &str,
    place: &str,
    run_dir: &Path,
    target: &str,
    ui: &Ui,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    writeln!(
        out,
        "wrote {} to {place}{}",
        counted(writes.written, items),
        skipped_text(writes)
    )
    .context("cannot write to stdout")?;
    if writes.failed > 0 {
        warn_failed(writes, items, run_dir, target, ui);
    }
    Ok(())
}

fn warn_failed(writes: &Writes, items: &str, run_dir: &Path, target: &str, ui: &Ui) {
    ui.warn(&format!(
        "warning: {} {items} not written ({}); the run is whole: `rageval export {target} {}` writes them later",
        writes.failed,
        writes.errors.join("; "),
        run_dir.display()
    ));
}
