//! `judge-check --few-shot N`: N labelled items become the rubric metric's worked examples
//! (`[[metric.examples]]`, shown to the judge in every call), and the agreement is measured
//! on the other labels only — an example the judge was shown is no evidence of agreement.
//!
//! The draw is seeded (`--seed`) and spread over the label values: each value's items are
//! shuffled, then dealt one value at a time (in the values' order) until N are drawn, so
//! every value is shown before any is shown twice. A label becomes a grade on the rubric's
//! scale ([`grade_of`]). The drawn ids are part of the run's identity: a run drawn with
//! another N or seed is not resumed into. Only binary and graded labels grade one answer;
//! pairwise labels are refused.

use std::collections::BTreeMap;
use std::path::PathBuf;

use rageval_core::stats::SplitMix64;
use rageval_metrics::{Metric, MetricCatalogue};
use rageval_tasks::{RubricExample, RubricField, RubricScale};

use super::labels::{Item, Label};
use crate::engine::error::{Result, RunError};

/// Which items were drawn as examples, by id (in the order drawn).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Drawn {
    pub ids: Vec<String>,
    /// How many items are measured (the rest).
    pub measured: usize,
}

impl Drawn {
    /// The identity setting: N and the ids.
    pub fn identity(&self) -> String {
        format!("{} ({})", self.ids.len(), self.ids.join(", "))
    }

    /// What the output says: "N labels drawn as few-shot examples (ids …); agreement on
    /// the other M".
    pub fn describe(&self) -> String {
        format!(
            "{} labels drawn as few-shot examples (ids {}); agreement on the other {}",
            self.ids.len(),
            self.ids.join(", "),
            self.measured
        )
    }
}

/// Draws `n` of `items` as examples of the rubric metric `spec` (defined in `files`),
/// returning the metric with those examples added after its own, the items left to
/// measure, and what was drawn.
pub fn with_examples(
    files: &[PathBuf],
    spec: &str,
    items: Vec<Item>,
    n: usize,
    seed: u64,
) -> Result<(Box<dyn Metric>, Vec<Item>, Drawn)> {
    let mut defined = rageval_metrics::rubric::file::load(files).map_err(RunError::Rubric)?;
    let name = spec.trim();
    let Some(rubric) = defined.iter_mut().find(|d| d.rubric.name == name) else {
        return Err(RunError::Usage(format!(
            "--few-shot adds worked examples to a rubric metric of one's own (a `[[metric]]` \
             table, docs/rubrics.md); `{name}` is not one"
        )));
    };
    let rubric = &mut rubric.rubric;
    if items
        .first()
        .is_some_and(|i| matches!(i.label, Label::Preferred(_)))
    {
        return Err(RunError::Usage(
            "--few-shot draws examples from binary or graded labels: a pairwise label grades \
             no single answer"
                .into(),
        ));
    }
    if n >= items.len() {
        return Err(RunError::Usage(format!(
            "--few-shot {n}: the labels hold {} items, and at least one must be left to measure",
            items.len()
        )));
    }
    let range = grade_range(&items);
    let chosen = draw(&items, n, seed);
    for &index in &chosen {
        let item = &items[index];
        let grade = grade_of(&item.label, rubric.scale, range);
        let example = example_of(item, &rubric.reads, grade);
        rubric.examples.push(example);
    }
    let ids: Vec<String> = chosen.iter().map(|&i| items[i].id.clone()).collect();
    let measured: Vec<Item> = items
        .into_iter()
        .enumerate()
        .filter(|(index, _)| !chosen.contains(index))
        .map(|(_, item)| item)
        .collect();
    let drawn = Drawn {
        ids,
        measured: measured.len(),
    };
    let catalogue = MetricCatalogue::with_rubrics(defined).map_err(RunError::Rubric)?;
    Ok((catalogue.build(name)?, measured, drawn))
}

/// The label value an item is stratified by.
fn stratum(label: &Label) -> String {
    match label {
        Label::Binary(good) => good.to_string(),
        Label::Graded { grade, .. } => format!("{grade}"),
        Label::Preferred(preferred) => format!("{preferred:?}"),
    }
}

/// The indices of `n` items: each label value's items shuffled by `seed`, dealt one value
/// at a time until `n` are drawn.
fn draw(items: &[Item], n: usize, seed: u64) -> Vec<usize> {
    let mut strata: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (index, item) in items.iter().enumerate() {
        strata.entry(stratum(&item.label)).or_default().push(index);
    }
    let mut rng = SplitMix64::new(seed);
    let mut decks: Vec<Vec<usize>> = strata.into_values().collect();
    for deck in &mut decks {
        for i in (1..deck.len()).rev() {
            deck.swap(i, rng.below(i + 1));
        }
        deck.reverse();
    }
    let n = n.min(items.len());
    let mut chosen = Vec::with_capacity(n);
    while chosen.len() < n {
        for deck in &mut decks {
            if chosen.len() == n {
                break;
            }
            if let Some(index) = deck.pop() {
                chosen.push(index);
            }
        }
    }
    chosen
}

/// The lowest and highest grade of graded labels (`None` for binary ones).
fn grade_range(items: &[Item]) -> Option<(f64, f64)> {
    let grades = items.iter().filter_map(|item| match item.label {
        Label::Graded { grade, .. } => Some(grade),
        _ => None,
    });
    grades.fold(None, |range, g| match range {
        None => Some((g, g)),
        Some((low, high)) => Some((f64::min(low, g), f64::max(high, g))),
    })
}

