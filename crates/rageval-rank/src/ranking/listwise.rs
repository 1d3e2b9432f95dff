//! Listwise ordering (ranking.md §3.3 item 4, TourRank's shuffled tournaments): the judge
//! puts a window of contexts in order, each window is asked in two presentation orders, and
//! every answer becomes the pairwise games it implies, aggregated by Bradley–Terry.
//!
//! With `m` useful contexts and windows of at most `window` (10; fewer when the prompt
//! window demands, and made as equal as possible):
//! - round 1 shuffles the useful contexts `partitions` (5) times (seeded) and cuts each
//!   shuffle into windows, so that every context meets about `partitions × (window − 1)`
//!   others;
//! - round 2 takes the `head` (20) strongest by a Bradley–Terry fit on round 1 and orders
//!   `head_partitions` (8) shuffles of them the same way, to settle the top of the list.
//!   With `m ≤ head` those shuffles join round 1 and there is no round 2.
//!
//! Each window is shown as drawn and reversed, in concurrent calls; a context's position
//! bias then cancels, as in a pairwise comparison asked both ways. A pair of the window is a
//! win when both answers put one above the other, and a tie when they disagree: a window of
//! two is exactly a both-order comparison. A window with a failed call adds nothing. At
//! m = 60 that is 2 × 5 × 6 = 60 calls in round 1 and 2 × 8 × 2 = 32 in round 2, against
//! about 1,300 for the pairwise design. The defaults come from the simulation in
//! `docs/ranking.md` ("Listwise budgets"): with 32 calls in flight each round is one or two
//! waves of calls, and round 2's 32 calls are one.

use rageval_core::stats::SplitMix64;
use serde::{Deserialize, Serialize};

use super::comparison::Disagreement;
use super::grading::PromptBudget;
use super::tournament::by_strength;
use super::{ContextGame, Ordered, RankSettings};
use crate::concurrency::run_round;
use crate::judges::{CallRecord, ListCall, RankJudge};
use crate::packing::{balanced_size, pack};
use crate::seeded::shuffle;

/// Default for [`ListwiseSettings::window`].
pub const DEFAULT_WINDOW: usize = 10;
/// Default for [`ListwiseSettings::partitions`].
pub const DEFAULT_PARTITIONS: usize = 5;
/// Default for [`ListwiseSettings::head`].
pub const DEFAULT_HEAD: usize = 20;
/// Default for [`ListwiseSettings::head_partitions`].
pub const DEFAULT_HEAD_PARTITIONS: usize = 8;

/// How the listwise algorithm draws its windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListwiseSettings {
    /// Contexts ordered in one call, at most (2 or more).
    pub window: usize,
    /// Shuffles of the useful contexts cut into windows in round 1 (1 or more).
    pub partitions: usize,
    /// Contexts re-ordered in round 2 (0: no round 2; else 2 or more).
    pub head: usize,
    /// Shuffles of the head cut into windows in round 2.
    pub head_partitions: usize,
}

impl Default for ListwiseSettings {
    fn default() -> Self {
        ListwiseSettings {
            window: DEFAULT_WINDOW,
            partitions: DEFAULT_PARTITIONS,
            head: DEFAULT_HEAD,
            head_partitions: DEFAULT_HEAD_PARTITIONS,
        }
    }
}

/// One window of contexts, ordered by the judge in two presentation orders.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WindowOrder {
    /// The round it was asked in (round 0 is the grading round).
    pub round: u32,
    /// The contexts (indices into the question's contexts) in the order the first call
    /// showed them; the second call showed them reversed.
    pub shown: Vec<usize>,
    /// The first call's answer: the same contexts, most useful first.
    pub forward: CallRecord<Vec<usize>>,
    /// The second call's answer, most useful first.
    pub reversed: CallRecord<Vec<usize>>,
}

impl WindowOrder {
    /// Each context's position in each answer; `None` when a call failed.
    fn positions(&self) -> Option<(Vec<usize>, Vec<usize>)> {
        let place = |answer: &Vec<usize>| -> Vec<usize> {
            self.shown
                .iter()
                .map(|c| answer.iter().position(|a| a == c).unwrap_or(usize::MAX))
                .collect()
        };
        Some((
            place(self.forward.answer_ref()?),
            place(self.reversed.answer_ref()?),
        ))
    }

