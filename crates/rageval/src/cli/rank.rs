//! `rank`, `reference` and `pipeline`: the question-at-a-time commands over a dataset of
//! questions and their retrieved contexts, and the ranking and reference options they share.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::values::{at_least_one, at_least_two};
use super::{DatasetArgs, EvalArgs, JudgeArgs, OutputArgs, RunDirArgs};

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

    #[command(flatten)]
    pub run_dir: RunDirArgs,

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

    /// The cut-off K of the agreement between the judge's order and the retriever's: top-k
    /// overlap and nDCG@k (formerly --top-k, still taken). Every context is graded and
    /// ordered whatever K is; eval's --top-k, by contrast, scores only the first K
    #[arg(long = "agreement-k", alias = "top-k", value_name = "K",
          default_value_t = rageval_rank::agreement::DEFAULT_TOP_K,
          value_parser = at_least_one::<usize>)]
    pub agreement_k: usize,

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
#[command(mut_arg("top_k", |a| a.help(format!(
    "Score only the first K retrieved contexts of each question in the eval stage (default \
     {}), and the cut-off K of the rank stage's agreement with the retriever (top-k overlap, \
     nDCG@k; `rank --agreement-k`). K is lowered further for a sample whose largest judge \
     prompt would not fit --context-window",
    rageval_rank::agreement::DEFAULT_TOP_K
))))]
pub struct PipelineArgs {
    #[command(flatten)]
    pub eval: EvalArgs,

    #[command(flatten)]
    pub ranking: RankingArgs,

    #[command(flatten)]
    pub reference: ReferenceOptions,
}
