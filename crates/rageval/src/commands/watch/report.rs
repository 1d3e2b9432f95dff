//! Where a watch's events go: the health line and warnings on stderr, alerts, recoveries
//! and cost caps as JSON to the webhook (a POST, retried) and to the alert command (on its
//! stdin). A webhook or command that fails is a warning, never the watch's end.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use rageval_run::commands::watch::alerts::Reading;
use rageval_run::commands::watch::{Health, WatchEvent, WatchReport};
use rageval_sources::rest::{Body, DEFAULT_REST_TIMEOUT, Method};
use rageval_sources::{RestAuth, RestClient};
use serde_json::{Value, json};

use crate::commands::sources::runtime;
use crate::ui::Ui;

/// A client of the alert webhook.
pub(super) fn webhook(url: &str) -> anyhow::Result<RestClient> {
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
pub(super) struct Reporter<'a> {
    pub(super) ui: &'a Ui,
    pub(super) run: PathBuf,
    pub(super) webhook: Option<RestClient>,
    pub(super) command: Option<String>,
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
