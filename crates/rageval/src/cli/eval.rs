//! `rageval eval`'s own arguments: batch mode, the results' format, the shard, and the
//! gates and human labels `report` and `calibrate` share with it.

use std::num::NonZeroUsize;
use std::path::PathBuf;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, ValueEnum};
use rageval_judge::batch::FailedItems;
use rageval_judge::settings::positive_seconds;
use rageval_run::commands::eval::MaxFailed;

use super::{DatasetArgs, JudgeArgs, OutputArgs, RunDirArgs};

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// The dataset: JSONL, JSON, CSV or XLSX, or a directory of GT_*/FULL_* files (as
    /// `rageval reference` writes them).
    pub data: PathBuf,

    /// Metrics to run, comma-separated (`rageval metrics` lists them; `NAME:MODE` picks a
    /// mode, e.g. `answer_relevance:embedding`; `NAME@k` sets a cut-off). Default: every
    /// metric whose inputs the first sample has and that the configured judge can answer.
    #[arg(long, short, value_delimiter = ',')]
    pub metrics: Vec<String>,

    #[command(flatten)]
    pub run_dir: RunDirArgs,

    /// The version of the system this run measures, as version tables name it, e.g.
    /// `--name "V1.1 (rerank)"`. Default: the run directory's name (a pipeline's folder's).
    /// Kept in the manifest; running the same command with another name renames the run
    /// and scores nothing again.
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,

    #[command(flatten)]
    pub dataset: DatasetArgs,

    /// Evaluate only the first N samples.
    #[arg(long, value_name = "N")]
    pub samples: Option<usize>,

    /// Bootstrap resamples for the 95% intervals.
    #[arg(long, default_value_t = rageval_core::stats::DEFAULT_BOOTSTRAP_RESAMPLES)]
    pub bootstrap_resamples: usize,

    /// Print the resolved settings as JSON and exit without running.
    #[arg(long, hide = true)]
    pub show_settings: bool,

    #[command(flatten)]
    pub gate: GateArgs,

    #[command(flatten)]
    pub output: OutputArgs,

    /// Score only the first K retrieved contexts of each sample. K is lowered
    /// further for a sample whose largest judge prompt would not fit --context-window;
    /// results then say how many contexts were scored (`top_k` in the evidence).
    #[arg(long, value_name = "K", value_parser = str::parse::<NonZeroUsize>)]
    pub top_k: Option<NonZeroUsize>,

    /// Score only shard I of N (1 ≤ I ≤ N): the samples whose id's SHA-256 modulo N is
    /// I − 1. N machines each run the same command with their own shard and their own --out;
    /// `rageval merge` joins the run directories into one run (docs/scale.md). `auto` takes
    /// the shard from the scheduler: JOB_COMPLETION_INDEX (a Kubernetes Indexed Job, from 0;
    /// Kubernetes gives no count, so write `auto/N` with N the Job's completions),
    /// SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_COUNT (a Slurm
    /// array), or RANK and WORLD_SIZE (torchrun); `auto/N` must agree with the scheduler's
    /// count where it gives one. Without any of them `auto` exits 2
    #[arg(long, value_name = "I/N|auto[/N]", value_parser = shard)]
    pub shard: Option<rageval_run::engine::shard::Shard>,

    /// Write no report.html, report.md or results.xlsx (`rageval report RUN_DIR` writes
    /// them later): for shards, whose merge writes the reports, and for very large runs
    #[arg(long)]
    pub no_reports: bool,

    /// The largest share of judged cells that may fail: past it the run exits 4, naming
    /// the share and the commonest error (a judge that fails one cell in ten is broken, and
    /// the means are of what remained). A run whose every judged cell failed always exits 4
    #[arg(long, value_name = "PCT", default_value_t = MaxFailed::DEFAULT, value_parser = str::parse::<MaxFailed>)]
    pub max_failed: MaxFailed,

    /// The results' format: `parquet` writes results.parquet beside results.jsonl when the
    /// run completes
    #[arg(long, value_enum, default_value_t = ResultsFormat::Jsonl)]
    pub results_format: ResultsFormat,

    #[command(flatten)]
    pub batch: BatchArgs,

    #[command(flatten)]
    pub labels: LabelsArgs,

    #[command(flatten)]
    pub judge: JudgeArgs,
}

