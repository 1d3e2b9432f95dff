//! `compare --gate --confirm K`: before a regression fails the gate, the cells that drove it
//! are judged again and the gate decided once more on the confirmed scores.
//!
//! This module holds the parts that know no model: which cells drove a regression
//! ([`dropped_cells`]: on each regressed metric, the paired samples whose candidate score
//! fell below the baseline's), what K repeats of one cell come to ([`ConfirmedCell`]: their
//! median, which for a pass/fail score and an odd K is the majority), the candidate's
//! scores with the confirmed ones put in ([`apply_confirmed`], in memory: the candidate's
//! run directory is never written), and the line that says what the confirmation changed
//! ([`GateConfirmation`]). Asking the judge is the engine's (`rageval-run`).

use std::collections::{HashMap, HashSet};

use rageval_core::Outcome;
use serde::{Deserialize, Serialize};

use crate::regression_gate::{GateDecision, GateVerdict, RegressionGate};
use crate::{Comparison, RunData};

/// One cell of the candidate whose score fell on a regressed metric.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DroppedCell {
    /// The candidate's sample id.
    pub sample_id: String,
    pub metric: String,
    pub baseline: f64,
    pub candidate: f64,
}

/// The candidate cells that drove `gate`'s regression: on each regressed metric, every
/// paired sample scored in both runs (`runs`: baseline, candidate) whose candidate score is
/// below its baseline's, in the baseline's order.
pub fn dropped_cells(
    gate: &RegressionGate,
    comparison: &Comparison,
    runs: [&RunData; 2],
) -> Vec<DroppedCell> {
    let regressed: Vec<&str> = gate
        .with_verdict(GateVerdict::Regressed)
        .map(|r| r.quantity.name.as_str())
        .filter(|name| comparison.metrics.iter().any(|m| m == name))
        .collect();
    let Some(pair) = comparison.against_first(1) else {
        return Vec::new();
    };
    let [baseline, candidate] = runs.map(scores_of);
    let mut cells = Vec::new();
    for (baseline_id, candidate_id) in pair.pairing.pairs() {
        for metric in &regressed {
            let key = |id: &String| (id.clone(), (*metric).to_owned());
            let (Some(before), Some(after)) = (
                baseline.get(&key(baseline_id)),
                candidate.get(&key(candidate_id)),
            ) else {
                continue;
            };
            if after < before {
                cells.push(DroppedCell {
                    sample_id: candidate_id.clone(),
                    metric: (*metric).to_owned(),
                    baseline: *before,
                    candidate: *after,
                });
            }
        }
    }
    cells
}

/// Each scored cell of `run`: (sample id, metric) → value.
fn scores_of(run: &RunData) -> HashMap<(String, String), f64> {
    run.records
        .iter()
        .filter_map(|r| {
            let value = r.outcome.value()?;
            Some(((r.sample_id.clone(), r.metric.clone()), value))
        })
        .collect()
}

/// One candidate cell judged again K times.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfirmedCell {
    pub sample_id: String,
    pub metric: String,
    /// The candidate run's score.
    pub before: f64,
    /// Each repeat's score (`None`: undefined or failed).
    pub repeats: Vec<Option<f64>>,
    /// The median of the repeats that scored; `None` when none did (the run's score stands).
    pub confirmed: Option<f64>,
}

impl ConfirmedCell {
    /// The cell with the median of `repeats`.
    pub fn new(sample_id: String, metric: String, before: f64, repeats: Vec<Option<f64>>) -> Self {
        let confirmed = median(repeats.iter().flatten().copied().collect());
        Self {
            sample_id,
            metric,
            before,
            repeats,
            confirmed,
        }
    }

    /// The score the gate uses: the confirmed one, else the run's.
    pub fn score(&self) -> f64 {
        self.confirmed.unwrap_or(self.before)
    }

    /// Whether the confirmation changed the score.
    pub fn changed(&self) -> bool {
        self.score() != self.before
    }
}

/// The median (the mean of the middle two for an even count); `None` of nothing.
fn median(mut values: Vec<f64>) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(values[n / 2]),
        _ => Some((values[n / 2 - 1] + values[n / 2]) / 2.0),
    }
}

/// Puts the confirmed scores into `candidate`'s records (in memory), keeping each cell's
/// evidence; returns how many cells changed.
pub fn apply_confirmed(candidate: &mut RunData, cells: &[ConfirmedCell]) -> usize {
    let confirmed: HashMap<(&str, &str), f64> = cells
        .iter()
        .filter(|c| c.changed())
        .map(|c| ((c.sample_id.as_str(), c.metric.as_str()), c.score()))
        .collect();
    let mut changed = HashSet::new();
    for record in &mut candidate.records {
        let key = (record.sample_id.as_str(), record.metric.as_str());
        if let (Some(score), Outcome::Score { value, .. }) =
            (confirmed.get(&key), &mut record.outcome)
        {
            *value = *score;
            changed.insert((record.sample_id.clone(), record.metric.clone()));
        }
    }
    changed.len()
}

