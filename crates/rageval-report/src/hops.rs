//! Per-hop figures of a run whose rows include retrieval hops (each retriever step of a
//! trace that retrieved more than once, scored as its own row): per metric, the first hop
//! against the later ones — how many were scored, undefined and failed, and the mean — and,
//! where the traces say, how many of those hops the final answer was shown. A run without
//! hop rows has none of this, and its summary and report are as before. The hop rows also
//! count in the run's own per-metric figures; this block only sets them apart.

use std::collections::{BTreeMap, BTreeSet};

use rageval_core::Outcome;
use serde::{Deserialize, Serialize};

use crate::blocks::{Block, Table};
use crate::page::number;

/// The hop figures of a run (`summary.json`'s `hops`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HopSummary {
    /// Hop rows seen (of the first hop and of later ones).
    pub rows: usize,
    /// Per metric with a cell on a hop row.
    pub metrics: BTreeMap<String, HopMetric>,
    /// How many first and later hops the final answer was shown, of those whose trace
    /// says; absent when no trace said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used_by_answer: Option<HopUse>,
}

/// Hops whose contexts the final answer's generator was shown: `[used, of]` for the first
/// hop of each trace and for the later ones, over the hops whose trace records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct HopUse {
    pub first: [usize; 2],
    pub later: [usize; 2],
}

/// One metric over hop rows: the first hop of each trace, and every later one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HopMetric {
    pub first: HopFigure,
    pub later: HopFigure,
}

/// One group of hop cells.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HopFigure {
    pub scored: usize,
    pub undefined: usize,
    pub failed: usize,
    /// The mean of the scored cells; absent when none was scored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean: Option<f64>,
}

/// Collects hop rows' outcomes by metric and hop group.
#[derive(Debug, Default)]
pub struct HopTally {
    /// Per metric: the first hop's and the later hops' (sum of scores, figure).
    cells: BTreeMap<String, [(f64, HopFigure); 2]>,
    rows: BTreeSet<String>,
    /// Per hop row whose trace says: whether it is a later hop, and whether the answer used
    /// it.
    uses: BTreeMap<String, (bool, bool)>,
}

impl HopTally {
    /// The outcome of `metric` on the row `sample`, hop `hop` (1-based) of its trace.
    pub fn add(&mut self, sample: &str, hop: usize, metric: &str, outcome: &Outcome) {
        self.rows.insert(sample.to_owned());
        let groups = self.cells.entry(metric.to_owned()).or_default();
        let (sum, figure) = &mut groups[usize::from(hop > 1)];
        match outcome {
            Outcome::Score { value, .. } => {
                *sum += value;
                figure.scored += 1;
            }
            Outcome::Undefined { .. } => figure.undefined += 1,
            Outcome::Failed { .. } => figure.failed += 1,
        }
    }

    /// Whether the final answer was shown hop `hop` (1-based) of row `sample`, when its
    /// trace says; a row noted twice counts once.
    pub fn note_use(&mut self, sample: &str, hop: usize, used_by_answer: Option<bool>) {
        if let Some(used) = used_by_answer {
            self.uses.insert(sample.to_owned(), (hop > 1, used));
        }
    }

    /// The figures, or `None` when the run had no hop rows.
    pub fn finish(self) -> Option<HopSummary> {
        if self.rows.is_empty() {
            return None;
        }
        let finished = |(sum, mut figure): (f64, HopFigure)| {
            figure.mean = (figure.scored > 0).then(|| sum / figure.scored as f64);
            figure
        };
        let metrics = self
            .cells
            .into_iter()
            .map(|(metric, [first, later])| {
                let figure = HopMetric {
                    first: finished(first),
                    later: finished(later),
                };
                (metric, figure)
            })
            .collect();
        let used_by_answer = (!self.uses.is_empty()).then(|| {
            let count = |later: bool| {
                let group = self.uses.values().filter(|(l, _)| *l == later);
                [
                    group.clone().filter(|(_, used)| *used).count(),
                    group.count(),
                ]
            };
            HopUse {
                first: count(false),
                later: count(true),
            }
        });
        Some(HopSummary {
            rows: self.rows.len(),
            metrics,
            used_by_answer,
        })
    }
}