/// Batch mode: the judge's requests answered by batch jobs or by files another engine
/// answers (docs/scale.md).
#[derive(Debug, Clone, Args)]
pub struct BatchArgs {
    /// Answer the judge's requests with batch jobs at the judge endpoint (OpenAI-compatible
    /// /v1/files and /v1/batches: OpenAI, Azure OpenAI; about half the price, no rate
    /// limits). The run goes in passes: each stage's requests (statements, then verdicts on
    /// them, ...) go out as jobs, polled with their status shown, and the next pass reads
    /// the answers. Needs the judge cache; a run killed while polling resumes the same jobs
    #[arg(long, conflicts_with = "export_requests")]
    pub batch: bool,

    /// What becomes of a request a batch job did not answer (expired, cancelled, 429,
    /// 5xx): `resubmit` it in the next stage's job (at most twice), or ask it at once with
    /// a `sync` call (booked at the batch price)
    #[arg(long, default_value = FailedItems::Resubmit.name(), value_parser = fallback_names())]
    pub batch_fallback: FailedItems,

    /// Seconds before a batch job is polled again; the wait doubles after each poll, up to
    /// 60 s
    #[arg(long, value_name = "SECS", default_value = "5", value_parser = positive_seconds)]
    pub batch_poll: std::time::Duration,

    /// Write the next stage's judge requests into DIR as OpenAI batch input files (what
    /// `vllm run-batch -i` reads) and stop with exit 5; answer them, then run the same
    /// command with --import-responses
    #[arg(long, value_name = "DIR")]
    pub export_requests: Option<PathBuf>,

    /// Read batch answers (OpenAI batch output files, what `vllm run-batch -o` writes)
    /// before scoring; they are kept in the run directory. Needs --export-requests (or
    /// --batch) for the requests still unanswered
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub import_responses: Vec<PathBuf>,
}

impl BatchArgs {
    /// Whether any batch flag is given.
    pub fn any(&self) -> bool {
        self.batch || self.export_requests.is_some() || !self.import_responses.is_empty()
    }
}

/// `--batch-fallback`: [`FailedItems`]' own names, listed in `--help`.
fn fallback_names() -> impl TypedValueParser<Value = FailedItems> {
    PossibleValuesParser::new(FailedItems::ALL.map(FailedItems::name))
        .try_map(|name| name.parse::<FailedItems>())
}

/// `--shard`: `i/n` as given, `auto` resolved here, once, from the process's environment.
fn shard(raw: &str) -> Result<rageval_run::engine::shard::Shard, String> {
    raw.parse::<rageval_run::engine::shard::ShardRequest>()?
        .resolve(crate::judge::env)
        .map_err(|error| error.to_string())
}

/// The formats `eval` writes its results in, beside the reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ResultsFormat {
    /// results.jsonl only (the journal every run keeps)
    Jsonl,
    /// results.parquet too (one row per sample × metric), for Spark or pandas
    Parquet,
}

/// Quality gates for CI, shared by `eval` and `report`.
#[derive(Debug, Args)]
pub struct GateArgs {
    /// Exit with code 1 when a metric's mean is below its minimum, e.g.
    /// `--fail-under faithfulness=0.8,context_recall=0.7`. Reports are written first.
    #[arg(long, value_delimiter = ',', value_name = "METRIC=MIN")]
    pub fail_under: Vec<String>,

    /// Write a JUnit XML file naming the failing metrics and samples (one test per gate).
    #[arg(long, value_name = "PATH")]
    pub junit: Option<PathBuf>,
}

/// Human labels on some samples, for calibrated means (`eval --labels`, `calibrate`).
#[derive(Debug, Clone, Args)]
pub struct LabelsArgs {
    /// Human labels on some of the samples (JSONL: `{"id", "label": true|false}` or
    /// `{"id", "grade": N}`, optionally `"metric"`; judge-check's binary and graded
    /// shapes): the summary gets, per labelled metric, the calibrated mean (PPI++) with its
    /// 95% interval beside the labels-only and judge-only means (docs/calibration.md)
    #[arg(long, value_name = "FILE")]
    pub labels: Option<PathBuf>,

    /// The scale of graded labels, e.g. 1..5 (normalised to 0..1)
    #[arg(long, value_name = "MIN..MAX", requires = "labels")]
    pub label_scale: Option<rageval_core::calibration::labels::GradeScale>,

    /// The metric of labels that name none
    #[arg(long = "label-metric", value_name = "METRIC", requires = "labels")]
    pub label_metric: Option<String>,
}
