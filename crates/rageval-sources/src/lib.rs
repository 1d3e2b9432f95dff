//! Where rageval's evaluation data comes from: the retriever and the RAG service under test,
//! a local corpus index, and `collect`, which turns a list of questions into a dataset.
//!
//! - [`system`]: the [`Retriever`] and [`Generator`] traits and what they return.
//! - [`elastic`]: [`EsRetriever`], one templated `_search` per question (seed S3).
//! - [`service`]: [`RagService`], the HTTP client of the system under test (GET/POST,
//!   templated parameters, headers and body); [`response`] reads its answer as text, JSON,
//!   streamed lines or server-sent events.
//! - [`local`]: the embedded index — loaders, seed S4's splitter, tantivy BM25 with jieba,
//!   optional embeddings and hybrid ranking.
//! - [`baseline`]: [`BaselineGenerator`], seed S4's baseline RAG — retrieved contexts
//!   answered by the judge's chat model through the typed task `AnswerFromContexts`.
//! - [`collect`](mod@collect): concurrent, resumable collection into the JSONL dataset `rageval eval`
//!   reads.
//! - [`phoenix`]: a running Arize Phoenix as a dataset source: a project's traces in a time
//!   window, filtered and sampled by trace id, read through its REST API and written as the
//!   span export the OpenInference reader reads ([`PhoenixClient`]).
//! - [`rest`]: [`RestClient`], JSON over HTTP to trace and experiment servers (Phoenix,
//!   MLflow, OTLP collectors) with the judge's retry and redaction rules; `rageval-export`
//!   writes through it.
//! - [`template`]: `{{placeholder}}` templates with positioned errors; [`json_path`]: dotted
//!   paths into JSON.
//! - [`config`]: the TOML sources file and the `RAGEVAL_ES_*` variables.
//! - [`error`]: [`SourceError`], and which errors are retryable or fatal.
//!
//! Model calls go through `rageval-judge` (embeddings) and `rageval-tasks` (the baseline's
//! answers); this crate holds no prompt text. It never prints and never exits.

pub mod baseline;
pub mod collect;
pub mod config;
pub mod elastic;
pub mod error;
mod http;
pub mod json_path;
pub mod local;
pub mod phoenix;
pub mod response;
pub mod rest;
pub mod service;
pub mod system;
pub mod template;

pub use baseline::BaselineGenerator;
pub use collect::{CollectOptions, CollectReport, ContextSource, Progress, collect};
pub use config::{LocalSettings, SourcesConfig};
pub use elastic::{EsAuth, EsRetriever, EsSettings};
pub use error::SourceError;
pub use http::DEFAULT_CONNECT_TIMEOUT;
pub use local::{IndexBuilder, LocalIndex, LocalRetriever, Ranking, Splitter};
pub use phoenix::{PhoenixClient, PhoenixLocation, PhoenixQuery, PhoenixSpans};
pub use response::{ContextFields, ResponseShape, StreamMode};
pub use rest::{RestAuth, RestClient};
pub use service::{HttpMethod, RagService, ServiceSettings};
pub use system::{Generated, Generator, Retrieved, Retriever};
pub use template::{Template, Variables};
