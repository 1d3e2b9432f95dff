//! `summary.json`: per metric, the mean over scored samples, how many samples were scored,
//! undefined or failed (with the reasons counted), and a seeded bootstrap 95% interval.
//! Other tools read the field names `mean`, `n`, `n_scored`, `n_undefined`, `n_failed` and
//! `ci95`; keep them. A metric whose scored cells name an abstention quadrant in their
//! evidence (`abstention`) also gets its 2×2 table and rates.

use std::collections::{BTreeMap, HashMap};

use rageval_core::abstention::AbstentionRates;
use rageval_core::stats::{bootstrap_mean_ci, mean};
use rageval_core::{ABSTENTION_QUADRANT, AbstentionTable, Outcome, Quadrant};
use serde::{Deserialize, Serialize};

use crate::JudgeAccount;

/// Confidence level of `ci95`.
const CONFIDENCE: f64 = 0.95;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricSummary {
    /// Mean of the scored samples; `null` when none was scored.
    pub mean: Option<f64>,
    /// Samples the metric ran on (scored + undefined + failed).
    pub n: usize,
    pub n_scored: usize,
    pub n_undefined: usize,
    pub n_failed: usize,
    /// Percentile-bootstrap 95% interval of the mean, `[low, high]`; `null` when none scored.
    pub ci95: Option<[f64; 2]>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// Why samples were undefined, with counts.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub undefined_reasons: BTreeMap<String, usize>,
    /// Why samples failed, with counts.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub failed_errors: BTreeMap<String, usize>,
    /// The 2×2 table of the scored cells' abstention quadrants, with its rates (metrics
    /// that name none have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abstention: Option<AbstentionSummary>,
}

/// An abstention metric's table over its scored samples and the rates it gives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbstentionSummary {
    pub table: AbstentionTable,
    pub rates: AbstentionRates,
}

/// How the intervals were drawn, so they can be reproduced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BootstrapSettings {
    pub method: String,
    pub resamples: usize,
    pub seed: u64,
    pub level: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub samples: usize,
    /// Metric names in the order they were asked for.
    pub metric_order: Vec<String>,
    pub metrics: BTreeMap<String, MetricSummary>,
    pub bootstrap: BootstrapSettings,
    /// Who judged the run and what it asked of the judge, over every session (absent in
    /// runs written before accounting, and in summaries of no run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<JudgeAccount>,
    /// Per metric with human labels: the calibrated (PPI++) mean beside the labels-only and
    /// judge-only means (`rageval calibrate`, `eval --labels`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub calibrated: BTreeMap<String, crate::Calibrated>,
    /// Per-conversation figures, when the samples are turns of conversations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversations: Option<crate::ConversationSummary>,
    /// Per-hop figures (first hop against later ones), when the run has retrieval-hop rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hops: Option<crate::HopSummary>,
    /// What a reader must know about how the figures were made, by name (judge-check's
    /// `few_shot`: which labels were shown to the judge as examples and left out).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub notes: BTreeMap<String, String>,
}

#[derive(Debug, Default)]
struct Tally {
    values: Vec<f64>,
    quadrants: Option<AbstentionTable>,
    undefined: BTreeMap<String, usize>,
    failed: BTreeMap<String, usize>,
}

/// Collects outcomes per metric and summarises them.
#[derive(Debug)]
pub struct Aggregator {
    order: Vec<String>,
    tallies: HashMap<String, Tally>,
}

impl Aggregator {
    /// An aggregator for these metrics, in this order.
    pub fn new(order: Vec<String>) -> Self {
        Self {
            tallies: order
                .iter()
                .map(|name| (name.clone(), Tally::default()))
                .collect(),
            order,
        }
    }

    pub fn add(&mut self, metric: &str, outcome: &Outcome) {
        if !self.tallies.contains_key(metric) {
            self.order.push(metric.to_string());
        }
        let tally = self.tallies.entry(metric.to_string()).or_default();
        match outcome {
            Outcome::Score { value, evidence } => {
                tally.values.push(*value);
                let quadrant = evidence.details.get(ABSTENTION_QUADRANT);
                if let Some(quadrant) = quadrant.and_then(|q| Quadrant::from_name(q.as_str()?)) {
                    tally.quadrants.get_or_insert_default().add(quadrant);
                }
            }
            Outcome::Undefined { reason } => {
                *tally.undefined.entry(reason.clone()).or_default() += 1
            }
            Outcome::Failed { error } => *tally.failed.entry(error.clone()).or_default() += 1,
        }
    }

