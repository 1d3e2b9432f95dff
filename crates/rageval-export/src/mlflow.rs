//! A finished run logged to an MLflow tracking server through its REST API (`/api/2.0/mlflow`),
//! so the binary needs no Python: an MLflow run in the named experiment (created when
//! missing) with
//! - params: the metrics, the judge, the dataset (path, format, SHA-256), the samples, the
//!   rageval version and the run's version name;
//! - metrics: per metric its mean and the bounds of its 95% interval (`NAME`,
//!   `NAME.ci95_lower`, `NAME.ci95_upper`), and its counts (`NAME.n_scored`,
//!   `NAME.n_undefined`, `NAME.n_failed`);
//! - artifacts: `summary.json`, `manifest.json` and the reports, uploaded through the
//!   server's artifact proxy (`mlflow server --serve-artifacts`, MLflow's default).
//!
//! Which MLflow run holds a run directory is kept beside it in [`MLFLOW_FILE`], so logging
//! again to the same server updates that MLflow run (new metric values when the summary
//! changed, nothing when it did not) instead of creating another, and `compare` can name
//! the MLflow runs of the runs it compares ([`logged`]).

use std::path::Path;

use rageval_judge::ApiKey;
use rageval_judge::settings::display_endpoint;
use rageval_report::{RunInfo, SUMMARY_FILE, sha256_bytes};
use rageval_sources::rest::{Body, DEFAULT_REST_TIMEOUT};
use rageval_sources::{RestAuth, RestClient, SourceError};
use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::ExportError;
use crate::otlp::{now_unix_nano, writer_retry};
use crate::writes::Writes;

/// Where a run directory records the MLflow run that holds it.
pub const MLFLOW_FILE: &str = "mlflow.json";
/// MLflow's own variable for a bearer token (as its Python client reads it).
pub const ENV_MLFLOW_TRACKING_TOKEN: &str = "MLFLOW_TRACKING_TOKEN";
/// The experiment runs are logged to when none is named.
pub const DEFAULT_EXPERIMENT: &str = "rageval";

/// MLflow's limits: params or tags per `log-batch`, metrics per `log-batch`, a param's length.
const PARAMS_PER_BATCH: usize = 100;
const METRICS_PER_BATCH: usize = 1000;
const MAX_PARAM_CHARS: usize = 6000;

/// The files uploaded as artifacts, when the run has them.
const ARTIFACTS: &[&str] = &[
    SUMMARY_FILE,
    rageval_report::MANIFEST_FILE,
    "report.md",
    "report.html",
    "results.xlsx",
];

/// Where to log.
#[derive(Debug, Clone)]
pub struct MlflowTarget {
    /// The tracking server, `http://HOST:PORT`.
    pub tracking_uri: String,
    /// The experiment's name.
    pub experiment: String,
    /// A bearer token, when the server asks for one.
    pub token: Option<ApiKey>,
}

/// The `[mlflow]` table of `rageval.toml`: where `eval` logs every finished run unless a
/// flag says otherwise. Other tables of the file belong to other parts of rageval; inside
/// this one an unknown key is an error.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MlflowFileSettings {
    /// The tracking server, `http://HOST:PORT`.
    pub tracking_uri: Option<String>,
    /// The experiment's name.
    pub experiment: Option<String>,
}

impl MlflowFileSettings {
    /// The `[mlflow]` table of the configuration file `path` holding `text` (empty when it
    /// has none). Errors name the file, the line and the key, never a value.
    pub fn parse(path: &Path, text: &str) -> Result<Self, ExportError> {
        #[derive(Deserialize)]
        struct Root {
            #[serde(default)]
            mlflow: MlflowFileSettings,
        }
        toml::from_str::<Root>(text)
            .map(|root| root.mlflow)
            .map_err(|error| {
                let located = rageval_judge::config::snippet::locate_error(text, &error);
                ExportError::Config {
                    what: match located {
                        Some(at) => format!("{}:{}", path.display(), at.line),
                        None => path.display().to_string(),
                    },
                    detail: format!(
                        "[mlflow]: {}",
                        rageval_judge::config::snippet::mask_quoted(error.message())
                    ),
                }
            })
    }
}

