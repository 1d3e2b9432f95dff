//! Whether a watched metric dropped: its mean over the latest window of scored samples
//! against its baseline window (the run's first scored samples), by the unpaired version of
//! `compare`'s statistics — a seeded percentile bootstrap interval of the difference of
//! means (`rageval_core::stats::unpaired_bootstrap_diff_ci`). A drop is an interval wholly
//! below zero. Windows are by order in the journal, which is the order samples arrived in;
//! undefined and failed cells hold no score and are left out.

use std::collections::BTreeMap;
use std::path::Path;

use rageval_core::stats::unpaired_bootstrap_diff_ci;
use rageval_report::read_results;

use super::ledger::Window;
use crate::engine::error::Result;

/// When to alert.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AlertRule {
    /// Scores in the baseline window (the first ones of the run).
    pub baseline: usize,
    /// Scores in the latest window.
    pub window: usize,
    /// The interval's level (0.95).
    pub level: f64,
    pub resamples: usize,
    pub seed: u64,
}

/// A metric's latest window against its baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    pub metric: String,
    pub baseline: Window,
    pub latest: Window,
    /// `latest.mean − baseline.mean`.
    pub difference: f64,
    pub ci95: [f64; 2],
}

impl Reading {
    /// Whether the latest window is significantly below the baseline.
    pub fn dropped(&self) -> bool {
        self.ci95[1] < 0.0
    }
}

/// Every metric of the journal at `journal` with enough scores for both windows (the
/// windows do not overlap), read by `rule`.
pub fn readings(journal: &Path, rule: &AlertRule) -> Result<Vec<Reading>> {
    if !journal.is_file() {
        return Ok(Vec::new());
    }
    let mut scores: BTreeMap<String, Vec<(String, f64)>> = BTreeMap::new();
    for record in read_results(journal)? {
        if let Some(value) = record.outcome.value() {
            scores
                .entry(record.metric)
                .or_default()
                .push((record.sample_id, value));
        }
    }
    let mut out = Vec::new();
    for (metric, values) in scores {
        if rule.baseline == 0 || rule.window == 0 || values.len() < rule.baseline + rule.window {
            continue;
        }
        let baseline = &values[..rule.baseline];
        let latest = &values[values.len() - rule.window..];
        let only =
            |window: &[(String, f64)]| -> Vec<f64> { window.iter().map(|(_, v)| *v).collect() };
        let (before, after) = (only(baseline), only(latest));
        let Some(interval) =
            unpaired_bootstrap_diff_ci(&before, &after, rule.level, rule.resamples, rule.seed)
        else {
            continue;
        };
        let baseline = window(baseline);
        let latest = window(latest);
        out.push(Reading {
            metric,
            difference: latest.mean - baseline.mean,
            baseline,
            latest,
            ci95: [interval.low, interval.high],
        });
    }
    Ok(out)
}

fn window(values: &[(String, f64)]) -> Window {
    let n = values.len();
    Window {
        first: values.first().map(|(id, _)| id.clone()).unwrap_or_default(),
        last: values.last().map(|(id, _)| id.clone()).unwrap_or_default(),
        n,
        mean: values.iter().map(|(_, v)| v).sum::<f64>() / n.max(1) as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rageval_core::Outcome;
    use rageval_report::{JournalWriter, ResultRecord};

    #[test]
    fn a_planted_drop_reads_as_one_and_steady_scores_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.jsonl");
        let run = rageval_report::RunDir::create(dir.path(), true).unwrap();
        let mut journal: JournalWriter = run.journal().unwrap();
        for i in 0..30 {
            let dropped = if i >= 20 { 0.0 } else { 1.0 };
            for (metric, value) in [("drops", dropped), ("steady", 1.0)] {
                journal
                    .append(&ResultRecord {
                        sample_id: format!("s{i}"),
                        metric: metric.into(),
                        outcome: Outcome::bare(value),
                    })
                    .unwrap();
            }
        }
        journal.flush().unwrap();
        let rule = AlertRule {
            baseline: 10,
            window: 10,
            level: 0.95,
            resamples: 500,
            seed: 42,
        };
        let readings = readings(&path, &rule).unwrap();
        let drops = &readings[0];
        assert_eq!(drops.metric, "drops");
        assert!(drops.dropped());
        assert_eq!(
            (drops.baseline.first.as_str(), drops.baseline.last.as_str()),
            ("s0", "s9")
        );
        assert_eq!(
            (drops.latest.first.as_str(), drops.latest.last.as_str()),
            ("s20", "s29")
        );
        assert_eq!(drops.difference, -1.0);
        assert!(!readings[1].dropped());
        let short = AlertRule {
            baseline: 20,
            window: 20,
            ..rule
        };
        assert!(super::readings(&path, &short).unwrap().is_empty());
    }
}