/// The report's section on hops, metrics in `order`; nothing without hop rows.
pub(crate) fn hop_blocks(summary: Option<&HopSummary>, order: &[String]) -> Vec<Block> {
    let Some(summary) = summary else {
        return Vec::new();
    };
    let mut table = Table::new(
        &[
            "metric",
            "first hop: scored",
            "first hop: mean",
            "later hops: scored",
            "later hops: mean",
            "undefined",
            "failed",
        ],
        " ######",
    );
    for name in order {
        let Some(figure) = summary.metrics.get(name) else {
            continue;
        };
        let (first, later) = (&figure.first, &figure.later);
        table.rows.push(vec![
            name.clone(),
            first.scored.to_string(),
            number(first.mean),
            later.scored.to_string(),
            number(later.mean),
            (first.undefined + later.undefined).to_string(),
            (first.failed + later.failed).to_string(),
        ]);
    }
    let mut blocks = vec![
        Block::Heading("Retrieval hops".into()),
        Block::text(format!(
            "{} hop rows: each retrieval step of a trace that retrieved more than once, \
             scored on its own (its sub-query and its contexts; no answer, so metrics that \
             need one are undefined there). The first hop of each trace against the later \
             ones.",
            summary.rows
        )),
        Block::Table(table),
    ];
    if let Some(HopUse { first, later }) = summary.used_by_answer {
        blocks.push(Block::text(format!(
            "The final answer was shown the contexts of {} of {} first hops and {} of {} \
             later hops (of the hops whose trace records what the answering model was given).",
            first[0], first[1], later[0], later[1]
        )));
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::to_markdown;
    use rageval_core::Evidence;

    /// Two traces of two hops: first hops 1.0 and 0.5 (mean 0.75), later hops 0.25 and one
    /// undefined (mean 0.25).
    #[test]
    fn first_and_later_hops_apart() {
        let mut tally = HopTally::default();
        let score = |v| Outcome::score(v, Evidence::default());
        tally.add("a:hop:1", 1, "context_relevance", &score(1.0));
        tally.add("b:hop:1", 1, "context_relevance", &score(0.5));
        tally.add("a:hop:2", 2, "context_relevance", &score(0.25));
        tally.add("b:hop:2", 2, "context_relevance", &Outcome::undefined("x"));
        // Trace a says its first hop was not shown to the answer and its second was (noted
        // once per cell); trace b says nothing.
        for _ in 0..2 {
            tally.note_use("a:hop:1", 1, Some(false));
            tally.note_use("a:hop:2", 2, Some(true));
        }
        tally.note_use("b:hop:1", 1, None);
        let summary = tally.finish().unwrap_or_else(|| panic!("hops seen"));
        let uses = summary.used_by_answer;
        assert_eq!(uses.map(|u| (u.first, u.later)), Some(([0, 1], [1, 1])));
        assert_eq!(summary.rows, 4);
        let figure = &summary.metrics["context_relevance"];
        assert_eq!((figure.first.scored, figure.first.mean), (2, Some(0.75)));
        assert_eq!(
            (
                figure.later.scored,
                figure.later.undefined,
                figure.later.mean
            ),
            (1, 1, Some(0.25))
        );
        let md = to_markdown(&hop_blocks(Some(&summary), &["context_relevance".into()]));
        assert!(md.starts_with("## Retrieval hops\n\n4 hop rows"), "{md}");
        assert!(
            md.contains("| context_relevance | 2 | 0.7500 | 1 | 0.2500 | 1 | 0 |"),
            "{md}"
        );
        assert!(
            md.contains("shown the contexts of 0 of 1 first hops and 1 of 1 later hops"),
            "{md}"
        );
        assert_eq!(HopTally::default().finish(), None);
    }
}
