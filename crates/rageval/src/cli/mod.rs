//! Every command-line argument of `rageval`, in this folder: the command line and the
//! flags every command takes here, each command's own arguments in a file named for its
//! noun, the value parsers they share in `values`. Parsing touches no file and no
//! network; commands resolve these into settings.

mod compare_gate;
mod dataset;
mod eval;
mod export;
mod judge;
mod judge_check;
mod metrics;
mod pairwise;
mod rank;
mod run_dir;
mod runs;
mod sources;
#[cfg(test)]
mod tests;
mod testset;
mod values;
mod watch;

use std::path::PathBuf;

use clap::{ArgAction, Args, Parser, Subcommand};

pub use compare_gate::CompareGateArgs;
pub use dataset::DatasetArgs;
pub use eval::{BatchArgs, EvalArgs, GateArgs, LabelsArgs, ResultsFormat};
pub use export::{
    ExportArgs, ExportMlflowArgs, ExportOtlpArgs, ExportPhoenixArgs, ExportTarget, OtlpArgs,
    TraceSourceArgs, WriteBackArgs,
};
pub use judge::{CacheAction, CacheArgs, CacheLocation, JudgeArgs};
pub use judge_check::JudgeCheckArgs;
pub use metrics::{MetricsAction, MetricsArgs, TrecArgs};
pub use pairwise::PairwiseArgs;
pub use rank::{
    AlgorithmArg, PipelineArgs, RankArgs, RankDataArgs, RankingArgs, ReferenceArgs,
    ReferenceModeArg, ReferenceOptions,
};
pub use run_dir::RunDirArgs;
pub use runs::{
    CalibrateArgs, CompareArgs, LabelArgs, LabelScaleArg, MergeArgs, PageLangArg, ReportArgs,
    ServeArgs,
};
pub use sources::{CollectArgs, GeneratorKind, IndexArgs, RankingArg, RetrieverKind, SearchArgs};
pub use testset::{ClosedBookArg, TestsetArgs};
pub use watch::WatchArgs;

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
    Compare(Box<CompareArgs>),
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
    JudgeCheck(Box<JudgeCheckArgs>),
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
    /// Judge two or more versions' answers to the same questions head to head.
    ///
    /// VERSIONs are run directories, collected datasets or pipeline folders; questions pair
    /// by id, then by question text. Every pair of versions on every question is asked in
    /// both seat orders (each answer with its own version's contexts, the reference answer
    /// when the data has one); two verdicts naming the same version make it the winner,
    /// anything else is a tie, and opposite versions are a position flip. Writes
    /// pairwise.jsonl (per question: both verdicts with their reasons, the answers'
    /// lengths, the result), summary.json (per pair: wins, ties, losses, failed, win rate
    /// with a 95% bootstrap interval, sign-test p, position-flip rate, first-seat share,
    /// length bias; Bradley–Terry strengths for three or more versions), report.md and
    /// report.html (the head-to-head table, the questions that flipped with both reasons)
    /// and results.xlsx (the table; every verdict beside both answers). Needs a chat judge (the heuristic judge has no rule for it); resumable; --dry-run
    /// estimates the calls first; caps, Ctrl-C and a judge that does not answer stop it
    /// resumably (exit 3, 130, 4).
    Pairwise(Box<PairwiseArgs>),
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
            Command::Pairwise(args) => args.output,
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
