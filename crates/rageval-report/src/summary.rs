//! `summary.json`: per metric, the mean over scored samples, how many samples were scored,
//! undefined or failed (with the reasons counted), and a seeded bootstrap 95% interval.
//! Other tools read the field names `mean`, `n`, `n_scored`, `n_undefined`, `n_failed` and
//! `ci95`; keep them.

use std::collections::{BTreeMap, HashMap};

use rageval_core::Outcome;
use rageval_core::stats::{bootstrap_mean_ci, mean};
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
}

#[derive(Debug, Default)]
struct Tally {
    values: Vec<f64>,
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
            Outcome::Score { value, .. } => tally.values.push(*value),
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
