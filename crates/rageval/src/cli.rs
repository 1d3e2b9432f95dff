//! Every command-line argument of `rageval`, in one place. Parsing touches no file and no
//! network; commands resolve these into settings.

use std::path::PathBuf;

use clap::{ArgAction, Args, Parser, Subcommand, ValueEnum};
use rageval_run::LocalJudge;
use rageval_tasks::LangChoice;

mod export;
mod watch;
pub use watch::WatchArgs;
pub use export::{
    ExportArgs, ExportMlflowArgs, ExportOtlpArgs, ExportPhoenixArgs, ExportTarget, OtlpArgs,
    TraceSourceArgs, WriteBackArgs,
};

/// Evaluate retrieval-augmented generation: how good retrieval and answers are, and why.
#[derive(Debug, Parser)]
#[command(name = "rageval", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,

    /// Rubric metrics of one's own: a TOML file of `[[metric]]` tables (repeatable; default:
    /// the `[[metric]]` tables of the judge's configuration file). See docs/rubrics.md
    #[arg(long, global = true, value_name = "FILE")]
    pub metric_file: Vec<PathBuf>,
}

/// What a command prints on stderr besides errors. Every command but `trec` (whose `-q` is
/// trec_eval's per-query output) takes these.
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct OutputArgs {
    /// Print nothing on stderr but errors and warnings: no notes, no progress
    #[arg(short, long)]
    pub quiet: bool,

    /// Debug events on stderr: judge retries, back-offs, halts and routing (-vv: trace);
    /// endpoints are redacted and keys never appear
    #[arg(short, long, action = ArgAction::Count)]
    pub verbose: u8,

    /// Progress lines on stderr even when it is not a terminal (a CI log): stage,
    /// done/total, failures, model calls, rate and ETA, at most every two seconds
    #[arg(long)]
    pub progress: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Score every sample of a dataset and write a run directory.
    ///
    /// Model-judged metrics ask the judge: an OpenAI-compatible endpoint (--judge-model), or
    /// without one the offline heuristic judge (stderr and the manifest say who answers each
    /// task). Samples are streamed and scored concurrently; running the same command again
    /// resumes an unfinished run. An answer that never parses marks its cell `failed` with
    /// the raw text; a judge that refuses or cannot answer (unreachable, 401/403/404, an
    /// unknown model, every call failing) stops the run with the cause, exit 4, resumable.
    /// The judge's calls, tokens and cost go into summary.json and the reports; --dry-run
    /// estimates them first; a run stopped by --max-calls / --max-cost exits 3, Ctrl-C 130,
    /// both resumable. Exit codes: README, "Exit codes".
    Eval(Box<EvalArgs>),
    /// List the metrics, or explain one.
    Metrics(MetricsArgs),
    /// Evaluate a TREC run against qrels, as trec_eval does.
    Trec(TrecArgs),
    /// Rewrite a finished run's report.html, report.md and results.xlsx (and check gates).
    Report(ReportArgs),
    /// Compare runs of system versions, paired by sample id or question: version table, paired deltas (of calibrated means too, where both runs have human labels), flipped samples.
    Compare(CompareArgs),
    /// Serve a directory of runs as a read-only web UI and JSON API.
    Serve(ServeArgs),
    /// Build a local search index from documents (PDF, DOCX, HTML, Markdown, text, JSONL chunks).
    Index(IndexArgs),
    /// Search a local index built by `rageval index`.
    Search(SearchArgs),
    /// Ask every question to a retriever and a RAG service; write a dataset for `rageval eval`.
    Collect(Box<CollectArgs>),
    /// Measure the judge against human labels: pairwise accuracy, balanced accuracy and
    /// AUROC, or rank correlations and κ, with 95% bootstrap intervals; writes a run directory.
    JudgeCheck(Box<crate::commands::judge_check::JudgeCheckArgs>),
    /// Order each question's contexts with the judge and compare with the retriever.
    ///
    /// Every context is graded 0–3, --grade-batch contexts per call, concurrently; the useful
    /// ones are ordered by windows of --window contexts, each ordered by the judge in two
    /// presentation orders and aggregated by Bradley–Terry (or, with `--algorithm
    /// bradley-terry`, by both-order pairwise comparisons; with `--algorithm insertion`, by
    /// the seed's binary insertion sort). Writes rankings.jsonl (per question: judge order,
    /// good/bad, grades, every window and comparison, calls, rounds, agreement with the
    /// retriever), rank_agreement.jsonl and summary.json (averages, the judge's accounts)
    /// into the run directory, one question at a time: running the same command again
    /// resumes it. Questions whose grades did not all come back are left out of the figures
    /// and counted. --dry-run estimates the calls first; caps, Ctrl-C and a judge that does
    /// not answer stop it resumably (exit 3, 130, 4).
    Rank(Box<RankArgs>),
    /// Write a reference answer per question from all its contexts: GT_{question}.json, and
    /// FULL_{question}.json when the data has the system's answer.
    ///
    /// `slow` answers from each context alone, `fast` from shuffled groups of 20; the partial
    /// answers are merged in rounds. No prompt over --context-window less --answer-tokens is
    /// ever sent: long contexts are split, groups and merges packed to fit. Needs a judge
    /// model that writes (an endpoint, or --judge gguf:PATH). One question at a time into a
    /// resumable directory; --dry-run estimates the calls first.
    Reference(Box<ReferenceArgs>),
    /// Write a question set from your own documents, in their language, every item gated.
    ///
    /// SOURCE is a local index (`rageval index`), a folder of documents, one document, or a
    /// JSONL file of chunks. A seeded plan draws chunks round-robin over the documents and
    /// gives each item a category by --shares (fact, numeric, multi-hop and comparison over
    /// two chunks sharing keywords, unanswerable, follow-up). The judge writes each item
    /// in its chunk's language (zh/en prompt packs, never a translation); then gates drop
    /// it if the question leans on the passage, the answer is "unknown", a key point is not
    /// supported by the chunks (for unanswerable: a nearby chunk answers it), or the model
    /// answers it without the passage; duplicates (exact, MinHash) go last. Writes
    /// items.jsonl (every slot and its gates), testset.jsonl (the dataset eval and collect
    /// read: reference_context_ids are the gold chunks) and summary.json; prints the drops
    /// per gate and the realised shares against the plan. Needs a judge model that writes;
    /// resumable; --dry-run estimates the calls first.
    Testset(Box<TestsetArgs>),
    /// Calibrate a finished run's means with human labels on some of its samples:
    /// prediction-powered inference (PPI++) gives an unbiased mean with a valid 95% interval,
    /// narrower than the labels alone when the judge is informative. Writes the `calibrated`
    /// block into summary.json and rewrites the reports.
    Calibrate(Box<CalibrateArgs>),
    /// Label a seeded random sample of a finished run's samples in a browser page on
    /// 127.0.0.1, one at a time by keyboard (1–5 or y/n, n/→ next, b/← back), the judge's
    /// verdict shown only once the label is saved. Every label is saved at once to a labels
    /// file (one per labeller and metric) that `judge-check --labels` and `calibrate
    /// --labels` read; opening the page again resumes at the first item without a label.
    Label(Box<LabelArgs>),
    /// Rank, reference answers, then `eval` with the generated references on each question's
    /// first --top-k retrieved contexts, and the report — one folder (default
    /// runs/<dataset name>-pipeline) with a resumable directory per stage: rank/, reference/,
    /// dataset.jsonl, eval/. Run again after a stop, finished stages are kept.
    Pipeline(Box<PipelineArgs>),
    /// Join the run directories of `eval --shard i/n` into the one run a single machine
    /// would have written.
    ///
    /// The shards must be complete runs of the same data, metrics, settings and judge, each
    /// shard of n exactly once, every sample in its own shard and in no other (and, when the
    /// dataset is still readable, every sample in one). Writes results.jsonl, a summary with
    /// intervals recomputed over every sample, the manifest (every shard's sessions and
    /// judge accounts) and the reports. docs/scale.md shows a Kubernetes Indexed Job and a
    /// CI matrix that shard, then merge.
    Merge(MergeArgs),
    /// Move judge answers between machines: export the answer cache as JSON lines, import
    /// them into another cache.
    ///
    /// The cache is one SQLite file; keep it on a local disk (SQLite's locks do not hold on
    /// NFS or other network file systems) and move answers with these commands instead.
    Cache(CacheArgs),
    /// Send a run's scores where the team looks: span annotations on a Phoenix's traces,
    /// OpenTelemetry gen_ai.evaluation.result events (an OTLP/JSON file or OTLP/HTTP), an
    /// MLflow run. Failed writes are retried, counted and reported; the run directory is
    /// never changed by them (docs/integrations.md)
    Export(Box<ExportArgs>),
}