/// What `--confirm` did, for the gate's lines and the comment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GateConfirmation {
    /// Repeats per cell.
    pub repeats: u32,
    /// Cells judged again.
    pub cells: usize,
    /// Of those, whose score the repeats changed.
    pub changed: usize,
    /// Of those, none of whose repeats scored (the run's score stands).
    pub unanswered: usize,
    /// The gate's decision and verdict line before the confirmation.
    pub decision_before: GateDecision,
    pub verdict_before: String,
    /// Where the repeats and the confirmed scores were written.
    pub out: String,
}

impl GateConfirmation {
    /// What K repeats of `cells` made of the gate `before` (`out`: where they are kept).
    pub fn of(repeats: u32, cells: &[ConfirmedCell], before: &RegressionGate, out: String) -> Self {
        Self {
            repeats,
            cells: cells.len(),
            changed: cells.iter().filter(|c| c.changed()).count(),
            unanswered: cells.iter().filter(|c| c.confirmed.is_none()).count(),
            decision_before: before.decision(),
            verdict_before: before.verdict_line(),
            out,
        }
    }

    /// `confirmed: 6 cells judged again 3 times each, 4 changed; before: regression: …`.
    pub fn line(&self) -> String {
        let unanswered = match self.unanswered {
            0 => String::new(),
            n => format!(", {n} never scored (their run's score stands)"),
        };
        let times = match self.repeats {
            1 => "once".to_owned(),
            k => format!("{k} times each"),
        };
        format!(
            "confirmed: {} cells judged again {times} (the median of the repeats), {} changed\
             {unanswered}; before confirming: {}",
            self.cells, self.changed, self.verdict_before
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_repeats_is_the_majority_of_pass_fail_scores() {
        let cell =
            |repeats: Vec<Option<f64>>| ConfirmedCell::new("s".into(), "m".into(), 0.0, repeats);
        assert_eq!(
            cell(vec![Some(1.0), Some(0.0), Some(1.0)]).confirmed,
            Some(1.0)
        );
        assert_eq!(
            cell(vec![Some(0.0), Some(0.0), Some(1.0)]).confirmed,
            Some(0.0)
        );
        assert_eq!(cell(vec![Some(0.2), Some(0.8)]).confirmed, Some(0.5));
        // Repeats that never scored do not vote; none at all leaves the run's score.
        assert_eq!(cell(vec![None, Some(0.6), None]).confirmed, Some(0.6));
        let unanswered = cell(vec![None, None]);
        assert_eq!((unanswered.confirmed, unanswered.score()), (None, 0.0));
        assert!(!unanswered.changed());
        assert!(cell(vec![Some(1.0)]).changed());
    }

    #[test]
    fn dropped_cells_are_the_paired_drops_on_regressed_metrics_and_confirmed_scores_replace_them() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        crate::testing::write_run(&a, "d", &crate::testing::scores(0.0));
        crate::testing::write_run(&b, "d", &crate::testing::scores(-0.1));
        let mut runs = [a, b].map(|p| RunData::load(&p).unwrap());
        let spec = crate::GateSpec::from_argument("faithfulness=0.02").unwrap();
        let (comparison, gate) = crate::testing::gated(&runs, &spec);
        assert_eq!(gate.decision(), GateDecision::Regressed);
        let dropped = dropped_cells(&gate, &comparison, [&runs[0], &runs[1]]);
        assert!(!dropped.is_empty());
        assert!(
            dropped
                .iter()
                .all(|c| c.metric == "faithfulness" && c.candidate < c.baseline)
        );
        let confirmed: Vec<ConfirmedCell> = dropped
            .iter()
            .map(|c| {
                let back = Some(c.baseline);
                ConfirmedCell::new(
                    c.sample_id.clone(),
                    c.metric.clone(),
                    c.candidate,
                    vec![back],
                )
            })
            .collect();
        assert_eq!(apply_confirmed(&mut runs[1], &confirmed), dropped.len());
        let (_, after) = crate::testing::gated(&runs, &spec);
        assert_ne!(after.decision(), GateDecision::Regressed);
        let summary = GateConfirmation::of(3, &confirmed, &gate, "c".into());
        assert!(summary.line().starts_with(&format!(
            "confirmed: {} cells judged again 3 times each",
            dropped.len()
        )));
    }
}