    /// The games the window adds to the Bradley–Terry fit, one per pair: a win when both
    /// answers put one context above the other, a tie when they disagree. None when a call
    /// failed.
    pub fn games(&self) -> Vec<ContextGame> {
        let Some((first, second)) = self.positions() else {
            return Vec::new();
        };
        let mut games = Vec::new();
        for i in 0..self.shown.len() {
            for j in i + 1..self.shown.len() {
                let votes = u8::from(first[i] < first[j]) + u8::from(second[i] < second[j]);
                games.push(ContextGame {
                    a: self.shown[i],
                    b: self.shown[j],
                    score_a: f64::from(votes) / 2.0,
                });
            }
        }
        games
    }

    /// The window's pairs, and how many of them the two answers put differently.
    pub fn disagreement(&self) -> Disagreement {
        let Some((first, second)) = self.positions() else {
            return Disagreement::default();
        };
        let k = self.shown.len();
        let mut counts = Disagreement {
            answered: k * k.saturating_sub(1) / 2,
            inconsistent: 0,
        };
        for i in 0..k {
            for j in i + 1..k {
                counts.inconsistent +=
                    usize::from((first[i] < first[j]) != (second[i] < second[j]));
            }
        }
        counts
    }
}

/// Disagreement over every window answered in both orders.
pub fn window_disagreement(windows: &[WindowOrder]) -> Disagreement {
    windows
        .iter()
        .map(WindowOrder::disagreement)
        .fold(Disagreement::default(), Disagreement::plus)
}

/// Orders `useful` (context indices in retriever order). `grade_of` gives a context's grade.
pub(crate) async fn order<J: RankJudge>(
    judge: &J,
    question: &str,
    contexts: &[&str],
    useful: &[usize],
    grade_of: impl Fn(usize) -> u8,
    settings: &RankSettings,
    rng: &mut SplitMix64,
) -> Ordered {
    let m = useful.len();
    if m < 2 {
        return Ordered::unordered(useful);
    }
    let list = settings.listwise;
    let asker = WindowAsker {
        judge,
        question,
        contexts,
        budget: PromptBudget::new(judge, ListCall::Order, question, contexts, settings),
        size: list.window,
        max_in_flight: settings.max_in_flight,
    };
    let head_round = list.head >= 2 && list.head < m && list.head_partitions > 0;
    let mut draws = list.partitions;
    if !head_round && list.head >= 2 {
        draws += list.head_partitions;
    }
    let mut windows = asker.ask(1, &asker.partitions(useful, draws, rng)).await;
    let mut rounds = 1;
    if head_round {
        let games: Vec<ContextGame> = windows.iter().flat_map(WindowOrder::games).collect();
        let (provisional, _) = by_strength(useful, &games, &grade_of);
        let head = &provisional[..list.head];
        let more = asker.partitions(head, list.head_partitions, rng);
        if !more.is_empty() {
            windows.extend(asker.ask(2, &more).await);
            rounds = 2;
        }
    }
    let games: Vec<ContextGame> = windows.iter().flat_map(WindowOrder::games).collect();
    let (good, scores) = by_strength(useful, &games, &grade_of);
    Ordered {
        good,
        scores,
        comparisons: Vec::new(),
        windows,
        rounds,
    }
}

/// Draws and asks the windows of one question.
struct WindowAsker<'a, J> {
    judge: &'a J,
    question: &'a str,
    contexts: &'a [&'a str],
    budget: PromptBudget,
    size: usize,
    max_in_flight: usize,
}

