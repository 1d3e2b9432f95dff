//! Choosing the heuristic judge's defaults by measurement: for each verdict task and
//! script, every candidate rule (a signal — content-word overlap, MiniLM cosine or a
//! fixed-weight blend — and its threshold; for support, the full-support threshold and the
//! degree-of-support rule) is scored on the development part of the shared
//! sets ([`Part::Dev`]); the best is the default. Its figures on the held-out part are
//! in-set figures (the set's other half helped choose); [`Sweep::leave_one_set_out`] chooses
//! again without each set in turn, and those figures are the ones printed beside a score.
//! `examples/choose_heuristic.rs` prints the sweep; the integration tests recompute it and
//! fail when the choice or a figure drifts from [`measured`](crate::measured) and the
//! constants of [`heuristic`](crate::heuristic).
//!
//! An item counts for the script the heuristic reads its threshold by (the question's, the
//! statement's), so a Latin-script question of a Chinese set counts under English, as the
//! judge treats it. Every figure has chance at 0.5: balanced accuracy for binary labels, pairwise accuracy
//! (ties half) for pairs and for graded labels (every two items of a question with
//! different grades). A candidate's objective is the mean of its figures over the script's
//! sets (a set with fewer than [`MIN_COUNT`] items in a part is left out); ties go to the candidate listed first (overlap before cosine, lower thresholds
//! first).

mod left_out;
mod sets;

use std::collections::BTreeMap;

pub use left_out::{LeftOut, measured_rows};
pub use sets::{
    CRANFIELD_DIR, KIDS_CODING, Passage, RubricPair, Shares, SupportUnit, SweepData, UHGEVAL_FILE,
    Usefulness, read_all,
};

use super::split::Part;
use super::{BinaryAgreement, PairwiseAgreement};
use crate::heuristic::SUPPORT_PARTIAL;
use crate::heuristic::support::DegreeRule;
use crate::prompt::Lang;
use crate::task::TaskKind;

/// What a relevance-type rule reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Signal {
    /// The share of the question's content words in the text.
    Overlap,
    /// MiniLM cosine of question and text.
    Cosine,
    /// `weight × overlap + (1 − weight) × cosine`.
    Blend {
        /// The overlap's weight.
        weight: f64,
    },
    /// Support: the labels from the statement's overlap with the contexts, and the degree
    /// of support measured by the rule (`None`: the labels alone, as version 2 scored).
    Support(Option<DegreeRule>),
}

impl Signal {
    /// Every signal tried; cosine-based ones need cosines.
    pub const ALL: [Signal; 5] = [
        Signal::Overlap,
        Signal::Cosine,
        Signal::Blend { weight: 0.25 },
        Signal::Blend { weight: 0.5 },
        Signal::Blend { weight: 0.75 },
    ];

    /// The signal's value, `None` when it needs a cosine that was not measured.
    pub fn value(self, overlap: f64, cosine: Option<f64>) -> Option<f64> {
        match self {
            Signal::Overlap | Signal::Support(_) => Some(overlap),
            Signal::Cosine => cosine,
            Signal::Blend { weight } => cosine.map(|c| weight * overlap + (1.0 - weight) * c),
        }
    }

    /// `overlap`, `cosine` or `blend 0.50`.
    pub fn name(self) -> String {
        match self {
            Signal::Overlap => "overlap".into(),
            Signal::Cosine => "cosine".into(),
            Signal::Blend { weight } => format!("blend {weight:.2} overlap"),
            Signal::Support(Some(rule)) => rule.to_string(),
            Signal::Support(None) => "labels only".into(),
        }
    }
}

/// A candidate rule: a signal and its threshold (a band width for grades, a margin for
/// pairwise preference).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candidate {
    /// What it reads.
    pub signal: Signal,
    /// Its threshold.
    pub threshold: f64,
}

