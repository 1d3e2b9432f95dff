//! Where the model judge is and how hard to use it (every judged command flattens
//! [`JudgeArgs`]), and `rageval cache`, which moves its answers between machines.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use rageval_run::LocalJudge;
use rageval_tasks::LangChoice;

use rageval_judge::settings::positive_seconds;

use super::values::{at_least_one, non_negative_dollars};

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

    /// Stop after N answered judge calls (cached answers are free). What is finished is
    /// kept (eval: cells; judge-check: judgements; rank, reference, pairwise: questions; testset:
    /// items; collect: records; pipeline: each stage's), the command exits 3, and run again
    /// with a larger cap it goes on from there
    #[arg(long, value_name = "N")]
    pub max_calls: Option<u64>,

    /// Stop before the judge's cost passes USD dollars (needs a price for the model). What
    /// is finished is kept as with --max-calls, the command exits 3, and run again with a
    /// larger cap it goes on from there
    #[arg(long, value_name = "USD", value_parser = non_negative_dollars)]
    pub max_cost: Option<f64>,

    /// The judge's temperature, 0 to 2 (default 0), or `omit` to send none: OpenAI's
    /// reasoning models take only their default (a refusal is learned and recorded anyway)
    #[arg(long, value_name = "T|omit", value_parser = str::parse::<rageval_judge::Temperature>)]
    pub judge_temperature: Option<rageval_judge::Temperature>,

    /// Cap on the judge's generated tokens, thinking included (default: none sent). A reply
    /// cut off while thinking is asked once more without the cap
    #[arg(long, value_name = "N", value_parser = at_least_one::<u32>)]
    pub judge_max_tokens: Option<u32>,

    /// The name the cap is sent under at first: `max_tokens` (default) or
    /// `max_completion_tokens`; a 400 naming the other switches it for the run
    #[arg(long, value_name = "NAME", value_parser = str::parse::<rageval_judge::CapParam>)]
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

fn parse_on_off(raw: &str) -> Result<bool, String> {
    rageval_judge::config::parse_switch(raw).ok_or_else(|| "expected on or off".into())
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