impl Command {
    /// The command's stderr options (the defaults for commands without them).
    pub fn output(&self) -> OutputArgs {
        match self {
            Command::Eval(args) => args.output,
            Command::Pipeline(args) => args.eval.output,
            Command::Rank(args) => args.data.output,
            Command::Reference(args) => args.data.output,
            Command::Testset(args) => args.output,
            Command::JudgeCheck(args) => args.output,
            Command::Collect(args) => args.output,
            Command::Index(args) => args.output,
            Command::Search(args) => args.output,
            Command::Calibrate(args) => args.output,
            Command::Label(args) => args.output,
            Command::Merge(args) => args.output,
            Command::Export(args) => args.output,
            _ => OutputArgs::default(),
        }
    }
}

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// The dataset: JSONL, JSON, CSV or XLSX, or a directory of GT_*/FULL_* files (as
    /// `rageval reference` writes them), or a running Phoenix's project,
    /// `phoenix://HOST:PORT/PROJECT` (its traces, one sample each; PHOENIX_API_KEY when it
    /// asks for a key).
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

    /// Seed of every random choice (bootstrap intervals).
    #[arg(long, default_value_t = rageval_core::stats::DEFAULT_SEED)]
    pub seed: u64,

    /// Bootstrap resamples for the 95% intervals.
    #[arg(long, default_value_t = rageval_core::stats::DEFAULT_BOOTSTRAP_RESAMPLES)]
    pub bootstrap_resamples: usize,

    /// Print the resolved settings as JSON and exit without running.
    #[arg(long, hide = true)]
    pub show_settings: bool,

    /// Estimate, without any model call, what the run would ask of the judge: model calls,
    /// prompt and completion tokens and cost, per metric (per stage for `pipeline`), for the
    /// whole run and per prompt template (prompts rendered as a real run renders them,
    /// counted with tiktoken). With --judge checker:DIR, the claims the checker will score
    /// (locally, no cost; the checker is not run); with --escalate, the model calls are the
    /// most the cascade can make. Sends nothing, writes nothing.
    #[arg(long)]
    pub dry_run: bool,

    #[command(flatten)]
    pub gate: GateArgs,

    #[command(flatten)]
    pub output: OutputArgs,

    /// Score only the first K retrieved contexts of each sample. K is lowered
    /// further for a sample whose largest judge prompt would not fit --context-window;
    /// results then say how many contexts were scored (`top_k` in the evidence).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u64).range(1..))]
    pub top_k: Option<u64>,

    /// When resuming a run, score again the cells that failed (a judge error, an answer that
    /// never parsed); they are replaced, never duplicated.
    #[arg(long)]
    pub retry_failed: bool,

    /// Score only shard I of N (1 ≤ I ≤ N): the samples whose id's SHA-256 modulo N is
    /// I − 1. N machines each run the same command with their own shard and their own --out;
    /// `rageval merge` joins the run directories into one run (docs/scale.md). `auto` takes
    /// the shard from the scheduler: JOB_COMPLETION_INDEX (a Kubernetes Indexed Job, from 0;
    /// Kubernetes gives no count, so write `auto/N` with N the Job's completions),
    /// SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_COUNT (a Slurm
    /// array), or RANK and WORLD_SIZE (torchrun); `auto/N` must agree with the scheduler's
    /// count where it gives one. Without any of them `auto` exits 2
    #[arg(long, value_name = "I/N|auto[/N]", value_parser = shard)]
    pub shard: Option<rageval_run::shard::Shard>,

    /// Write no report.html, report.md or results.xlsx (`rageval report RUN_DIR` writes
    /// them later): for shards, whose merge writes the reports, and for very large runs
    #[arg(long)]
    pub no_reports: bool,

    /// The largest share of judged cells that may fail: past it the run exits 4, naming
    /// the share and the commonest error (a judge that fails one cell in ten is broken, and
    /// the means are of what remained). A run whose every judged cell failed always exits 4
    #[arg(long, value_name = "PCT", default_value = "10%", value_parser = parse_max_failed)]
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

    #[command(flatten)]
    pub trace_source: TraceSourceArgs,

    #[command(flatten)]
    pub write_back: WriteBackArgs,

    #[command(flatten)]
    pub watch: WatchArgs,
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
    #[arg(long, value_enum, default_value_t = BatchFallbackArg::Resubmit)]
    pub batch_fallback: BatchFallbackArg,

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

