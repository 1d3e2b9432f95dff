//! Support verdicts from a checker model (`rageval_judge::SupportChecker`): each statement
//! checked against the contexts, P(supported) read as a label. It answers
//! [`SupportVerdicts`] only; statements are still split by whoever splits them (the
//! heuristic's sentence splitter without a chat model).
//!
//! The probability goes into the reason, not into [`SupportVerdict::score`]: that field is
//! a degree of support that graded metrics multiply in, and a classifier's confidence is
//! not one. A token-head model's unsupported spans are named in the reason, as evidence.

use rageval_judge::SupportChecker;
use rageval_judge::Usage;
use serde::{Deserialize, Serialize};

use crate::error::TaskError;
use crate::judged::{Implementation, Judged};
use crate::task::{Support, SupportVerdict, SupportVerdicts, TaskKind};

/// A statement is supported when the checker gives it at least this probability.
pub const SUPPORTED_AT: f64 = 0.5;

/// Unsupported spans named in one verdict's reason, at most.
pub const SPANS_SHOWN: usize = 8;

/// A checker model as verdicts and routes name it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckerInfo {
    /// `modernbert` or `deberta-v2`.
    pub family: String,
    /// `tokens` or `sequence`.
    pub head: String,
    /// The model folder's name.
    pub model: String,
    /// SHA-256 of its `model.safetensors`.
    pub sha256: String,
}

impl CheckerInfo {
    /// What `checker` is.
    pub fn of(checker: &SupportChecker) -> Self {
        CheckerInfo {
            family: checker.family().name().to_owned(),
            head: checker.head().name().to_owned(),
            model: checker.name().to_owned(),
            sha256: checker.sha256().to_owned(),
        }
    }

    /// `checker deberta-v2 NAME (sha256 0123abcd…)`.
    pub fn who(&self) -> String {
        format!(
            "checker {} {} (sha256 {}…)",
            self.family,
            self.model,
            self.sha256.get(..12).unwrap_or(&self.sha256)
        )
    }
}

/// Every statement of `task` checked by `checker`, one after another (each check fills the
/// blocking pool's thread with the model's own work).
pub(crate) async fn support_verdicts(
    checker: &SupportChecker,
    task: &SupportVerdicts,
) -> Result<Judged<Vec<SupportVerdict>>, TaskError> {
    let mut verdicts = Vec::with_capacity(task.statements.len());
    for statement in &task.statements {
        let check = checker
            .check(&task.contexts, statement)
            .await
            .map_err(|source| TaskError::Judge {
                task: TaskKind::SupportVerdicts,
                source,
            })?;
        let supported = check.support >= SUPPORTED_AT;
        let mut reason = format!(
            "checker P(supported) {:.3}, {} the threshold {SUPPORTED_AT}, best of {} window{}",
            check.support,
            if supported { "at or above" } else { "below" },
            check.windows,
            if check.windows == 1 { "" } else { "s" }
        );
        if !check.unsupported_spans.is_empty() {
            let spans: Vec<String> = check
                .unsupported_spans
                .iter()
                .take(SPANS_SHOWN)
                .map(|span| format!("\u{ab}{span}\u{bb}"))
                .collect();
            let more = check.unsupported_spans.len().saturating_sub(SPANS_SHOWN);
            reason.push_str(&format!("; unsupported spans: {}", spans.join(", ")));
            if more > 0 {
                reason.push_str(&format!(" and {more} more"));
            }
        }
        verdicts.push(SupportVerdict {
            support: if supported {
                Support::FullySupported
            } else {
                Support::NotSupported
            },
            context: check.context.filter(|_| supported),
            reason,
            score: None,
        });
    }
    Ok(Judged {
        value: verdicts,
        by: Implementation::Checker(CheckerInfo::of(checker)),
        rung: None,
        usage: Usage::default(),
        cached: false,
    })
}