impl std::fmt::Display for Candidate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.signal {
            Signal::Support(_) => write!(
                f,
                "full support at overlap ≥ {:.2}; {}",
                self.threshold,
                self.signal.name()
            ),
            _ => write!(f, "{} ≥ {:.2}", self.signal.name(), self.threshold),
        }
    }
}

/// One figure of a candidate on one set and part.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// The set.
    pub set: &'static str,
    /// `balanced accuracy` or `pairwise accuracy`.
    pub measure: &'static str,
    /// The value (0.5 is chance).
    pub value: f64,
    /// Items (binary) or pairs.
    pub count: usize,
}

/// A candidate's figures on both parts.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    /// The candidate.
    pub candidate: Candidate,
    /// Its place in the list of candidates tried (ties of objective go to the lower).
    pub position: usize,
    /// The mean of its development figures (what the choice maximises).
    pub objective: f64,
    /// Per set, on the development part.
    pub dev: Vec<Figure>,
    /// Per set, on the held-out part.
    pub held_out: Vec<Figure>,
}

/// The sweep of one task for one script: every candidate, best first.
#[derive(Debug, Clone, PartialEq)]
pub struct Sweep {
    /// The task.
    pub task: TaskKind,
    /// The script of the questions.
    pub lang: Lang,
    /// Candidates by falling objective (the first is the choice).
    pub ranked: Vec<Scored>,
}

impl Sweep {
    /// The chosen candidate.
    pub fn chosen(&self) -> Option<&Scored> {
        self.ranked.first()
    }
}

/// A grid from `from` to `to` (inclusive) in steps of `step`, rounded to 1e-9.
fn grid(from: f64, to: f64, step: f64) -> Vec<f64> {
    let n = ((to - from) / step).round() as usize;
    (0..=n)
        .map(|i| ((from + step * i as f64) * 1e9).round() / 1e9)
        .collect()
}

/// Figures of `score` (`None`: unscored, left out) over the items of one set and part:
/// balanced accuracy of `score ≥ 0.5` for binary labels, else pairwise accuracy within
/// groups.
fn figure<'a, T>(
    set: &'static str,
    items: impl Iterator<Item = &'a T>,
    binary: bool,
    label: impl Fn(&T) -> (&str, f64),
    score: impl Fn(&T) -> Option<f64>,
) -> Option<Figure>
where
    T: 'a,
{
    if binary {
        let mut agreement = BinaryAgreement::default();
        for item in items {
            agreement.add(label(item).1 > 0.5, score(item).is_some_and(|s| s >= 0.5));
        }
        agreement.balanced_accuracy().map(|value| Figure {
            set,
            measure: "balanced accuracy",
            value,
            count: agreement.items(),
        })
    } else {
        let mut groups: BTreeMap<&str, Vec<(f64, f64)>> = BTreeMap::new();
        for item in items {
            let (group, grade) = label(item);
            if let Some(s) = score(item) {
                groups.entry(group).or_default().push((grade, s));
            }
        }
        let mut agreement = PairwiseAgreement::default();
        for members in groups.values() {
            for (i, a) in members.iter().enumerate() {
                for b in &members[i + 1..] {
                    if a.0 > b.0 {
                        agreement.add(a.1, b.1);
                    } else if b.0 > a.0 {
                        agreement.add(b.1, a.1);
                    }
                }
            }
        }
        agreement.accuracy().map(|value| Figure {
            set,
            measure: "pairwise accuracy",
            value,
            count: agreement.pairs,
        })
    }
}

/// A set's figure on fewer items (or pairs) than this in a part is too noisy to count: it
/// is left out (e.g. the few Latin-script questions of a Chinese set).
pub const MIN_COUNT: usize = 30;

fn mean(figures: &[Figure]) -> f64 {
    if figures.is_empty() {
        0.0
    } else {
        figures.iter().map(|f| f.value).sum::<f64>() / figures.len() as f64
    }
}

