//! The seed's binary insertion sort, kept to measure the Bradley–Terry design against.
//!
//! Each useful context, in retriever order, is compared with the middle of the list sorted
//! so far and the search halves until its place is found. Every comparison waits for the
//! previous one, so a ranking takes one round per comparison (≈ m·log2 m − 1.44m for m
//! useful contexts). The seed asks one order, the new context shown first; optionally both
//! orders are asked (two concurrent calls per comparison). Only a clear win moves the new
//! context up; a tie or a failed comparison places it below the middle.

use super::Ordered;
use super::comparison::{PairAsker, PairOutcome};
use crate::judges::Comparator;

/// Orders `useful` (context indices in retriever order) by binary insertion.
pub(crate) async fn order<C: Comparator>(
    asker: &PairAsker<'_, C>,
    useful: &[usize],
    both_orders: bool,
) -> Ordered {
    let mut sorted: Vec<usize> = Vec::with_capacity(useful.len());
    let mut comparisons = Vec::new();
    let mut rounds = 0u32;
    for &context in useful {
        let (mut low, mut high) = (0, sorted.len());
        while low < high {
            let middle = (low + high) / 2;
            rounds += 1;
            let asked = asker
                .compare(rounds, &[(context, sorted[middle])], both_orders)
                .await;
            let better = asked
                .first()
                .is_some_and(|c| c.outcome == PairOutcome::AWins);
            comparisons.extend(asked);
            if better {
                high = middle;
            } else {
                low = middle + 1;
            }
        }
        sorted.insert(low, context);
    }
    Ordered {
        good: sorted,
        scores: Vec::new(),
        comparisons,
        windows: Vec::new(),
        rounds,
    }
}