    /// The summary of everything added, with intervals from `resamples` draws under `seed`.
    /// It depends on the outcomes alone, not on the order they were added in: the scores are
    /// sorted before the bootstrap draws from them, so a run resumed, scored in batch passes
    /// or merged from shards (whose journals hold the cells in another order) gets the
    /// summary of the run scored in one go.
    pub fn finish(mut self, samples: usize, resamples: usize, seed: u64) -> Summary {
        for tally in self.tallies.values_mut() {
            tally.values.sort_by(f64::total_cmp);
        }
        let metrics = self
            .order
            .iter()
            .filter_map(|name| {
                let tally = self.tallies.get(name)?;
                let values = &tally.values;
                let n_undefined: usize = tally.undefined.values().sum();
                let n_failed: usize = tally.failed.values().sum();
                let summary = MetricSummary {
                    mean: mean(values),
                    n: values.len() + n_undefined + n_failed,
                    n_scored: values.len(),
                    n_undefined,
                    n_failed,
                    ci95: bootstrap_mean_ci(values, CONFIDENCE, resamples, seed)
                        .map(|interval| [interval.low, interval.high]),
                    min: values.iter().copied().reduce(f64::min),
                    max: values.iter().copied().reduce(f64::max),
                    undefined_reasons: tally.undefined.clone(),
                    failed_errors: tally.failed.clone(),
                    abstention: tally.quadrants.clone().map(|table| AbstentionSummary {
                        rates: table.rates(),
                        table,
                    }),
                };
                Some((name.clone(), summary))
            })
            .collect();
        Summary {
            samples,
            metric_order: self.order,
            metrics,
            bootstrap: BootstrapSettings {
                method: "percentile".into(),
                resamples,
                seed,
                level: CONFIDENCE,
            },
            judge: None,
            calibrated: BTreeMap::new(),
            conversations: None,
            hops: None,
            notes: BTreeMap::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_every_kind_of_outcome() {
        let mut aggregator = Aggregator::new(vec!["m".into()]);
        aggregator.add("m", &Outcome::bare(1.0));
        aggregator.add("m", &Outcome::bare(0.0));
        aggregator.add("m", &Outcome::undefined("no reference"));
        aggregator.add("m", &Outcome::undefined("no reference"));
        aggregator.add("m", &Outcome::failed("judge said nonsense"));
        let summary = aggregator.finish(5, 200, 1);
        let m = &summary.metrics["m"];
        assert_eq!((m.n, m.n_scored, m.n_undefined, m.n_failed), (5, 2, 2, 1));
        assert_eq!(m.mean, Some(0.5));
        assert_eq!(m.undefined_reasons["no reference"], 2);
        let [low, high] = m.ci95.unwrap();
        assert!((0.0..=0.5).contains(&low) && (0.5..=1.0).contains(&high));
    }

    #[test]
    fn the_summary_does_not_depend_on_the_order_of_the_outcomes() {
        let values: Vec<f64> = (0..200)
            .map(|i| f64::from((i * 37) % 101) / 100.0)
            .collect();
        let summary = |values: &mut dyn Iterator<Item = &f64>| {
            let mut aggregator = Aggregator::new(vec!["m".into()]);
            for value in values {
                aggregator.add("m", &Outcome::bare(*value));
            }
            aggregator.finish(200, 500, 7)
        };
        assert_eq!(
            summary(&mut values.iter()),
            summary(&mut values.iter().rev())
        );
    }

    #[test]
    fn quadrants_named_in_evidence_make_the_abstention_table() {
        let cell = |quadrant: &str, value: f64| {
            Outcome::score(
                value,
                rageval_core::Evidence::details([(
                    ABSTENTION_QUADRANT,
                    serde_json::json!(quadrant),
                )]),
            )
        };
        let mut aggregator = Aggregator::new(vec!["abstention".into(), "bleu".into()]);
        aggregator.add("abstention", &cell("answered_supported", 1.0));
        aggregator.add("abstention", &cell("abstained_supported", 0.0));
        aggregator.add("abstention", &cell("abstained_unsupported", 1.0));
        aggregator.add("abstention", &Outcome::undefined("cannot tell"));
        aggregator.add("bleu", &Outcome::bare(0.5));
        let summary = aggregator.finish(4, 200, 1);
        let table = summary.metrics["abstention"].abstention.clone();
        let table = table.map(|t| t.table).unwrap_or_default();
        assert_eq!(
            (
                table.answered_supported,
                table.abstained_supported,
                table.abstained_unsupported
            ),
            (1, 1, 1)
        );
        assert_eq!(summary.metrics["bleu"].abstention, None);
        let json = serde_json::to_value(&summary.metrics["abstention"]).unwrap_or_default();
        assert_eq!(
            json["abstention"]["rates"]["abstention_recall"]["value"],
            1.0
        );
        assert!(
            serde_json::to_value(&summary.metrics["bleu"])
                .unwrap_or_default()
                .get("abstention")
                .is_none()
        );
    }

    #[test]
    fn a_metric_with_nothing_scored_has_null_mean() {
        let mut aggregator = Aggregator::new(vec!["m".into()]);
        aggregator.add("m", &Outcome::undefined("no answer"));
        let summary = aggregator.finish(1, 200, 1);
        let json = serde_json::to_value(&summary.metrics["m"]).unwrap();
        assert_eq!(json["mean"], serde_json::Value::Null);
        assert_eq!(json["ci95"], serde_json::Value::Null);
        assert_eq!(json["n_undefined"], 1);
    }
}
