//! Shared set-up: a judge over the mock with fast, test-sized timeouts and back-off.

use std::time::Duration;

use rageval_judge::{
    Cache, CacheMode, EndpointSettings, Judge, JudgeConfig, LimiterConfig, Message, OpenAiBackend,
    RetryPolicy, Sampling, StructuredRequest, TemplateId,
};
use rageval_testkit::MockServer;
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
