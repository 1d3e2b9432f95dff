//! Leave one set out: for each set of a sweep, the candidate the sweep chooses without it —
//! the best mean of the development figures of the task's *other* sets in the same script —
//! and that candidate's figure on the set's held-out half. No part of the set plays a role
//! in that choice, so its figure is what a user can expect on data unlike every set the
//! choice saw: the sets differ from each other far more than one set's two halves do.
//!
//! The rows of the measured table come from here ([`measured_rows`]): per set, its
//! left-out figure ([`FigureKind::HeldOutBySet`]) and, where the set's development half took
//! part in choosing the shipped default, the default's figure on the held-out half
//! ([`FigureKind::InSet`]). A set that is its task's only one in its script has no other set
//! to choose on: its in-set figure is all there is. Both kinds are measured on the same
//! held-out items, so they differ only by whether the set helped choose the rule.

use rageval_core::agreement::FigureKind;

use super::sets::KIDS_CODING;
use super::{Candidate, Figure, Scored, Sweep};
use crate::heuristic::HEURISTIC_VERSION;
use crate::measured::{IMPLEMENTATION, Measurement};
use crate::task::TaskKind;

/// One set's figure with the set left out of the choice.
#[derive(Debug, Clone, PartialEq)]
pub struct LeftOut {
    /// The candidate chosen on the other sets' development figures.
    pub chosen: Candidate,
    /// Its objective there (the mean of those figures).
    pub objective: f64,
    /// Whether it is the sweep's own choice (the shipped default).
    pub is_default: bool,
    /// Its figure on the left-out set's held-out half.
    pub figure: Figure,
}

impl Sweep {
    /// The sets whose development figures the shipped default was chosen on.
    pub fn choice_sets(&self) -> Vec<&'static str> {
        self.chosen()
            .map(|chosen| chosen.dev.iter().map(|f| f.set).collect())
            .unwrap_or_default()
    }

    /// For each set with a held-out figure under the default, the choice made without it
    /// and that choice's figure on it; a set that is the only one to choose on (for this
    /// task and script) has no entry.
    pub fn leave_one_set_out(&self) -> Vec<LeftOut> {
        let Some(default) = self.chosen() else {
            return Vec::new();
        };
        default
            .held_out
            .iter()
            .filter_map(|held_out| {
                let (best, objective) = self.best_without(held_out.set)?;
                let figure = best.held_out.iter().find(|f| f.set == held_out.set)?;
                Some(LeftOut {
                    chosen: best.candidate,
                    objective,
                    is_default: best.position == default.position,
                    figure: figure.clone(),
                })
            })
            .collect()
    }

    /// The candidate with the best mean development figure over the sets other than
    /// `left_out` (ties to the one tried first, as the sweep breaks them), and that mean;
    /// `None` when no other set has a development figure.
    fn best_without(&self, left_out: &str) -> Option<(&Scored, f64)> {
        let mut best: Option<(&Scored, f64)> = None;
        for scored in &self.ranked {
            let others: Vec<f64> = scored
                .dev
                .iter()
                .filter(|f| f.set != left_out)
                .map(|f| f.value)
                .collect();
            if others.is_empty() {
                continue;
            }
            let objective = others.iter().sum::<f64>() / others.len() as f64;
            let better = best.is_none_or(|(leader, top)| {
                objective > top || (objective == top && scored.position < leader.position)
            });
            if better {
                best = Some((scored, objective));
            }
        }
        best
    }
}

/// The measured-table rows of `sweeps` (see the module doc): per set with a held-out
/// figure, the left-out figure where another set could choose, and the default's in-set
/// figure where the set's development half counted in its choice — or where no other set
/// could choose.
pub fn measured_rows(sweeps: &[Sweep]) -> Vec<Measurement> {
    let mut rows = Vec::new();
    for sweep in sweeps {
        let Some(default) = sweep.chosen() else {
            continue;
        };
        let choice_sets = sweep.choice_sets();
        let left_out = sweep.leave_one_set_out();
        for in_set in &default.held_out {
            let held_out_by_set = left_out.iter().find(|l| l.figure.set == in_set.set);
            if let Some(l) = held_out_by_set {
                rows.push(row(sweep, &l.figure, FigureKind::HeldOutBySet));
            }
            if held_out_by_set.is_none() || choice_sets.contains(&in_set.set) {
                rows.push(row(sweep, in_set, FigureKind::InSet));
            }
        }
    }
    rows
}

