//! The backend-neutral vocabulary of a model call: messages, sampling parameters, the
//! optional output schema, the answer and its token usage, and the [`ChatModel`] and
//! [`Embedder`] traits every backend implements.
//!
//! A backend makes exactly one attempt per call. Caching, rate limiting, retries and parsing
//! belong to [`Judge`](crate::Judge), so that they happen once, the same way, for every
//! backend.

use std::future::Future;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::JudgeError;

/// Who speaks a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions.
    System,
    /// The question or the material to judge.
    User,
    /// A model answer (in a conversation sent back, e.g. a re-ask).
    Assistant,
}

/// One chat message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// Who speaks.
    pub role: Role,
    /// What is said.
    pub content: String,
}

impl Message {
    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Message {
            role: Role::System,
            content: content.into(),
        }
    }
    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Message {
            role: Role::User,
            content: content.into(),
        }
    }
    /// An assistant message.
    pub fn assistant(content: impl Into<String>) -> Self {
        Message {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// Sampling parameters. Temperature 0 by default, for repeatable judgements.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sampling {
    /// Sampling temperature.
    pub temperature: f32,
    /// Nucleus sampling, when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f32>,
    /// Cap on generated tokens, when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Seed for servers that honour one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

impl Default for Sampling {
    fn default() -> Self {
        Sampling {
            temperature: 0.0,
            top_p: None,
            max_tokens: None,
            seed: None,
        }
    }
}

/// A JSON Schema the answer must match, sent as `response_format: json_schema`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputSchema {
    /// Schema name (letters, digits, `_`, `-`), required by the OpenAI API.
    pub name: String,
    /// The JSON Schema.
    pub schema: Value,
}

/// One request to a chat backend.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    /// The conversation.
    pub messages: Vec<Message>,
    /// Sampling parameters.
    pub sampling: Sampling,
    /// When set, the backend asks the server to constrain the answer to this schema.
    pub response_schema: Option<OutputSchema>,
}

/// Tokens a call consumed, as the server reported them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Generated tokens.
    pub completion_tokens: u64,
}

impl Usage {
    /// Both counts together.
    pub fn total(&self) -> u64 {
        self.prompt_tokens + self.completion_tokens
    }
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
    }
}

/// What a chat backend answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// The text of the first choice (empty when the server sent none).
    pub text: String,
    /// Token usage.
    pub usage: Usage,
    /// `stop`, `length`, ... when the server said.
    pub finish_reason: Option<String>,
}

/// A chat model reachable somehow. One call is one attempt: no retries, no cache.
pub trait ChatModel: Send + Sync + 'static {
    /// Backend kind, part of the cache key (`openai`, later `gguf`, ...).
    fn kind(&self) -> &str;
    /// Model name, part of the cache key.
    fn model(&self) -> &str;
    /// Where it lives, redacted, for error messages.
    fn endpoint(&self) -> String;
    /// Whether the server accepts `response_format: json_schema`; when not, the judge writes
    /// the schema into the prompt instead.
    fn supports_response_schema(&self) -> bool;
    /// Whether the backend schedules its own calls with per-endpoint limiters (an
    /// [`EndpointPool`](crate::EndpointPool)): the judge's limiter then enforces only the
    /// global caps and leaves overload cuts and `Retry-After` pauses to the backend, so one
    /// busy replica does not slow the others.
    fn limits_itself(&self) -> bool {
        false
    }
    /// Makes one call.
    fn chat(
        &self,
        request: &ChatRequest,
    ) -> impl Future<Output = Result<ChatResponse, JudgeError>> + Send;
}

/// A text-embedding model. One call is one attempt.
pub trait Embedder: Send + Sync + 'static {
    /// Backend kind, part of the cache key.
    fn embedding_kind(&self) -> &str;
    /// Embedding model name, part of the cache key.
    fn embedding_model(&self) -> &str;
    /// Like [`ChatModel::limits_itself`], for embedding calls.
    fn embedding_limits_itself(&self) -> bool {
        false
    }
    /// One vector per input, in order.
    fn embed(
        &self,
        inputs: &[String],
    ) -> impl Future<Output = Result<Vec<Vec<f32>>, JudgeError>> + Send;
}
