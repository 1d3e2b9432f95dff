//! Per-conversation figures of a run whose samples are turns of conversations: per metric
//! the mean over conversations of each conversation's mean turn score, and the share of
//! conversations with any turn that lapses (a claim neither its contexts nor the
//! conversation back, as faithfulness marks it with
//! [`TURN_LAPSE`](rageval_core::conversation::TURN_LAPSE)). A run without conversation ids
//! has none of this, and its summary and report are as before.

use std::collections::BTreeMap;

use rageval_core::Outcome;
use rageval_core::conversation::TURN_LAPSE;
use serde::{Deserialize, Serialize};

use crate::blocks::{Block, Table, to_html, to_markdown};
use crate::page::number;

/// The conversation figures of a run (`summary.json`'s `conversations`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConversationSummary {
    /// Conversations with at least one scored or unscored turn.
    pub conversations: usize,
    /// Per metric, in the run's metric order.
    pub metrics: BTreeMap<String, ConversationMetric>,
    /// Conversations with a turn faithfulness marks as lapsing, when any turn was marked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub with_lapse: Option<LapseShare>,
}

/// One metric over conversations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConversationMetric {
    /// Conversations with at least one scored turn.
    pub conversations: usize,
    /// The mean of the per-conversation means.
    pub mean: f64,
}

/// How many conversations have a lapsing turn, of those whose turns were marked.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LapseShare {
    pub conversations: usize,
    pub of: usize,
    pub share: f64,
}

/// Collects turn outcomes by conversation.
#[derive(Debug, Default)]
pub struct ConversationTally {
    /// Per metric, per conversation: the sum and count of its turns' scores.
    scores: BTreeMap<String, BTreeMap<String, (f64, usize)>>,
    /// Per conversation marked: whether any turn lapsed.
    lapses: BTreeMap<String, bool>,
    seen: std::collections::BTreeSet<String>,
}

impl ConversationTally {
    /// One turn's outcome for `metric`, in conversation `conversation`.
    pub fn add(&mut self, conversation: &str, metric: &str, outcome: &Outcome) {
        self.seen.insert(conversation.to_owned());
        let Outcome::Score { value, evidence } = outcome else {
            return;
        };
        let cell = self
            .scores
            .entry(metric.to_owned())
            .or_default()
            .entry(conversation.to_owned())
            .or_default();
        cell.0 += value;
        cell.1 += 1;
        if let Some(lapse) = evidence.details.get(TURN_LAPSE).and_then(|v| v.as_bool()) {
            *self.lapses.entry(conversation.to_owned()).or_default() |= lapse;
        }
    }

    /// The figures, or `None` when no turn belonged to a conversation.
    pub fn finish(self) -> Option<ConversationSummary> {
        if self.seen.is_empty() {
            return None;
        }
        let metrics = self
            .scores
            .into_iter()
            .map(|(metric, by_conversation)| {
                let means: Vec<f64> = by_conversation
                    .values()
                    .map(|(sum, n)| sum / *n as f64)
                    .collect();
                let mean = means.iter().sum::<f64>() / means.len() as f64;
                let figure = ConversationMetric {
                    conversations: means.len(),
                    mean,
                };
                (metric, figure)
            })
            .collect();
        let with_lapse = (!self.lapses.is_empty()).then(|| {
            let lapsing = self.lapses.values().filter(|l| **l).count();
            LapseShare {
                conversations: lapsing,
                of: self.lapses.len(),
                share: lapsing as f64 / self.lapses.len() as f64,
            }
        });
        Some(ConversationSummary {
            conversations: self.seen.len(),
            metrics,
            with_lapse,
        })
    }
}

/// The report's section on conversations, metrics in `order`; nothing without them.
pub(crate) fn conversation_blocks(
    summary: Option<&ConversationSummary>,
    order: &[String],
) -> Vec<Block> {
    let Some(summary) = summary else {
        return Vec::new();
    };
    let mut table = Table::new(&["metric", "conversations", "mean"], " ##");
    for name in order {
        if let Some(figure) = summary.metrics.get(name) {
            table.rows.push(vec![
                name.clone(),
                figure.conversations.to_string(),
                number(Some(figure.mean)),
            ]);
        }
    }
    let mut blocks = vec![
        Block::Heading("Conversations".into()),
        Block::text(format!(
            "{} conversations; each metric's mean over conversations of the mean of their \
             turns.",
            summary.conversations
        )),
        Block::Table(table),
    ];
    if let Some(lapse) = summary.with_lapse {
        blocks.push(Block::text(format!(
            "Conversations with a turn whose claims neither its contexts nor the \
             conversation back: {} of {} ({:.1}%).",
            lapse.conversations,
            lapse.of,
            lapse.share * 100.0
        )));
    }
    blocks
}

/// The sections on conversations and on retrieval hops of a run's summary, as Markdown
/// (for `report.md`; each section after an empty line), or empty when it has neither.
pub(crate) fn positions_markdown(summary: &crate::Summary, order: &[String]) -> String {
    let blocks = position_blocks(summary, order);
    if blocks.is_empty() {
        return String::new();
    }
    format!("\n{}", to_markdown(&blocks))
}

/// The same sections as HTML, for `report.html` and `serve`'s run page.
pub(crate) fn positions_html(summary: &crate::Summary, order: &[String]) -> String {
    to_html(&position_blocks(summary, order))
}

fn position_blocks(summary: &crate::Summary, order: &[String]) -> Vec<Block> {
    let mut blocks = conversation_blocks(summary.conversations.as_ref(), order);
    blocks.extend(crate::hops::hop_blocks(summary.hops.as_ref(), order));
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;
    use rageval_core::Evidence;
    use serde_json::json;

    fn turn(value: f64, lapse: bool) -> Outcome {
        let mut evidence = Evidence::default();
        evidence.details.insert(TURN_LAPSE.into(), json!(lapse));
        Outcome::score(value, evidence)
    }

    /// Conversation a: turns 1.0 and 0.5 (mean 0.75), one lapse; b: one turn of 0.25 and one
    /// undefined. Mean of means (0.75 + 0.25) / 2 = 0.5; 1 of 2 conversations lapse.
    #[test]
    fn means_of_conversation_means_and_the_share_that_lapse() {
        let mut tally = ConversationTally::default();
        tally.add("a", "faithfulness", &turn(1.0, false));
        tally.add("a", "faithfulness", &turn(0.5, true));
        tally.add("b", "faithfulness", &turn(0.25, false));
        tally.add("b", "faithfulness", &Outcome::undefined("no claims"));
        let summary = tally
            .finish()
            .unwrap_or_else(|| panic!("conversations seen"));
        assert_eq!(summary.conversations, 2);
        assert_eq!(summary.metrics["faithfulness"].mean, 0.5);
        let lapse = summary
            .with_lapse
            .unwrap_or_else(|| panic!("lapses marked"));
        assert_eq!((lapse.conversations, lapse.of, lapse.share), (1, 2, 0.5));
        let md = to_markdown(&conversation_blocks(
            Some(&summary),
            &["faithfulness".into()],
        ));
        assert!(md.contains("| faithfulness | 2 | 0.5000 |"), "{md}");
        assert!(md.contains("1 of 2 (50.0%)"), "{md}");
        assert_eq!(ConversationTally::default().finish(), None);
    }
}
