//! Support verdicts from a checker model (`rageval_judge::SupportChecker`): each statement
//! checked against the contexts, P(supported) read as a label. It answers
//! [`SupportVerdicts`] only; statements are still split by whoever splits them (the
//! heuristic's sentence splitter without a chat model).
//!
//! The probability goes into the reason, not into [`SupportVerdict::score`]: that field is
//! a degree of support that graded metrics multiply in, and a classifier's confidence is
//! not one. A token-head model's unsupported spans are named in the reason, as evidence.
//!
//! An [`EscalationBand`] makes the checker the first tier of a cascade: the router sends
//! the statements whose P(supported) falls inside the band to the chat judge and keeps the
//! checker's verdict on the others. This module scores and reads; it asks no chat model.

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

/// The P(supported) range, inclusive at both ends, whose statements the checker does not
/// settle: they go to the chat judge (`--escalate LOW,HIGH`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EscalationBand {
    /// Lowest P(supported) escalated.
    pub low: f64,
    /// Highest P(supported) escalated.
    pub high: f64,
}

/// The band when `--escalate` is given without one: the checker settles what it gives at
/// most 0.2 or more than 0.8, a guess to replace with one `judge-check` chose on labels.
pub const DEFAULT_BAND: EscalationBand = EscalationBand {
    low: 0.2,
    high: 0.8,
};

/// The band that escalates every statement, whatever its score: the checker need not run
/// (a dry run plans a cascade with it, as the most the cascade can send).
pub const EVERY_CLAIM: EscalationBand = EscalationBand {
    low: 0.0,
    high: 1.0,
};

impl EscalationBand {
    /// Whether a statement the checker gives `support` goes to the chat judge.
    pub fn escalates(&self, support: f64) -> bool {
        support >= self.low && support <= self.high
    }

    /// Whether every score lies inside, so that no statement is the checker's to settle.
    pub fn escalates_every_claim(&self) -> bool {
        self.low <= 0.0 && self.high >= 1.0
    }
}

impl std::fmt::Display for EscalationBand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{},{}", self.low, self.high)
    }
}

impl std::str::FromStr for EscalationBand {
    type Err = String;

    /// `LOW,HIGH`, two probabilities with `0 <= LOW <= HIGH <= 1`.
    fn from_str(text: &str) -> Result<Self, String> {
        let expected = || format!("expected LOW,HIGH with 0 <= LOW <= HIGH <= 1, got '{text}'");
        let (low, high) = text.split_once(',').ok_or_else(expected)?;
        let read = |part: &str| part.trim().parse::<f64>().map_err(|_| expected());
        let (low, high) = (read(low)?, read(high)?);
        let probability = |p: f64| p.is_finite() && (0.0..=1.0).contains(&p);
        if !(probability(low) && probability(high) && low <= high) {
            return Err(expected());
        }
        Ok(EscalationBand { low, high })
    }
}

/// One statement as the checker read it: its P(supported) and its verdict.
pub(crate) struct Checked {
    pub support: f64,
    pub verdict: SupportVerdict,
}

/// Every statement of `task` checked by `checker`, one after another (each check fills the
/// blocking pool's thread with the model's own work).
pub(crate) async fn support_verdicts(
    checker: &SupportChecker,
    task: &SupportVerdicts,
) -> Result<Judged<Vec<SupportVerdict>>, TaskError> {
    let verdicts = check_each(checker, task)
        .await?
        .into_iter()
        .map(|checked| checked.verdict)
        .collect();
    Ok(checker_judged(checker, verdicts))
}

/// `verdicts` as the checker's answer.
pub(crate) fn checker_judged(
    checker: &SupportChecker,
    verdicts: Vec<SupportVerdict>,
) -> Judged<Vec<SupportVerdict>> {
    Judged {
        value: verdicts,
        by: Implementation::Checker(CheckerInfo::of(checker)),
        rung: None,
        usage: Usage::default(),
        cached: false,
    }
}

/// Each statement of `task` with the checker's P(supported) and verdict, in order.
pub(crate) async fn check_each(
    checker: &SupportChecker,
    task: &SupportVerdicts,
) -> Result<Vec<Checked>, TaskError> {
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
        verdicts.push(Checked {
            support: check.support,
            verdict: SupportVerdict {
                support: if supported {
                    Support::FullySupported
                } else {
                    Support::NotSupported
                },
                context: check.context.filter(|_| supported),
                reason,
                score: None,
            },
        });
    }
    Ok(verdicts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_band_is_two_ordered_probabilities() {
        assert_eq!(
            "0.2,0.8".parse(),
            Ok(EscalationBand {
                low: 0.2,
                high: 0.8
            })
        );
        for bad in ["0.8,0.2", "0.2", "-0.1,0.5", "0.5,1.5", "NaN,0.5", "a,b"] {
            assert!(bad.parse::<EscalationBand>().is_err(), "{bad}");
        }
        assert!(DEFAULT_BAND.escalates(0.2) && DEFAULT_BAND.escalates(0.8));
        assert!(!DEFAULT_BAND.escalates(0.19) && !DEFAULT_BAND.escalates(0.81));
    }
}