/// A row of the lexical heuristic: the data set named with the script it was judged by.
fn row(sweep: &Sweep, figure: &Figure, kind: FigureKind) -> Measurement {
    let unit = if figure.measure == "pairwise accuracy" {
        "pairs"
    } else {
        "items"
    };
    // The kids-coding support pairs are scored as context recall scores a reference's
    // statements, so they speak for that metric only.
    let metric = (sweep.task == TaskKind::SupportVerdicts && figure.set == KIDS_CODING)
        .then(|| "context_recall".to_owned());
    Measurement {
        task: sweep.task,
        implementation: IMPLEMENTATION.to_owned(),
        version: HEURISTIC_VERSION,
        dataset: format!("{} ({} script)", figure.set, sweep.lang.code()),
        measure: figure.measure.to_owned(),
        value: figure.value,
        count: figure.count,
        unit: unit.to_owned(),
        metric,
        kind,
    }
}

#[cfg(test)]
mod tests {
    use super::super::Signal;
    use super::*;
    use crate::prompt::Lang;

    fn figure(set: &'static str, value: f64) -> Figure {
        Figure {
            set,
            measure: "balanced accuracy",
            value,
            count: 100,
        }
    }

    /// Two candidates over three sets: A wins the mean of all three only through set X,
    /// on which it is far better; without X, B wins.
    fn sweep() -> Sweep {
        let scored = |threshold, position, dev: [f64; 3], held_out: [f64; 3]| Scored {
            candidate: Candidate {
                signal: Signal::Overlap,
                threshold,
            },
            position,
            objective: dev.iter().sum::<f64>() / 3.0,
            dev: ["X", "Y", "Z"]
                .iter()
                .zip(dev)
                .map(|(set, v)| figure(set, v))
                .collect(),
            held_out: ["X", "Y", "Z"]
                .iter()
                .zip(held_out)
                .map(|(set, v)| figure(set, v))
                .collect(),
        };
        Sweep {
            task: TaskKind::ContextRelevance,
            lang: Lang::En,
            ranked: vec![
                scored(0.5, 1, [0.95, 0.6, 0.6], [0.9, 0.61, 0.62]),
                scored(0.3, 0, [0.55, 0.7, 0.7], [0.52, 0.71, 0.72]),
            ],
        }
    }

    #[test]
    fn a_left_out_set_is_judged_by_the_rule_chosen_without_it() {
        let sweep = sweep();
        let left_out = sweep.leave_one_set_out();
        assert_eq!(left_out.len(), 3);
        // Without X, B (0.30) wins on Y and Z: X's figure is B's, not the default's 0.90.
        assert_eq!(left_out[0].chosen.threshold, 0.3);
        assert!(!left_out[0].is_default);
        assert_eq!(left_out[0].figure.value, 0.52);
        // Without Y, A still wins through X: Y's figure is the default's.
        assert!(left_out[1].is_default);
        assert_eq!(left_out[1].figure.value, 0.61);
        let rows = measured_rows(&[sweep]);
        let kinds: Vec<(&str, FigureKind, f64)> = rows
            .iter()
            .map(|r| (r.dataset.as_str(), r.kind, r.value))
            .collect();
        assert_eq!(
            kinds[..2],
            [
                ("X (en script)", FigureKind::HeldOutBySet, 0.52),
                ("X (en script)", FigureKind::InSet, 0.9),
            ]
        );
        assert_eq!(rows.len(), 6);
    }

    #[test]
    fn ties_without_the_set_go_to_the_candidate_tried_first() {
        let mut sweep = sweep();
        // Equal on Y and Z: without X, the candidate tried first (position 0) wins.
        for scored in &mut sweep.ranked {
            for f in &mut scored.dev[1..] {
                f.value = 0.7;
            }
        }
        assert_eq!(sweep.leave_one_set_out()[0].chosen.threshold, 0.3);
        sweep.ranked[1].position = 2;
        assert_eq!(sweep.leave_one_set_out()[0].chosen.threshold, 0.5);
    }

    #[test]
    fn a_task_s_only_set_has_its_in_set_figure_alone() {
        let mut sweep = sweep();
        for scored in &mut sweep.ranked {
            scored.dev.truncate(1);
            scored.held_out.truncate(1);
        }
        assert!(sweep.leave_one_set_out().is_empty());
        let rows = measured_rows(&[sweep]);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].kind, FigureKind::InSet);
        assert_eq!(rows[0].value, 0.9);
    }

    /// A set without development figures never helped choose: its figure under the default
    /// is already held out by set, and no in-set row claims otherwise.
    #[test]
    fn a_set_the_choice_never_saw_has_no_in_set_row() {
        let mut sweep = sweep();
        for scored in &mut sweep.ranked {
            scored.dev.retain(|f| f.set != "Z");
        }
        let rows = measured_rows(&[sweep]);
        let z: Vec<FigureKind> = rows
            .iter()
            .filter(|r| r.dataset.starts_with('Z'))
            .map(|r| r.kind)
            .collect();
        assert_eq!(z, [FigureKind::HeldOutBySet]);
    }
}