/// A label as a grade on `scale`. Binary: good is pass (5 on 1–5), bad is fail (1).
/// Graded: grades already on the scale (0/1 for pass/fail, whole 1–5) are kept; others are
/// placed linearly between the file's lowest and highest grade (pass from the midpoint up;
/// all the same grade: pass, 3).
pub fn grade_of(label: &Label, scale: RubricScale, range: Option<(f64, f64)>) -> u8 {
    let position = |grade: f64| match range {
        Some((low, high)) if high > low => (grade - low) / (high - low),
        _ => 0.5,
    };
    match (label, scale) {
        (Label::Binary(good), RubricScale::PassFail) => u8::from(*good),
        (Label::Binary(good), RubricScale::OneToFive) => {
            if *good {
                5
            } else {
                1
            }
        }
        (Label::Graded { grade, .. }, RubricScale::PassFail) => {
            let on_scale = range.is_some_and(|(low, high)| low >= 0.0 && high <= 1.0);
            if on_scale && (*grade == 0.0 || *grade == 1.0) {
                *grade as u8
            } else {
                u8::from(position(*grade) >= 0.5)
            }
        }
        (Label::Graded { grade, .. }, RubricScale::OneToFive) => {
            let on_scale = range.is_some_and(|(low, high)| low >= 1.0 && high <= 5.0);
            if on_scale && grade.fract() == 0.0 {
                *grade as u8
            } else {
                1 + (position(*grade) * 4.0).round() as u8
            }
        }
        // Refused before any grade is asked for.
        (Label::Preferred(_), _) => 0,
    }
}

/// An item's sample as a worked example: the fields the rubric reads that the sample has.
fn example_of(item: &Item, reads: &[RubricField], grade: u8) -> RubricExample {
    let sample = &item.samples[0];
    let contexts: Vec<&str> = sample.contexts.iter().map(|c| c.text.as_str()).collect();
    let values = [
        (RubricField::Question, sample.question.clone()),
        (
            RubricField::Answer,
            sample.answer.clone().unwrap_or_default(),
        ),
        (RubricField::Contexts, contexts.join("\n\n")),
        (RubricField::Reference, sample.references.join("\n")),
    ];
    RubricExample {
        fields: values
            .into_iter()
            .filter(|(field, value)| reads.contains(field) && !value.trim().is_empty())
            .collect(),
        grade,
        reason: Some(format!("a person's label (item {})", item.id)),
    }
}

#[cfg(test)]
mod tests {
    use rageval_core::Sample;

    use super::*;

    fn binary(id: &str, good: bool) -> Item {
        Item::single(id.into(), Sample::default(), Label::Binary(good))
    }

    #[test]
    fn the_draw_deals_every_label_value_before_any_twice_and_follows_the_seed() {
        let items: Vec<Item> = (0..9)
            .map(|i| binary(&format!("i{i}"), i % 3 == 0))
            .collect();
        let chosen = draw(&items, 2, 7);
        let labels: Vec<bool> = chosen
            .iter()
            .map(|&i| matches!(items[i].label, Label::Binary(true)))
            .collect();
        assert_eq!(
            labels,
            [false, true],
            "one of each value, in the values' order"
        );
        assert_eq!(draw(&items, 2, 7), chosen);
        // Three good items only: once they are dealt, bad ones fill the draw.
        let eight = draw(&items, 8, 7);
        let good = eight
            .iter()
            .filter(|&&i| matches!(items[i].label, Label::Binary(true)))
            .count();
        assert_eq!(good, 3);
        let mut distinct = eight.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), 8);
        assert_eq!(draw(&items, 20, 7).len(), 9, "never more than there are");
        let seeds: Vec<Vec<usize>> = (0..8).map(|seed| draw(&items, 2, seed)).collect();
        assert!(
            seeds.iter().any(|c| *c != chosen),
            "another seed draws others"
        );
    }

    #[test]
    fn labels_become_grades_on_the_rubric_scale() {
        let graded = |grade| Label::Graded { grade, group: None };
        let (pass_fail, one_to_five) = (RubricScale::PassFail, RubricScale::OneToFive);
        assert_eq!(grade_of(&Label::Binary(true), pass_fail, None), 1);
        assert_eq!(grade_of(&Label::Binary(false), one_to_five, None), 1);
        assert_eq!(grade_of(&Label::Binary(true), one_to_five, None), 5);
        // Grades on the scale are kept; others placed between the file's lowest and highest.
        assert_eq!(grade_of(&graded(4.0), one_to_five, Some((1.0, 5.0))), 4);
        assert_eq!(grade_of(&graded(2.0), one_to_five, Some((0.0, 2.0))), 5);
        assert_eq!(grade_of(&graded(1.0), one_to_five, Some((0.0, 2.0))), 3);
        assert_eq!(grade_of(&graded(1.0), pass_fail, Some((0.0, 1.0))), 1);
        assert_eq!(grade_of(&graded(1.0), pass_fail, Some((0.0, 3.0))), 0);
        assert_eq!(grade_of(&graded(2.0), pass_fail, Some((0.0, 3.0))), 1);
    }
}