/// The MLflow run that holds a run directory (the contents of [`MLFLOW_FILE`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MlflowRecord {
    /// The tracking server, redacted.
    pub tracking_uri: String,
    pub experiment_id: String,
    pub run_id: String,
    /// SHA-256 of the params and metric values last logged (what decides whether logging
    /// again changes anything; `summary.json` itself is rewritten by every session).
    pub figures_sha256: String,
    /// How many times the metrics were logged (the step of the latest values).
    pub logged: u32,
}

/// What logging did.
#[derive(Debug, Clone)]
pub struct Logged {
    pub record: MlflowRecord,
    /// Whether the run was already there (updated, or left alone when unchanged).
    pub existed: bool,
    /// Whether anything was written (false: the run there already holds these figures).
    pub changed: bool,
    pub params: usize,
    pub metrics: usize,
    /// The artifact uploads (a failed upload is counted, not fatal).
    pub artifacts: Writes,
}

/// The MLflow run recorded beside the run in `dir`, if any.
pub fn logged(dir: &Path) -> Option<MlflowRecord> {
    let text = std::fs::read_to_string(dir.join(MLFLOW_FILE)).ok()?;
    serde_json::from_str(&text).ok()
}

/// Logs the finished run in `dir` to `target`.
pub async fn log_run(dir: &Path, target: &MlflowTarget) -> Result<Logged, ExportError> {
    let run = RunInfo::load(dir)?;
    let params = params(&run);
    let figures = figures(&run);
    let figures_sha256 = fingerprint(&params, &figures);
    let server = Mlflow::new(target)?;
    let earlier = logged(dir).filter(|r| r.tracking_uri == server.endpoint());
    let earlier = match earlier {
        Some(record) if server.run_exists(&record.run_id).await? => Some(record),
        _ => None,
    };
    if let Some(record) = &earlier {
        if record.figures_sha256 == figures_sha256 {
            return Ok(Logged {
                record: record.clone(),
                existed: true,
                changed: false,
                params: 0,
                metrics: 0,
                artifacts: Writes::default(),
            });
        }
    }
    let (mut record, existed) = match earlier {
        Some(record) => (record, true),
        None => {
            let experiment_id = server.experiment_id(&target.experiment).await?;
            let run_id = server.create_run(&experiment_id, &run).await?;
            let record = MlflowRecord {
                tracking_uri: server.endpoint().to_owned(),
                experiment_id,
                run_id,
                figures_sha256: String::new(),
                logged: 0,
            };
            (record, false)
        }
    };
    // Params are immutable in MLflow: an MLflow run keeps the ones it was created with.
    let params = if existed { Vec::new() } else { params };
    let metrics = metric_entries(&figures, record.logged);
    server.log_batch(&record.run_id, &params, &metrics).await?;
    let artifacts = server.upload_artifacts(&record, dir).await;
    server.finish(&record.run_id).await?;
    record.figures_sha256 = figures_sha256;
    record.logged += 1;
    let text = serde_json::to_string_pretty(&record).unwrap_or_default();
    let path = dir.join(MLFLOW_FILE);
    rageval_core::files::write_atomically(&path, text.as_bytes())
        .map_err(|e| ExportError::io(path, e))?;
    Ok(Logged {
        record,
        existed,
        changed: true,
        params: params.len(),
        metrics: metrics.len(),
        artifacts,
    })
}

/// The run's params, as MLflow keeps them (`key`, `value`).
fn params(run: &RunInfo) -> Vec<(String, String)> {
    let manifest = &run.manifest;
    let judge = &manifest.settings["identity"]["judge"];
    let judge = match (judge["kind"].as_str(), judge["model"].as_str()) {
        (Some(kind), Some(model)) => format!("{kind} {model}"),
        (Some(kind), None) => kind.to_owned(),
        _ => "unknown".to_owned(),
    };
    let mut out = vec![
        ("metrics".to_owned(), run.summary.metric_order.join(",")),
        ("judge".to_owned(), judge),
        ("dataset".to_owned(), manifest.dataset.path.clone()),
        ("dataset_format".to_owned(), manifest.dataset.format.clone()),
        ("dataset_sha256".to_owned(), manifest.dataset.sha256.clone()),
        ("samples".to_owned(), run.summary.samples.to_string()),
        ("rageval_version".to_owned(), manifest.tool.version.clone()),
    ];
    if let Some(name) = &manifest.version_name {
        out.push(("version_name".to_owned(), name.clone()));
    }
    for (_, value) in &mut out {
        if value.chars().count() > MAX_PARAM_CHARS {
            *value = value.chars().take(MAX_PARAM_CHARS).collect();
        }
    }
    out
}

