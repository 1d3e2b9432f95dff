//! `eval phoenix://HOST:PORT/PROJECT`: the project's traces read into the run directory as
//! the run's dataset.

use std::path::PathBuf;

use anyhow::{Context as _, bail};
use rageval_run::commands::eval::EvalOptions;
use rageval_run::engine::words::counted;
use rageval_sources::phoenix::{ENV_PHOENIX_API_KEY, SPANS_FILE, SourceRecord};
use rageval_sources::rest::DEFAULT_REST_TIMEOUT;
use rageval_sources::{PhoenixClient, PhoenixLocation, PhoenixQuery};

use super::api_key;
use crate::cli::EvalArgs;
use crate::commands::sources::runtime;
use crate::ui::Ui;

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
