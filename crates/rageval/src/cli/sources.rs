//! Where data comes from: `index` and `search` (a local index) and `collect` (a retriever
//! and a RAG service asked every question).

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::{DatasetArgs, JudgeArgs, OutputArgs};

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
