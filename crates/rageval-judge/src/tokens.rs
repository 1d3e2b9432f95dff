//! Token counts without a server, and the plan arithmetic built on them.
//!
//! Counting uses tiktoken's encodings (tiktoken-rs): the model's own for OpenAI models,
//! `o200k_base` for any other (DeepSeek, Llama, Qwen...: their tokenizers differ, so counts
//! are estimates within tens of percent — good for budgets, never billed). Each encoding is
//! built once, lazily, on first use (≈0.2 s). These are pure functions: no call, no I/O.
//!
//! A text is counted line by line, each distinct line's count remembered (a bounded memo
//! shared by every thread): a ranking's prompts show the same passages in many windows,
//! and a dry run renders thousands of them, so most lines are counted once. The sum is the
//! count of the whole text: lines are cut only where the encodings' pre-tokenizer ends a
//! piece anyway (`lines_for_counting`).

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Mutex, OnceLock};

use crate::accounting::Price;
use crate::chat::{ChatRequest, Usage};

/// Completion tokens assumed for a request that sets no `max_tokens`, when planning or
/// reserving budget. A judge verdict with a reason is typically 30–150 tokens.
pub const DEFAULT_COMPLETION_ESTIMATE: u64 = 256;
/// Framing tokens per chat message (role markers), as OpenAI's cookbook counts them.
const TOKENS_PER_MESSAGE: u64 = 3;
/// Tokens that prime the assistant's reply, once per request.
const REPLY_PRIMING: u64 = 3;
/// Distinct lines whose counts are remembered; past it the memo starts over.
const MEMO_LINES: usize = 200_000;

fn encoding(model: &str) -> &'static tiktoken_rs::CoreBPE {
    tiktoken_rs::bpe_for_model(model).unwrap_or_else(|_| tiktoken_rs::o200k_base_singleton())
}

/// Tokens of `text` in `model`'s encoding (special tokens counted as plain text).
pub fn count_tokens(model: &str, text: &str) -> u64 {
    count_remembered(encoding(model), text) as u64
}

/// Tokens of `text` in `bpe`, summed over its lines, each line's count remembered.
fn count_remembered(bpe: &'static tiktoken_rs::CoreBPE, text: &str) -> usize {
    static MEMO: OnceLock<Mutex<HashMap<(usize, u64), usize>>> = OnceLock::new();
    let memo = MEMO.get_or_init(Mutex::default);
    let encoding = std::ptr::from_ref(bpe) as usize;
    lines_for_counting(text)
        .map(|line| {
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            line.hash(&mut hasher);
            let key = (encoding, hasher.finish());
            let lock = || memo.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            if let Some(&count) = lock().get(&key) {
                return count;
            }
            let count = bpe.count_ordinary(line);
            #[cfg(test)]
            tests::ENCODED.with(|encoded| encoded.set(encoded.get() + 1));
            let mut memo = lock();
            if memo.len() >= MEMO_LINES {
                memo.clear();
            }
            memo.insert(key, count);
            count
        })
        .sum()
}

/// `text` cut after each run of line breaks that a character other than whitespace or `/`
/// follows. The pre-tokenizers of tiktoken's encodings (cl100k, o200k, p50k) end a piece
/// there: no piece starts with a line break, and a piece that holds one (`\s*[\r\n]+`, or
/// punctuation's trailing `[\r\n/]*`) runs to the end of the run of breaks, and `/` only
/// after it. So the count of the text is the sum of the counts of its lines.
fn lines_for_counting(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut at = 0;
    std::iter::from_fn(move || {
        while at < bytes.len() {
            let breaks = matches!(bytes[at], b'\n' | b'\r');
            at += 1;
            if breaks {
                let next = bytes.get(at).copied();
                let ends_run = next.is_some_and(|b| b != b'\n' && b != b'\r');
                // ASCII whitespace and `/` continue a piece; so may any non-ASCII
                // whitespace (its first byte is never ASCII), checked by the char.
                let cut = ends_run
                    && next.is_some_and(|b| !(b.is_ascii_whitespace() || b == b'/'))
                    && text[at..]
                        .chars()
                        .next()
                        .is_some_and(|c| !c.is_whitespace());
                if cut {
                    let line = &text[start..at];
                    start = at;
                    return Some(line);
                }
            }
        }
        (start < bytes.len()).then(|| {
            let line = &text[start..];
            start = bytes.len();
            line
        })
    })
}

