//! The Bradley–Terry design of ranking.md §3.6: every comparison asked in both orders, at
//! most two rounds of concurrent calls after grading.
//!
//! With `m` useful contexts:
//! - `m ≤ all_pairs_up_to` (45): all pairs in one round, `m(m−1)` calls (1,980 at 45);
//! - otherwise round 1 draws `opponents` (10) random perfect matchings without repeated
//!   pairs, so each context meets 10 others: `10m` calls (ranking.md's "d = 20 comparisons
//!   per context" counts the two orders separately). Bradley–Terry on these picks the head;
//!   round 2 compares all pairs among the top `head` (30) not compared yet: at most
//!   `30·29 = 870` calls. The final order is Bradley–Terry over every comparison.
//!
//! Why these budgets: the threshold 45 is where all pairs cost about what the sparse design
//! costs at m = 200 (1,980 against 2,000 + 870 calls), so below it the exhaustive design,
//! the most accurate one measured in ranking.md §3.5, is affordable. Ten opponents is the
//! sparse density that simulated there at τ ≈ 0.81 (moderate noise, n = 200) where five
//! gave 0.72; the head of 30 covers the top-10 and top-20 cut-offs users read, with a margin
//! for contexts the sparse round placed a few ranks too low, and lifted nDCG@10 there from
//! 0.96 to 1.00. `docs/ranking.md` has this crate's own figures. Ties between equal
//! strengths fall to the higher grade, then the retriever's order.

use std::collections::{HashMap, HashSet};

use rageval_core::stats::SplitMix64;

use super::comparison::{Comparison, PairAsker};
use super::{ContextGame, Ordered, RankSettings};
use crate::judges::Comparator;
use crate::seeded::shuffle;
use rageval_core::preference::bradley_terry::{Game, fit};

/// Default for [`RankSettings::all_pairs_up_to`].
pub const DEFAULT_ALL_PAIRS_UP_TO: usize = 45;
/// Default for [`RankSettings::opponents`].
pub const DEFAULT_OPPONENTS: usize = 10;
/// Default for [`RankSettings::head`].
pub const DEFAULT_HEAD: usize = 30;

/// Orders `useful` (context indices in retriever order). `grade_of` gives a context's grade.
pub(crate) async fn order<C: Comparator>(
    asker: &PairAsker<'_, C>,
    useful: &[usize],
    grade_of: impl Fn(usize) -> u8,
    settings: &RankSettings,
    rng: &mut SplitMix64,
) -> Ordered {
    let m = useful.len();
    if m < 2 {
        return Ordered::unordered(useful);
    }
    let mut comparisons;
    let mut rounds = 1;
    if m <= settings.all_pairs_up_to {
        comparisons = asker.compare(1, &all_pairs(useful), true).await;
    } else {
        comparisons = asker
            .compare(1, &random_pairs(useful, settings.opponents, rng), true)
            .await;
        if settings.head >= 2 {
            let (provisional, _) = by_strength(useful, &games(&comparisons), &grade_of);
            let head = &provisional[..settings.head.min(m)];
            let asked: HashSet<(usize, usize)> =
                comparisons.iter().map(|c| unordered(c.a, c.b)).collect();
            let missing: Vec<(usize, usize)> = all_pairs(head)
                .into_iter()
                .filter(|&(a, b)| !asked.contains(&unordered(a, b)))
                .collect();
            if !missing.is_empty() {
                comparisons.extend(asker.compare(2, &missing, true).await);
                rounds = 2;
            }
        }
    }
    let (good, scores) = by_strength(useful, &games(&comparisons), &grade_of);
    Ordered {
        good,
        scores,
        comparisons,
        windows: Vec::new(),
        rounds,
    }
}

fn unordered(a: usize, b: usize) -> (usize, usize) {
    (a.min(b), a.max(b))
}

/// Every pair of `items`, each once, in list order.
pub fn all_pairs(items: &[usize]) -> Vec<(usize, usize)> {
    items
        .iter()
        .enumerate()
        .flat_map(|(i, &a)| items[i + 1..].iter().map(move |&b| (a, b)))
        .collect()
}

