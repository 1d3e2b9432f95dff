//! The agreement figures of one judge-check: per item, the judge's scores against the label;
//! over the items, the statistics of `rageval_core::agreement` with seeded 95% bootstrap
//! intervals. Items whose samples got no score (undefined or failed) are left out and
//! counted, and the accuracies are also given with those items counted as wrong
//! (`…_unscored_as_wrong`), so a judge that scores few items cannot look good by it. A
//! pairwise label may be a tie: the judge agrees by scoring both the same.

use std::collections::{BTreeMap, HashMap};

use rageval_core::agreement::{
    PairResult, auroc, balanced_accuracy, bootstrap_statistic, cohen_kappa,
    cross_validated_threshold, pairwise_accuracy,
};
use rageval_core::rank::{kendall_tau_b, spearman};
use rageval_report::{
    Agreement, AgreementFigure as Figure, ItemLabel, ItemResult, ItemVerdict, LabelShape,
    NOTE_CROSS_VALIDATED, NOTE_THRESHOLD, NOTE_WARNING,
};
use serde_json::{Value, json};

use super::labels::{Item, Label};

/// How the statistics are computed.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Binary verdict: score ≥ threshold.
    pub threshold: f64,
    /// Folds for the cross-validated threshold.
    pub folds: usize,
    pub resamples: usize,
    pub seed: u64,
    /// Pairs were judged head to head (`--head-to-head`): a pair's two scores are its two
    /// seat orders' verdicts ([`super::head_to_head`]), not two scores to rank.
    pub head_to_head: bool,
}