impl<J: RankJudge> WindowAsker<'_, J> {
    /// `draws` shuffles of `items`, each cut into windows of equal size within the prompt
    /// window. A context that fits no window with another is left out of that shuffle.
    fn partitions(&self, items: &[usize], draws: usize, rng: &mut SplitMix64) -> Vec<Vec<usize>> {
        let size = balanced_size(items.len(), self.size);
        let mut windows = Vec::new();
        let mut shuffled = items.to_vec();
        for _ in 0..draws {
            shuffle(&mut shuffled, rng);
            windows.extend(
                pack(&shuffled, size, |w: &[usize]| self.budget.fits(w))
                    .into_iter()
                    .filter(|range| range.len() >= 2)
                    .map(|range| shuffled[range].to_vec()),
            );
        }
        windows
    }

    /// Asks every window as drawn and reversed, all calls concurrently.
    async fn ask(&self, round: u32, windows: &[Vec<usize>]) -> Vec<WindowOrder> {
        let jobs: Vec<Vec<usize>> = windows
            .iter()
            .flat_map(|w| [w.clone(), w.iter().rev().copied().collect()])
            .collect();
        let answers = run_round(jobs, self.max_in_flight, |shown: Vec<usize>| async move {
            let texts: Vec<&str> = shown.iter().map(|&i| self.contexts[i]).collect();
            match self.judge.order(self.question, &texts).await {
                Ok(order) => match as_contexts(&order, &shown) {
                    Some(ordered) => CallRecord::Answer(ordered),
                    None => CallRecord::Failed(format!(
                        "the judge's order {order:?} is not a permutation of 0..{}",
                        shown.len()
                    )),
                },
                Err(error) => CallRecord::Failed(error.to_string()),
            }
        })
        .await;
        let mut answers = answers.into_iter();
        let missing = || CallRecord::Failed("no answer".into());
        windows
            .iter()
            .map(|shown| WindowOrder {
                round,
                shown: shown.clone(),
                forward: answers.next().unwrap_or_else(missing),
                reversed: answers.next().unwrap_or_else(missing),
            })
            .collect()
    }
}

/// The contexts of `shown` in the judge's `order` (positions into `shown`), or `None` when
/// `order` is not a permutation of those positions.
fn as_contexts(order: &[usize], shown: &[usize]) -> Option<Vec<usize>> {
    let mut seen = vec![false; shown.len()];
    for &position in order {
        if std::mem::replace(seen.get_mut(position)?, true) {
            return None;
        }
    }
    (order.len() == shown.len()).then(|| order.iter().map(|&p| shown[p]).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(shown: &[usize], forward: &[usize], reversed: &[usize]) -> WindowOrder {
        WindowOrder {
            round: 1,
            shown: shown.to_vec(),
            forward: CallRecord::Answer(forward.to_vec()),
            reversed: CallRecord::Answer(reversed.to_vec()),
        }
    }

    #[test]
    fn agreeing_answers_win_and_disagreeing_ones_tie() {
        let w = window(&[7, 8, 9], &[9, 7, 8], &[9, 8, 7]);
        let games = w.games();
        let score = |a: usize, b: usize| {
            games
                .iter()
                .find(|g| g.a == a && g.b == b)
                .map(|g| g.score_a)
        };
        assert_eq!(score(7, 9), Some(0.0));
        assert_eq!(score(8, 9), Some(0.0));
        assert_eq!(score(7, 8), Some(0.5));
        assert_eq!(
            w.disagreement(),
            Disagreement {
                answered: 3,
                inconsistent: 1
            }
        );
    }

    #[test]
    fn a_judge_that_returns_the_shown_order_decides_nothing() {
        // Shown 1,2,3 then 3,2,1; answering the order shown each time.
        let w = window(&[1, 2, 3], &[1, 2, 3], &[3, 2, 1]);
        assert!(w.games().iter().all(|g| g.score_a == 0.5));
        assert_eq!(w.disagreement().rate(), Some(1.0));
    }

    #[test]
    fn a_failed_call_adds_no_game() {
        let mut w = window(&[1, 2], &[2, 1], &[2, 1]);
        w.reversed = CallRecord::Failed("timeout".into());
        assert!(w.games().is_empty());
        assert_eq!(w.disagreement(), Disagreement::default());
    }

    #[test]
    fn only_a_permutation_of_the_shown_positions_is_an_order() {
        assert_eq!(as_contexts(&[1, 0], &[5, 6]), Some(vec![6, 5]));
        assert_eq!(as_contexts(&[1, 1], &[5, 6]), None);
        assert_eq!(as_contexts(&[1], &[5, 6]), None);
        assert_eq!(as_contexts(&[0, 2], &[5, 6]), None);
        assert_eq!(as_contexts(&[0, 1, 0], &[5, 6]), None);
    }
}
