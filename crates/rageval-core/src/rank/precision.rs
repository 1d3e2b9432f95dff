//! Average precision over a judged list, in the three flavours RAG tools disagree on.
//!
//! Every function here takes `verdicts` in retrieved order (`true` = the item was judged
//! relevant or useful) and knows nothing about the corpus: the denominator is the number of
//! *retrieved* items judged relevant, as ragas and seed S0/S1 define it, not trec_eval's R
//! (for that, see [`crate::trec`]). Nothing here judges, reads or allocates beyond a loop.
//!
//! Which to use:
//! - [`average_precision`]: the textbook formula, exact (a perfect list gives 1.0).
//! - [`average_precision_ragas`]: ragas's float, with its `+1e-10` in the denominator, for
//!   reproducing ragas numbers bit for bit.
//! - [`average_precision_strict`]: seed S2's fix, which also charges trailing irrelevant items.
//! - [`mean_hit_rate`]: seed S0's top-k hit rates averaged without weights.

/// The epsilon ragas adds to its denominator unconditionally (ragas.md §1.1).
pub const RAGAS_EPSILON: f64 = 1e-10;

/// Sum over relevant positions of precision at that position, and the count of relevant
/// positions: the numerator and denominator every AP variant shares.
fn precision_sum_at_hits(verdicts: &[bool]) -> (f64, usize) {
    let mut hits = 0usize;
    let mut sum = 0.0;
    for (index, &relevant) in verdicts.iter().enumerate() {
        if relevant {
            hits += 1;
            // P@k at k = index + 1, taken only where the item is relevant.
            sum += hits as f64 / (index + 1) as f64;
        }
    }
    (sum, hits)
}

/// Average precision over retrieved items: `AP = Σ_k v_k·P@k / Σ_k v_k`, where
/// `P@k = (Σ_{j≤k} v_j) / k`.
///
/// `Some(0.0)` when no verdict is true (nothing relevant was retrieved, so nothing was ranked
/// well), `None` for an empty list (nothing was retrieved, so there is nothing to score).
/// Trailing irrelevant items cost nothing: `[1,0]` and `[1,0,0,0]` both give 1.0. Use
/// [`average_precision_strict`] where they should.
pub fn average_precision(verdicts: &[bool]) -> Option<f64> {
    if verdicts.is_empty() {
        return None;
    }
    let (sum, hits) = precision_sum_at_hits(verdicts);
    if hits == 0 {
        Some(0.0)
    } else {
        Some(sum / hits as f64)
    }
}

/// Average precision exactly as ragas computes it:
/// `Σ_k v_k·P@k / (Σ_k v_k + 1e-10)`.
///
/// The epsilon is added even when the list is perfect, so `[1,0]` gives `0.9999999999`
/// rather than 1 (ragas issue #2909). A list with no relevant item gives 0.0, as in ragas.
/// `None` for an empty list, where ragas's legacy API returns 0.0 and its collections API
/// raises; we refuse to invent a score for nothing retrieved.
pub fn average_precision_ragas(verdicts: &[bool]) -> Option<f64> {
    if verdicts.is_empty() {
        return None;
    }
    let (sum, hits) = precision_sum_at_hits(verdicts);
    Some(sum / (hits as f64 + RAGAS_EPSILON))
}

/// Seed S2's "strict" average precision: the mean of `P@k` over **every** position
/// `k = 1..n`, relevant or not: `(1/n) Σ_{k=1..n} P@k`.
///
/// Unlike [`average_precision`], an irrelevant item anywhere lowers the score: `[1,0]` gives
/// 0.75 and `[0,1]` gives 0.25. It does not exceed the exact AP on the same list: checked
/// for every list of up to 18 items while writing this, and by the property test below; we
/// have no proof. Equals [`mean_hit_rate`] at `k = n`. `None` for an empty list.
pub fn average_precision_strict(verdicts: &[bool]) -> Option<f64> {
    if verdicts.is_empty() {
        return None;
    }
    Some(mean_precision_to_depth(verdicts, verdicts.len()))
}

/// Seed S0's "average top-k hit rate" taken literally, without weights:
/// `(1/k) Σ_{j=1..k} h_j`, where the top-j hit rate `h_j = (Σ_{i≤j} v_i) / j` is `P@j`.
///
/// How it relates to its neighbours:
/// - Seed S0 names its score "the weighted average of the top-1..k hit rates", and the code
///   it shows weights `h_j` by `v_j`: `Σ v_j·h_j / Σ v_j`, which is exactly
///   [`average_precision`]. This function is the unweighted reading of the same words.
/// - At `k = n` (the whole list) it equals [`average_precision_strict`].
///
/// Positions past the end of the list count as misses, as trec_eval pads `P@k`, so a short
/// list cannot score well at a deep `k`. `None` when `k == 0` or the list is empty.
pub fn mean_hit_rate(verdicts: &[bool], k: usize) -> Option<f64> {
    if verdicts.is_empty() || k == 0 {
        return None;
    }
    Some(mean_precision_to_depth(verdicts, k))
}

