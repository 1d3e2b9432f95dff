//! `eval --watch`: the source a watch polls (a growing file read by `rageval-core`'s
//! readers, or a Phoenix project read by `rageval-sources`), and where its events go — the
//! health line and warnings on stderr, alerts and cost caps to a webhook (JSON POST) and a
//! command. The loop itself is `rageval_run::commands::watch`'s.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use anyhow::bail;
use rageval_core::Sample;
use rageval_core::dataset::{self, Format, ReadOptions};
use rageval_core::sampling::SampleRate;
use rageval_run::commands::eval::EvalOptions;
use rageval_run::commands::watch::alerts::{AlertRule, Reading};
use rageval_run::commands::watch::{
    Health, WatchEvent, WatchOptions, WatchReport, WatchSource, Watched, watch,
};
use rageval_sources::phoenix::ENV_PHOENIX_API_KEY;
use rageval_sources::rest::{Body, DEFAULT_REST_TIMEOUT, Method};
use rageval_sources::{PhoenixClient, PhoenixLocation, PhoenixQuery, RestAuth, RestClient};
use serde_json::{Value, json};

use super::Exit;
use super::export::api_key;
use super::sources::runtime;
use crate::cli::EvalArgs;
use crate::ui::Ui;

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

/// A client of the alert webhook.
fn webhook(url: &str) -> anyhow::Result<RestClient> {
    Ok(RestClient::new(
        url,
        RestAuth::None,
        DEFAULT_REST_TIMEOUT,
        rageval_judge::RetryPolicy {
            max_attempts: 3,
            ..rageval_judge::RetryPolicy::default()
        },
    )?)
}

/// Where the watch's events go.
struct Reporter<'a> {
    ui: &'a Ui,
    run: PathBuf,
    webhook: Option<RestClient>,
    command: Option<String>,
}

impl Reporter<'_> {
    /// Sends an alert's JSON to the webhook and the command; their failures are warnings.
    fn deliver(&self, kind: &str, metric: Option<&str>, payload: Value) {
        if let Some(client) = &self.webhook {
            let sent = runtime().map_err(|e| e.to_string()).and_then(|runtime| {
                runtime
                    .block_on(client.send(Method::POST, "", &[], Body::Json(&payload)))
                    .map_err(|e| rageval_report::error_chain(&e))
            });
            if let Err(error) = sent {
                self.ui
                    .warn(&format!("warning: the alert webhook failed: {error}"));
            }
        }
        if let Some(command) = &self.command {
            let ran = Command::new("sh")
                .args(["-c", command])
                .env("RAGEVAL_ALERT_KIND", kind)
                .env("RAGEVAL_ALERT_METRIC", metric.unwrap_or(""))
                .stdin(Stdio::piped())
                .spawn()
                .and_then(|mut child| {
                    if let Some(mut stdin) = child.stdin.take() {
                        let _ = stdin.write_all(payload.to_string().as_bytes());
                    }
                    child.wait()
                });
            match ran {
                Ok(status) if status.success() => {}
                Ok(status) => self
                    .ui
                    .warn(&format!("warning: the alert command exited with {status}")),
                Err(error) => self
                    .ui
                    .warn(&format!("warning: the alert command did not run: {error}")),
            }
        }
    }

    fn reading_json(&self, kind: &str, reading: &Reading) -> Value {
        json!({
            "kind": kind,
            "run": self.run.display().to_string(),
            "metric": reading.metric,
            "baseline": reading.baseline,
            "latest": reading.latest,
            "difference": reading.difference,
            "ci95": reading.ci95,
        })
    }
}

impl WatchReport for Reporter<'_> {
    fn report(&self, event: WatchEvent<'_>) {
        match event {
            WatchEvent::Health(health) => self.ui.note(&health_line(health)),
            WatchEvent::Capped {
                period,
                limit_usd,
                spent_usd,
                until,
                waiting,
            } => {
                self.ui.warn(&format!(
                    "warning: the judge's cost cap of ${limit_usd} per {period} is reached \
                     (${spent_usd:.6} spent): scoring stops until {}, {waiting} chosen samples wait",
                    clock(until)
                ));
                self.deliver(
                    "cost_cap",
                    None,
                    json!({
                        "kind": "cost_cap",
                        "run": self.run.display().to_string(),
                        "period": period,
                        "limit_usd": limit_usd,
                        "spent_usd": spent_usd,
                        "until": until,
                        "waiting": waiting,
                    }),
                );
            }
            WatchEvent::Alert(reading) => {
                self.ui.warn(&format!(
                    "alert: {} fell from {:.3} (samples {}…{}, {} scores) to {:.3} (samples {}…{}, \
                     {} scores): difference {:+.3}, 95% interval [{:+.3}, {:+.3}]",
                    reading.metric,
                    reading.baseline.mean,
                    reading.baseline.first,
                    reading.baseline.last,
                    reading.baseline.n,
                    reading.latest.mean,
                    reading.latest.first,
                    reading.latest.last,
                    reading.latest.n,
                    reading.difference,
                    reading.ci95[0],
                    reading.ci95[1]
                ));
                self.deliver(
                    "alert",
                    Some(&reading.metric),
                    self.reading_json("alert", reading),
                );
            }
            WatchEvent::Recovered(reading) => {
                self.ui.note(&format!(
                    "{} is no longer below its baseline (latest mean {:.3}, baseline {:.3})",
                    reading.metric, reading.latest.mean, reading.baseline.mean
                ));
                self.deliver(
                    "recovered",
                    Some(&reading.metric),
                    self.reading_json("recovered", reading),
                );
            }
            WatchEvent::Stopped(message) => self
                .ui
                .warn(&format!("warning: this poll's scoring stopped: {message}")),
            WatchEvent::SourceFailed(message) => self
                .ui
                .warn(&format!("warning: the source could not be read: {message}")),
        }
    }
}

/// The health line: last poll, traces seen, scored, skipped, judge failures.
fn health_line(health: &Health) -> String {
    let mut line = format!(
        "watch: poll {} at {}: {} seen, {} chosen, {} scored, {} skipped by the sample, {} \
         waiting, {} judge failures",
        health.polls,
        health.last_poll,
        health.seen,
        health.chosen,
        health.scored,
        health.skipped,
        health.chosen.saturating_sub(health.scored),
        health.judge_failures
    );
    if let Some(until) = health.paused_until {
        line.push_str(&format!(
            "; spending paused by the cost cap until {}",
            clock(until)
        ));
    }
    line
}

/// Unix seconds as UTC `HH:MM:SSZ`.
fn clock(seconds: u64) -> String {
    let day = seconds % 86_400;
    format!("{:02}:{:02}:{:02}Z", day / 3600, day % 3600 / 60, day % 60)
}
