//! What a metric returns for one sample. There is no NaN anywhere in rageval: a result is a
//! finite score, `Undefined` with the reason the metric does not apply, or `Failed` with the
//! error that stopped it. Aggregates count each kind.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The result of one metric on one sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    /// A finite score with what it was computed from.
    Score {
        value: f64,
        #[serde(default, skip_serializing_if = "Evidence::is_empty")]
        evidence: Evidence,
    },
    /// The metric does not apply to this sample (e.g. the answer states nothing).
    Undefined { reason: String },
    /// Something went wrong while computing it (e.g. the judge's answer never parsed).
    Failed { error: String },
}

impl Outcome {
    /// A score, or `Failed` when `value` is not finite — the single gate that keeps NaN and
    /// infinities out of every report.
    pub fn score(value: f64, evidence: Evidence) -> Self {
        if value.is_finite() {
            Outcome::Score { value, evidence }
        } else {
            Outcome::Failed {
                error: format!("metric produced a non-finite value ({value})"),
            }
        }
    }

    /// A score with no evidence beyond the value.
    pub fn bare(value: f64) -> Self {
        Self::score(value, Evidence::default())
    }

    pub fn undefined(reason: impl Into<String>) -> Self {
        Outcome::Undefined {
            reason: reason.into(),
        }
    }

    pub fn failed(error: impl Into<String>) -> Self {
        Outcome::Failed {
            error: error.into(),
        }
    }

    /// The score's value, if this is a score.
    pub fn value(&self) -> Option<f64> {
        match self {
            Outcome::Score { value, .. } => Some(*value),
            _ => None,
        }
    }
}

/// What a score was computed from: the judge's verdicts, and metric-specific numbers
/// (e.g. ROUGE precision and recall beside the F-score).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verdicts: Vec<Verdict>,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub details: Map<String, Value>,
}

impl Evidence {
    pub fn is_empty(&self) -> bool {
        self.verdicts.is_empty() && self.details.is_empty()
    }

    /// Evidence made of named numbers only.
    pub fn details<K: Into<String>>(pairs: impl IntoIterator<Item = (K, Value)>) -> Self {
        Self {
            verdicts: Vec::new(),
            details: pairs.into_iter().map(|(k, v)| (k.into(), v)).collect(),
        }
    }
}

/// What a verdict is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "index", rename_all = "snake_case")]
pub enum VerdictTarget {
    /// The i-th retrieved context.
    Context(usize),
    /// The i-th statement (of the answer or the reference, as the metric says).
    Statement(usize),
    /// The i-th generated question.
    Question(usize),
}

/// One judgement behind a score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub target: VerdictTarget,
    /// The verdict as a number (1/0 for binary verdicts, a grade otherwise).
    pub value: f64,
    /// A named label where the scale has names (e.g. `partially_supported`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The text judged (a statement, a generated question), when it is not in the sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Indices of the contexts that support the statement.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub supporting_contexts: Vec<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_finite_scores_become_failures() {
        assert!(matches!(Outcome::bare(f64::NAN), Outcome::Failed { .. }));
        assert!(matches!(Outcome::bare(f64::INFINITY), Outcome::Failed { .. }));
        assert_eq!(Outcome::bare(0.5).value(), Some(0.5));
    }

    #[test]
    fn serialises_with_a_status_tag() {
        let json = serde_json::to_value(Outcome::undefined("no reference")).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"status": "undefined", "reason": "no reference"})
        );
        let json = serde_json::to_value(Outcome::bare(1.0)).unwrap();
        assert_eq!(json, serde_json::json!({"status": "score", "value": 1.0}));
    }
}