/// `--batch-fallback`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BatchFallbackArg {
    Resubmit,
    Sync,
}

/// `--shard`: `i/n` as given, `auto` resolved here, once, from the process's environment.
fn shard(raw: &str) -> Result<rageval_run::shard::Shard, String> {
    raw.parse::<rageval_run::shard::ShardRequest>()?
        .resolve(crate::judge::env)
        .map_err(|error| error.to_string())
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

/// Arguments of `rageval cache`.
#[derive(Debug, Args)]
pub struct CacheArgs {
    #[command(subcommand)]
    pub action: CacheAction,
}

#[derive(Debug, Subcommand)]
pub enum CacheAction {
    /// Write every answer and embedding of the judge cache to FILE, one JSON line each
    /// (key, template, model, text, tokens, origin)
    Export {
        /// The file to write (`-`: stdout)
        file: PathBuf,
        #[command(flatten)]
        cache: CacheLocation,
    },
    /// Add the entries of FILE (written by `cache export`) to the judge cache; entries it
    /// holds already are kept
    Import {
        /// The file to read (`-`: stdin)
        file: PathBuf,
        #[command(flatten)]
        cache: CacheLocation,
    },
}

/// Which cache file `rageval cache` works on.
#[derive(Debug, Clone, Args)]
pub struct CacheLocation {
    /// The cache file (default: [judge.cache] path in rageval.toml, else
    /// $RAGEVAL_CACHE_DIR/judge.sqlite, else ~/.cache/rageval/judge.sqlite)
    #[arg(long, value_name = "PATH")]
    pub cache: Option<PathBuf>,

    /// Judge settings file (default: $RAGEVAL_CONFIG, else ./rageval.toml when present)
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
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

    /// Samples listed per metric and pair as moving most.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub top: usize,

    /// Name the versions in the order of the runs (repeat: `--name V1.0 --name "V1.1
    /// (rerank)"`); overrides the names given at eval time. A run left without one shows
    /// its `eval --name`, else its directory's name (a pipeline's folder's).
    #[arg(long = "name", value_name = "NAME")]
    pub names: Vec<String>,
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

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum DataFormat {
    Jsonl,
    Json,
    Csv,
    Xlsx,
    /// OpenInference spans as Phoenix exports them: one sample per trace
    #[value(name = "openinference")]
    OpenInference,
    /// A Langfuse export of traces and observations: one sample per trace
    Langfuse,
    /// Apache Parquet, streamed
    Parquet,
    /// Arrow IPC (file or stream layout; Feather v2), streamed
    Arrow,
}

/// The formats `eval` writes its results in, beside the reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ResultsFormat {
    /// results.jsonl only (the journal every run keeps)
    Jsonl,
    /// results.parquet too (one row per sample × metric), for Spark or pandas
    Parquet,
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
        /// A checker model folder (`checker:DIR`): also say which of the metric's tasks it
        /// would answer, with its family and weights' SHA-256
        #[arg(long = "judge", value_name = "checker:DIR", value_parser = str::parse::<LocalJudge>)]
        judge: Option<LocalJudge>,
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

/// Where the model judge is and how hard to use it. Flatten into every command that calls a
/// model; `judge::settings` merges it with the environment and `rageval.toml`
/// (docs/configuration.md).
#[derive(Debug, Clone, Args)]
pub struct JudgeArgs {
    /// Judge settings file (default: $RAGEVAL_CONFIG, else ./rageval.toml when present)
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,

    /// Base URL of an OpenAI-compatible judge endpoint, e.g. http://localhost:8000/v1
    /// (replaces the endpoints of the settings file)
    #[arg(long, value_name = "URL")]
    pub judge_base_url: Option<String>,

    /// The judge model, e.g. gpt-4o-mini (default: $RAGEVAL_JUDGE_MODEL). With a model, every
    /// judge task goes to the endpoint; without one (and no --judge), the embedded models
    /// answer: verdicts by the heuristic judge, statements by its sentence splitter, writing
    /// tasks by the local GGUF chat model, embeddings by all-MiniLM-L6-v2
    /// (docs/local-models.md)
    #[arg(long, value_name = "NAME")]
    pub judge_model: Option<String>,

    /// A local judge instead of an endpoint: `gguf:PATH` runs that GGUF chat model in-process
    /// (llama.cpp, each answer constrained to its task's JSON schema) for every judge task;
    /// `checker:DIR` runs the checker model in DIR (config.json, tokenizer.json,
    /// model.safetensors; ModernBERT or DeBERTa-v2) for support verdicts, the offline
    /// defaults for the rest (docs/judges.md); `heuristic` loads no model at all (verdicts
    /// and statements by the heuristic judge, tasks that need a model fail with the reason)
    #[arg(
        long = "judge",
        value_name = "gguf:PATH|checker:DIR|heuristic",
        value_parser = str::parse::<LocalJudge>
    )]
    pub local_judge: Option<LocalJudge>,

    /// With `--judge checker:DIR` and a chat endpoint (`--judge-base-url`, `--judge-model`):
    /// a cascade. Support-verdict claims the checker scores within LOW,HIGH (both included)
    /// go to the chat model; the checker settles the rest (docs/judges.md, "The cascade")
    #[arg(
        long,
        value_name = "LOW,HIGH",
        num_args = 0..=1,
        default_missing_value = "0.2,0.8",
        value_parser = str::parse::<rageval_tasks::EscalationBand>,
        requires = "local_judge"
    )]
    pub escalate: Option<rageval_tasks::EscalationBand>,

    /// The folder of the embedded models (default: $RAGEVAL_MODELS_DIR, else the search
    /// order in docs/local-models.md); scripts/fetch-models.sh fills it
    #[arg(long, value_name = "DIR")]
    pub models_dir: Option<PathBuf>,

    /// An embedding model at the same endpoints, for semantic_similarity,
    /// answer_relevance:embedding and answer_correctness:ragas (default:
    /// $RAGEVAL_JUDGE_EMBEDDING_MODEL, else the embedded all-MiniLM-L6-v2 when installed)
    #[arg(long, value_name = "NAME")]
    pub judge_embedding_model: Option<String>,

    /// The judge model's context window in tokens: a sample's contexts are cut (the last
    /// first) until its largest prompt fits. Tokens are estimated: a quarter of
    /// the characters, one per Chinese/Japanese/Korean character
    #[arg(long, default_value_t = 32_768, value_name = "TOKENS")]
    pub context_window: u64,

    /// The prompt pack: `auto` picks `zh` or `en` per sample from the question's script
    #[arg(
        long,
        value_name = "auto|en|zh",
        default_value = "auto",
        value_parser = str::parse::<LangChoice>
    )]
    pub lang: LangChoice,

    /// Most judge calls in flight, all endpoints together (default 16); twice as many
    /// samples are scored at once
    #[arg(long, value_name = "N", value_parser = at_least_one::<usize>)]
    pub concurrency: Option<usize>,

    /// Judge requests per minute, all endpoints together
    #[arg(long, value_name = "N", value_parser = at_least_one::<u32>)]
    pub rpm: Option<u32>,

    /// Judge tokens per minute, all endpoints together
    #[arg(long, value_name = "N", value_parser = at_least_one::<u32>)]
    pub tpm: Option<u32>,

    /// Seconds one judge HTTP attempt may take
    #[arg(long, value_name = "SECS", value_parser = positive_seconds)]
    pub timeout: Option<std::time::Duration>,

    /// Neither read nor write the judge's answer cache
    #[arg(long, conflicts_with = "offline")]
    pub no_cache: bool,

    /// Answer only from the cache: a miss is an error and no request is made
    #[arg(long)]
    pub offline: bool,

    /// The answer cache file (default: $RAGEVAL_CACHE_DIR/judge.sqlite, else
    /// ~/.cache/rageval/judge.sqlite)
    #[arg(long, value_name = "PATH")]
    pub cache: Option<PathBuf>,

    /// Stop after N answered judge calls (cached answers are free); `eval` then keeps its
    /// finished cells, exits 3 and resumes when run again with a larger cap
    #[arg(long, value_name = "N")]
    pub max_calls: Option<u64>,

    /// Stop before the judge's cost passes USD dollars (needs a price for the model); `eval`
    /// then keeps its finished cells, exits 3 and resumes when run again with a larger cap
    #[arg(long, value_name = "USD", value_parser = non_negative_dollars)]
    pub max_cost: Option<f64>,

    /// The judge's temperature, 0 to 2 (default 0), or `omit` to send none: OpenAI's
    /// reasoning models take only their default (a refusal is learned and recorded anyway)
    #[arg(long, value_name = "T|omit", value_parser = parse_temperature)]
    pub judge_temperature: Option<rageval_judge::Temperature>,

    /// Cap on the judge's generated tokens, thinking included (default: none sent). A reply
    /// cut off while thinking is asked once more without the cap
    #[arg(long, value_name = "N", value_parser = at_least_one::<u32>)]
    pub judge_max_tokens: Option<u32>,

    /// The name the cap is sent under at first: `max_tokens` (default) or
    /// `max_completion_tokens`; a 400 naming the other switches it for the run
    #[arg(long, value_name = "NAME", value_parser = parse_cap_param)]
    pub judge_max_tokens_param: Option<rageval_judge::CapParam>,

    /// `reasoning_effort` sent with every judge request (`none`, `minimal`, `low`,
    /// `medium`, `high`; `none` turns thinking off on Ollama); part of the run's identity
    #[arg(long, value_name = "LEVEL")]
    pub judge_reasoning_effort: Option<String>,

    /// Thinking `on` or `off` where the server's chat template takes a switch (Qwen3 on vLLM
    /// and SGLang: `chat_template_kwargs.enable_thinking`; DashScope: `enable_thinking`)
    #[arg(long, value_name = "on|off", value_parser = parse_on_off)]
    pub judge_thinking: Option<bool>,
}