/// `(1/depth) Σ_{j=1..depth} P@j`, with items past the end of `verdicts` counted as misses.
/// `depth` must be at least 1.
fn mean_precision_to_depth(verdicts: &[bool], depth: usize) -> f64 {
    let mut hits = 0usize;
    let mut sum = 0.0;
    for position in 1..=depth {
        if verdicts.get(position - 1).copied().unwrap_or(false) {
            hits += 1;
        }
        sum += hits as f64 / position as f64;
    }
    sum / depth as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::SplitMix64;

    fn bits(values: &[u8]) -> Vec<bool> {
        values.iter().map(|&v| v != 0).collect()
    }

    fn close(actual: Option<f64>, expected: f64, tolerance: f64) {
        let actual = actual.expect("a score");
        assert!(
            (actual - expected).abs() <= tolerance,
            "{actual} vs {expected}"
        );
    }

    #[test]
    fn seed_s1_worked_examples() {
        // Seed 001 (§4.1.3 and §4.1.5). [1,0,1,0,1]: P@1 = 1, P@3 = 2/3, P@5 = 3/5, so
        // AP = (1 + 2/3 + 3/5) / 3 = (15 + 10 + 9) / 45 = 34/45 = 0.755555…
        // The article prints 0.7567 because it rounds P@3 to 0.67 before summing:
        // (1.0 + 0.67 + 0.6) / 3 = 2.27 / 3 = 0.75667.
        close(
            average_precision(&bits(&[1, 0, 1, 0, 1])),
            34.0 / 45.0,
            1e-15,
        );
        close(average_precision(&bits(&[1, 0, 1, 0, 1])), 0.7556, 1e-4);
        // [1,1,1,0,0]: P@1 = P@2 = P@3 = 1, so 3/3 = 1.0 (seed 001, "情况1").
        close(average_precision(&bits(&[1, 1, 1, 0, 0])), 1.0, 0.0);
        // [0,0,0,1,1]: P@4 = 1/4, P@5 = 2/5, (0.25 + 0.4) / 2 = 0.325 (seed 001, "情况2").
        close(average_precision(&bits(&[0, 0, 0, 1, 1])), 0.325, 1e-15);
    }

    #[test]
    fn seed_s2_strict_examples() {
        // Seed 002's docstring: [1,0] → 0.75, [0,1] → 0.25.
        close(average_precision_strict(&bits(&[1, 0])), 0.75, 0.0);
        close(average_precision_strict(&bits(&[0, 1])), 0.25, 0.0);
        // The exact AP ignores the trailing miss that the strict variant charges.
        close(average_precision(&bits(&[1, 0])), 1.0, 0.0);
    }

    #[test]
    fn ragas_table_values() {
        // ragas 0.4.3 outputs, ragas.md §1.1 table.
        let table: [(&[u8], f64); 8] = [
            (&[1, 0], 0.9999999999),
            (&[1, 0, 0, 0, 0], 0.9999999999),
            (&[0, 1], 0.49999999995),
            (&[1, 1], 0.99999999995),
            (&[0, 0, 1], 0.3333333333),
            (&[1, 0, 1], 0.8333333332917),
            (&[0, 1, 1], 0.5833333333042),
            (&[0, 0], 0.0),
        ];
        for (verdicts, expected) in table {
            close(average_precision_ragas(&bits(verdicts)), expected, 1e-12);
        }
        // ragas's legacy API gives 0.0 for an empty list; we give None on purpose.
        assert_eq!(average_precision_ragas(&[]), None);
    }

    #[test]
    fn empty_and_all_irrelevant() {
        assert_eq!(average_precision(&[]), None);
        assert_eq!(average_precision_strict(&[]), None);
        assert_eq!(mean_hit_rate(&[], 3), None);
        assert_eq!(mean_hit_rate(&[true], 0), None);
        assert_eq!(average_precision(&[false, false]), Some(0.0));
        assert_eq!(average_precision_strict(&[false, false]), Some(0.0));
    }

    #[test]
    fn mean_hit_rate_pads_and_matches_strict_at_full_depth() {
        // Top-1 hit rate 1, top-2 1/2, top-3 2/3: mean (1 + 0.5 + 2/3) / 3.
        close(
            mean_hit_rate(&bits(&[1, 0, 1]), 3),
            (1.0 + 0.5 + 2.0 / 3.0) / 3.0,
            1e-15,
        );
        // Depth 4 on a 3-list: the 4th position is a miss, P@4 = 2/4.
        close(
            mean_hit_rate(&bits(&[1, 0, 1]), 4),
            (1.0 + 0.5 + 2.0 / 3.0 + 0.5) / 4.0,
            1e-15,
        );
        // Seed 000's example: three useful documents give 1.0 under every reading.
        close(mean_hit_rate(&bits(&[1, 1, 1]), 3), 1.0, 0.0);
        close(average_precision(&bits(&[1, 1, 1])), 1.0, 0.0);
    }

    #[test]
    fn properties_on_random_lists() {
        let mut rng = SplitMix64::new(17);
        for _ in 0..2000 {
            let n = 1 + rng.below(12);
            let density = rng.unit();
            let verdicts: Vec<bool> = (0..n).map(|_| rng.unit() < density).collect();
            let exact = average_precision(&verdicts).expect("non-empty");
            let ragas = average_precision_ragas(&verdicts).expect("non-empty");
            let strict = average_precision_strict(&verdicts).expect("non-empty");
            assert!((0.0..=1.0).contains(&exact), "{verdicts:?}");
            assert!((0.0..=1.0).contains(&strict), "{verdicts:?}");
            assert!(strict <= exact + 1e-15, "{verdicts:?}: {strict} > {exact}");
            assert!(ragas <= exact && exact - ragas < 1e-9, "{verdicts:?}");
            let at_n = mean_hit_rate(&verdicts, n).expect("non-empty");
            assert!((at_n - strict).abs() < 1e-15, "{verdicts:?}");
            // Moving a relevant item one place up never lowers AP.
            if let Some(i) = (1..n).find(|&i| verdicts[i] && !verdicts[i - 1]) {
                let mut better = verdicts.clone();
                better.swap(i, i - 1);
                let improved = average_precision(&better).expect("non-empty");
                assert!(improved >= exact - 1e-15, "{verdicts:?}");
            }
        }
    }
}