/// Scores every candidate on both parts and ranks them by the development objective.
fn rank(
    task: TaskKind,
    lang: Lang,
    candidates: Vec<Candidate>,
    figures: impl Fn(Candidate, Part) -> Vec<Figure>,
) -> Sweep {
    let mut ranked: Vec<Scored> = candidates
        .into_iter()
        .enumerate()
        .filter_map(|(position, candidate)| {
            let counted = |part| {
                let mut all = figures(candidate, part);
                all.retain(|f: &Figure| f.count >= MIN_COUNT);
                all
            };
            let dev = counted(Part::Dev);
            if dev.is_empty() {
                return None;
            }
            Some(Scored {
                candidate,
                position,
                objective: mean(&dev),
                dev,
                held_out: counted(Part::HeldOut),
            })
        })
        .collect();
    // Stable: equal objectives keep the candidates' order.
    ranked.sort_by(|a, b| b.objective.total_cmp(&a.objective));
    Sweep { task, lang, ranked }
}

fn candidates(thresholds: &[f64], signals: &[Signal]) -> Vec<Candidate> {
    signals
        .iter()
        .flat_map(|&signal| {
            thresholds
                .iter()
                .map(move |&threshold| Candidate { signal, threshold })
        })
        .collect()
}

/// The sets present among `passages` of `lang`, in first-seen order.
fn set_names<'a>(
    items: impl Iterator<Item = (&'static str, Lang)> + 'a,
    lang: Lang,
) -> Vec<&'static str> {
    let mut names = Vec::new();
    for (set, l) in items {
        if l == lang && !names.contains(&set) {
            names.push(set);
        }
    }
    names
}

/// A relevance-type task over the passages: `score` turns a candidate and a passage's
/// signal into the task's score.
fn sweep_passages(
    data: &SweepData,
    task: TaskKind,
    lang: Lang,
    thresholds: &[f64],
    score: impl Fn(Candidate, &Passage, f64) -> f64,
    within_groups: bool,
) -> Sweep {
    let sets = set_names(data.passages.iter().map(|p| (p.set, p.lang)), lang);
    rank(
        task,
        lang,
        candidates(thresholds, &Signal::ALL),
        |candidate, part| {
            sets.iter()
                .filter_map(|&set| {
                    let items = data
                        .passages
                        .iter()
                        .filter(|p| p.set == set && p.part == part && p.lang == lang);
                    let binary = !within_groups && items.clone().all(|p| p.binary);
                    figure(
                        set,
                        items,
                        binary,
                        |p| (p.group.as_str(), p.grade),
                        |p| {
                            let signal = candidate.signal.value(p.overlap, p.cosine)?;
                            Some(score(candidate, p, signal))
                        },
                    )
                })
                .collect()
        },
    )
}

/// Context relevance: relevant (1) when the signal reaches the threshold.
pub fn sweep_relevance(data: &SweepData, lang: Lang) -> Sweep {
    sweep_passages(
        data,
        TaskKind::ContextRelevance,
        lang,
        &grid(0.05, 0.95, 0.05),
        |c, _, signal| f64::from(u8::from(signal >= c.threshold)),
        false,
    )
}

/// Grades 1–3 from bands at 1, 2 and 3 times the threshold, compared within a question.
pub fn sweep_grade(data: &SweepData, lang: Lang) -> Sweep {
    sweep_passages(
        data,
        TaskKind::GradeRelevance,
        lang,
        &grid(0.05, 0.30, 0.05),
        |c, _, signal| {
            (1..=3)
                .filter(|&k| signal >= c.threshold * f64::from(k))
                .count() as f64
        },
        true,
    )
}

