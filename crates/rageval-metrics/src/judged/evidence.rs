//! Judge answers as [`Verdict`]s and named numbers, the same way in every judged metric.

use rageval_core::{Evidence, Outcome, Verdict, VerdictTarget};
use rageval_tasks::{Implementation, Judged, Support, SupportCredit, SupportVerdict};
use serde_json::{Map, Value, json};

use crate::scoring::{Statements, describe};

/// The score of statements judged in one call: the mean credit of the statements under
/// `credit` (with [`SupportCredit::FullOnly`], fully supported ÷ statements), each verdict
/// as evidence with its credit as value, the counts of every label, the rule, and where the
/// statements came from (under `count_key` and `from_key`). `statements` must not be empty.
pub fn supported_share(
    statements: &Statements,
    judged: &Judged<Vec<SupportVerdict>>,
    (count_key, from_key): (&str, &str),
    credit: SupportCredit,
) -> Outcome {
    let counts = SupportCounts::of(&judged.value);
    let verdicts = support(&statements.items, &judged.value, credit);
    let total: f64 = verdicts.iter().map(|v| v.value).sum();
    let mut details = vec![
        (count_key, json!(statements.items.len())),
        (from_key, json!(statements.from)),
        ("judged_by", json!(describe(&judged.by))),
        ("credit", json!(credit.name())),
    ];
    details.extend(counts.details());
    let by_conversation = judged.value.iter().filter(|v| v.turn.is_some()).count();
    if by_conversation > 0 {
        details.push((SUPPORTED_BY_CONVERSATION, json!(by_conversation)));
    }
    Outcome::score(
        total / statements.items.len() as f64,
        build(verdicts, details),
    )
}

/// The share of contexts with a yes verdict, each verdict as evidence labelled by `labels`
/// and the count of yeses under `labels.0`. `verdicts` (one per context, in order) must not
/// be empty.
pub fn context_share<'a>(
    verdicts: &'a [(bool, &'a str, &'a Implementation)],
    labels: (&str, &str),
) -> Outcome {
    let yes = verdicts.iter().filter(|(flag, _, _)| *flag).count();
    let evidence = verdicts
        .iter()
        .enumerate()
        .map(|(index, (flag, reason, _))| {
            binary(VerdictTarget::Context(index), *flag, labels, None, reason)
        })
        .collect();
    Outcome::score(
        share(yes, verdicts.len()),
        build(
            evidence,
            [
                (labels.0, json!(yes)),
                ("contexts", json!(verdicts.len())),
                ("judged_by", json!(judged_by(verdicts.iter().map(|v| v.2)))),
            ],
        ),
    )
}

/// The distinct implementations that answered, joined.
pub fn judged_by<'a>(by: impl Iterator<Item = &'a Implementation>) -> String {
    let mut names: Vec<String> = Vec::new();
    for name in by.map(describe) {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names.join("; ")
}

/// One verdict per statement: its credit under `credit` as value, the label naming the
/// support, the statement, the reason and the supporting context.
pub fn support(
    statements: &[String],
    verdicts: &[SupportVerdict],
    credit: SupportCredit,
) -> Vec<Verdict> {
    statements
        .iter()
        .zip(verdicts)
        .enumerate()
        .map(|(index, (statement, verdict))| {
            let (label, reason) = match verdict.turn {
                Some(turn) => (
                    SUPPORTED_BY_CONVERSATION.to_owned(),
                    by_turn(turn, &verdict.reason),
                ),
                None => (verdict.support.label().to_owned(), verdict.reason.clone()),
            };
            Verdict {
                target: VerdictTarget::Statement(index),
                value: verdict.credit(credit),
                label: Some(label),
                text: Some(statement.clone()),
                reason: Some(reason),
                supporting_contexts: verdict.context.into_iter().collect(),
            }
        })
        .collect()
}

/// The label of a statement an earlier turn of the conversation supports (counted as
/// supported), and the evidence detail counting them.
pub const SUPPORTED_BY_CONVERSATION: &str = "supported_by_conversation";

/// A reason that names the supporting turn, as the heuristic's already does.
fn by_turn(turn: usize, reason: &str) -> String {
    let named = format!("supported by the conversation, turn {turn}");
    if reason.starts_with(&named) {
        reason.to_owned()
    } else {
        format!("{named}: {reason}")
    }
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
