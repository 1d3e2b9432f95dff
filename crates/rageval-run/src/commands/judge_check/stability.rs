//! `--repeat K`: every sample judged K times; how often the repeats agree, the headline
//! figure of each repeat, and the items whose verdict moved.
//!
//! A sample is stable when all K outcomes are the same score (or all unscored); an item is
//! unstable when one of its samples is. Identical prompts at temperature 0 can still differ
//! between calls (batching, sampling defaults of the server): this is what it measures.

use std::collections::{BTreeMap, HashMap, HashSet};

use rageval_core::{Outcome, Sample};
use rageval_report::{Stability, UnstableItem};

use super::labels::Item;
use super::measure::{Settings, measure};

/// Scores closer than this are the same.
const SAME: f64 = 1e-9;

fn score(outcome: &Outcome) -> Option<f64> {
    match outcome {
        Outcome::Score { value, .. } => Some(*value),
        _ => None,
    }
}

fn same(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (Some(x), Some(y)) => (x - y).abs() <= SAME,
        (None, None) => true,
        _ => false,
    }
}

/// Agreement between `passes` (each in `samples` order).
pub fn stability(
    items: &[Item],
    samples: &[Sample],
    passes: &[Vec<Outcome>],
    settings: &Settings,
) -> Stability {
    let per_sample: Vec<Vec<Option<f64>>> = (0..samples.len())
        .map(|i| passes.iter().map(|pass| score(&pass[i])).collect())
        .collect();
    let mut unstable_samples = HashSet::new();
    let mut ranges = Vec::new();
    for (sample, scores) in samples.iter().zip(&per_sample) {
        if scores.iter().any(|s| !same(*s, scores[0])) {
            unstable_samples.insert(sample.id.as_str());
        }
        let values: Option<Vec<f64>> = scores.iter().copied().collect();
        if let Some(values) = values {
            let high = values.iter().copied().fold(f64::MIN, f64::max);
            let low = values.iter().copied().fold(f64::MAX, f64::min);
            ranges.push(high - low);
        }
    }
    let index: BTreeMap<&str, usize> = samples
        .iter()
        .enumerate()
        .map(|(i, s)| (s.id.as_str(), i))
        .collect();
    let unstable_items = items
        .iter()
        .filter(|item| {
            item.samples
                .iter()
                .any(|s| unstable_samples.contains(s.id.as_str()))
        })
        .map(|item| UnstableItem {
            id: item.id.clone(),
            scores: item
                .samples
                .iter()
                .map(|s| {
                    index
                        .get(s.id.as_str())
                        .map_or(Vec::new(), |&i| per_sample[i].clone())
                })
                .collect(),
        })
        .collect();
    let quick = Settings {
        resamples: 0,
        ..*settings
    };
    let figures_by_repeat = passes
        .iter()
        .map(|pass| {
            let scores: HashMap<String, Option<f64>> = samples
                .iter()
                .zip(pass)
                .map(|(s, o)| (s.id.clone(), score(o)))
                .collect();
            measure(items, &scores, &quick)
                .figures
                .into_iter()
                .map(|(name, figure)| (name, figure.value))
                .collect()
        })
        .collect();
    Stability {
        repeats: passes.len(),
        stable_sample_share: if samples.is_empty() {
            1.0
        } else {
            1.0 - unstable_samples.len() as f64 / samples.len() as f64
        },
        mean_score_range: rageval_core::stats::mean(&ranges).unwrap_or(0.0),
        figures_by_repeat,
        unstable_items,
    }
}

/// Named lines for the printed notes.
pub fn render(report: &Stability) -> Vec<(String, String)> {
    let mut lines = vec![(
        "repeats".to_owned(),
        format!(
            "{} repeats: {:.1}% of samples scored the same every time, mean score range {:.3}, \
             {} unstable items",
            report.repeats,
            report.stable_sample_share * 100.0,
            report.mean_score_range,
            report.unstable_items.len()
        ),
    )];
    if !report.unstable_items.is_empty() {
        let shown: Vec<&str> = report
            .unstable_items
            .iter()
            .take(10)
            .map(|i| i.id.as_str())
            .collect();
        let more = report.unstable_items.len().saturating_sub(shown.len());
        let tail = if more > 0 {
            format!(" and {more} more (agreement.json)")
        } else {
            String::new()
        };
        lines.push((
            "unstable_items".to_owned(),
            format!("{}{tail}", shown.join(", ")),
        ));
    }
    lines
}