fn parse_temperature(raw: &str) -> Result<rageval_judge::Temperature, String> {
    raw.parse()
}

fn parse_cap_param(raw: &str) -> Result<rageval_judge::CapParam, String> {
    rageval_judge::CapParam::from_field(raw.trim())
        .ok_or_else(|| "expected max_tokens or max_completion_tokens".into())
}

fn parse_on_off(raw: &str) -> Result<bool, String> {
    rageval_judge::config::parse_switch(raw).ok_or_else(|| "expected on or off".into())
}

/// `--max-failed`: a share of judged cells, as a percentage.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MaxFailed(pub f64);

fn parse_max_failed(raw: &str) -> Result<MaxFailed, String> {
    let number = raw.trim().trim_end_matches('%').trim();
    match number.parse::<f64>() {
        Ok(percent) if (0.0..=100.0).contains(&percent) => Ok(MaxFailed(percent / 100.0)),
        _ => Err("expected a percentage from 0 to 100, e.g. 10%".into()),
    }
}

fn at_least_one<T: std::str::FromStr + PartialOrd + From<u8>>(raw: &str) -> Result<T, String> {
    match raw.parse::<T>() {
        Ok(n) if n >= T::from(1) => Ok(n),
        _ => Err("expected a whole number ≥ 1".into()),
    }
}