/// The run's figures as MLflow metrics (`key`, value): each metric's mean, interval bounds
/// and counts.
fn figures(run: &RunInfo) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    for name in &run.summary.metric_order {
        let Some(summary) = run.summary.metrics.get(name) else {
            continue;
        };
        let key = metric_key(name);
        if let Some(mean) = summary.mean {
            out.push((key.clone(), mean));
        }
        if let Some([lower, upper]) = summary.ci95 {
            out.push((format!("{key}.ci95_lower"), lower));
            out.push((format!("{key}.ci95_upper"), upper));
        }
        out.push((format!("{key}.n_scored"), summary.n_scored as f64));
        out.push((format!("{key}.n_undefined"), summary.n_undefined as f64));
        out.push((format!("{key}.n_failed"), summary.n_failed as f64));
    }
    out
}

/// The figures as `log-batch` metrics at `step`, stamped now.
fn metric_entries(figures: &[(String, f64)], step: u32) -> Vec<Value> {
    let timestamp = now_unix_nano() / 1_000_000;
    figures
        .iter()
        .map(|(key, value)| json!({"key": key, "value": value, "timestamp": timestamp, "step": step}))
        .collect()
}

/// SHA-256 of what a log writes.
fn fingerprint(params: &[(String, String)], figures: &[(String, f64)]) -> String {
    let text =
        serde_json::to_string(&json!({"params": params, "figures": figures})).unwrap_or_default();
    sha256_bytes(text.as_bytes())
}

