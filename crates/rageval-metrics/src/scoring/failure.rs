//! Why a judged step gave no result, in words a report can show: the task's error with its
//! causes and, when short enough, the model's raw answer. It holds no score.

use std::fmt;

use rageval_tasks::TaskError;

/// Longest raw model answer quoted in a failure message.
const RAW_QUOTE_CHARS: usize = 300;

/// Why a judged step gave no result: the task's error with its causes, and the model's raw
/// answer when it was short enough to quote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure(String);

impl Failure {
    /// A failure described by `message`.
    pub fn new(message: impl Into<String>) -> Self {
        Failure(message.into())
    }

    /// The message of `error`, every cause that adds something, and the raw answer.
    pub fn from_task(error: &TaskError) -> Self {
        let mut message = error.to_string();
        let mut cause = std::error::Error::source(error);
        while let Some(current) = cause {
            let text = current.to_string();
            if !message.contains(&text) {
                message.push_str(": ");
                message.push_str(&text);
            }
            cause = current.source();
        }
        if let Some(raw) = error.raw_answer() {
            let quoted: String = raw.chars().take(RAW_QUOTE_CHARS).collect();
            let more = if raw.chars().count() > RAW_QUOTE_CHARS {
                "…"
            } else {
                ""
            };
            message.push_str(&format!(" (raw answer: {quoted:?}{more})"));
        }
        Failure(message)
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<TaskError> for Failure {
    fn from(error: TaskError) -> Self {
        Failure::from_task(&error)
    }
}
