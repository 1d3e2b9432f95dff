//! Which of a run's samples a person labels: a seeded simple random sample, or a
//! stratified one with proportional allocation, in a seeded order.
//!
//! Proportional allocation keeps the labelled subset self-weighting (each stratum gets
//! its share of the labels), so a calibrated mean over the whole run stays unbiased; a
//! small stratum may therefore get no label at all. The same candidates, size, seed and
//! strata always give the same items in the same order, on every platform (the generator
//! is `rageval_core::stats::SplitMix64`).

use std::collections::BTreeMap;

use rageval_core::stats::SplitMix64;

/// `count` of `candidates` indices (`0..candidates`, the caller's order), chosen and
/// ordered by `seed`. With `strata` (one key per candidate), each stratum gets `count ×
/// its share` items, the remainders going to the largest fractions (ties to the first
/// stratum in key order). Every candidate when `count` is not smaller.
pub(crate) fn choose(
    candidates: usize,
    count: usize,
    seed: u64,
    strata: Option<&[String]>,
) -> Vec<usize> {
    let mut rng = SplitMix64::new(seed);
    let mut chosen = match strata {
        None => pick(&mut rng, (0..candidates).collect(), count),
        Some(keys) => {
            let mut groups: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
            for (index, key) in keys.iter().enumerate().take(candidates) {
                groups.entry(key.as_str()).or_default().push(index);
            }
            let sizes: Vec<usize> = groups.values().map(Vec::len).collect();
            let quotas = allocate(count, &sizes);
            groups
                .into_values()
                .zip(quotas)
                .flat_map(|(members, quota)| pick(&mut rng, members, quota))
                .collect()
        }
    };
    shuffle(&mut rng, &mut chosen);
    chosen
}

/// `count` of `members` by a partial Fisher–Yates shuffle.
fn pick(rng: &mut SplitMix64, mut members: Vec<usize>, count: usize) -> Vec<usize> {
    let count = count.min(members.len());
    for i in 0..count {
        let j = i + rng.below(members.len() - i);
        members.swap(i, j);
    }
    members.truncate(count);
    members
}

fn shuffle(rng: &mut SplitMix64, items: &mut [usize]) {
    for i in (1..items.len()).rev() {
        let j = rng.below(i + 1);
        items.swap(i, j);
    }
}

/// Proportional allocation of `count` over strata of `sizes` by the largest remainder
/// (Hamilton's method); never more than a stratum holds.
pub(crate) fn allocate(count: usize, sizes: &[usize]) -> Vec<usize> {
    let total: usize = sizes.iter().sum();
    if total == 0 {
        return vec![0; sizes.len()];
    }
    let count = count.min(total);
    // Exact integer arithmetic: stratum h's share is count·size_h / total.
    let mut quotas: Vec<usize> = sizes.iter().map(|size| count * size / total).collect();
    let mut remainders: Vec<(usize, usize)> = sizes
        .iter()
        .enumerate()
        .map(|(h, size)| (count * size % total, h))
        .collect();
    remainders.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut left = count - quotas.iter().sum::<usize>();
    for (_, h) in remainders {
        if left == 0 {
            break;
        }
        if quotas[h] < sizes[h] {
            quotas[h] += 1;
            left -= 1;
        }
    }
    quotas
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(spec: &[(&str, usize)]) -> Vec<String> {
        spec.iter()
            .flat_map(|(key, n)| std::iter::repeat_n((*key).to_string(), *n))
            .collect()
    }

    #[test]
    fn the_same_seed_gives_the_same_items_in_the_same_order() {
        let first = choose(100, 10, 7, None);
        assert_eq!(first, choose(100, 10, 7, None));
        assert_ne!(first, choose(100, 10, 8, None));
        assert_eq!(first.len(), 10);
        let mut unique = first.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), 10, "no candidate twice: {first:?}");
        assert!(first.iter().all(|&i| i < 100));
    }

    #[test]
    fn asking_for_more_than_there_are_gives_every_candidate_shuffled() {
        let mut all = choose(12, 50, 1, None);
        assert_eq!(all.len(), 12);
        all.sort_unstable();
        assert_eq!(all, (0..12).collect::<Vec<_>>());
    }

    #[test]
    fn strata_get_their_proportional_share() {
        // 60 / 30 / 10 of 100, 10 labels: 6 / 3 / 1.
        let strata = keys(&[("a", 60), ("b", 30), ("c", 10)]);
        for seed in 0..20 {
            let chosen = choose(strata.len(), 10, seed, Some(&strata));
            let count = |key: &str| chosen.iter().filter(|&&i| strata[i] == key).count();
            assert_eq!(
                (count("a"), count("b"), count("c")),
                (6, 3, 1),
                "seed {seed}"
            );
        }
        let strata_chosen = choose(strata.len(), 10, 3, Some(&strata));
        assert_eq!(strata_chosen, choose(strata.len(), 10, 3, Some(&strata)));
    }

    #[test]
    fn remainders_go_to_the_largest_fractions_and_never_past_a_stratum() {
        // 7 of sizes 5, 3, 2 (total 10): exact shares 3.5, 2.1, 1.4 → 3, 2, 1 plus one
        // for the largest remainder (0.5, stratum 0).
        assert_eq!(allocate(7, &[5, 3, 2]), vec![4, 2, 1]);
        // Equal remainders go to the first stratum in key order.
        assert_eq!(allocate(1, &[1, 1]), vec![1, 0]);
        assert_eq!(allocate(3, &[1, 1, 1]), vec![1, 1, 1]);
        assert_eq!(allocate(20, &[2, 3]), vec![2, 3]);
        assert_eq!(allocate(4, &[]), Vec::<usize>::new());
        for count in 0..=10 {
            assert_eq!(allocate(count, &[5, 3, 2]).iter().sum::<usize>(), count);
        }
    }
}