/// A metric's name as an MLflow key: alphanumerics, `_ - . / :` and spaces kept, anything
/// else (`@` of a cut-off) as `_`.
pub fn metric_key(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_alphanumeric() || "_-./: ".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The tracking server's REST API.
struct Mlflow {
    rest: RestClient,
}

impl Mlflow {
    fn new(target: &MlflowTarget) -> Result<Self, ExportError> {
        let auth = target
            .token
            .clone()
            .map_or(RestAuth::None, RestAuth::Bearer);
        let rest = RestClient::new(
            &target.tracking_uri,
            auth,
            DEFAULT_REST_TIMEOUT,
            writer_retry(),
        )?;
        Ok(Mlflow { rest })
    }

    fn endpoint(&self) -> &str {
        self.rest.endpoint()
    }

    async fn call(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<&Value>,
    ) -> Result<Value, ExportError> {
        let body = body.map_or(Body::Empty, Body::Json);
        self.rest
            .json(method, &format!("api/2.0/mlflow/{path}"), query, body)
            .await
            .map_err(|error| self.explained(error))
    }

    async fn run_exists(&self, run_id: &str) -> Result<bool, ExportError> {
        match self
            .call(
                Method::GET,
                "runs/get",
                &[("run_id", run_id.to_owned())],
                None,
            )
            .await
        {
            Ok(_) => Ok(true),
            Err(ExportError::Source(SourceError::Status { status: 404, .. })) => Ok(false),
            Err(error) => Err(error),
        }
    }

    async fn experiment_id(&self, name: &str) -> Result<String, ExportError> {
        let found = self
            .call(
                Method::GET,
                "experiments/get-by-name",
                &[("experiment_name", name.to_owned())],
                None,
            )
            .await;
        let answer = match found {
            Ok(answer) => answer,
            Err(ExportError::Source(SourceError::Status { status: 404, .. })) => {
                let created = self
                    .call(
                        Method::POST,
                        "experiments/create",
                        &[],
                        Some(&json!({"name": name})),
                    )
                    .await?;
                return self.text(&created, "/experiment_id");
            }
            Err(error) => return Err(error),
        };
        self.text(&answer, "/experiment/experiment_id")
    }

    async fn create_run(&self, experiment_id: &str, run: &RunInfo) -> Result<String, ExportError> {
        let body = json!({
            "experiment_id": experiment_id,
            "run_name": run.manifest.version_name.clone().unwrap_or_else(|| run.name.clone()),
            "start_time": now_unix_nano() / 1_000_000,
            "tags": [
                {"key": "mlflow.source.name", "value": "rageval"},
                {"key": "mlflow.source.type", "value": "LOCAL"},
                {"key": "rageval.run_dir", "value": run.path.display().to_string()},
            ],
        });
        let answer = self
            .call(Method::POST, "runs/create", &[], Some(&body))
            .await?;
        self.text(&answer, "/run/info/run_id")
    }

    async fn log_batch(
        &self,
        run_id: &str,
        params: &[(String, String)],
        metrics: &[Value],
    ) -> Result<(), ExportError> {
        for chunk in params.chunks(PARAMS_PER_BATCH) {
            let params: Vec<Value> = chunk
                .iter()
                .map(|(k, v)| json!({"key": k, "value": v}))
                .collect();
            let body = json!({"run_id": run_id, "params": params});
            self.call(Method::POST, "runs/log-batch", &[], Some(&body))
                .await?;
        }
        for chunk in metrics.chunks(METRICS_PER_BATCH) {
            let body = json!({"run_id": run_id, "metrics": chunk});
            self.call(Method::POST, "runs/log-batch", &[], Some(&body))
                .await?;
        }
        Ok(())
    }

    async fn upload_artifacts(&self, record: &MlflowRecord, dir: &Path) -> Writes {
        let mut writes = Writes::default();
        let root = format!(
            "api/2.0/mlflow-artifacts/artifacts/{}/{}/artifacts",
            record.experiment_id, record.run_id
        );
        for name in ARTIFACTS {
            let Ok(bytes) = std::fs::read(dir.join(name)) else {
                continue;
            };
            let body = Body::Bytes {
                content_type: "application/octet-stream",
                bytes: &bytes,
            };
            match self
                .rest
                .send(Method::PUT, &format!("{root}/{name}"), &[], body)
                .await
            {
                Ok(_) => writes.written += 1,
                Err(error) => writes.fail(1, &error),
            }
        }
        writes
    }

    async fn finish(&self, run_id: &str) -> Result<(), ExportError> {
        let body = json!({
            "run_id": run_id,
            "status": "FINISHED",
            "end_time": now_unix_nano() / 1_000_000,
        });
        self.call(Method::POST, "runs/update", &[], Some(&body))
            .await?;
        Ok(())
    }

    fn text(&self, answer: &Value, pointer: &str) -> Result<String, ExportError> {
        answer
            .pointer(pointer)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| ExportError::Answer {
                endpoint: self.endpoint().to_owned(),
                detail: format!("no `{pointer}` in {answer}"),
            })
    }

    /// `error` with how to fix it, where that is known.
    fn explained(&self, error: SourceError) -> ExportError {
        let innermost = match &error {
            SourceError::RetriesExhausted { last, .. } => last.as_ref(),
            other => other,
        };
        let hint = match innermost {
            SourceError::Transport { source, .. } if source.is_connect() => format!(
                "nothing answers at {}: start the tracking server (`mlflow server`), or fix --mlflow",
                self.endpoint()
            ),
            SourceError::Unauthorized { .. } => {
                format!("this MLflow asks for credentials: set {ENV_MLFLOW_TRACKING_TOKEN}")
            }
            _ => return ExportError::Source(error),
        };
        ExportError::Source(SourceError::Server {
            server: "MLflow",
            what: format!(
                "cannot log the run to MLflow at {}",
                display_endpoint(self.endpoint())
            ),
            hint,
            source: Box::new(error),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mlflow_table_is_read_and_a_typo_is_an_error_naming_line_and_key() {
        let path = Path::new("rageval.toml");
        let text = "[judge]\nmodel = \"m\"\n\n[mlflow]\ntracking_uri = \"http://127.0.0.1:5000\"\n";
        let settings = MlflowFileSettings::parse(path, text).unwrap();
        assert_eq!(
            settings.tracking_uri.as_deref(),
            Some("http://127.0.0.1:5000")
        );
        assert_eq!(
            MlflowFileSettings::parse(path, "[judge]\n").unwrap(),
            MlflowFileSettings::default()
        );
        let error = MlflowFileSettings::parse(path, "[mlflow]\nexperiments = \"secret-ish\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("rageval.toml:2: [mlflow]: unknown field `experiments`"),
            "{error}"
        );
        assert!(!error.contains("secret-ish"), "{error}");
    }

    #[test]
    fn metric_names_become_mlflow_keys() {
        assert_eq!(metric_key("context_precision@5"), "context_precision_5");
        assert_eq!(metric_key("faithfulness"), "faithfulness");
    }
}