/// The figures for `items` given each sample's score (`None`: undefined or failed).
pub fn measure(
    items: &[Item],
    scores: &HashMap<String, Option<f64>>,
    settings: &Settings,
) -> Agreement {
    let shape = items.first().map_or(LabelShape::Binary, Item::shape);
    let mut agreement = Agreement {
        shape,
        items: items.len(),
        unscored: 0,
        figures: BTreeMap::new(),
        counts: BTreeMap::new(),
        notes: BTreeMap::new(),
        verdicts: Vec::with_capacity(items.len()),
        stability: None,
    };
    // Items whose every sample has a score, with their scores.
    let mut scored: Vec<(&Item, Vec<f64>)> = Vec::new();
    for item in items {
        let item_scores: Vec<Option<f64>> = item
            .samples
            .iter()
            .map(|s| scores.get(&s.id).copied().flatten())
            .collect();
        let complete: Option<Vec<f64>> = item_scores.iter().copied().collect();
        let result = complete.as_ref().and_then(|values| match &item.label {
            Label::Preferred(preferred) if settings.head_to_head => Some(ItemResult::Pair(
                super::head_to_head::result(*preferred, values),
            )),
            Label::Preferred(preferred) => Some(ItemResult::Pair(pair_result(*preferred, values))),
            Label::Binary(label) => Some(ItemResult::Matches(
                (values[0] >= settings.threshold) == *label,
            )),
            Label::Graded { .. } => None,
        });
        agreement.verdicts.push(ItemVerdict {
            id: item.id.clone(),
            label: item_label(&item.label),
            samples: item.samples.iter().map(|s| s.id.clone()).collect(),
            scores: item_scores,
            result,
        });
        match complete {
            Some(values) => scored.push((item, values)),
            None => agreement.unscored += 1,
        }
    }
    match shape {
        LabelShape::Pairwise if settings.head_to_head => {
            super::head_to_head::figures(&scored, settings, &mut agreement);
        }
        LabelShape::Pairwise => pairwise(&scored, settings, &mut agreement),
        LabelShape::Binary => binary(&scored, settings, &mut agreement),
        LabelShape::Graded => graded(&scored, settings, &mut agreement),
    }
    unscored_as_wrong(items.len(), &mut agreement);
    let near: Vec<&String> = agreement
        .figures
        .iter()
        .filter(|(name, figure)| figure.includes_chance(name))
        .map(|(name, _)| name)
        .collect();
    if !near.is_empty() {
        let warning = json!(format!(
            "the 95% interval of {} includes chance: this judge is not shown to agree with \
             the labels here",
            near.iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
        agreement.notes.insert(NOTE_WARNING.into(), warning);
    }
    agreement
}

/// A pair's result: the judge agrees when it scores the preferred sample higher, or, for a
/// tie label, both the same; a judge tie on a preference counts half (a `Tie`).
fn pair_result(preferred: Option<usize>, values: &[f64]) -> PairResult {
    match preferred {
        Some(p) => PairResult::of(values[p], values[1 - p]),
        None if values[0] == values[1] => PairResult::Agree,
        None => PairResult::Disagree,
    }
}

fn item_label(label: &Label) -> ItemLabel {
    match label {
        Label::Preferred(p) => ItemLabel::Preferred {
            preferred: match p {
                Some(0) => "a",
                Some(_) => "b",
                None => "tie",
            }
            .into(),
        },
        Label::Binary(b) => ItemLabel::Binary(*b),
        Label::Graded { grade, group } => ItemLabel::Graded {
            grade: *grade,
            group: group.clone(),
        },
    }
}

/// A figure over all items and its bootstrap interval over resampled items.
pub(super) fn figure(
    n: usize,
    settings: &Settings,
    offset: u64,
    statistic: impl Fn(&[usize]) -> Option<f64>,
) -> Option<Figure> {
    let all: Vec<usize> = (0..n).collect();
    let value = statistic(&all)?;
    let ci95 = bootstrap_statistic(
        n,
        0.95,
        settings.resamples,
        settings.seed.wrapping_add(offset),
        statistic,
    );
    Some(Figure { value, ci95 })
}

pub(super) fn put(agreement: &mut Agreement, name: &str, figure: Option<Figure>, why_absent: &str) {
    match figure {
        Some(figure) => {
            agreement.figures.insert(name.into(), figure);
        }
        None => {
            agreement.notes.insert(name.into(), json!(why_absent));
        }
    }
}

/// The accuracies again with every unscored item counted as wrong, and the unscored share:
/// `accuracy × scored / all` (a wrong item adds nothing to the hits, one to the count).
fn unscored_as_wrong(all: usize, agreement: &mut Agreement) {
    if agreement.unscored == 0 || all == 0 {
        return;
    }
    let scored = (all - agreement.unscored) as f64;
    let share = agreement.unscored as f64 / all as f64;
    for name in ["pairwise_accuracy", "accuracy", "head_to_head_accuracy"] {
        if let Some(figure) = agreement.figures.get(name) {
            let value = figure.value * scored / all as f64;
            agreement.figures.insert(
                format!("{name}_unscored_as_wrong"),
                Figure { value, ci95: None },
            );
        }
    }
    agreement.notes.insert(
        "unscored".into(),
        json!(format!(
            "{} of {all} items ({:.1}%) got no score (undefined or failed): the figures leave \
             them out; the `_unscored_as_wrong` figures count them as wrong",
            agreement.unscored,
            share * 100.0
        )),
    );
}

fn pairwise(scored: &[(&Item, Vec<f64>)], settings: &Settings, agreement: &mut Agreement) {
    let results: Vec<PairResult> = scored
        .iter()
        .filter_map(|(item, values)| match item.label {
            Label::Preferred(preferred) => Some(pair_result(preferred, values)),
            _ => None,
        })
        .collect();
    for (name, kind) in [
        ("agree", PairResult::Agree),
        ("tie", PairResult::Tie),
        ("disagree", PairResult::Disagree),
    ] {
        let count = results.iter().filter(|r| **r == kind).count();
        agreement.counts.insert(name.into(), count);
    }
    let accuracy = figure(results.len(), settings, 0, |ix| {
        pairwise_accuracy(&ix.iter().map(|&i| results[i]).collect::<Vec<_>>())
    });
    put(agreement, "pairwise_accuracy", accuracy, "no scored pairs");
}

fn binary(scored: &[(&Item, Vec<f64>)], settings: &Settings, agreement: &mut Agreement) {
    let labels: Vec<bool> = scored
        .iter()
        .map(|(item, _)| matches!(item.label, Label::Binary(true)))
        .collect();
    let scores: Vec<f64> = scored.iter().map(|(_, v)| v[0]).collect();
    let positives = labels.iter().filter(|&&l| l).count();
    agreement.counts.insert("positive".into(), positives);
    agreement
        .counts
        .insert("negative".into(), labels.len() - positives);
    let pick = |ix: &[usize]| -> (Vec<bool>, Vec<f64>) {
        (
            ix.iter().map(|&i| labels[i]).collect(),
            ix.iter().map(|&i| scores[i]).collect(),
        )
    };
    let one_class = "the scored items hold one class only";
    let ba = figure(labels.len(), settings, 0, |ix| {
        let (l, s) = pick(ix);
        let verdicts: Vec<bool> = s.iter().map(|&v| v >= settings.threshold).collect();
        balanced_accuracy(&l, &verdicts)
    });
    put(agreement, "balanced_accuracy", ba, one_class);
    let accuracy = figure(labels.len(), settings, 1, |ix| {
        let (l, s) = pick(ix);
        let hits = l
            .iter()
            .zip(&s)
            .filter(|(l, s)| (**s >= settings.threshold) == **l)
            .count();
        (!l.is_empty()).then(|| hits as f64 / l.len() as f64)
    });
    put(agreement, "accuracy", accuracy, "no scored items");
    let area = figure(labels.len(), settings, 2, |ix| {
        let (l, s) = pick(ix);
        auroc(&l, &s)
    });
    put(agreement, "auroc", area, one_class);
    agreement
        .notes
        .insert(NOTE_THRESHOLD.into(), json!(settings.threshold));
    match cross_validated_threshold(&labels, &scores, settings.folds, settings.seed) {
        Some(cv) => {
            agreement
                .notes
                .insert(NOTE_CROSS_VALIDATED.into(), json!(cv));
            agreement.figures.insert(
                "balanced_accuracy_cv".into(),
                Figure {
                    value: cv.held_out,
                    ci95: None,
                },
            );
        }
        None => {
            agreement.notes.insert(
                NOTE_CROSS_VALIDATED.into(),
                json!(format!(
                    "needs at least {} items of each class",
                    settings.folds
                )),
            );
        }
    }
}

/// Ordering within groups (a query's documents): the mean τ-b over the groups where it is
/// defined, with the groups it leaves out counted and said.
fn within_groups(
    scored: &[(&Item, Vec<f64>)],
    grades: &[f64],
    scores: &[f64],
    settings: &Settings,
    agreement: &mut Agreement,
) {
    let pick = |ix: &[usize]| -> (Vec<f64>, Vec<f64>) {
        (
            ix.iter().map(|&i| grades[i]).collect(),
            ix.iter().map(|&i| scores[i]).collect(),
        )
    };
    let mut groups: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, (item, _)) in scored.iter().enumerate() {
        if let Label::Graded {
            group: Some(group), ..
        } = &item.label
        {
            groups.entry(group.as_str()).or_default().push(i);
        }
    }
    if !groups.is_empty() {
        let per_group: Vec<f64> = groups
            .values()
            .filter_map(|ix| {
                let (g, s) = pick(ix.as_slice());
                kendall_tau_b(&g, &s)
            })
            .collect();
        agreement.counts.insert("groups".into(), groups.len());
        agreement
            .counts
            .insert("groups_with_tau".into(), per_group.len());
        let skipped = groups.len() - per_group.len();
        if skipped > 0 {
            agreement.notes.insert(
                "groups_skipped".into(),
                json!(format!(
                    "kendall_tau_b_within_groups leaves out {skipped} of {} groups: their \
                     grades or the judge's scores are all tied (or the group has one item), so \
                     τ-b is undefined there",
                    groups.len()
                )),
            );
        }
        let mean_tau = figure(per_group.len(), settings, 2, |ix| {
            rageval_core::stats::mean(&ix.iter().map(|&i| per_group[i]).collect::<Vec<_>>())
        });
        put(
            agreement,
            "kendall_tau_b_within_groups",
            mean_tau,
            "no group has two distinct grades and scores",
        );
    }
}

fn graded(scored: &[(&Item, Vec<f64>)], settings: &Settings, agreement: &mut Agreement) {
    let grades: Vec<f64> = scored
        .iter()
        .map(|(item, _)| match item.label {
            Label::Graded { grade, .. } => grade,
            _ => f64::NAN,
        })
        .collect();
    let scores: Vec<f64> = scored.iter().map(|(_, v)| v[0]).collect();
    let pick = |ix: &[usize]| -> (Vec<f64>, Vec<f64>) {
        (
            ix.iter().map(|&i| grades[i]).collect(),
            ix.iter().map(|&i| scores[i]).collect(),
        )
    };
    let constant = "fewer than two items, or the grades or the scores are constant";
    let rho = figure(grades.len(), settings, 0, |ix| {
        let (g, s) = pick(ix);
        spearman(&g, &s)
    });
    put(agreement, "spearman", rho, constant);
    let tau = figure(grades.len(), settings, 1, |ix| {
        let (g, s) = pick(ix);
        kendall_tau_b(&g, &s)
    });
    put(agreement, "kendall_tau_b", tau, constant);
    within_groups(scored, &grades, &scores, settings, agreement);
    // κ only where the judge's scores are on the labels' own scale: every score is a grade
    // value, and both span the same lowest and highest value.
    let span = |values: &[f64]| {
        let low = values.iter().copied().fold(f64::INFINITY, f64::min);
        let high = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (low, high)
    };
    let on_scale = !scores.is_empty()
        && scores.iter().all(|s| grades.contains(s))
        && span(&scores) == span(&grades);
    if on_scale {
        let kappa = figure(grades.len(), settings, 3, |ix| {
            let (g, s) = pick(ix);
            cohen_kappa(&g, &s, false)
        });
        put(agreement, "cohen_kappa", kappa, "fewer than two categories");
        let weighted = figure(grades.len(), settings, 4, |ix| {
            let (g, s) = pick(ix);
            cohen_kappa(&g, &s, true)
        });
        put(
            agreement,
            "weighted_kappa",
            weighted,
            "fewer than two categories",
        );
    } else {
        agreement.notes.insert(
            "cohen_kappa".into(),
            json!("not computed: the metric's scores are not on the labels' scale"),
        );
    }
}

/// The figures (and the stability of repeated verdicts) as text lines for stdout.
pub fn render(agreement: &Agreement) -> String {
    let mut out = format!(
        "{} labels: {} items ({} left out: no score)\n",
        agreement.shape.name(),
        agreement.items,
        agreement.unscored
    );
    for (name, figure) in &agreement.figures {
        let interval = figure.ci95.map_or(String::new(), |ci| {
            format!("  95% CI [{:.3}, {:.3}]", ci.low, ci.high)
        });
        out.push_str(&format!("  {name:<28} {:.3}{interval}\n", figure.value));
    }
    if !agreement.counts.is_empty() {
        let counts: Vec<String> = agreement
            .counts
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        out.push_str(&format!("  counts: {}\n", counts.join(", ")));
    }
    for (name, note) in &agreement.notes {
        let text = match note {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        out.push_str(&format!("  {name}: {text}\n"));
    }
    if let Some(stability) = &agreement.stability {
        for (name, text) in super::stability::render(stability) {
            out.push_str(&format!("  {name}: {text}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use rageval_core::Sample;

    use super::*;

    fn settings() -> Settings {
        Settings {
            threshold: 0.5,
            folds: 2,
            resamples: 200,
            seed: 1,
            head_to_head: false,
        }
    }

    #[test]
    fn pairwise_counts_ties_half_and_leaves_out_unscored_items() {
        let pair = |id: &str, preferred| {
            Item::pair(
                id.into(),
                Sample::default(),
                Sample::default(),
                Some(preferred),
            )
        };
        let items = [pair("x", 0), pair("y", 1), pair("z", 0), pair("w", 0)];
        let scores: HashMap<String, Option<f64>> = [
            ("x/a", Some(0.9)),
            ("x/b", Some(0.1)),
            ("y/a", Some(0.4)),
            ("y/b", Some(0.4)),
            ("z/a", Some(0.0)),
            ("z/b", Some(1.0)),
            ("w/a", None),
            ("w/b", Some(1.0)),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        let agreement = measure(&items, &scores, &settings());
        // (1 + ½ + 0) / 3 pairs; w has no score for a.
        assert_eq!(agreement.figures["pairwise_accuracy"].value, 0.5);
        assert_eq!(agreement.unscored, 1);
        assert_eq!(agreement.counts["tie"], 1);
        assert!(agreement.notes.contains_key("warning"));
        // Counted as wrong, w makes it 1.5 / 4 = 0.375; its share is 25%.
        let as_wrong = agreement.figures["pairwise_accuracy_unscored_as_wrong"].value;
        assert!((as_wrong - 0.375).abs() < 1e-12, "{as_wrong}");
        assert!(
            agreement.notes["unscored"]
                .as_str()
                .unwrap()
                .contains("1 of 4 items (25.0%)")
        );
    }

    #[test]
    fn a_tie_label_agrees_with_a_judge_tie_only() {
        let items = [
            Item::pair("t1".into(), Sample::default(), Sample::default(), None),
            Item::pair("t2".into(), Sample::default(), Sample::default(), None),
            Item::pair("p".into(), Sample::default(), Sample::default(), Some(0)),
        ];
        let scores: HashMap<String, Option<f64>> = [
            ("t1/a", 0.5),
            ("t1/b", 0.5),
            ("t2/a", 0.9),
            ("t2/b", 0.1),
            ("p/a", 0.7),
            ("p/b", 0.7),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), Some(v)))
        .collect();
        let agreement = measure(&items, &scores, &settings());
        // t1: tie label, judge tie → agree (1); t2: tie label, judge prefers → disagree (0);
        // p: preference, judge tie → half. (1 + 0 + ½) / 3 = 0.5.
        assert_eq!(agreement.figures["pairwise_accuracy"].value, 0.5);
        assert_eq!(
            (
                agreement.counts["agree"],
                agreement.counts["tie"],
                agreement.counts["disagree"]
            ),
            (1, 1, 1)
        );
        assert!(!agreement.notes.contains_key("unscored"));
    }

    #[test]
    fn tied_groups_are_left_out_of_the_within_group_figure_with_a_note() {
        let item = |id: &str, grade: f64, group: &str| {
            Item::single(
                id.into(),
                Sample::default(),
                Label::Graded {
                    grade,
                    group: Some(group.into()),
                },
            )
        };
        // Group q1 orders two grades; in q2 the judge scores both documents alike (τ-b
        // undefined); q3 has one item.
        let items = [
            item("a", 2.0, "q1"),
            item("b", 0.0, "q1"),
            item("c", 2.0, "q2"),
            item("d", 1.0, "q2"),
            item("e", 1.0, "q3"),
        ];
        let scores: HashMap<String, Option<f64>> =
            [("a", 0.9), ("b", 0.2), ("c", 0.5), ("d", 0.5), ("e", 0.4)]
                .into_iter()
                .map(|(k, v)| (k.to_owned(), Some(v)))
                .collect();
        let agreement = measure(&items, &scores, &settings());
        assert_eq!(agreement.counts["groups"], 3);
        assert_eq!(agreement.counts["groups_with_tau"], 1);
        // The one group with a τ-b orders its pair rightly: τ-b = 1.
        assert_eq!(agreement.figures["kendall_tau_b_within_groups"].value, 1.0);
        assert!(
            agreement.notes["groups_skipped"]
                .as_str()
                .unwrap()
                .contains("leaves out 2 of 3 groups")
        );
    }

    #[test]
    fn graded_kappa_only_on_the_labels_scale() {
        let item = |id: &str, grade: f64| {
            Item::single(
                id.into(),
                Sample::default(),
                Label::Graded { grade, group: None },
            )
        };
        let items = [
            item("a", 0.0),
            item("b", 1.0),
            item("c", 1.0),
            item("d", 0.0),
        ];
        let on_scale: HashMap<String, Option<f64>> =
            [("a", 0.0), ("b", 1.0), ("c", 0.0), ("d", 0.0)]
                .into_iter()
                .map(|(k, v)| (k.to_owned(), Some(v)))
                .collect();
        let agreement = measure(&items, &on_scale, &settings());
        // Table [[2, 0], [1, 1]]: p_o 0.75, p_e 0.5 → κ 0.5.
        assert!((agreement.figures["cohen_kappa"].value - 0.5).abs() < 1e-12);
        let off_scale: HashMap<String, Option<f64>> =
            on_scale.keys().map(|k| (k.clone(), Some(0.3))).collect();
        let agreement = measure(&items, &off_scale, &settings());
        assert!(!agreement.figures.contains_key("cohen_kappa"));
        assert!(
            agreement.notes["cohen_kappa"]
                .as_str()
                .unwrap()
                .contains("scale")
        );
    }
}