fn at_least_two(raw: &str) -> Result<usize, String> {
    match raw.parse::<usize>() {
        Ok(n) if n >= 2 => Ok(n),
        _ => Err("expected a whole number ≥ 2".into()),
    }
}

fn positive_seconds(raw: &str) -> Result<std::time::Duration, String> {
    raw.parse::<f64>()
        .ok()
        .and_then(|s| std::time::Duration::try_from_secs_f64(s).ok())
        .filter(|d| !d.is_zero())
        .ok_or_else(|| "expected a positive number of seconds".into())
}

fn non_negative_dollars(raw: &str) -> Result<f64, String> {
    match raw.parse::<f64>() {
        Ok(usd) if usd.is_finite() && usd >= 0.0 => Ok(usd),
        _ => Err("expected a number of dollars ≥ 0".into()),
    }
}

/// Arguments of `rageval index`.
#[derive(Debug, Args)]
pub struct IndexArgs {
    /// Documents, or directories searched recursively for .pdf .docx .html .md .txt .jsonl
    /// files (a .jsonl file holds chunks already split: one `{"text", "id"}` object a line)
    #[arg(required = true, value_name = "DOCS")]
    pub docs: Vec<PathBuf>,

    /// The index directory to write
    #[arg(long, short, value_name = "INDEX")]
    pub out: PathBuf,

