//! `judge-check --head-to-head`: the pairwise judge itself measured against pairwise human
//! labels. Each labelled pair is asked in both seat orders with the typed task
//! `CompareAnswers` (as `pairwise` asks it, [`crate::commands::pairwise::task`]), the two
//! verdicts joined by the both-orders rule of [`rageval_core::preference::BothOrders`], and
//! the result compared with the label's `preferred`.
//!
//! The two orders ride on judge-check's own run machinery as a metric over the item's two
//! samples ([`HeadToHeadMetric`]): sample `ID/a` is asked with `a` in the first seat, `ID/b`
//! with `b` there, and each sample's score is the verdict on its own seat order — 1 when
//! the judge preferred the answer shown first (the sample's own), 0 the other, ½ a tie. So
//! caps, the cache, resuming, Ctrl-C and a dead judge work as for any metric, a dry run
//! counts two calls per pair, and `results.jsonl` keeps each order's reason. It does not
//! decide anything itself: [`figures`] reads the scores back through the shared rule.

use std::collections::HashMap;
use std::sync::Arc;

use rageval_core::agreement::PairResult;
use rageval_core::preference::{BothOrders, Duel, Seat};
use rageval_core::{Evidence, Outcome, Sample};
use rageval_judge::BoxFuture;
use rageval_metrics::scoring::describe;
use rageval_metrics::{Failure, Input, Metric, MetricInfo, Requirements, ScoringContext};
use rageval_report::Agreement;
use rageval_tasks::{CompareAnswers, Preferred, Rubric, TaskError, TaskKind};
use serde_json::json;

use super::labels::{Item, Label};
use super::measure::{Settings, figure, put};
use crate::commands::pairwise::{self, versions::PairedQuestion};

/// The metric's name with the built-in RAG criterion (`head_to_head:NAME` with a rubric's).
pub const NAME: &str = "head_to_head";

/// `agreement.json` note saying how the pairs were judged.
pub const NOTE: &str = "head_to_head";

static INFO: MetricInfo = MetricInfo {
    name: NAME,
    aliases: &[],
    summary: "the judge's verdict with this sample's answer in the first seat (judge-check \
              --head-to-head)",
    inputs: &[Input::Answer],
    formula: "the pair asked with this sample's answer shown first: 1 when the judge prefers \
              it, 0 when it prefers the other, 1/2 for a tie",
    source: "rageval judge-check --head-to-head: the CompareAnswers task of `rageval pairwise`",
    takes_cutoff: false,
    needs_model: true,
    modes: &[],
};

/// The head-to-head judge as a metric over the pairs' samples: one call per sample, the
/// sample's answer in the first seat.
pub struct HeadToHeadMetric {
    name: String,
    criterion: Option<Arc<Rubric>>,
    /// Each sample's task, by sample id.
    tasks: HashMap<String, CompareAnswers>,
}

impl HeadToHeadMetric {
    /// The metric over `items` (all pairs), judged by the built-in criterion or `criterion`.
    pub fn new(items: &[Item], criterion: Option<Arc<Rubric>>) -> Self {
        let mut tasks = HashMap::new();
        for item in items {
            let [a, b] = item.samples.as_slice() else {
                continue;
            };
            let question = PairedQuestion {
                samples: vec![a.clone(), b.clone()],
            };
            let criterion = criterion.as_ref();
            tasks.insert(a.id.clone(), pairwise::task(&question, 0, 1, criterion));
            tasks.insert(b.id.clone(), pairwise::task(&question, 1, 0, criterion));
        }
        let name = criterion
            .as_ref()
            .map_or(NAME.to_owned(), |r| format!("{NAME}:{}", r.name));
        HeadToHeadMetric {
            name,
            criterion,
            tasks,
        }
    }

    async fn judge(&self, sample: &Sample, scoring: &ScoringContext) -> Outcome {
        let Some(task) = self.tasks.get(&sample.id) else {
            return Outcome::undefined(format!("sample `{}` is not one of a pair", sample.id));
        };
        let judge = match scoring.tasks() {
            Ok(judge) => judge,
            Err(failure) => return Outcome::undefined(failure.to_string()),
        };
        match judge.compare_answers(task).await {
            Ok(judged) => {
                let preferred = judged.value.preferred;
                Outcome::score(
                    first_seat_score(preferred),
                    Evidence::details([
                        ("preferred_seat", json!(seat_name(preferred))),
                        ("reason", json!(judged.value.reason)),
                        ("judged_by", json!(describe(&judged.by))),
                    ]),
                )
            }
            Err(TaskError::Unavailable { why, .. }) => Outcome::undefined(why),
            Err(error) => Outcome::failed(Failure::from_task(&error).to_string()),
        }
    }
}

impl Metric for HeadToHeadMetric {
    fn info(&self) -> &'static MetricInfo {
        &INFO
    }

    fn name(&self) -> String {
        self.name.clone()
    }

    fn requirements(&self) -> Requirements {
        Requirements {
            tasks: vec![TaskKind::CompareAnswers],
            ..Requirements::default()
        }
    }

    fn definition(&self) -> Option<String> {
        self.criterion
            .as_ref()
            .map(|rubric| format!("criterion {}", rubric.hash()))
    }

    fn score<'a>(
        &'a self,
        sample: &'a Sample,
        scoring: &'a ScoringContext,
    ) -> BoxFuture<'a, Outcome> {
        Box::pin(self.judge(sample, scoring))
    }
}

