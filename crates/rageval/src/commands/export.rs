//! The integrations with trace and experiment stores, as commands: `eval
//! phoenix://HOST:PORT/PROJECT` (the project's traces read into the run directory as its
//! dataset), the write-backs an `eval` does when it finishes (`--annotate`, `--otlp-json`,
//! `--otlp-endpoint`, `--mlflow`), and `rageval export`, which does them for a run already
//! written. The work is `rageval-sources`' (reading Phoenix) and `rageval-export`'s
//! (writing); this module says what happened.
//!
//! A write-back that fails never fails the run: the run directory is whole, the failed
//! writes are counted and named on stderr, and `rageval export` sends them again later.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use rageval_export::mlflow::{self, ENV_MLFLOW_TRACKING_TOKEN, MlflowFileSettings, MlflowTarget};
use rageval_export::otlp::{self, OtlpEndpoint};
use rageval_export::{ExportRun, Writes, phoenix};
use rageval_judge::ApiKey;
use rageval_run::commands::eval::EvalOptions;
use rageval_run::engine::words::counted;
use rageval_sources::phoenix::{ENV_PHOENIX_API_KEY, SPANS_FILE, SourceRecord};
use rageval_sources::rest::DEFAULT_REST_TIMEOUT;
use rageval_sources::{PhoenixClient, PhoenixLocation, PhoenixQuery};

use super::Exit;
use super::sources::runtime;
use crate::cli::{
    EvalArgs, ExportArgs, ExportMlflowArgs, ExportOtlpArgs, ExportPhoenixArgs, ExportTarget,
    OtlpArgs, WriteBackArgs,
};
use crate::ui::Ui;

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

/// When `eval`'s dataset names a Phoenix project: reads its traces into the run directory
/// (a temporary file for a dry run, which writes nothing), points `options` at them and
/// returns where they came from. Refuses the source flags for a file dataset.
pub fn read_phoenix_source(
    args: &EvalArgs,
    options: &mut EvalOptions,
    ui: &Ui,
) -> anyhow::Result<Option<(SourceRecord, Option<TempSpans>)>> {
    let data = args.data.to_string_lossy();
    let source = &args.trace_source;
    if !PhoenixLocation::is_location(&data) {
        if source.sample.is_some()
            || source.since.is_some()
            || source.until.is_some()
            || !source.filters.is_empty()
        {
            bail!(
                "--sample, --since, --until and --trace-filter choose the traces of a Phoenix \
                 source (phoenix://HOST:PORT/PROJECT) or, --sample, of a watched one (--watch)"
            );
        }
        return Ok(None);
    }
    let location = PhoenixLocation::parse(&data)?;
    let query = PhoenixQuery {
        api_key: api_key(ENV_PHOENIX_API_KEY),
        start: source.since.clone(),
        end: source.until.clone(),
        filters: source.filters.clone(),
        sample: source
            .sample
            .unwrap_or(rageval_core::sampling::SampleRate::ALL),
        location,
    };
    let client = PhoenixClient::new(
        &query.location.url,
        query.api_key.clone(),
        DEFAULT_REST_TIMEOUT,
    )?;
    let spans = runtime()?.block_on(client.read(&query))?;
    if spans.traces_kept == 0 {
        bail!(
            "project `{}` at {} has no traces to score ({} in the window and filters, none of \
             them in the sample)",
            query.location.project,
            client.url(),
            spans.traces_seen
        );
    }
    ui.note(&format!(
        "read {} from Phoenix at {}, project {}{}",
        counted(spans.traces_kept, "traces"),
        client.url(),
        query.location.project,
        if spans.traces_kept < spans.traces_seen {
            format!(
                " ({} of {} in the sample)",
                spans.traces_kept, spans.traces_seen
            )
        } else {
            String::new()
        }
    ));
    let out = options
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("runs").join(&query.location.project));
    let (path, temporary) = if args.run_dir.dry_run {
        let temp = TempSpans::new();
        (temp.0.clone(), Some(temp))
    } else {
        std::fs::create_dir_all(&out)
            .with_context(|| format!("cannot create {}", out.display()))?;
        (out.join(SPANS_FILE), None)
    };
    spans.write(&path)?;
    let record = query.record();
    if temporary.is_none() {
        record.write(&out)?;
    }
    options.data = path;
    options.format = Some(rageval_core::dataset::Format::OpenInference);
    options.out = Some(out);
    Ok(Some((record, temporary)))
}

/// A dry run's spans, removed when dropped.
pub struct TempSpans(PathBuf);

impl TempSpans {
    fn new() -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        TempSpans(std::env::temp_dir().join(format!(
            "rageval-phoenix-{}-{nanos}.jsonl",
            std::process::id()
        )))
    }
}

impl Drop for TempSpans {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

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

fn warn_failed(writes: &Writes, items: &str, run_dir: &Path, target: &str, ui: &Ui) {
    ui.warn(&format!(
        "warning: {} {items} not written ({}); the run is whole: `rageval export {target} {}` writes them later",
        writes.failed,
        writes.errors.join("; "),
        run_dir.display()
    ));
}

fn warn_error(error: &anyhow::Error, items: &str, run_dir: &Path, target: &str, ui: &Ui) {
    let mut text = format!("warning: {items} not written: {error}");
    for cause in error.chain().skip(1) {
        text.push_str(&format!(": {cause}"));
    }
    ui.warn(&text);
    if let Some(hint) = super::hint_for(error) {
        ui.warn(&format!("hint: {hint}"));
    }
    ui.warn(&format!(
        "the run is whole: `rageval export {target} {}` writes them later",
        run_dir.display()
    ));
}