/// Prompt tokens of `request` as `model` would bill them: every message with its framing,
/// plus the output schema when the request carries one.
pub fn prompt_tokens(model: &str, request: &ChatRequest) -> u64 {
    let bpe = encoding(model);
    let messages: u64 = request
        .messages
        .iter()
        .map(|m| TOKENS_PER_MESSAGE + count_remembered(bpe, &m.content) as u64)
        .sum();
    let schema = request
        .response_schema
        .as_ref()
        .map_or(0, |s| count_remembered(bpe, &s.schema.to_string()) as u64);
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
    use std::cell::Cell;

    thread_local! {
        /// Lines this thread encoded because the memo did not hold them (tests run on
        /// threads of their own, so one test's count is not another's).
        pub(super) static ENCODED: Cell<usize> = const { Cell::new(0) };
    }

    /// Issue 25, item 7: a rank dry run of 20 questions × 125 contexts took 17 s, most of it
    /// encoding the same passages again in every window that shows them. A passage is now
    /// encoded once, however many prompts show it, in whatever order.
    #[test]
    fn regression_issue_25_a_passage_shown_in_many_windows_is_encoded_once() {
        let passages: Vec<String> = (0..40)
            .map(|i| format!("Passage {i} of issue twenty-five: the market grew {i}% in 2024."))
            .collect();
        let window = |shown: &[usize]| -> String {
            shown
                .iter()
                .map(|&i| {
                    format!(
                        "<<<DATA-{i:08x} context\n{}\nDATA-{i:08x}>>>\n",
                        passages[i]
                    )
                })
                .collect()
        };
        let first: Vec<usize> = (0..40).collect();
        count_tokens("gpt-4o", &window(&first));
        let before = ENCODED.with(Cell::get);
        for shift in 1..10 {
            let shown: Vec<usize> = (0..40).map(|i| (i * 7 + shift) % 40).rev().collect();
            let text = window(&shown);
            assert_eq!(
                count_tokens("gpt-4o", &text),
                encoding("gpt-4o").count_ordinary(&text) as u64
            );
        }
        assert_eq!(
            ENCODED.with(Cell::get),
            before,
            "a passage was encoded again"
        );
    }

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

    /// Counting line by line gives the whole text's count, in every encoding, for the
    /// texts where a line ends next to what a piece may hold: spaces, punctuation, `/`,
    /// `\r\n`, runs of breaks, Chinese text, a break at either end.
    #[test]
    fn counting_by_lines_equals_counting_the_whole_text() {
        let texts = [
            "hello world",
            "line one\nline two\n",
            "\n\nstarts with breaks\nand ends without",
            "trailing spaces   \n  leading spaces\n\tTab\n",
            "punctuation.\n\n!?\n/path/after/break\n//comment\n",
            "少儿编程市场规模约为488亿元。\n家长的认知，逐年提高；\n\n“引号”\n",
            "windows\r\nline\r\n\r\nends\r\n",
            "<<<DATA-1a2b3c4d context 1\nAda founded it in 1990's.\nDATA-1a2b3c4d>>>\n",
            "numbers 12345\n67890\n  \n\u{3000}ideographic space\n\u{a0}nbsp\n",
            "{\"type\": \"object\"}\n- item\n* item\n# heading\n",
            "",
            "\n",
            " \n \n",
        ];
        for model in ["gpt-4", "gpt-4o", "deepseek-chat"] {
            let bpe = encoding(model);
            for text in texts {
                assert_eq!(
                    count_remembered(bpe, text),
                    bpe.count_ordinary(text),
                    "{model}: {text:?}"
                );
                let joined: String = lines_for_counting(text).collect();
                assert_eq!(joined, text);
            }
        }
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
