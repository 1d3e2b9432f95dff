//! Pairwise comparisons: asking a pair in one or both orders, and reading the two answers as
//! one outcome.
//!
//! Asked in both orders, a pair is won only when both answers name the same context; any
//! disagreement (including one tie answer) is a tie, so a judge that always prefers the
//! first position produces ties, not wins (PRP, ranking.md §3.3). Both calls of a pair run
//! in the same round.

use serde::{Deserialize, Serialize};

use super::ContextGame;
use crate::concurrency::run_round;
use crate::judges::{CallRecord, Comparator, Preference};

/// What a comparison decided about its pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PairOutcome {
    /// Context `a` helps more.
    AWins,
    /// Context `b` helps more.
    BWins,
    /// Neither: the orders disagreed, or the judge called it even.
    Tie,
    /// A call failed; the comparison carries no information and is left out of the fit.
    Failed,
}

/// One comparison of contexts `a` and `b` (indices into the question's contexts).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The round it was asked in (round 0 is the grading round).
    pub round: u32,
    /// The context shown first in `a_first`.
    pub a: usize,
    /// The context shown second in `a_first`.
    pub b: usize,
    /// The answer with `a` shown first.
    pub a_first: CallRecord<Preference>,
    /// The answer with `b` shown first; `None` when only one order was asked.
    pub b_first: Option<CallRecord<Preference>>,
    /// What the answers decide.
    pub outcome: PairOutcome,
}

impl Comparison {
    /// Whether both orders were answered and named different contexts (or one a tie).
    pub fn is_position_inconsistent(&self) -> bool {
        match (
            self.a_first.answer(),
            self.b_first.as_ref().and_then(CallRecord::answer),
        ) {
            (Some(forward), Some(reverse)) => {
                vote_for_a(forward, true) != vote_for_a(reverse, false)
            }
            _ => false,
        }
    }

    /// The game this comparison adds to the Bradley–Terry fit; `None` when a call failed.
    pub fn game(&self) -> Option<ContextGame> {
        let score_a = match self.outcome {
            PairOutcome::AWins => 1.0,
            PairOutcome::BWins => 0.0,
            PairOutcome::Tie => 0.5,
            PairOutcome::Failed => return None,
        };
        Some(ContextGame {
            a: self.a,
            b: self.b,
            score_a,
        })
    }

    /// Whether both orders were asked and answered.
    pub fn has_both_answers(&self) -> bool {
        self.a_first.answer().is_some()
            && self.b_first.as_ref().and_then(CallRecord::answer).is_some()
    }
}

/// +1 when the answer favours `a`, −1 when it favours `b`, 0 for a tie.
fn vote_for_a(preference: Preference, a_shown_first: bool) -> i8 {
    let vote = match preference {
        Preference::First => 1,
        Preference::Second => -1,
        Preference::Tie => 0,
    };
    if a_shown_first { vote } else { -vote }
}

fn outcome_of(
    a_first: &CallRecord<Preference>,
    b_first: Option<&CallRecord<Preference>>,
) -> PairOutcome {
    let Some(forward) = a_first.answer() else {
        return PairOutcome::Failed;
    };
    let forward = vote_for_a(forward, true);
    let vote = match b_first {
        None => forward,
        Some(record) => match record.answer() {
            None => return PairOutcome::Failed,
            Some(reverse) if vote_for_a(reverse, false) == forward => forward,
            Some(_) => 0,
        },
    };
    match vote {
        1 => PairOutcome::AWins,
        -1 => PairOutcome::BWins,
        _ => PairOutcome::Tie,
    }
}

/// Share of comparisons answered in both orders whose answers disagree; `None` when no
/// comparison was answered in both orders.
pub fn position_inconsistency(comparisons: &[Comparison]) -> Option<f64> {
    inconsistency_counts(comparisons).rate()
}

/// Comparisons answered in both orders, and how many of them disagree.
pub fn inconsistency_counts(comparisons: &[Comparison]) -> Disagreement {
    Disagreement {
        answered: comparisons.iter().filter(|c| c.has_both_answers()).count(),
        inconsistent: comparisons
            .iter()
            .filter(|c| c.is_position_inconsistent())
            .count(),
    }
}

/// Pairs judged in both orders, and how many of them the two orders put differently.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Disagreement {
    /// Pairs with both answers.
    pub answered: usize,
    /// Of those, the pairs the two answers disagree on.
    pub inconsistent: usize,
}