    /// Characters per chunk
    #[arg(long, default_value_t = rageval_sources::local::splitter::DEFAULT_CHUNK_SIZE)]
    pub chunk_size: usize,

    /// Characters shared by neighbouring chunks
    #[arg(long, default_value_t = rageval_sources::local::splitter::DEFAULT_CHUNK_OVERLAP)]
    pub chunk_overlap: usize,

    /// Replace an index already at --out (only once the new one is complete)
    #[arg(long)]
    pub overwrite: bool,

    /// Also embed every chunk, for vector and hybrid search: `minilm` for the embedded
    /// all-MiniLM-L6-v2 (no endpoint; scripts/fetch-models.sh provides it), `e5` for the
    /// embedded multilingual-e5-small (for Chinese or mixed-language chunks), any other name
    /// for that model on the OpenAI-compatible endpoint of RAGEVAL_JUDGE_BASE_URL (key:
    /// RAGEVAL_JUDGE_API_KEY)
    #[arg(long, value_name = "MODEL")]
    pub embed_model: Option<String>,

    #[command(flatten)]
    pub output: OutputArgs,
}

/// Arguments of `rageval search`.
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// An index directory written by `rageval index`
    pub index: PathBuf,

    /// The query
    pub query: String,

    /// How many chunks to return
    #[arg(short, default_value_t = 5)]
    pub k: usize,

    /// How to rank: BM25, embeddings (needs an index built with --embed-model), or both fused
    #[arg(long, value_enum, default_value_t = RankingArg::Bm25)]
    pub ranking: RankingArg,

    /// Print each hit as a JSON line (id, score, text, source, lines)
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub output: OutputArgs,
}

/// How a local index ranks chunks.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum RankingArg {
    Bm25,
    Vector,
    Hybrid,
}

/// Where `collect` gets each question's contexts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RetrieverKind {
    /// Elasticsearch (`[elasticsearch]` in --config)
    Es,
    /// A local index (`--index`, or `[local]` in --config)
    Local,
    /// The RAG service's own answer (`[service]` with `contexts_path`)
    Http,
}

/// Where `collect` gets each answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GeneratorKind {
    /// The RAG service under test (`[service]` in --config)
    Http,
    /// The baseline RAG: the retrieved contexts answered by the judge's chat model
    /// (`--judge-*`, `[judge]` in --config)
    Baseline,
}

/// Arguments of `rageval collect`. The judge's flags choose the chat model of
/// `--generator baseline`; `--config` and `--concurrency` serve both sides.
#[derive(Debug, Args)]
#[command(mut_arg("config", |a| a.help(
    "Settings file: `[elasticsearch]`, `[service]`, `[local]` for the sources (see \
     docs/sources.md), `[judge]` for the baseline's chat model (default: $RAGEVAL_CONFIG, \
     else ./rageval.toml when present)"
)))]
#[command(mut_arg("concurrency", |a| a.help(
    "Questions in flight at once (default 4); also the most judge calls in flight"
)))]
pub struct CollectArgs {
    /// The questions: JSONL, JSON, CSV or XLSX with a question column (references and other
    /// columns are carried over; other columns fill template placeholders)
    pub questions: PathBuf,

    /// Where the contexts come from
    #[arg(long, value_enum)]
    pub retriever: RetrieverKind,

    /// Where the answers come from
    #[arg(long, value_enum, default_value_t = GeneratorKind::Http)]
    pub generator: GeneratorKind,

    /// The dataset to write (JSONL); a rerun appends only the questions missing from it.
    /// Once every question has its record, the file is rewritten in question order
    #[arg(long, short, value_name = "DATA.jsonl")]
    pub out: PathBuf,

    /// The local index (overrides `[local] index`)
    #[arg(long)]
    pub index: Option<PathBuf>,

    /// Chunks per question from the local index (overrides `[local] k`)
    #[arg(short)]
    pub k: Option<usize>,

    /// Ranking of the local index (overrides `[local] ranking`)
    #[arg(long, value_enum)]
    pub ranking: Option<RankingArg>,

    #[command(flatten)]
    pub dataset: DatasetArgs,

    /// Ask only the first N questions
    #[arg(long, value_name = "N")]
    pub samples: Option<usize>,

    /// Treat a question without contexts (the retriever found nothing) or with an empty
    /// answer as failed: left out of the output (a rerun asks it again), exit code 2.
    /// Without it, such questions are written and counted in a warning
    #[arg(long)]
    pub fail_on_empty: bool,

    /// Print the resolved settings as aligned `key  value` lines (secrets masked) and exit
    /// without asking anything
    #[arg(long, hide = true)]
    pub show_settings: bool,

    #[command(flatten)]
    pub judge: JudgeArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}

