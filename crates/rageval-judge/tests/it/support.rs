//! Shared set-up: a judge over the mock with fast, test-sized timeouts and back-off.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use rageval_judge::{
    Cache, CacheMode, ChatModel, ChatRequest, ChatResponse, EndpointSettings, Judge, JudgeConfig,
    JudgeError, LimiterConfig, Message, OpenAiBackend, RetryPolicy, Sampling, StructuredRequest,
    TemplateId, Usage,
};
use rageval_testkit::{MockConfig, MockServer, Reply};
use serde::Deserialize;
use serde_json::{Value, json};

/// The answer type most tests ask for.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Verdict {
    pub reason: String,
    pub verdict: i64,
}

pub fn verdict_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "reason": {"type": "string", "minLength": 1},
            "verdict": {"type": "integer", "minimum": 0, "maximum": 1}
        },
        "required": ["reason", "verdict"],
        "additionalProperties": false
    })
}

pub fn request(template: &str, material: &str) -> StructuredRequest {
    StructuredRequest {
        template: TemplateId::new(template, 1),
        messages: vec![
            Message::system("Decide whether the statement is supported."),
            Message::user(material),
        ],
        schema: verdict_schema(),
        sampling: Sampling::default(),
    }
}

pub fn settings(mock: &MockServer, timeout: Duration) -> EndpointSettings {
    let mut settings = EndpointSettings::new(&mock.base_url, "mock-chat");
    settings.request_timeout = timeout;
    settings
}

pub fn fast_retry() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 8,
        base_delay: Duration::from_millis(2),
        max_delay: Duration::from_millis(40),
        max_retry_after: Duration::from_secs(2),
    }
}

pub fn config(mode: CacheMode) -> JudgeConfig {
    JudgeConfig {
        limiter: LimiterConfig {
            max_concurrency: 32,
            min_concurrency: 4,
            ..LimiterConfig::default()
        },
        retry: fast_retry(),
        cache_mode: mode,
        ..JudgeConfig::default()
    }
}

pub fn judge(
    settings: EndpointSettings,
    cache: Option<Cache>,
    config: JudgeConfig,
) -> Judge<OpenAiBackend> {
    Judge::new(
        OpenAiBackend::new(settings).expect("backend"),
        cache,
        config,
    )
}

/// A valid answer to [`verdict_schema`].
pub const GOOD: &str = r#"{"reason": "it says so", "verdict": 1}"#;

/// A mock answering through `f(body, call number)`.
pub fn scripted(f: impl Fn(&Value, u32) -> Reply + Send + Sync + 'static) -> MockConfig {
    let calls = AtomicU32::new(0);
    MockConfig {
        script: Some(Arc::new(move |body: &Value| {
            f(body, calls.fetch_add(1, Ordering::SeqCst))
        })),
        ..MockConfig::default()
    }
}

/// The text of the last user message of a chat request body.
pub fn last_user_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned()
}

/// `n` distinct structured requests of one template.
pub fn batch(template: &str, n: usize, tag: &str) -> Vec<StructuredRequest> {
    (0..n)
        .map(|i| {
            request(
                template,
                &format!("Statement {tag}-{i} holds for item {i}."),
            )
        })
        .collect()
}

/// A backend in memory that answers every request with `text` and sends no usage (as some
/// servers do), counting its calls; `repeats` is its [`ChatModel::answers_repeat`].
pub struct Canned {
    pub model: &'static str,
    pub text: &'static str,
    pub repeats: bool,
    pub calls: AtomicU32,
}

impl Canned {
    pub fn new(model: &'static str, text: &'static str, repeats: bool) -> Self {
        Canned {
            model,
            text,
            repeats,
            calls: AtomicU32::new(0),
        }
    }

    pub fn calls(&self) -> u32 {
        self.calls.load(Ordering::SeqCst)
    }
}

impl ChatModel for Canned {
    fn kind(&self) -> &str {
        "canned"
    }
    fn model(&self) -> &str {
        self.model
    }
    fn endpoint(&self) -> String {
        "memory".into()
    }
    fn supports_response_schema(&self) -> bool {
        true
    }
    fn answers_repeat(&self) -> bool {
        self.repeats
    }
    async fn chat(&self, _: &ChatRequest) -> Result<ChatResponse, JudgeError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Ok(ChatResponse {
            text: self.text.into(),
            usage: Usage::default(),
            finish_reason: None,
            thinking: None,
            thinking_text: String::new(),
        })
    }
}
