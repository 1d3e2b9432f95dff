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
use crate::reasoning::Thinking;

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
///
/// These are what a request asks, and part of its cache key. How they are spelled for one
/// endpoint (the cap's name, a temperature the server refuses) is its
/// [`RequestForm`](crate::forms::RequestForm), which is not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sampling {
    /// Sampling temperature; `None` sends none (the server's default, which is all OpenAI's
    /// reasoning models accept).
    pub temperature: Option<f32>,
    /// Nucleus sampling, when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f32>,
    /// Cap on generated tokens, when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Seed for servers that honour one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// How hard a reasoning model thinks (`none`, `minimal`, `low`, `medium`, `high`, ...),
    /// sent as `reasoning_effort` when set. Ollama turns thinking off with `none`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<String>,
    /// Thinking on or off where the server's chat template takes a switch (Qwen3 on vLLM and
    /// SGLang: `chat_template_kwargs.enable_thinking`; DashScope: `enable_thinking`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<bool>,
}

impl Default for Sampling {
    fn default() -> Self {
        Sampling {
            temperature: Some(0.0),
            top_p: None,
            max_tokens: None,
            seed: None,
            reasoning_effort: None,
            thinking: None,
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
    /// Generated tokens, thinking included (what a provider bills as output).
    pub completion_tokens: u64,
    /// Of the generated tokens, those spent thinking: the server's
    /// `completion_tokens_details.reasoning_tokens`, or counted from the thinking's text
    /// where it sent none; `None` when the answer had no thinking. A sum stays `None` only
    /// when every part was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
}

impl Usage {
    /// Prompt and completion tokens, without reasoning.
    pub fn new(prompt_tokens: u64, completion_tokens: u64) -> Self {
        Usage {
            prompt_tokens,
            completion_tokens,
            reasoning_tokens: None,
        }
    }

    /// Both counts together (reasoning is inside the completion tokens).
    pub fn total(&self) -> u64 {
        self.prompt_tokens + self.completion_tokens
    }
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.reasoning_tokens = match (self.reasoning_tokens, other.reasoning_tokens) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
        };
    }
}

/// What a chat backend answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// The answer of the first choice, without any thinking (empty when there is none).
    pub text: String,
    /// Token usage.
    pub usage: Usage,
    /// `stop`, `length`, ... when the server said.
    pub finish_reason: Option<String>,
    /// Where the model's thinking was, when it thought ([`crate::reasoning`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<Thinking>,
    /// The thinking's text, only until its tokens are counted where the server did not
    /// count them; never stored or sent back.
    #[serde(skip)]
    pub thinking_text: String,
}

impl ChatResponse {
    /// A plain answer: `text`, `usage`, finished normally, no thinking.
    pub fn plain(text: impl Into<String>, usage: Usage) -> Self {
        ChatResponse {
            text: text.into(),
            usage,
            finish_reason: Some("stop".into()),
            thinking: None,
            thinking_text: String::new(),
        }
    }

    /// Whether the reply was cut off at the token cap before any answer came
    /// (`finish_reason: "length"`, empty answer): typically a reasoning model that spent the
    /// cap thinking.
    pub fn cut_off(&self) -> bool {
        self.finish_reason.as_deref() == Some("length") && self.text.trim().is_empty()
    }
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
    /// Whether the same request always gets the same answer (a local model that decodes
    /// greedily, or with a fixed seed): then a structured ask whose climb failed is not
    /// asked afresh, which would only repeat it ([`crate::judge::FRESH_ROUNDS`]).
    fn answers_repeat(&self) -> bool {
        false
    }
    /// The request forms this backend settled on, one per endpoint it calls, with what
    /// each learned from refusals ([`crate::forms`]); empty for backends with no wire form.
    fn learned_forms(&self) -> Vec<crate::forms::LearnedForm> {
        Vec::new()
    }
    /// Starts each endpoint named in `forms` (by endpoint and model) in the form recorded
    /// there, as a resumed run does with what its earlier sessions learned, so the server is
    /// not refused again. Backends with no wire form ignore it.
    fn adopt_forms(&self, forms: &[crate::forms::LearnedForm]) {
        let _ = forms;
    }
    /// Learns from a refusal (a 400 body) of the request `sent` that came back some other
    /// way than a call (a batch job's error line): true when the request is worth sending
    /// again in the form now in use. Backends with no wire form learn nothing.
    fn learn_from_refusal(&self, body: &str, sent: &serde_json::Value) -> bool {
        let _ = (body, sent);
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
