//! Every command-line argument of `rageval`, in one place. Parsing touches no file and no
//! network; commands resolve these into settings.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Evaluate retrieval-augmented generation: how good retrieval and answers are, and why.
#[derive(Debug, Parser)]
#[command(name = "rageval", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Score every sample of a dataset and write a run directory.
    ///
    /// Model-judged metrics ask the judge: an OpenAI-compatible endpoint (--judge-model), or
    /// without one the offline heuristic judge (stderr and the manifest say who answers each
    /// task). Samples are streamed and scored concurrently; running the same command again
    /// resumes an unfinished run. A judge that fails marks its cells `failed`, it is not an
    /// error: the exit code is 2 only for bad usage or bad data (1 for a failed gate).
    Eval(EvalArgs),
    /// List the metrics, or explain one.
    Metrics(MetricsArgs),
    /// Evaluate a TREC run against qrels, as trec_eval does.
    Trec(TrecArgs),
    /// Rewrite a finished run's report.html, report.md and results.xlsx (and check gates).
    Report(ReportArgs),
    /// Compare runs over the same dataset: version table, paired deltas, flipped samples.
    Compare(CompareArgs),
}

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// The dataset: JSONL, JSON, CSV or XLSX, or a directory of seed-S3 GT_*/FULL_* files.
    pub data: PathBuf,

    /// Metrics to run, comma-separated (`rageval metrics` lists them; `NAME:MODE` picks a
    /// mode, e.g. `answer_relevance:embedding`; `NAME@k` sets a cut-off). Default: every
    /// metric whose inputs the first sample has and that the configured judge can answer.
    #[arg(long, short, value_delimiter = ',')]
    pub metrics: Vec<String>,

    /// The run directory to write (manifest.json, results.jsonl, summary.json).
    /// Default: `runs/<dataset name>`. A run already there over the same data is resumed:
    /// finished sample × metric cells are kept and only the missing ones are scored.
    #[arg(long, short)]
    pub out: Option<PathBuf>,

    /// Replace a run already in the output directory instead of resuming it.
    #[arg(long)]
    pub overwrite: bool,

    /// Map a field to a column of the data, e.g. `--map question=prompt` (repeatable).
    #[arg(long = "map", value_name = "FIELD=COLUMN")]
    pub field_map: Vec<String>,

    /// The dataset's format, when its extension does not say it.
    #[arg(long, value_enum)]
    pub format: Option<DataFormat>,

    /// The XLSX sheet to read (default: the first).
    #[arg(long)]
    pub sheet: Option<String>,

    /// Evaluate only the first N samples.
    #[arg(long, value_name = "N")]
    pub samples: Option<usize>,

    /// Seed of every random choice (bootstrap intervals).
    #[arg(long, default_value_t = rageval_core::stats::DEFAULT_SEED)]
    pub seed: u64,

    /// Bootstrap resamples for the 95% intervals.
    #[arg(long, default_value_t = rageval_core::stats::DEFAULT_BOOTSTRAP_RESAMPLES)]
    pub bootstrap_resamples: usize,

    /// Print the resolved settings as JSON and exit without running.
    #[arg(long, hide = true)]
    pub show_settings: bool,

    #[command(flatten)]
    pub gate: GateArgs,

    /// Score only the first K retrieved contexts of each sample (seed S3). K is lowered
    /// further for a sample whose largest judge prompt would not fit --context-window;
    /// results then say how many contexts were scored (`top_k` in the evidence).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u64).range(1..))]
    pub top_k: Option<u64>,

    /// When resuming a run, score again the cells that failed (a judge error, an answer that
    /// never parsed); they are replaced, never duplicated.
    #[arg(long)]
    pub retry_failed: bool,

    #[command(flatten)]
    pub judge: JudgeArgs,
}

/// Which judge answers the model-judged metrics, and how it is used.
///
/// With no endpoint configured, verdict tasks go to the offline heuristic judge and
/// generation tasks to what can write offline (statement splitting by sentences); tasks
/// nothing offline can answer fail with the reason.
#[derive(Debug, Args)]
pub struct JudgeArgs {
    /// Base URL of an OpenAI-compatible judge endpoint, e.g. `http://localhost:8000/v1`
    /// (default: $RAGEVAL_JUDGE_BASE_URL, then $OPENAI_BASE_URL, then OpenAI's).
    #[arg(long, value_name = "URL")]
    pub judge_base_url: Option<String>,

