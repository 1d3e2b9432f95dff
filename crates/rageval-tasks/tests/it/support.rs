//! Shared set-up: a task judge over the mock server, readers of what the mock was sent, and
//! the shared validation folder (when it exists).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rageval_judge::{
    CacheMode, EndpointSettings, Judge, JudgeConfig, Models, OpenAiBackend, RetryPolicy,
};
use rageval_tasks::{Policy, TaskJudge};
use rageval_testkit::{MockConfig, MockServer, Reply};
use serde_json::Value;

/// Chat requests the mock received, in arrival order.
#[derive(Clone, Default)]
pub struct Sent(Arc<Mutex<Vec<Value>>>);

impl Sent {
    pub fn all(&self) -> Vec<Value> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The system and user messages of the `i`-th request.
    pub fn messages(&self, i: usize) -> (String, String) {
        let body = &self.all()[i];
        (message(body, "system"), message(body, "user"))
    }
}

/// The first message of `role` in a chat request body.
fn message(body: &Value, role: &str) -> String {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["role"] == role)
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned()
}

/// A mock that records every chat request and answers with `answer(system, user)`.
pub async fn scripted(
    answer: impl Fn(&str, &str) -> String + Send + Sync + 'static,
) -> (MockServer, Sent) {
    let sent = Sent::default();
    let record = sent.clone();
    let config = MockConfig {
        script: Some(Arc::new(move |body: &Value| {
            record
                .0
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(body.clone());
            Reply::Content(answer(&message(body, "system"), &message(body, "user")))
        })),
        ..MockConfig::default()
    };
    let mock = MockServer::start(config).await.expect("mock starts");
    (mock, sent)
}

fn config() -> JudgeConfig {
    JudgeConfig {
        retry: RetryPolicy {
            max_attempts: 2,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(5),
            max_retry_after: Duration::from_millis(50),
        },
        cache_mode: CacheMode::Off,
        ..JudgeConfig::default()
    }
}

/// The judge over `mock`: chat and embeddings from the same endpoint.
pub fn judge(mock: &MockServer) -> Judge<Models> {
    let backend =
        OpenAiBackend::new(EndpointSettings::new(&mock.base_url, "mock-chat")).expect("backend");
    Judge::new(Models::both(backend), None, config())
}

/// A router that sends every task to the mock's chat model.
pub fn llm_router(mock: &MockServer) -> TaskJudge {
    TaskJudge::new(Policy::llm()).with_llm(judge(mock))
}

/// The shared labelled sets (`rageval_tasks::validation::validation_dir`: beside the
/// repository, or `$RAGEVAL_VALIDATION_DIR`), or `None` — after saying on stderr that the
/// calling test checks nothing — where a checkout has no such folder.
#[allow(
    clippy::print_stderr,
    reason = "a skipped test says why in the test output"
)]
pub fn validation_dir() -> Option<PathBuf> {
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = rageval_tasks::validation::validation_dir(&workspace);
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "skipped: the shared labelled sets are not at {} (set {} to their folder)",
            dir.display(),
            rageval_tasks::validation::ENV_VALIDATION_DIR
        );
        None
    }
}