/// Pairwise preference, on every two passages of a question with different labels: the
/// larger signal wins beyond the margin (the threshold), else the more focused passage
/// beyond it, else a tie (half a point).
pub fn sweep_pairwise(data: &SweepData, lang: Lang) -> Sweep {
    let sets = set_names(data.passages.iter().map(|p| (p.set, p.lang)), lang);
    rank(
        TaskKind::PairwisePreference,
        lang,
        candidates(&[0.0, 0.02, 0.05, 0.1, 0.15, 0.2], &Signal::ALL),
        |candidate, part| preference_figures(data, &sets, lang, candidate, part),
    )
}

fn preference_figures(
    data: &SweepData,
    sets: &[&'static str],
    lang: Lang,
    candidate: Candidate,
    part: Part,
) -> Vec<Figure> {
    let margin = candidate.threshold;
    let pick = |x: f64, y: f64| {
        if x - y > margin {
            Some(1.0)
        } else if y - x > margin {
            Some(0.0)
        } else {
            None
        }
    };
    let mut figures = Vec::new();
    for &set in sets {
        let mut groups: BTreeMap<&str, Vec<&Passage>> = BTreeMap::new();
        for p in data
            .passages
            .iter()
            .filter(|p| p.set == set && p.part == part && p.lang == lang)
        {
            groups.entry(p.group.as_str()).or_default().push(p);
        }
        let mut agreement = PairwiseAgreement::default();
        for members in groups.values() {
            for (i, a) in members.iter().enumerate() {
                for b in &members[i + 1..] {
                    let (better, worse) = match a.grade.total_cmp(&b.grade) {
                        std::cmp::Ordering::Greater => (a, b),
                        std::cmp::Ordering::Less => (b, a),
                        std::cmp::Ordering::Equal => continue,
                    };
                    let (Some(x), Some(y)) = (
                        candidate.signal.value(better.overlap, better.cosine),
                        candidate.signal.value(worse.overlap, worse.cosine),
                    ) else {
                        continue;
                    };
                    let points = pick(x, y)
                        .or_else(|| pick(better.focus, worse.focus))
                        .unwrap_or(0.5);
                    agreement.pairs += 1;
                    agreement.wins += points;
                }
            }
        }
        if let Some(value) = agreement.accuracy() {
            figures.push(Figure {
                set,
                measure: "pairwise accuracy",
                value,
                count: agreement.pairs,
            });
        }
    }
    figures
}

/// The support rules compared: every degree rule, then the labels alone (version 2's
/// scoring, listed last so that it wins only when strictly better).
fn support_signals() -> Vec<Signal> {
    DegreeRule::CANDIDATES
        .iter()
        .map(|&rule| Signal::Support(Some(rule)))
        .chain([Signal::Support(None)])
        .collect()
}

/// The score a metric gives a text under a support candidate: the mean credit of its
/// statements (under the unit's credit rule), the label from the candidate's full-support
/// threshold and [`SUPPORT_PARTIAL`], the degree from its rule; 0 for a text without
/// statements.
fn support_score(unit: &SupportUnit, text: usize, candidate: Candidate) -> f64 {
    let statements = &unit.answers[text];
    if statements.is_empty() {
        return 0.0;
    }
    let rule = match candidate.signal {
        Signal::Support(rule) => rule,
        _ => None,
    };
    let credit: f64 = statements
        .iter()
        .flatten()
        .map(|coverage| {
            let support = coverage.support(candidate.threshold, SUPPORT_PARTIAL);
            unit.credit
                .credit(support, rule.map(|rule| coverage.degree(rule)))
        })
        .sum();
    credit / statements.len() as f64
}

/// Support, scored as the metric each set stands for scores it (faithfulness: full support
/// by its degree; context recall on the kids-coding set: graded support), for every
/// full-support threshold and degree rule: pairs by pairwise accuracy, binary items by
/// balanced accuracy at 0.5.
pub fn sweep_support(data: &SweepData, lang: Lang) -> Sweep {
    let sets = set_names(data.support.iter().map(|f| (f.set, f.lang)), lang);
    rank(
        TaskKind::SupportVerdicts,
        lang,
        candidates(&grid(0.5, 0.95, 0.05), &support_signals()),
        |candidate, part| {
            sets.iter()
                .filter_map(|&set| {
                    let units: Vec<&SupportUnit> = data
                        .support
                        .iter()
                        .filter(|f| f.set == set && f.part == part && f.lang == lang)
                        .collect();
                    if units.iter().all(|u| u.label.is_some()) {
                        figure(
                            set,
                            units.iter().copied(),
                            true,
                            |u| ("", f64::from(u8::from(u.label == Some(true)))),
                            |u| Some(support_score(u, 0, candidate)),
                        )
                    } else {
                        let mut agreement = PairwiseAgreement::default();
                        for u in &units {
                            agreement.add(
                                support_score(u, 0, candidate),
                                support_score(u, 1, candidate),
                            );
                        }
                        agreement.accuracy().map(|value| Figure {
                            set,
                            measure: "pairwise accuracy",
                            value,
                            count: agreement.pairs,
                        })
                    }
                })
                .collect()
        },
    )
}

/// Usefulness for the reference answer: useful when the share reaches the threshold.
pub fn sweep_usefulness(data: &SweepData, lang: Lang) -> Sweep {
    let sets = set_names(data.usefulness.iter().map(|u| (u.set, u.lang)), lang);
    rank(
        TaskKind::ContextUsefulness,
        lang,
        candidates(&grid(0.1, 0.9, 0.05), &[Signal::Overlap]),
        |candidate, part| {
            sets.iter()
                .filter_map(|&set| {
                    figure(
                        set,
                        data.usefulness
                            .iter()
                            .filter(|u| u.set == set && u.part == part && u.lang == lang),
                        true,
                        |u| ("", f64::from(u8::from(u.label))),
                        |u| {
                            Some(f64::from(u8::from(
                                u.share.is_some_and(|s| s >= candidate.threshold),
                            )))
                        },
                    )
                })
                .collect()
        },
    )
}

/// Answer relevance (WikiEval, English): 1 for a noncommittal answer, else
/// `1 + 4 × signal`, rounded; the answer above the poor answer. No threshold.
pub fn sweep_rubric(data: &SweepData) -> Sweep {
    rank(
        TaskKind::AnswerRubric,
        Lang::En,
        candidates(&[0.0], &Signal::ALL),
        |candidate, part| {
            let score = |(overlap, cosine, noncommittal): (f64, Option<f64>, bool)| {
                let signal = candidate.signal.value(overlap, cosine)?;
                Some(if noncommittal {
                    1.0
                } else {
                    (1.0 + 4.0 * signal.clamp(0.0, 1.0)).round()
                })
            };
            let mut agreement = PairwiseAgreement::default();
            for pair in data.rubric.iter().filter(|r| r.part == part) {
                if let (Some(good), Some(poor)) = (score(pair.answers[0]), score(pair.answers[1])) {
                    agreement.add(good, poor);
                }
            }
            let Some(value) = agreement.accuracy() else {
                return Vec::new();
            };
            vec![Figure {
                set: "WikiEval",
                measure: "pairwise accuracy",
                value,
                count: agreement.pairs,
            }]
        },
    )
}

/// Every sweep: per task, English then Chinese where the task has sets in both.
pub fn sweep_all(data: &SweepData) -> Vec<Sweep> {
    let mut sweeps = Vec::new();
    for lang in [Lang::En, Lang::Zh] {
        sweeps.push(sweep_support(data, lang));
        sweeps.push(sweep_relevance(data, lang));
        sweeps.push(sweep_usefulness(data, lang));
        sweeps.push(sweep_grade(data, lang));
        sweeps.push(sweep_pairwise(data, lang));
    }
    sweeps.push(sweep_rubric(data));
    sweeps.retain(|s| !s.ranked.is_empty());
    sweeps.sort_by_key(|s| (s.task, s.lang));
    sweeps
}
