//! Seeded statistics over per-sample scores: the mean and its bootstrap confidence interval.
//!
//! The generator is SplitMix64 (Steele, Lea & Flood 2014), written here so that a seed gives
//! the same interval on every platform and every version of rageval, whatever a random-number
//! crate does to its streams.

use serde::{Deserialize, Serialize};

/// Resamples used by [`bootstrap_mean_ci`] unless told otherwise.
pub const DEFAULT_BOOTSTRAP_RESAMPLES: usize = 2000;
/// Seed used for every bootstrap unless the user gives one.
pub const DEFAULT_SEED: u64 = 20_240_601;

/// A small, fast, reproducible pseudo-random generator (SplitMix64).
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform index in `0..n` (Lemire's multiply-shift; the bias is below 2^-32 for the
    /// sizes we resample).
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// A uniform float in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// A two-sided confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

/// The 95% Wilson score interval of a `proportion` observed over `n` trials (Wilson 1927;
/// Agresti & Coull 1998, eq. 2), clamped to [0, 1]; `None` when `n` is 0 or the proportion
/// is not finite. Unlike the normal approximation it stays inside [0, 1] and is not empty
/// at 0/n or n/n.
pub fn wilson(proportion: f64, n: usize) -> Option<Interval> {
    if n == 0 || !proportion.is_finite() {
        return None;
    }
    let z = crate::calibration::Z_95;
    let n = n as f64;
    let p = proportion.clamp(0.0, 1.0);
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Some(Interval {
        low: (centre - half).max(0.0),
        high: (centre + half).min(1.0),
    })
}

/// Arithmetic mean; `None` for an empty slice.
pub fn mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        None
    } else {
        Some(values.iter().sum::<f64>() / values.len() as f64)
    }
}

