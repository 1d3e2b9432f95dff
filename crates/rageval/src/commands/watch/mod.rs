//! `eval --watch`: the source a watch polls (a growing file read by `rageval-core`'s
//! readers, or a Phoenix project read by `rageval-sources`), and where its events go
//! ([`report`]: the health line and warnings on stderr, alerts and cost caps to a webhook
//! and a command). The loop itself is `rageval_run::commands::watch`'s.

mod report;

use std::path::PathBuf;

use anyhow::bail;
use rageval_core::Sample;
use rageval_core::dataset::{self, Format, ReadOptions};
use rageval_core::sampling::SampleRate;
use rageval_run::commands::eval::EvalOptions;
use rageval_run::commands::watch::alerts::AlertRule;
use rageval_run::commands::watch::{WatchOptions, WatchSource, Watched, watch};
use rageval_sources::phoenix::ENV_PHOENIX_API_KEY;
use rageval_sources::rest::DEFAULT_REST_TIMEOUT;
use rageval_sources::{PhoenixClient, PhoenixLocation, PhoenixQuery};

use super::Exit;
use super::export::api_key;
use super::sources::runtime;
use crate::cli::EvalArgs;
use crate::ui::Ui;
use report::{Reporter, webhook};

/// Watches `args.data` into the rolling run of `options`.
pub fn run(args: &EvalArgs, mut options: EvalOptions, ui: &Ui) -> anyhow::Result<Exit> {
    let write_back = &args.write_back;
    if write_back.annotate
        || write_back.otlp_json
        || write_back.otlp.otlp_endpoint.is_some()
        || write_back.mlflow.is_some()
    {
        bail!(
            "--watch writes its scores to the rolling run only: send them with `rageval export \
             phoenix|otlp|mlflow RUN` (annotations and events are updated, never duplicated)"
        );
    }
    let data = args.data.to_string_lossy().into_owned();
    let sample = args.trace_source.sample.unwrap_or(SampleRate::ALL);
    let mut source: Box<dyn WatchSource> = if PhoenixLocation::is_location(&data) {
        let location = PhoenixLocation::parse(&data)?;
        options
            .out
            .get_or_insert_with(|| PathBuf::from("runs").join(&location.project));
        let query = PhoenixQuery {
            api_key: api_key(ENV_PHOENIX_API_KEY),
            start: args.trace_source.since.clone(),
            end: args.trace_source.until.clone(),
            filters: args.trace_source.filters.clone(),
            sample,
            location,
        };
        let dir = options.run_path();
        std::fs::create_dir_all(&dir)?;
        query.record().write(&dir)?;
        Box::new(PhoenixSource {
            client: PhoenixClient::new(
                &query.location.url,
                query.api_key.clone(),
                DEFAULT_REST_TIMEOUT,
            )?,
            spans: dir.join(rageval_sources::phoenix::SPANS_FILE),
            query,
        })
    } else {
        Box::new(FileSource {
            path: options.data.clone(),
            read: options.read_options()?,
        })
    };
    let watch_args = &args.watch;
    let watch_options = WatchOptions {
        interval: watch_args.interval,
        sample,
        max_cost_per_hour: watch_args.max_cost_per_hour,
        max_cost_per_day: watch_args.max_cost_per_day,
        alerts: AlertRule {
            baseline: watch_args.baseline_window,
            window: watch_args.alert_window,
            level: 0.95,
            resamples: options.bootstrap_resamples,
            seed: options.seed,
        },
        max_polls: watch_args.max_polls,
        eval: options,
    };
    let reporter = Reporter {
        ui,
        run: watch_options.eval.run_path(),
        webhook: match &watch_args.alert_webhook {
            Some(url) => Some(webhook(url)?),
            None => None,
        },
        command: watch_args.alert_command.clone(),
    };
    ui.note(&format!(
        "watching {data} every {:?} into {} (Ctrl-C stops; running the same command again resumes)",
        watch_options.interval,
        reporter.run.display()
    ));
    let cancel = crate::signals::cancel_on_ctrl_c();
    Ok(
        match watch(
            &watch_options,
            source.as_mut(),
            &reporter,
            &crate::judge::env,
            &cancel,
        )? {
            Watched::Interrupted => Exit::Interrupted,
            Watched::Finished => Exit::Success,
        },
    )
}

/// A dataset or trace export that grows: read whole at each poll, up to its first record
/// that does not read (a line still being written).
struct FileSource {
    path: PathBuf,
    read: ReadOptions,
}

impl WatchSource for FileSource {
    fn read(&mut self) -> Result<Vec<Sample>, String> {
        let reader = dataset::open(&self.path, &self.read).map_err(|e| e.to_string())?;
        Ok(reader.map_while(Result::ok).collect())
    }
}

/// A Phoenix project, read at each poll (the sample applied there too, so traces left out
/// are not fetched).
struct PhoenixSource {
    client: PhoenixClient,
    query: PhoenixQuery,
    /// Where the spans of the last read are put to be read as samples.
    spans: PathBuf,
}

impl WatchSource for PhoenixSource {
    fn read(&mut self) -> Result<Vec<Sample>, String> {
        let error = |e: &dyn std::error::Error| rageval_report::error_chain(e);
        let runtime = runtime().map_err(|e| e.to_string())?;
        let spans = runtime
            .block_on(self.client.read(&self.query))
            .map_err(|e| error(&e))?;
        if spans.spans.is_empty() {
            return Ok(Vec::new());
        }
        spans.write(&self.spans).map_err(|e| error(&e))?;
        let options = ReadOptions {
            format: Some(Format::OpenInference),
            ..ReadOptions::default()
        };
        let reader = dataset::open(&self.spans, &options).map_err(|e| error(&e))?;
        Ok(reader.filter_map(Result::ok).collect())
    }
}