impl Disagreement {
    /// The share of answered pairs that disagree; `None` when none was answered.
    pub fn rate(self) -> Option<f64> {
        (self.answered > 0).then(|| self.inconsistent as f64 / self.answered as f64)
    }

    /// Both counts added.
    pub fn plus(self, other: Disagreement) -> Disagreement {
        Disagreement {
            answered: self.answered + other.answered,
            inconsistent: self.inconsistent + other.inconsistent,
        }
    }
}

/// Asks pairs of one question's contexts, each call concurrently within the round.
pub(crate) struct PairAsker<'a, C> {
    pub comparator: &'a C,
    pub question: &'a str,
    pub contexts: &'a [&'a str],
    pub max_in_flight: usize,
}

impl<C: Comparator> PairAsker<'_, C> {
    /// Compares every pair `(a, b)` in round `round`, in both orders when `both_orders`;
    /// all the calls run concurrently.
    pub async fn compare(
        &self,
        round: u32,
        pairs: &[(usize, usize)],
        both_orders: bool,
    ) -> Vec<Comparison> {
        let orders: &[bool] = if both_orders { &[true, false] } else { &[true] };
        let jobs: Vec<(usize, usize)> = pairs
            .iter()
            .flat_map(|&(a, b)| {
                orders
                    .iter()
                    .map(move |&a_first| if a_first { (a, b) } else { (b, a) })
            })
            .collect();
        let answers = run_round(jobs, self.max_in_flight, |(first, second)| async move {
            match self
                .comparator
                .compare(self.question, self.contexts[first], self.contexts[second])
                .await
            {
                Ok(preference) => CallRecord::Answer(preference),
                Err(error) => CallRecord::Failed(error.to_string()),
            }
        })
        .await;
        let mut answers = answers.into_iter();
        pairs
            .iter()
            .map(|&(a, b)| {
                let a_first = answers
                    .next()
                    .unwrap_or_else(|| CallRecord::Failed("no answer".into()));
                let b_first = if both_orders { answers.next() } else { None };
                let outcome = outcome_of(&a_first, b_first.as_ref());
                Comparison {
                    round,
                    a,
                    b,
                    a_first,
                    b_first,
                    outcome,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Preference::{First, Second, Tie};

    fn both(forward: Preference, reverse: Preference) -> PairOutcome {
        outcome_of(
            &CallRecord::Answer(forward),
            Some(&CallRecord::Answer(reverse)),
        )
    }

    #[test]
    fn consistent_answers_win_and_disagreements_tie() {
        // a first and preferred, then b first and a (second) preferred again.
        assert_eq!(both(First, Second), PairOutcome::AWins);
        assert_eq!(both(Second, First), PairOutcome::BWins);
        // A judge that always picks the first position decides nothing.
        assert_eq!(both(First, First), PairOutcome::Tie);
        assert_eq!(both(Second, Second), PairOutcome::Tie);
        assert_eq!(both(Tie, Second), PairOutcome::Tie);
        assert_eq!(both(Tie, Tie), PairOutcome::Tie);
    }

    #[test]
    fn a_single_order_decides_alone_and_a_failure_decides_nothing() {
        assert_eq!(
            outcome_of(&CallRecord::Answer(First), None),
            PairOutcome::AWins
        );
        assert_eq!(outcome_of(&CallRecord::Answer(Tie), None), PairOutcome::Tie);
        let failed = CallRecord::Failed("timeout".into());
        assert_eq!(outcome_of(&failed, None), PairOutcome::Failed);
        assert_eq!(
            outcome_of(&CallRecord::Answer(First), Some(&failed)),
            PairOutcome::Failed
        );
    }

    #[test]
    fn inconsistency_counts_only_pairs_answered_both_ways() {
        let make = |a_first, b_first| Comparison {
            round: 1,
            a: 0,
            b: 1,
            a_first,
            b_first,
            outcome: PairOutcome::Tie,
        };
        let comparisons = [
            make(CallRecord::Answer(First), Some(CallRecord::Answer(First))),
            make(CallRecord::Answer(First), Some(CallRecord::Answer(Second))),
            make(CallRecord::Answer(Tie), Some(CallRecord::Answer(Tie))),
            make(CallRecord::Answer(First), None),
            make(
                CallRecord::Answer(First),
                Some(CallRecord::Failed("x".into())),
            ),
        ];
        assert_eq!(position_inconsistency(&comparisons), Some(1.0 / 3.0));
        assert_eq!(position_inconsistency(&comparisons[3..]), None);
    }
}