/// `matchings` random matchings of `items` in which no pair repeats: each matching shuffles
/// the items and pairs each unmatched item with the next unmatched one it has not met yet.
/// With an odd count, or when the remaining items have all met, an item sits a matching out.
pub fn random_pairs(
    items: &[usize],
    matchings: usize,
    rng: &mut SplitMix64,
) -> Vec<(usize, usize)> {
    let mut met: HashSet<(usize, usize)> = HashSet::new();
    let mut pairs = Vec::new();
    let mut order = items.to_vec();
    for _ in 0..matchings {
        shuffle(&mut order, rng);
        let mut matched = vec![false; order.len()];
        for i in 0..order.len() {
            if matched[i] {
                continue;
            }
            let partner = (i + 1..order.len())
                .find(|&j| !matched[j] && !met.contains(&unordered(order[i], order[j])));
            if let Some(j) = partner {
                matched[i] = true;
                matched[j] = true;
                met.insert(unordered(order[i], order[j]));
                pairs.push((order[i], order[j]));
            }
        }
    }
    pairs
}

/// The games of the comparisons that were answered.
fn games(comparisons: &[Comparison]) -> Vec<ContextGame> {
    comparisons.iter().filter_map(Comparison::game).collect()
}

/// `items` sorted by Bradley–Terry strength over `games` (those naming other contexts are
/// ignored), best first, ties broken by higher grade then retriever order; with each item's
/// log-strength.
pub(crate) fn by_strength(
    items: &[usize],
    games: &[ContextGame],
    grade_of: &impl Fn(usize) -> u8,
) -> (Vec<usize>, Vec<(usize, f64)>) {
    let player: HashMap<usize, usize> = items
        .iter()
        .enumerate()
        .map(|(p, &item)| (item, p))
        .collect();
    let games: Vec<Game> = games
        .iter()
        .filter_map(|game| {
            Some(Game {
                a: *player.get(&game.a)?,
                b: *player.get(&game.b)?,
                score_a: game.score_a,
            })
        })
        .collect();
    let strengths = fit(items.len(), &games);
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by(|&x, &y| {
        strengths[y]
            .total_cmp(&strengths[x])
            .then_with(|| grade_of(items[y]).cmp(&grade_of(items[x])))
            .then_with(|| items[x].cmp(&items[y]))
    });
    (
        order.iter().map(|&p| items[p]).collect(),
        order.iter().map(|&p| (items[p], strengths[p])).collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_pairs_never_repeat_and_give_each_item_its_opponents() {
        let items: Vec<usize> = (100..160).collect();
        let pairs = random_pairs(&items, 10, &mut SplitMix64::new(7));
        let distinct: HashSet<(usize, usize)> =
            pairs.iter().map(|&(a, b)| unordered(a, b)).collect();
        assert_eq!(distinct.len(), pairs.len(), "a pair repeats");
        for &item in &items {
            let meetings = pairs
                .iter()
                .filter(|&&(a, b)| a == item || b == item)
                .count();
            assert!((9..=10).contains(&meetings), "{item} met {meetings}");
        }
        assert!(pairs.len() >= 290, "{}", pairs.len());
        assert_eq!(pairs, random_pairs(&items, 10, &mut SplitMix64::new(7)));
        assert_ne!(pairs, random_pairs(&items, 10, &mut SplitMix64::new(8)));
    }

    #[test]
    fn all_pairs_lists_each_pair_once() {
        assert_eq!(all_pairs(&[4, 7, 9]), vec![(4, 7), (4, 9), (7, 9)]);
        assert!(all_pairs(&[1]).is_empty());
    }

    #[test]
    fn equal_strengths_fall_back_to_grade_then_retriever_order() {
        let grades = [0, 1, 3, 1];
        let (order, _) = by_strength(&[1, 2, 3], &[], &|i| grades[i]);
        assert_eq!(order, vec![2, 1, 3]);
    }
}
