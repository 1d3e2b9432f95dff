//! Judge answers as [`Verdict`]s and named numbers, the same way in every judged metric.

use rageval_core::{Evidence, Verdict, VerdictTarget};
use rageval_tasks::{Support, SupportVerdict};
use serde_json::{Map, Value, json};

/// One verdict per statement: value 1 when fully supported (the only support that counts,
/// S1/S4), the label naming the support, the statement, the reason and the supporting
/// context.
pub fn support(statements: &[String], verdicts: &[SupportVerdict]) -> Vec<Verdict> {
    statements
        .iter()
        .zip(verdicts)
        .enumerate()
        .map(|(index, (statement, verdict))| Verdict {
            target: VerdictTarget::Statement(index),
            value: if verdict.support.is_supported() {
                1.0
            } else {
                0.0
            },
            label: Some(verdict.support.label().to_owned()),
            text: Some(statement.clone()),
            reason: Some(verdict.reason.clone()),
            supporting_contexts: verdict.context.into_iter().collect(),
        })
        .collect()
}

/// A yes/no verdict on one target.
pub fn binary(
    target: VerdictTarget,
    yes: bool,
    labels: (&str, &str),
    text: Option<String>,
    reason: &str,
) -> Verdict {
    Verdict {
        target,
        value: if yes { 1.0 } else { 0.0 },
        label: Some(if yes { labels.0 } else { labels.1 }.to_owned()),
        text,
        reason: Some(reason.to_owned()),
        supporting_contexts: Vec::new(),
    }
}

/// How many verdicts carry each support label.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SupportCounts {
    pub fully: usize,
    pub partially: usize,
    pub not_supported: usize,
    pub contradicted: usize,
}

impl SupportCounts {
    pub fn of(verdicts: &[SupportVerdict]) -> Self {
        let mut counts = SupportCounts::default();
        for verdict in verdicts {
            match verdict.support {
                Support::FullySupported => counts.fully += 1,
                Support::PartiallySupported => counts.partially += 1,
                Support::NotSupported => counts.not_supported += 1,
                Support::Contradicted => counts.contradicted += 1,
            }
        }
        counts
    }

    /// The counts as evidence details.
    pub fn details(&self) -> [(&'static str, Value); 4] {
        [
            ("fully_supported", json!(self.fully)),
            ("partially_supported", json!(self.partially)),
            ("not_supported", json!(self.not_supported)),
            ("contradicted", json!(self.contradicted)),
        ]
    }
}

/// Evidence from verdicts and named values.
pub fn build<K: Into<String>>(
    verdicts: Vec<Verdict>,
    details: impl IntoIterator<Item = (K, Value)>,
) -> Evidence {
    Evidence {
        verdicts,
        details: details
            .into_iter()
            .map(|(k, v)| (k.into(), v))
            .collect::<Map<String, Value>>(),
    }
}

/// `fully ÷ total` as a fraction.
pub fn share(count: usize, total: usize) -> f64 {
    count as f64 / total as f64
}
