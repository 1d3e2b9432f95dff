//! The arguments of the integrations with trace and experiment stores: a Phoenix project
//! read as `eval`'s dataset, the scores an `eval` writes back (Phoenix annotations,
//! OpenTelemetry events, an MLflow run), and `rageval export`, which sends a finished run's.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use rageval_core::sampling::SampleRate;
use rageval_export::otlp::{Protocol, Signal};

/// Which traces `eval phoenix://HOST:PORT/PROJECT` reads.
#[derive(Debug, Clone, Default, Args)]
pub struct TraceSourceArgs {
    /// Score a consistent share of the traces, chosen by a hash of each trace id (e.g. 10%
    /// or 0.1): the same traces for every metric, every rerun and every machine. For a
    /// Phoenix source, and for --watch (by sample id)
    #[arg(long, value_name = "PCT", value_parser = sample_rate)]
    pub sample: Option<SampleRate>,

    /// Phoenix source: traces whose root span starts at or after TIME (ISO 8601 with a zone,
    /// e.g. 2026-01-31T00:00:00Z)
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,

    /// Phoenix source: traces whose root span starts before TIME
    #[arg(long, value_name = "TIME")]
    pub until: Option<String>,

    /// Phoenix source: only traces whose root span has the attribute KEY with VALUE
    /// (Phoenix's `KEY:VALUE`, e.g. `metadata.tier:gold`; repeatable, all must hold)
    #[arg(long = "trace-filter", value_name = "KEY:VALUE")]
    pub filters: Vec<String>,
}

/// Where an `eval` writes its scores besides its run directory.
#[derive(Debug, Clone, Default, Args)]
pub struct WriteBackArgs {
    /// Write each scored cell back to Phoenix as a span annotation on the evaluated span
    /// (the one the traces came from, or --phoenix-url). Idempotent: a rerun updates the
    /// annotations it wrote; failed writes are retried, counted and reported, never failing
    /// the run (`rageval export phoenix RUN` writes them later)
    #[arg(long)]
    pub annotate: bool,

    /// The Phoenix server --annotate writes to when the dataset is a file of exported spans
    #[arg(long, value_name = "URL")]
    pub phoenix_url: Option<String>,

    /// Write every cell as an OpenTelemetry gen_ai.evaluation.result event, OTLP/JSON, to
    /// evaluations.otlp.jsonl beside results.jsonl
    #[arg(long)]
    pub otlp_json: bool,

    #[command(flatten)]
    pub otlp: OtlpArgs,

    /// Log the finished run to this MLflow tracking server (`http://HOST:PORT`, REST API;
    /// MLFLOW_TRACKING_TOKEN when it asks for a token): params, per-metric means with interval
    /// bounds, summary and reports as artifacts. Default: `[mlflow] tracking_uri` of the
    /// configuration file (--config), if any
    #[arg(long, value_name = "URL")]
    pub mlflow: Option<String>,

    /// The MLflow experiment, created when missing (default: `[mlflow] experiment` of the
    /// configuration file, else `rageval`)
    #[arg(long, value_name = "NAME")]
    pub mlflow_experiment: Option<String>,
}

/// An OTLP/HTTP endpoint for the evaluation events.
#[derive(Debug, Clone, Default, Args)]
pub struct OtlpArgs {
    /// Push every cell's gen_ai.evaluation.result event to this OTLP/HTTP endpoint: a base
    /// URL (`/v1/logs` is appended; a Collector) or a signal's URL (`…/v1/traces` sends
    /// evaluation spans: Phoenix takes these)
    #[arg(long, value_name = "URL")]
    pub otlp_endpoint: Option<String>,

    /// The OTLP/HTTP encoding: http/protobuf (OpenTelemetry's default; Phoenix's only one)
    /// or http/json
    #[arg(long, value_name = "PROTOCOL", default_value = "http/protobuf", value_parser = protocol)]
    pub otlp_protocol: Protocol,

    /// The signal for a base URL: logs (log records with the event name, the semantic
    /// conventions' form) or traces (an evaluation span per sample with span events)
    #[arg(long, value_name = "SIGNAL", value_parser = signal)]
    pub otlp_signal: Option<Signal>,
}

/// `rageval export`: a run's scores sent where the team looks.
#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(subcommand)]
    pub target: ExportTarget,

    #[command(flatten)]
    pub output: crate::cli::OutputArgs,
}

#[derive(Debug, Subcommand)]
pub enum ExportTarget {
    /// Span annotations on the evaluated spans of a Phoenix (one per scored cell; a rerun
    /// updates them, never duplicates)
    Phoenix(ExportPhoenixArgs),
    /// OpenTelemetry gen_ai.evaluation.result events: an OTLP/JSON file, or OTLP/HTTP
    Otlp(ExportOtlpArgs),
    /// An MLflow run: params, metrics with interval bounds, summary and reports as artifacts
    Mlflow(ExportMlflowArgs),
}

#[derive(Debug, Args)]
pub struct ExportPhoenixArgs {
    /// The run directory
    pub run: PathBuf,

    /// The Phoenix server (default: the one the run's traces were read from)
    #[arg(long, value_name = "URL")]
    pub phoenix_url: Option<String>,

    /// Say how many annotations would be written, send nothing
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Args)]
pub struct ExportOtlpArgs {
    /// The run directory
    pub run: PathBuf,

    /// Write the OTLP/JSON lines here (default without --otlp-endpoint:
    /// evaluations.otlp.jsonl in the run directory)
    #[arg(long, value_name = "PATH")]
    pub file: Option<PathBuf>,

    #[command(flatten)]
    pub otlp: OtlpArgs,
}

#[derive(Debug, Args)]
pub struct ExportMlflowArgs {
    /// The run directory (a finished run)
    pub run: PathBuf,

    /// The MLflow tracking server, `http://HOST:PORT`
    #[arg(long, value_name = "URL")]
    pub mlflow: String,

    /// The MLflow experiment (created when missing)
    #[arg(long, value_name = "NAME", default_value = rageval_export::mlflow::DEFAULT_EXPERIMENT)]
    pub mlflow_experiment: String,
}

fn sample_rate(text: &str) -> Result<SampleRate, String> {
    text.parse()
}

fn protocol(text: &str) -> Result<Protocol, String> {
    text.parse()
}

fn signal(text: &str) -> Result<Signal, String> {
    text.parse()
}
