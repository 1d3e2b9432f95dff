//! Commands over finished runs: `report`, `compare`, `serve`, `label`, `calibrate` and
//! `merge`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::{CompareGateArgs, GateArgs, JudgeArgs, LabelsArgs, OutputArgs};

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A finished run directory (written by `rageval eval`), or a `pipeline` folder (its
    /// `eval/` run).
    pub run: PathBuf,

    /// Do not re-read the run's dataset for the HTML drill-down (questions, answers,
    /// contexts); verdicts are then shown by index only.
    #[arg(long)]
    pub no_dataset: bool,

    #[command(flatten)]
    pub gate: GateArgs,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Two or more run directories over the same questions (system versions: V1.0 first);
    /// the first is the baseline of every pair it is in. A `pipeline` folder stands for
    /// its `eval/` run. Samples pair by id, and by question text where ids differ (when
    /// the runs' datasets can be re-read).
    #[arg(required = true, num_args = 2.., value_name = "RUN")]
    pub runs: Vec<PathBuf>,

    /// Refuse runs whose question sets overlap less than this (shared ÷ all questions of
    /// the two runs). Default: 1, the same questions (any overlap with --common).
    #[arg(long, value_name = "SHARE", value_parser = overlap_share)]
    pub min_overlap: Option<f64>,

    /// Compare only the questions every run holds; the version table's means are over
    /// them.
    #[arg(long)]
    pub common: bool,

    /// Write the version table, every pair's deltas and the question pairing as an XLSX
    /// workbook.
    #[arg(long, value_name = "PATH")]
    pub xlsx: Option<PathBuf>,

    /// Write the comparison as one self-contained HTML page.
    #[arg(long, value_name = "PATH")]
    pub html: Option<PathBuf>,

    /// Write the comparison as Markdown (it is also printed to stdout).
    #[arg(long, value_name = "PATH")]
    pub markdown: Option<PathBuf>,

    /// Write the comparison's numbers as JSON.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,

    /// Seed of the bootstrap (the permutation test uses seed + 1).
    #[arg(long, default_value_t = rageval_core::stats::DEFAULT_SEED)]
    pub seed: u64,

    /// Bootstrap resamples for the interval of each difference.
    #[arg(long, default_value_t = rageval_core::stats::DEFAULT_BOOTSTRAP_RESAMPLES)]
    pub bootstrap_resamples: usize,

    /// Sign-flip permutations of the paired test (p-value resolution 1/(N+1)).
    #[arg(long, default_value_t = rageval_core::stats::DEFAULT_PERMUTATIONS, value_name = "N")]
    pub permutations: usize,

    /// Compare only these metrics, in this order (comma-separated; default: every metric
    /// any run scored)
    #[arg(long, value_delimiter = ',', value_name = "METRIC,…")]
    pub metrics: Vec<String>,

    /// Samples listed per metric and pair as moving most.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub top: usize,

    /// Name the versions in the order of the runs (repeat: `--name V1.0 --name "V1.1
    /// (rerank)"`); overrides the names given at eval time. A run left without one shows
    /// its `eval --name`, else its directory's name (a pipeline's folder's).
    #[arg(long = "name", value_name = "NAME")]
    pub names: Vec<String>,

    /// A `pairwise` run of these versions (`rageval pairwise RUN…`, its versions read from
    /// these run directories, their pipeline folders or their datasets): the version table
    /// gains a head-to-head column — each later version's wins, ties and losses against
    /// the first and its win rate with its 95% interval. Exit 2 when some run is not one of
    /// its versions
    #[arg(long, value_name = "DIR")]
    pub pairwise: Option<PathBuf>,

    #[command(flatten)]
    pub gate: CompareGateArgs,

    /// The judge of `--confirm` (the candidate's judge settings).
    #[command(flatten, next_help_heading = "Judge (for --confirm)")]
    pub judge: JudgeArgs,
}

/// A share in [0, 1], for `--min-overlap`.
fn overlap_share(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(value) if (0.0..=1.0).contains(&value) => Ok(value),
        _ => Err(format!("`{text}` is not a share between 0 and 1")),
    }
}

