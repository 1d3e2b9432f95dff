//! Token counts without a server, and the plan arithmetic built on them.
//!
//! Counting uses tiktoken's encodings (tiktoken-rs): the model's own for OpenAI models,
//! `o200k_base` for any other (DeepSeek, Llama, Qwen...: their tokenizers differ, so counts
//! are estimates within tens of percent — good for budgets, never billed). Each encoding is
//! built once, lazily, on first use (≈0.2 s). These are pure functions: no call, no I/O.

use crate::accounting::Price;
use crate::chat::{ChatRequest, Usage};

/// Completion tokens assumed for a request that sets no `max_tokens`, when planning or
/// reserving budget. A judge verdict with a reason is typically 30–150 tokens.
pub const DEFAULT_COMPLETION_ESTIMATE: u64 = 256;
/// Framing tokens per chat message (role markers), as OpenAI's cookbook counts them.
const TOKENS_PER_MESSAGE: u64 = 3;
/// Tokens that prime the assistant's reply, once per request.
const REPLY_PRIMING: u64 = 3;

fn encoding(model: &str) -> &'static tiktoken_rs::CoreBPE {
    tiktoken_rs::bpe_for_model(model).unwrap_or_else(|_| tiktoken_rs::o200k_base_singleton())
}

/// Tokens of `text` in `model`'s encoding (special tokens counted as plain text).
pub fn count_tokens(model: &str, text: &str) -> u64 {
    encoding(model).count_ordinary(text) as u64
}

/// Prompt tokens of `request` as `model` would bill them: every message with its framing,
/// plus the output schema when the request carries one.
pub fn prompt_tokens(model: &str, request: &ChatRequest) -> u64 {
    let bpe = encoding(model);
    let messages: u64 = request
        .messages
        .iter()
        .map(|m| TOKENS_PER_MESSAGE + bpe.count_ordinary(&m.content) as u64)
        .sum();
    let schema = request
        .response_schema
        .as_ref()
        .map_or(0, |s| bpe.count_ordinary(&s.schema.to_string()) as u64);
    messages + schema + REPLY_PRIMING
}

/// The completion tokens a request may use: its `max_tokens`, else
/// [`DEFAULT_COMPLETION_ESTIMATE`].
pub fn completion_allowance(request: &ChatRequest) -> u64 {
    request
        .sampling
        .max_tokens
        .map_or(DEFAULT_COMPLETION_ESTIMATE, u64::from)
}

/// Tokens of one answered call counted locally, for servers that send no `usage`.
pub fn count_usage(model: &str, request: &ChatRequest, answer: &str) -> Usage {
    Usage {
        prompt_tokens: prompt_tokens(model, request),
        completion_tokens: count_tokens(model, answer),
        reasoning_tokens: None,
    }
}

/// What a planned batch of calls will take, before any is made (`--dry-run`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PlanEstimate {
    /// Model calls (first asks; re-asks and retries are not foreseeable).
    pub calls: u64,
    /// Prompt tokens of those calls.
    pub prompt_tokens: u64,
    /// Completion tokens expected.
    pub completion_tokens: u64,
}

impl PlanEstimate {
    /// Adds `count` calls shaped like `request`, each expected to generate
    /// `completion_tokens` (`None`: the request's [`completion_allowance`]).
    pub fn add(
        &mut self,
        model: &str,
        request: &ChatRequest,
        completion_tokens: Option<u64>,
        count: u64,
    ) {
        let completion = completion_tokens.unwrap_or_else(|| completion_allowance(request));
        self.calls += count;
        self.prompt_tokens += prompt_tokens(model, request) * count;
        self.completion_tokens += completion * count;
    }

    /// Adds another plan's totals.
    pub fn merge(&mut self, other: &PlanEstimate) {
        self.calls += other.calls;
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
    }

    /// The plan's cost at `price`, in US dollars.
    pub fn cost_usd(&self, price: &Price) -> f64 {
        price.cost_usd(Usage {
            prompt_tokens: self.prompt_tokens,
            completion_tokens: self.completion_tokens,
            reasoning_tokens: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::{Message, OutputSchema, Sampling};
    use serde_json::json;

    fn request(texts: &[&str]) -> ChatRequest {
        ChatRequest {
            messages: texts.iter().map(|t| Message::user(*t)).collect(),
            sampling: Sampling::default(),
            response_schema: None,
        }
    }

    #[test]
    fn counts_match_tiktoken_references() {
        // cl100k_base: "hello world" is [15339, 1917]; o200k_base too is two tokens.
        assert_eq!(count_tokens("gpt-4", "hello world"), 2);
        assert_eq!(count_tokens("gpt-4o-mini", "hello world"), 2);
        // An unknown model falls back to o200k_base rather than failing.
        assert_eq!(count_tokens("deepseek-chat", "hello world"), 2);
        assert_eq!(count_tokens("gpt-4o", ""), 0);
    }

    #[test]
    fn prompt_counts_framing_and_schema() {
        let plain = request(&["hello world"]);
        assert_eq!(prompt_tokens("gpt-4o", &plain), 3 + 2 + 3);
        let two = request(&["hello world", "hello world"]);
        assert_eq!(prompt_tokens("gpt-4o", &two), 2 * (3 + 2) + 3);
        let mut with_schema = plain.clone();
        with_schema.response_schema = Some(OutputSchema {
            name: "v".into(),
            schema: json!({"type": "object"}),
        });
        assert!(prompt_tokens("gpt-4o", &with_schema) > prompt_tokens("gpt-4o", &plain));
    }

    #[test]
    fn plan_multiplies_and_prices() {
        let mut req = request(&["hello world"]);
        let mut plan = PlanEstimate::default();
        plan.add("gpt-4o", &req, None, 10);
        assert_eq!(plan.calls, 10);
        assert_eq!(plan.prompt_tokens, 80);
        assert_eq!(plan.completion_tokens, 10 * DEFAULT_COMPLETION_ESTIMATE);
        req.sampling.max_tokens = Some(20);
        let mut other = PlanEstimate::default();
        other.add("gpt-4o", &req, None, 5);
        plan.merge(&other);
        assert_eq!(plan.completion_tokens, 2560 + 100);
        let price = Price {
            prompt_per_million: 1.0,
            completion_per_million: 2.0,
        };
        let expected = (120.0 * 1.0 + 2660.0 * 2.0) / 1e6;
        assert!((plan.cost_usd(&price) - expected).abs() < 1e-12);
    }
}
