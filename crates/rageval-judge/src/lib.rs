//! The one model pipeline of rageval: every chat (and later embedding) call a metric makes
//! goes through a [`Judge`].
//!
//! - [`chat`]: the backend-neutral request/response types and the [`ChatModel`] and
//!   [`Embedder`] traits (one attempt per call).
//! - [`openai`]: [`OpenAiBackend`], any OpenAI-compatible HTTP server.
//! - [`models`]: [`Models`], the chat and embedding backends chosen at run time behind one
//!   type, so `Judge<Models>` serves them all.
//! - [`settings`]: [`EndpointSettings`] from explicit values or the `RAGEVAL_JUDGE_*`
//!   environment (every variable declared there once).
//! - [`secret`]: [`ApiKey`], which prints as `****`.
//! - [`limiter`]: adaptive concurrency, requests/tokens per minute, `Retry-After` pauses.
//! - [`retry`]: which errors to retry (429, 5xx, timeouts, resets — never 4xx client
//!   errors) and the jittered exponential back-off.
//! - [`structured`]: the output ladder (schema → tolerant parse → validation → one re-ask →
//!   one fresh climb → failed with the raw text) and its per-template rung counts; only
//!   answers that parsed are cached.
//! - [`cache`]: the content-addressed SQLite cache, with read-write, offline and off modes.
//! - [`judge`]: [`Judge`], which chains them: cache → limiter → backend with retries →
//!   ladder.
//! - [`error`]: the one error type, [`JudgeError`], and which errors are retryable.
//!
//! Prompt text and typed judge tasks belong to `rageval-tasks`; this crate knows no metric.
//! It never prints: callers read [`Judge::stats`] and [`Judge::rung_counts`].

pub mod cache;
pub mod chat;
pub mod error;
pub mod judge;
pub mod limiter;
pub mod models;
pub mod openai;
pub mod retry;
pub mod secret;
pub mod settings;
pub mod structured;

pub use cache::{Cache, CacheKey, CacheMode};
pub use chat::{ChatModel, ChatRequest, ChatResponse, Embedder, Message, Role, Sampling, Usage};
pub use error::JudgeError;
pub use judge::{Answer, Completion, Embeddings, Judge, JudgeConfig, JudgeStats};
pub use limiter::{Limiter, LimiterConfig};
pub use models::{AnyChatModel, AnyEmbedder, BoxFuture, Models};
pub use openai::OpenAiBackend;
pub use retry::RetryPolicy;
pub use secret::ApiKey;
pub use settings::{EndpointSettings, SchemaMode, default_cache_path};
pub use structured::{Rung, RungCounts, StructuredRequest, TemplateId};
