//! Seeded shuffling shared by the ranking and reference planners: Fisher–Yates over
//! `rageval_core`'s SplitMix64, so a seed gives the same order on every platform and version.

use rageval_core::stats::SplitMix64;

/// Shuffles `items` in place, uniformly, with draws from `rng`.
pub(crate) fn shuffle<T>(items: &mut [T], rng: &mut SplitMix64) {
    for i in (1..items.len()).rev() {
        items.swap(i, rng.below(i + 1));
    }
}