/// A verdict as the score of the sample shown first.
fn first_seat_score(preferred: Preferred) -> f64 {
    match preferred {
        Preferred::First => 1.0,
        Preferred::Second => 0.0,
        Preferred::Tie => 0.5,
    }
}

fn seat_name(preferred: Preferred) -> &'static str {
    match preferred {
        Preferred::First => "first",
        Preferred::Second => "second",
        Preferred::Tie => "tie",
    }
}

/// The seat a sample's score names (the inverse of [`first_seat_score`]).
fn seat_of(score: f64) -> Seat {
    if score > 0.75 {
        Seat::First
    } else if score < 0.25 {
        Seat::Second
    } else {
        Seat::Tie
    }
}

/// A pair's two orders from its samples' scores (`ID/a`'s, then `ID/b`'s).
fn orders(values: &[f64]) -> BothOrders {
    BothOrders {
        a_first: seat_of(values[0]),
        b_first: seat_of(values[1]),
    }
}

/// The label as a head-to-head result.
fn labelled(preferred: Option<usize>) -> Duel {
    match preferred {
        Some(0) => Duel::A,
        Some(_) => Duel::B,
        None => Duel::Tie,
    }
}

/// A pair's result: agree when the both-orders result is the label's (a tie label agrees
/// with a tie), disagree otherwise — a judge's tie on a preferred pair is no half point.
pub fn result(preferred: Option<usize>, values: &[f64]) -> PairResult {
    if orders(values).result() == labelled(preferred) {
        PairResult::Agree
    } else {
        PairResult::Disagree
    }
}

/// One judged pair as the figures read it.
struct JudgedPair {
    /// The label's preferred side (`None`: a tie).
    preferred: Option<usize>,
    orders: BothOrders,
    agrees: bool,
}

/// The head-to-head figures of the scored pairs: accuracy over the three outcomes, over the
/// pairs labelled with a preference, and the position-flip rate, each with its bootstrap
/// interval; the counts of agreement, flips and the judge's results.
pub fn figures(scored: &[(&Item, Vec<f64>)], settings: &Settings, agreement: &mut Agreement) {
    let pairs: Vec<JudgedPair> = scored
        .iter()
        .filter_map(|(item, values)| match item.label {
            Label::Preferred(preferred) => Some(JudgedPair {
                preferred,
                orders: orders(values),
                agrees: result(preferred, values) == PairResult::Agree,
            }),
            _ => None,
        })
        .collect();
    let share = |ix: &[usize], hit: &dyn Fn(usize) -> bool| {
        (!ix.is_empty()).then(|| ix.iter().filter(|&&i| hit(i)).count() as f64 / ix.len() as f64)
    };
    let agrees = |i: usize| pairs[i].agrees;
    let accuracy = figure(pairs.len(), settings, 0, |ix| share(ix, &agrees));
    put(
        agreement,
        "head_to_head_accuracy",
        accuracy,
        "no judged pairs",
    );
    let preferred: Vec<usize> = (0..pairs.len())
        .filter(|&i| pairs[i].preferred.is_some())
        .collect();
    let on_preferred = figure(preferred.len(), settings, 1, |ix| {
        share(ix, &|j| agrees(preferred[j]))
    });
    put(
        agreement,
        "head_to_head_accuracy_non_tie",
        on_preferred,
        "no judged pair is labelled with a preference",
    );
    let flips = figure(pairs.len(), settings, 2, |ix| {
        share(ix, &|i| pairs[i].orders.flipped())
    });
    put(agreement, "position_flip_rate", flips, "no judged pairs");
    let count = |hit: &dyn Fn(&JudgedPair) -> bool| pairs.iter().filter(|p| hit(p)).count();
    let counts = [
        ("agree", count(&|p| p.agrees)),
        ("disagree", count(&|p| !p.agrees)),
        ("flipped", count(&|p| p.orders.flipped())),
        ("judge_a", count(&|p| p.orders.result() == Duel::A)),
        ("judge_b", count(&|p| p.orders.result() == Duel::B)),
        ("judge_tie", count(&|p| p.orders.result() == Duel::Tie)),
    ];
    for (name, value) in counts {
        agreement.counts.insert(name.into(), value);
    }
    agreement.notes.insert(
        NOTE.into(),
        json!(
            "each pair judged head to head (CompareAnswers) in both seat orders; orders that \
             disagree are a tie, opposite sides a position flip; a sample's score is the \
             verdict with its answer shown first (1 preferred, 0 not, 1/2 tie)"
        ),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_read_back_through_the_both_orders_rule() {
        // a first: a preferred; b first: a preferred (second seat) → A.
        assert_eq!(orders(&[1.0, 0.0]).result(), Duel::A);
        // The first seat both times: a flip, a tie.
        let first_always = orders(&[1.0, 1.0]);
        assert!(first_always.flipped());
        assert_eq!(first_always.result(), Duel::Tie);
        assert_eq!(result(None, &[1.0, 1.0]), PairResult::Agree);
        assert_eq!(result(Some(0), &[1.0, 1.0]), PairResult::Disagree);
        assert_eq!(result(Some(1), &[0.0, 1.0]), PairResult::Agree);
        assert_eq!(result(Some(1), &[0.5, 1.0]), PairResult::Disagree);
        for preferred in [Preferred::First, Preferred::Second, Preferred::Tie] {
            let seat = seat_of(first_seat_score(preferred));
            assert_eq!(seat_name(preferred), format!("{seat:?}").to_lowercase());
        }
    }
}