/// Percentile bootstrap interval of the mean at `level` (e.g. 0.95).
///
/// Draws `resamples` samples of `values.len()` with replacement and takes the
/// `(1−level)/2` and `(1+level)/2` quantiles of their means (linear interpolation between
/// order statistics, numpy's default). `None` for an empty slice; a single value gives a
/// zero-width interval.
pub fn bootstrap_mean_ci(
    values: &[f64],
    level: f64,
    resamples: usize,
    seed: u64,
) -> Option<Interval> {
    let n = values.len();
    if n == 0 || resamples == 0 {
        return None;
    }
    let mut rng = SplitMix64::new(seed);
    let mut means: Vec<f64> = (0..resamples)
        .map(|_| (0..n).map(|_| values[rng.below(n)]).sum::<f64>() / n as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    let alpha = (1.0 - level) / 2.0;
    Some(Interval {
        low: quantile_sorted(&means, alpha),
        high: quantile_sorted(&means, 1.0 - alpha),
    })
}

/// The `q` quantile of sorted data with linear interpolation (numpy's `linear` method).
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    let last = sorted.len() - 1;
    let position = q.clamp(0.0, 1.0) * last as f64;
    let below = position.floor() as usize;
    let above = (below + 1).min(last);
    let fraction = position - below as f64;
    sorted[below] + (sorted[above] - sorted[below]) * fraction
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Worked by hand from Wilson's formula with z = 1.96: 2 of 3 gives centre
    /// (0.6667 + 0.6403) / 2.2805 = 0.5731 and half-width 0.8595 · √(0.07407 + 0.10670)
    /// = 0.3654, so [0.2077, 0.9385]; 0 of 2 gives [0, 0.6576].
    #[test]
    fn wilson_matches_the_hand_computed_interval() {
        let two_of_three = wilson(2.0 / 3.0, 3).unwrap_or(Interval {
            low: 9.0,
            high: 9.0,
        });
        assert!((two_of_three.low - 0.2077).abs() < 5e-4, "{two_of_three:?}");
        assert!(
            (two_of_three.high - 0.9385).abs() < 5e-4,
            "{two_of_three:?}"
        );
        let none_of_two = wilson(0.0, 2).unwrap_or(Interval {
            low: 9.0,
            high: 9.0,
        });
        assert_eq!(none_of_two.low, 0.0);
        assert!((none_of_two.high - 0.6576).abs() < 5e-4, "{none_of_two:?}");
        assert_eq!(wilson(0.5, 0), None);
    }

    #[test]
    fn splitmix_matches_reference_stream() {
        // First outputs for seed 0 from the reference C implementation by Vigna
        // (prng.di.unimi.it/splitmix64.c).
        let mut rng = SplitMix64::new(0);
        assert_eq!(rng.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(rng.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn interval_brackets_the_mean_and_is_reproducible() {
        let values: Vec<f64> = (0..50).map(|i| f64::from(i % 7) / 6.0).collect();
        let m = mean(&values).unwrap();
        let a = bootstrap_mean_ci(&values, 0.95, 1000, 7).unwrap();
        let b = bootstrap_mean_ci(&values, 0.95, 1000, 7).unwrap();
        assert_eq!(a, b);
        assert!(a.low < m && m < a.high, "{a:?} around {m}");
        // The interval's half-width is near 1.96 standard errors.
        let sd = (values.iter().map(|v| (v - m).powi(2)).sum::<f64>() / 49.0).sqrt();
        let se = sd / 50f64.sqrt();
        let half = (a.high - a.low) / 2.0;
        assert!(
            (half / (1.96 * se) - 1.0).abs() < 0.15,
            "half {half} se {se}"
        );
    }

    #[test]
    fn degenerate_inputs() {
        assert_eq!(bootstrap_mean_ci(&[], 0.95, 100, 1), None);
        let one = bootstrap_mean_ci(&[0.3], 0.95, 100, 1).unwrap();
        assert_eq!((one.low, one.high), (0.3, 0.3));
        assert_eq!(quantile_sorted(&[1.0, 2.0, 3.0, 4.0], 0.5), 2.5);
    }
}

/// Permutations used by [`paired_sign_flip_p_value`] unless told otherwise: the p-value's
/// Monte-Carlo resolution is `1 / (permutations + 1)`.
pub const DEFAULT_PERMUTATIONS: usize = 10_000;

/// Two-sided paired permutation test of "the mean difference is zero", by random sign flips.
///
/// Under the null hypothesis each paired difference is as likely to have the opposite sign,
/// so each of `permutations` draws flips every difference's sign with probability ½ (seeded
/// SplitMix64) and the p-value is `(1 + k) / (permutations + 1)`, where `k` counts the draws
/// whose |mean| is at least the observed |mean|. The `+ 1` counts the observed assignment
/// itself, so the p-value is never 0 and the test is exact in level (Phipson & Smyth 2010).
/// `None` when there are no differences or no permutations.
pub fn paired_sign_flip_p_value(
    differences: &[f64],
    permutations: usize,
    seed: u64,
) -> Option<f64> {
    let n = differences.len();
    if n == 0 || permutations == 0 {
        return None;
    }
    let observed = differences.iter().sum::<f64>().abs();
    // Sums that equal the observed one up to rounding count as "at least as extreme"; without
    // the tolerance, all-zero differences could give p < 1.
    let tolerance = 1e-12 * differences.iter().map(|d| d.abs()).sum::<f64>().max(1.0);
    let mut rng = SplitMix64::new(seed);
    let mut extreme = 0usize;
    for _ in 0..permutations {
        let mut sum = 0.0;
        let mut bits = 0u64;
        for (i, d) in differences.iter().enumerate() {
            // One 64-bit draw gives 64 signs.
            if i % 64 == 0 {
                bits = rng.next_u64();
            }
            sum += if bits & 1 == 1 { *d } else { -*d };
            bits >>= 1;
        }
        if sum.abs() >= observed - tolerance {
            extreme += 1;
        }
    }
    Some((1 + extreme) as f64 / (permutations + 1) as f64)
}

/// Percentile bootstrap interval of the mean paired difference `b − a` at `level`.
///
/// Pairs are resampled together (sample `i` keeps its `a_i` and `b_i`), which is the same as
/// resampling the differences `b_i − a_i`; so this is [`bootstrap_mean_ci`] over them, named
/// for the reader. `None` when the slices are empty or of different lengths.
pub fn paired_bootstrap_diff_ci(
    a: &[f64],
    b: &[f64],
    level: f64,
    resamples: usize,
    seed: u64,
) -> Option<Interval> {
    if a.len() != b.len() {
        return None;
    }
    let differences: Vec<f64> = a.iter().zip(b).map(|(x, y)| y - x).collect();
    bootstrap_mean_ci(&differences, level, resamples, seed)
}

/// Percentile bootstrap interval of the difference of means `mean(b) − mean(a)` of two
/// independent samples at `level` — the unpaired counterpart of
/// [`paired_bootstrap_diff_ci`], for two windows of different samples (a watched run's
/// baseline and its latest traces).
///
/// Each resample draws `a.len()` values from `a` and `b.len()` from `b`, with replacement
/// and independently; the interval is the `(1−level)/2` and `(1+level)/2` quantiles of the
/// resampled differences. `None` when either slice is empty.
pub fn unpaired_bootstrap_diff_ci(
    a: &[f64],
    b: &[f64],
    level: f64,
    resamples: usize,
    seed: u64,
) -> Option<Interval> {
    if a.is_empty() || b.is_empty() || resamples == 0 {
        return None;
    }
    let mut rng = SplitMix64::new(seed);
    let mut resampled_mean = |values: &[f64]| {
        let n = values.len();
        (0..n).map(|_| values[rng.below(n)]).sum::<f64>() / n as f64
    };
    let mut differences: Vec<f64> = (0..resamples)
        .map(|_| {
            let before = resampled_mean(a);
            resampled_mean(b) - before
        })
        .collect();
    differences.sort_by(f64::total_cmp);
    let alpha = (1.0 - level) / 2.0;
    Some(Interval {
        low: quantile_sorted(&differences, alpha),
        high: quantile_sorted(&differences, 1.0 - alpha),
    })
}

#[cfg(test)]
mod paired_tests {
    use super::*;

    #[test]
    fn unpaired_differences_find_a_drop_and_not_noise() {
        // Constant groups: every resample gives the same difference, 0.2 − 0.9.
        let constant = unpaired_bootstrap_diff_ci(&[0.9; 5], &[0.2; 8], 0.95, 200, 1).unwrap();
        assert!((constant.low + 0.7).abs() < 1e-12 && (constant.high + 0.7).abs() < 1e-12);
        // A drop from about 0.9 to about 0.3 on noisy windows: the interval is below zero.
        let before: Vec<f64> = (0..20).map(|i| 0.8 + 0.2 * f64::from(i % 2)).collect();
        let after: Vec<f64> = (0..20).map(|i| 0.2 + 0.2 * f64::from(i % 2)).collect();
        let drop = unpaired_bootstrap_diff_ci(&before, &after, 0.95, 999, 7).unwrap();
        assert!(drop.high < 0.0, "{drop:?}");
        // The same distribution twice: the interval holds zero.
        let same = unpaired_bootstrap_diff_ci(&before, &before, 0.95, 999, 7).unwrap();
        assert!(same.low < 0.0 && same.high > 0.0, "{same:?}");
        assert_eq!(unpaired_bootstrap_diff_ci(&[], &[1.0], 0.95, 10, 1), None);
    }

    #[test]
    fn sign_flips_find_a_shift_and_not_noise() {
        // A constant shift of 0.1 on 40 samples: every flip but the observed one is smaller.
        let shifted = vec![0.1; 40];
        let p = paired_sign_flip_p_value(&shifted, 999, 3).unwrap();
        assert!(p < 0.01, "p = {p}");
        // Symmetric noise around zero: no evidence of a difference.
        let noise: Vec<f64> = (0..40)
            .map(|i| if i % 2 == 0 { 0.2 } else { -0.2 })
            .collect();
        let p = paired_sign_flip_p_value(&noise, 999, 3).unwrap();
        assert_eq!(p, 1.0);
        // Identical runs: every difference is zero and p is 1.
        assert_eq!(paired_sign_flip_p_value(&[0.0; 10], 99, 1), Some(1.0));
        assert_eq!(paired_sign_flip_p_value(&[], 99, 1), None);
    }

    #[test]
    fn p_value_resolution_is_one_over_permutations_plus_one() {
        let p = paired_sign_flip_p_value(&vec![1.0; 64], 99, 7).unwrap();
        assert_eq!(p, 0.01);
        assert_eq!(
            paired_sign_flip_p_value(&[0.3, -0.1, 0.2], 500, 9),
            paired_sign_flip_p_value(&[0.3, -0.1, 0.2], 500, 9)
        );
    }

    #[test]
    fn paired_interval_is_the_bootstrap_of_differences() {
        let a = [0.1, 0.5, 0.2, 0.9];
        let b = [0.3, 0.6, 0.2, 1.0];
        let diffs = [0.2, 0.1, 0.0, 0.1];
        let paired = paired_bootstrap_diff_ci(&a, &b, 0.95, 500, 4).unwrap();
        let direct = bootstrap_mean_ci(&diffs, 0.95, 500, 4).unwrap();
        assert!((paired.low - direct.low).abs() < 1e-12);
        assert!((paired.high - direct.high).abs() < 1e-12);
        assert_eq!(paired_bootstrap_diff_ci(&a, &b[..3], 0.95, 500, 4), None);
    }
}

/// Holm's step-down adjustment of `p_values` tested together (Holm 1979, "A simple
/// sequentially rejective multiple test procedure"), in their given order: a hypothesis is
/// rejected at family-wise level α when its adjusted p-value is below α.
///
/// With the m p-values sorted ascending, `p(1) ≤ … ≤ p(m)`, the `i`-th adjusted one is
/// `max over j ≤ i of min(1, (m − j + 1) · p(j))`: the smallest is multiplied by m, the next
/// by m − 1, and so on, and the running maximum keeps the adjusted values in the order of
/// the raw ones. Ties keep their given order. Empty in, empty out.
pub fn holm_adjusted(p_values: &[f64]) -> Vec<f64> {
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&x, &y| p_values[x].total_cmp(&p_values[y]));
    let mut adjusted = vec![0.0; m];
    let mut running = 0.0_f64;
    for (rank, &index) in order.iter().enumerate() {
        let scaled = ((m - rank) as f64 * p_values[index]).min(1.0);
        running = running.max(scaled);
        adjusted[index] = running;
    }
    adjusted
}

#[cfg(test)]
mod holm_tests {
    use super::holm_adjusted;

    /// Worked by hand. Raw p = [0.01, 0.04, 0.03, 0.005], m = 4. Sorted: 0.005 (4th),
    /// 0.01 (1st), 0.03 (3rd), 0.04 (2nd); multiplied by 4, 3, 2, 1: 0.02, 0.03, 0.06,
    /// 0.04; the running maximum: 0.02, 0.03, 0.06, 0.06 (0.04 is raised to 0.06, so a
    /// larger raw p never gets a smaller adjusted one). In the given order: [0.03, 0.06,
    /// 0.06, 0.02]. At α = 0.05 Holm rejects the 1st and the 4th.
    #[test]
    fn holm_adjusts_a_hand_worked_family() {
        let adjusted = holm_adjusted(&[0.01, 0.04, 0.03, 0.005]);
        let expected = [0.03, 0.06, 0.06, 0.02];
        for (got, want) in adjusted.iter().zip(expected) {
            assert!((got - want).abs() < 1e-12, "{adjusted:?}");
        }
    }

    /// [0.6, 0.9], m = 2: 0.6 × 2 = 1.2 is capped at 1, and 0.9 × 1 is raised to it.
    /// One p-value alone is left as it is.
    #[test]
    fn holm_caps_at_one_and_leaves_a_single_test_alone() {
        assert_eq!(holm_adjusted(&[0.6, 0.9]), vec![1.0, 1.0]);
        assert_eq!(holm_adjusted(&[0.3, 0.5]), vec![0.6, 0.6]);
        assert_eq!(holm_adjusted(&[0.012]), vec![0.012]);
        assert!(holm_adjusted(&[]).is_empty());
    }
}