/// How a dataset file is read — its format, the columns its fields are in, the sheet —
/// declared once for every command that reads one (`eval`, `collect`'s questions, `rank`,
/// `reference`, `pipeline`).
#[derive(Debug, Args)]
pub struct DatasetArgs {
    /// Map a field to a column of the data, e.g. `--map question=prompt` (repeatable).
    #[arg(long = "map", value_name = "FIELD=COLUMN")]
    pub field_map: Vec<String>,

    /// The dataset's format, when its extension does not say it. Trace exports, one sample
    /// per trace, are read only when named: `openinference` (Phoenix spans), `langfuse`.
    #[arg(long, value_enum)]
    pub format: Option<DataFormat>,

    /// The XLSX sheet to read (default: the first).
    #[arg(long)]
    pub sheet: Option<String>,
}

/// The dataset options shared by `rank` and `reference`.
#[derive(Debug, Args)]
pub struct RankDataArgs {
    /// The dataset (JSONL, JSON, CSV or XLSX): a question and its contexts in retriever order
    /// per row; gold labels (`reference_context_ids` or `reference_contexts`), when present,
    /// are compared with both orders.
    pub data: PathBuf,

    #[command(flatten)]
    pub dataset: DatasetArgs,

    /// Only the first N questions.
    #[arg(long, value_name = "N")]
    pub samples: Option<usize>,

    /// The output directory (default: `runs/<dataset name>-<command>`). A run there with
    /// the same data, settings and judge is resumed; another is refused.
    #[arg(long, short)]
    pub out: Option<PathBuf>,

    /// Replace what is already in the output directory instead of resuming it.
    #[arg(long)]
    pub overwrite: bool,

    /// When resuming, do again the questions whose judge calls failed.
    #[arg(long)]
    pub retry_failed: bool,

    /// Seed of every random choice (pair draws, the fast mode's shuffle).
    #[arg(long, default_value_t = rageval_rank::ranking::DEFAULT_SEED)]
    pub seed: u64,

    /// Estimate, without any model call, what the command would ask of the judge: calls,
    /// prompt and completion tokens and cost, per kind of call. Sends nothing, writes
    /// nothing.
    #[arg(long)]
    pub dry_run: bool,

    #[command(flatten)]
    pub output: OutputArgs,
}

/// How `rank` orders the useful contexts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AlgorithmArg {
    /// Windows ordered by the judge in two presentation orders, ≤ 2 concurrent rounds,
    /// aggregated by Bradley–Terry (about a hundred calls for 60 useful contexts)
    Listwise,
    /// Both-order pairwise comparisons in ≤ 2 concurrent rounds, aggregated by Bradley–Terry
    /// (about 1,300 calls for 60 useful contexts)
    #[value(name = "bradley-terry", alias = "pairwise")]
    BradleyTerry,
    /// The seed's binary insertion sort: one comparison at a time
    Insertion,
}

/// The ranking options shared by `rank` and `pipeline`.
#[derive(Debug, Clone, Args)]
pub struct RankingArgs {
    /// The ordering algorithm
    #[arg(long, value_enum, default_value_t = AlgorithmArg::Listwise)]
    pub algorithm: AlgorithmArg,

    /// Contexts graded in one judge call, at most (1: one call per context); batches shrink
    /// to fit --context-window
    #[arg(long, value_name = "N", default_value_t = rageval_rank::ranking::DEFAULT_GRADE_BATCH,
          value_parser = at_least_one::<usize>)]
    pub grade_batch: usize,

    /// Listwise only: contexts ordered in one judge call, at most (2 or more); windows shrink
    /// to fit --context-window
    #[arg(long, value_name = "N", default_value_t = rageval_rank::ranking::listwise::DEFAULT_WINDOW,
          value_parser = at_least_two)]
    pub window: usize,

    /// Insertion only: ask each comparison in both orders (the seed asks one)
    #[arg(long)]
    pub both_orders: bool,

    /// Questions ranked at once (each ranks its contexts concurrently)
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = at_least_one::<usize>)]
    pub questions_at_once: usize,
}

/// Arguments of `rageval rank`.
#[derive(Debug, Args)]
pub struct RankArgs {
    #[command(flatten)]
    pub data: RankDataArgs,

    #[command(flatten)]
    pub ranking: RankingArgs,

    /// Cut-off of top-k overlap and nDCG@k
    #[arg(long, value_name = "K", default_value_t = rageval_rank::agreement::DEFAULT_TOP_K,
          value_parser = at_least_one::<usize>)]
    pub top_k: usize,

    #[command(flatten)]
    pub judge: JudgeArgs,
}

/// How `reference` draws the first answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReferenceModeArg {
    /// One answer per context, then merge
    Slow,
    /// Shuffle, one answer per group of --group-size contexts, then merge
    Fast,
}

/// The reference options shared by `reference` and `pipeline`.
#[derive(Debug, Clone, Args)]
pub struct ReferenceOptions {
    /// Slow: an answer per context, then merged; fast: an answer per shuffled group of
    /// --group-size contexts, then merged
    #[arg(long, value_enum, default_value_t = ReferenceModeArg::Fast)]
    pub mode: ReferenceModeArg,