    /// The judge model at that endpoint (default: $RAGEVAL_JUDGE_MODEL). With a model, every
    /// judge task goes to the endpoint; without one, the offline judge answers.
    #[arg(long, value_name = "NAME")]
    pub judge_model: Option<String>,

    /// An embedding model at the same endpoint, for semantic_similarity,
    /// answer_relevance:embedding and answer_correctness:ragas (default:
    /// $RAGEVAL_JUDGE_EMBEDDING_MODEL).
    #[arg(long, value_name = "NAME")]
    pub judge_embedding_model: Option<String>,

    /// Most judge requests in flight at once; twice as many samples are scored at once.
    #[arg(long, default_value_t = 16, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub concurrency: u64,

    /// The judge model's context window in tokens: a sample's contexts are cut (the last
    /// first) until its largest prompt fits (seed S3). Tokens are estimated: a quarter of
    /// the characters, one per Chinese/Japanese/Korean character.
    #[arg(long, default_value_t = 32_768, value_name = "TOKENS")]
    pub context_window: u64,

    /// The prompt pack: `auto` picks `zh` or `en` per sample from the question's script.
    #[arg(long, value_enum, default_value_t = LangArg::Auto)]
    pub lang: LangArg,

    /// Answer only from the judge cache: a missing answer fails its cell, no request is made.
    #[arg(long, conflicts_with = "no_cache")]
    pub offline: bool,

    /// Neither read nor write the judge cache.
    #[arg(long)]
    pub no_cache: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LangArg {
    Auto,
    En,
    Zh,
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

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A finished run directory (written by `rageval eval`).
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
    /// Two or more run directories over the same dataset; the first is the baseline of
    /// every pair it is in.
    #[arg(required = true, num_args = 2.., value_name = "RUN")]
    pub runs: Vec<PathBuf>,

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

    /// Samples listed per metric and pair as moving most.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub top: usize,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum DataFormat {
    Jsonl,
    Json,
    Csv,
    Xlsx,
}

#[derive(Debug, Args)]
pub struct MetricsArgs {
    #[command(subcommand)]
    pub action: Option<MetricsAction>,
}

#[derive(Debug, Subcommand)]
pub enum MetricsAction {
    /// Print one metric's inputs, formula and source.
    Explain {
        /// A metric name or alias.
        name: String,
    },
}

/// Arguments of `rageval trec`.
#[derive(Debug, Clone, Args)]
pub struct TrecArgs {
    /// Relevance judgments: `qid iter docno rel` per line
    pub qrels: PathBuf,
    /// Ranked results: `qid Q0 docno rank score run_id` per line
    pub run: PathBuf,
    /// Measure to compute, as in trec_eval (`map`, `P.5,10`, `ndcg_cut.10`, `all_trec`);
    /// repeatable; default `official`
    #[arg(short = 'm', long = "measure", value_name = "MEASURE")]
    pub measures: Vec<String>,
    /// Also print every measure for each topic
    #[arg(short = 'q', long = "per-query")]
    pub per_query: bool,
    /// Average over all topics in the qrels; topics without results score 0 (without -c
    /// they are skipped, as pytrec_eval does; trec_eval 10.0 stops with an error instead)
    #[arg(short = 'c', long = "complete")]
    pub complete: bool,
    /// Lowest relevance value counted as relevant
    #[arg(
        short = 'l',
        long = "level",
        value_name = "LEVEL",
        default_value_t = 1,
        allow_hyphen_values = true
    )]
    pub rel_level: i64,
    /// Keep only the top N documents of each topic
    #[arg(short = 'M', long = "max-docs", value_name = "N")]
    pub max_docs: Option<usize>,
    /// Print full-precision values as JSON (`{"queries": {qid: {measure: value}}, "summary":
    /// {…}}`) instead of trec_eval's 4-decimal text
    #[arg(long)]
    pub json: bool,
}