/// Arguments of `rageval serve`.
#[derive(Debug, Args)]
#[command(
    after_help = "Pages: / (runs; tick some to compare), /runs/NAME (summary and \
samples filtered by a metric's range), /runs/NAME/report, /compare?run=A&run=B. \
JSON: /api/runs, /api/runs/NAME, /api/runs/NAME/samples?metric=M&min=X&max=Y, \
/api/compare?run=A&run=B. The server only reads; see docs/reports.md."
)]
pub struct ServeArgs {
    /// The directory whose subdirectories are runs (as `rageval eval --out DIR/NAME`
    /// writes them).
    #[arg(default_value = "runs", value_name = "RUNS_DIR")]
    pub runs_dir: PathBuf,

    /// Address or host name and port to listen on, e.g. `localhost:8321` or
    /// `0.0.0.0:8321` (port 0 picks a free one). An address other than loopback needs a
    /// token.
    #[arg(long, default_value = "127.0.0.1:8321", value_name = "HOST:PORT")]
    pub bind: String,

    /// A bearer token every request must carry (`Authorization: Bearer TOKEN`, or open
    /// `/?token=TOKEN` once in a browser). Default: the RAGEVAL_SERVE_TOKEN environment
    /// variable, which keeps it out of the process list.
    #[arg(long, value_name = "TOKEN")]
    pub token: Option<String>,
}

/// Arguments of `rageval label`.
#[derive(Debug, Args)]
pub struct LabelArgs {
    /// A finished run directory (its dataset must still be readable: the page shows the
    /// samples' texts), or a test set's `testset.jsonl` to review its generated items
    pub run: PathBuf,

    /// The metric to label (default: the run's first metric scored by a judge)
    #[arg(long, value_name = "NAME")]
    pub metric: Option<String>,

    /// How many samples to label (all the metric's scored samples when fewer)
    #[arg(long, default_value_t = 50, value_name = "N")]
    pub samples: usize,

    /// The seed of the random sample and its order
    #[arg(long, default_value_t = rageval_core::stats::DEFAULT_SEED)]
    pub seed: u64,

    /// A dataset field to stratify the sample by (each value gets its proportional share)
    #[arg(long, value_name = "FIELD")]
    pub stratify: Option<String>,

    /// Who labels: each labeller's labels go to a file of their own
    #[arg(long, default_value = "labeller", value_name = "NAME")]
    pub labeller: String,

    /// binary (y/n) or graded (1–5); default binary when every score of the metric is 0
    /// or 1, else graded
    #[arg(long, value_enum)]
    pub scale: Option<LabelScaleArg>,

    /// The page's language (default: the run's judge language, else the questions')
    #[arg(long, value_enum)]
    pub lang: Option<PageLangArg>,

    /// The labels file (default: RUN/labels/LABELLER.METRIC.jsonl; for a test set, its
    /// review file STEM.review.LABELLER.jsonl beside it)
    #[arg(long, value_name = "FILE")]
    pub labels: Option<PathBuf>,

    /// For a test set: serve no page; print the rejection rates of the review so far and
    /// write them (REVIEW.rates.json) and the accepted items (REVIEW.final.jsonl, or
    /// REVIEW.final.partial.jsonl while items are unreviewed) beside the review file
    #[arg(long)]
    pub summary: bool,

    /// The port to listen on at 127.0.0.1 (0 picks a free one)
    #[arg(long, default_value_t = 8322)]
    pub port: u16,

    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LabelScaleArg {
    Binary,
    Graded,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PageLangArg {
    En,
    Zh,
}

/// Arguments of `rageval calibrate`.
#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// A finished run directory
    pub run: PathBuf,

    #[command(flatten)]
    pub labels: LabelsArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}

/// Arguments of `rageval merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The shards' run directories (each written by `eval --shard i/n`), in any order
    #[arg(required = true, num_args = 1.., value_name = "RUN_DIR")]
    pub runs: Vec<PathBuf>,

    /// The run directory to write
    #[arg(long, short)]
    pub out: PathBuf,

    /// Replace a run already at --out
    #[arg(long)]
    pub overwrite: bool,

    #[command(flatten)]
    pub gate: GateArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}