    /// Fast mode: contexts per answer call at most
    #[arg(long, value_name = "N", default_value_t = rageval_rank::reference::DEFAULT_GROUP_SIZE,
          value_parser = at_least_one::<usize>)]
    pub group_size: usize,

    /// Tokens kept free in the window for the judge's answer; prompts get at most
    /// --context-window less this
    #[arg(long, value_name = "TOKENS", default_value_t = 1_024)]
    pub answer_tokens: u64,
}

/// Arguments of `rageval reference`.
#[derive(Debug, Args)]
pub struct ReferenceArgs {
    #[command(flatten)]
    pub data: RankDataArgs,

    #[command(flatten)]
    pub reference: ReferenceOptions,

    #[command(flatten)]
    pub judge: JudgeArgs,
}

/// What `testset` does with an item the model answers without its passage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ClosedBookArg {
    /// Leave it out of the set
    Drop,
    /// Keep it, its closed_book gate marked failed
    Mark,
}

/// Arguments of `rageval testset`.
#[derive(Debug, Args)]
pub struct TestsetArgs {
    /// A local index directory (`rageval index`), a folder of documents, one document, or
    /// a JSONL file of chunks (`text` and `id` or `uuid` per line)
    pub source: PathBuf,

    /// Items to plan; gates and duplicates may leave fewer
    #[arg(long, value_name = "N", default_value_t = 50, value_parser = at_least_one::<usize>)]
    pub size: usize,

    /// Target category shares, e.g. `fact=0.4,numeric=0.2,multi_hop=0.2,unanswerable=0.2`
    /// (categories: fact, numeric, multi_hop, comparison, unanswerable, follow_up; the
    /// default gives 0.30, 0.15, 0.20, 0.10, 0.15, 0.10)
    #[arg(long, value_name = "CATEGORY=SHARE,...")]
    pub shares: Option<String>,

    /// Items one document may give, at most (default: no cap; documents are covered
    /// round-robin either way)
    #[arg(long, value_name = "N", value_parser = at_least_one::<usize>)]
    pub per_document: Option<usize>,

    /// Chunks shorter than this many characters are never asked about
    #[arg(long, value_name = "CHARS",
          default_value_t = rageval_core::testset::plan::DEFAULT_MIN_CHUNK_CHARS)]
    pub min_chunk_chars: usize,

    /// An item the model answers correctly without its passage is dropped, or kept and
    /// marked
    #[arg(long, value_enum, default_value_t = ClosedBookArg::Drop)]
    pub closed_book: ClosedBookArg,

    /// Estimated word-shingle Jaccard similarity (MinHash) from which two questions are
    /// near duplicates; the later one is dropped
    #[arg(long, value_name = "SIMILARITY",
          default_value_t = rageval_core::testset::minhash::DEFAULT_NEAR_DUPLICATE)]
    pub near_duplicate: f64,

    /// Folders and documents: characters per chunk
    #[arg(long, default_value_t = rageval_sources::local::splitter::DEFAULT_CHUNK_SIZE)]
    pub chunk_size: usize,

    /// Folders and documents: characters shared by neighbouring chunks
    #[arg(long, default_value_t = rageval_sources::local::splitter::DEFAULT_CHUNK_OVERLAP)]
    pub chunk_overlap: usize,

    /// The output directory (default: `runs/<source name>-testset`). A run there with the
    /// same chunks, settings and judge is resumed; another is refused.
    #[arg(long, short)]
    pub out: Option<PathBuf>,

    /// Replace what is already in the output directory instead of resuming it.
    #[arg(long)]
    pub overwrite: bool,

    /// When resuming, do again the items whose judge calls failed.
    #[arg(long)]
    pub retry_failed: bool,

    /// Seed of the plan's draws
    #[arg(long, default_value_t = rageval_rank::ranking::DEFAULT_SEED)]
    pub seed: u64,

    /// Estimate, without any model call, what the command would ask of the judge: calls,
    /// prompt and completion tokens and cost, per kind of call. Sends nothing, writes
    /// nothing.
    #[arg(long)]
    pub dry_run: bool,

    #[command(flatten)]
    pub judge: JudgeArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}

/// Arguments of `rageval pipeline`: `eval`'s (DATA, --out, --metrics, the judge, ...; --top-k,
/// default 10, is also the cut-off of the ranking's top-k overlap and nDCG@k) plus the
/// ranking and reference options.
#[derive(Debug, Args)]
#[command(mut_arg("out", |a| a.help(
    "The folder of the stages: rank/, reference/, dataset.jsonl, eval/ (default: \
     `runs/<dataset name>-pipeline`). Each stage resumes a run there with the same data, \
     settings and judge"
)))]
#[command(mut_arg("overwrite", |a| a.help(
    "Start every stage over instead of resuming it"
)))]
pub struct PipelineArgs {
    #[command(flatten)]
    pub eval: EvalArgs,

    #[command(flatten)]
    pub ranking: RankingArgs,

    #[command(flatten)]
    pub reference: ReferenceOptions,
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
