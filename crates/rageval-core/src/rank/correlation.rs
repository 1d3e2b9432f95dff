//! Rank correlations between two scorings of the same items: Spearman's ρ and Kendall's τ-b,
//! both tie-aware (ranking.md §4.1–4.2).
//!
//! `x[i]` and `y[i]` are two scores (or ranks) of item `i`, for example the retriever's rank
//! and the judge's grade. Only the order of the values matters. These functions return
//! `None` where the statistic is undefined (scipy returns NaN there) and never a p-value.

use std::cmp::Ordering;

/// Checks shared by both statistics: at least two items, equal lengths, finite values.
fn comparable(x: &[f64], y: &[f64]) -> bool {
    x.len() == y.len() && x.len() >= 2 && x.iter().chain(y).all(|v| v.is_finite())
}

/// Fractional ranks, 1-based: tied values share the mean of the ranks they span
/// (scipy's `rankdata(method="average")`).
fn average_ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && values[order[end]] == values[order[start]] {
            end += 1;
        }
        // 0-based positions start..end hold ranks start+1 ..= end; their mean:
        let shared = (start + 1 + end) as f64 / 2.0;
        for &index in &order[start..end] {
            ranks[index] = shared;
        }
        start = end;
    }
    ranks
}

/// Pearson correlation; `None` when either side has zero variance.
fn pearson(x: &[f64], y: &[f64]) -> Option<f64> {
    let n = x.len() as f64;
    let mean_x = x.iter().sum::<f64>() / n;
    let mean_y = y.iter().sum::<f64>() / n;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        let (dx, dy) = (a - mean_x, b - mean_y);
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    if sxx <= 0.0 || syy <= 0.0 {
        return None;
    }
    Some((sxy / (sxx.sqrt() * syy.sqrt())).clamp(-1.0, 1.0))
}

/// Spearman's rank correlation: Pearson's r of the average ranks of `x` and `y`,
/// `ρ = Σ(R_i − R̄)(S_i − S̄) / sqrt(Σ(R_i − R̄)² · Σ(S_i − S̄)²)`.
///
/// Ties get average ranks, so this matches `scipy.stats.spearmanr`; the shortcut
/// `1 − 6Σd²/(n(n²−1))` is not used because it is wrong under ties. `None` when the lengths
/// differ, fewer than two items are given, a value is not finite, or either side is constant.
pub fn spearman(x: &[f64], y: &[f64]) -> Option<f64> {
    if !comparable(x, y) {
        return None;
    }
    pearson(&average_ranks(x), &average_ranks(y))
}

/// Pairs tied within each run of equal values of a sorted sequence: `Σ t(t−1)/2`.
fn tied_pairs<T>(sorted: &[T], same: impl Fn(&T, &T) -> bool) -> u64 {
    let mut total = 0u64;
    let mut run = 1u64;
    for window in sorted.windows(2) {
        if same(&window[0], &window[1]) {
            run += 1;
        } else {
            total += run * (run - 1) / 2;
            run = 1;
        }
    }
    total + run * (run - 1) / 2
}

/// Sorts `values` ascending and returns the number of strictly inverted pairs
/// (`i < j` with `values[i] > values[j]`), by bottom-up merge sort: O(n log n).
fn sort_counting_inversions(values: &mut Vec<f64>) -> u64 {
    let n = values.len();
    let mut buffer = vec![0.0; n];
    let mut inversions = 0u64;
    let mut width = 1;
    while width < n {
        let mut left = 0;
        while left < n {
            let middle = (left + width).min(n);
            let right = (left + 2 * width).min(n);
            let (mut i, mut j, mut out) = (left, middle, left);
            while i < middle && j < right {
                // Equal values are not inversions: take the left one first.
                if values[j].total_cmp(&values[i]) == Ordering::Less {
                    inversions += (middle - i) as u64;
                    buffer[out] = values[j];
                    j += 1;
                } else {
                    buffer[out] = values[i];
                    i += 1;
                }
                out += 1;
            }
            buffer[out..out + (middle - i)].copy_from_slice(&values[i..middle]);
            out += middle - i;
            buffer[out..out + (right - j)].copy_from_slice(&values[j..right]);
            left = right;
        }
        std::mem::swap(values, &mut buffer);
        width *= 2;
    }
    inversions
}

/// Kendall's τ-b: `(n_c − n_d) / sqrt((n_0 − n_1)(n_0 − n_2))`, where `n_c`/`n_d` count
/// concordant/discordant pairs, `n_0 = n(n−1)/2`, and `n_1`, `n_2` count pairs tied in `x`
/// and in `y` (`Σ t(t−1)/2` over tie groups). This is `scipy.stats.kendalltau`'s default.
///
/// Computed in O(n log n) by Knight's (1966) method: sort the pairs by `(x, y)`, count ties
/// in `x` and joint ties `n_3` along the way, then merge-sort the `y` column counting swaps;
/// the swaps are exactly `n_d`, and `n_c − n_d = n_0 − n_1 − n_2 + n_3 − 2·n_d`. Ten
/// thousand items take milliseconds.
///
/// `None` when the lengths differ, fewer than two items are given, a value is not finite,
/// or either side is constant.
pub fn kendall_tau_b(x: &[f64], y: &[f64]) -> Option<f64> {
    if !comparable(x, y) {
        return None;
    }
    let n = x.len() as u64;
    // `v + 0.0` turns −0.0 into +0.0, so that the total order used for sorting and the `==`
    // used for ties agree on zeros.
    let mut pairs: Vec<(f64, f64)> = x.iter().zip(y).map(|(a, b)| (a + 0.0, b + 0.0)).collect();
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let tied_x = tied_pairs(&pairs, |a, b| a.0 == b.0);
    let tied_both = tied_pairs(&pairs, |a, b| a.0 == b.0 && a.1 == b.1);
    let mut column: Vec<f64> = pairs.iter().map(|pair| pair.1).collect();
    let discordant = sort_counting_inversions(&mut column);
    let tied_y = tied_pairs(&column, |a, b| a == b);

    let all = n * (n - 1) / 2;
    let untied_x = all - tied_x;
    let untied_y = all - tied_y;
    if untied_x == 0 || untied_y == 0 {
        return None;
    }
    // n_c − n_d; each count fits in i128 with room to spare.
    let difference = i128::from(all) - i128::from(tied_x) - i128::from(tied_y)
        + i128::from(tied_both)
        - 2 * i128::from(discordant);
    let tau = difference as f64 / ((untied_x as f64).sqrt() * (untied_y as f64).sqrt());
    Some(tau.clamp(-1.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::SplitMix64;

    fn close(actual: Option<f64>, expected: f64) {
        let actual = actual.expect("defined");
        assert!((actual - expected).abs() < 1e-12, "{actual} vs {expected}");
    }

    /// The O(n²) definition, as an oracle for the merge-sort version.
    fn tau_b_by_pairs(x: &[f64], y: &[f64]) -> Option<f64> {
        let (mut concordant, mut discordant, mut only_x, mut only_y) = (0i64, 0i64, 0i64, 0i64);
        for i in 0..x.len() {
            for j in i + 1..x.len() {
                let dx = x[i].total_cmp(&x[j]);
                let dy = y[i].total_cmp(&y[j]);
                match (dx, dy) {
                    (Ordering::Equal, Ordering::Equal) => {}
                    (Ordering::Equal, _) => only_x += 1,
                    (_, Ordering::Equal) => only_y += 1,
                    _ if dx == dy => concordant += 1,
                    _ => discordant += 1,
                }
            }
        }
        let p = (concordant + discordant + only_x) as f64;
        let q = (concordant + discordant + only_y) as f64;
        (p > 0.0 && q > 0.0).then(|| (concordant - discordant) as f64 / (p * q).sqrt())
    }

    #[test]
    fn research_table_vectors() {
        // ranking.md §4.5, computed there with scipy 1.17.1.
        let ints = |v: &[i32]| v.iter().map(|&a| f64::from(a)).collect::<Vec<_>>();
        let x = ints(&[1, 2, 3, 4, 5, 6, 7, 8]);
        let y = ints(&[2, 1, 4, 3, 6, 5, 8, 7]);
        close(spearman(&x, &y), 0.9047619047619048);
        close(kendall_tau_b(&x, &y), 0.7142857142857142);
        let x = ints(&[1, 2, 2, 3, 4, 4, 4, 5]);
        let y = ints(&[2, 1, 3, 3, 5, 4, 4, 6]);
        close(spearman(&x, &y), 0.9256265453136692);
        close(kendall_tau_b(&x, &y), 0.8406728074767076);
        assert_eq!(
            average_ranks(&x),
            vec![1.0, 2.5, 2.5, 4.0, 6.0, 6.0, 6.0, 8.0]
        );
        let x = [0.0, 0.0, 1.0, 1.0, 0.0, 1.0];
        let y = [0.1, 0.4, 0.35, 0.8, 0.2, 0.9];
        close(spearman(&x, &y), 0.6831300510639732);
        close(kendall_tau_b(&x, &y), 0.6024640760767093);
        let up = [1.0, 2.0, 3.0, 4.0, 5.0];
        let down = [5.0, 4.0, 3.0, 2.0, 1.0];
        close(spearman(&up, &down), -1.0);
        close(kendall_tau_b(&up, &down), -1.0);
    }

    #[test]
    fn undefined_cases() {
        let constant = [1.0, 1.0, 1.0, 1.0];
        let rising = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(spearman(&constant, &rising), None);
        assert_eq!(kendall_tau_b(&rising, &constant), None);
        assert_eq!(spearman(&[1.0], &[2.0]), None);
        assert_eq!(kendall_tau_b(&[], &[]), None);
        assert_eq!(spearman(&rising, &rising[..3]), None);
        assert_eq!(kendall_tau_b(&[1.0, f64::NAN], &[1.0, 2.0]), None);
    }

    #[test]
    fn negative_zero_ties_with_zero() {
        let signed = [0.0, -0.0, 1.0, -0.0];
        let plain = [0.0, 0.0, 1.0, 0.0];
        let other = [3.0, 1.0, 2.0, 2.0];
        assert_eq!(
            kendall_tau_b(&signed, &other),
            kendall_tau_b(&plain, &other)
        );
        assert_eq!(
            kendall_tau_b(&other, &signed),
            kendall_tau_b(&other, &plain)
        );
        assert_eq!(spearman(&signed, &other), spearman(&plain, &other));
    }

    #[test]
    fn properties_on_tied_random_vectors() {
        let mut rng = SplitMix64::new(99);
        for round in 0..400 {
            let n = 2 + rng.below(40);
            let levels = 1 + rng.below(6);
            let x: Vec<f64> = (0..n).map(|_| rng.below(levels) as f64).collect();
            let y: Vec<f64> = (0..n)
                .map(|_| rng.below(levels + round % 3) as f64)
                .collect();
            let tau = kendall_tau_b(&x, &y);
            let oracle = tau_b_by_pairs(&x, &y);
            match (tau, oracle) {
                (Some(a), Some(b)) => assert!((a - b).abs() < 1e-12, "{x:?} {y:?}"),
                (a, b) => assert_eq!(a, b, "{x:?} {y:?}"),
            }
            assert_eq!(tau, kendall_tau_b(&y, &x), "τ-b is symmetric");
            if let Some(rho) = spearman(&x, &y) {
                assert!((-1.0..=1.0).contains(&rho));
                let back = spearman(&y, &x).expect("symmetric");
                assert!((rho - back).abs() < 1e-15);
            }
            if spearman(&x, &x).is_some() {
                close(spearman(&x, &x), 1.0);
                close(kendall_tau_b(&x, &x), 1.0);
                // A strictly increasing transform changes no rank.
                let squashed: Vec<f64> = x.iter().map(|v| (v * 0.3).exp()).collect();
                assert_eq!(spearman(&x, &squashed), spearman(&x, &x));
            }
        }
    }

    #[test]
    fn ten_thousand_items_are_fast() {
        let mut rng = SplitMix64::new(5);
        let x: Vec<f64> = (0..10_000).map(|_| rng.below(100) as f64).collect();
        let y: Vec<f64> = x.iter().map(|v| v + rng.below(30) as f64).collect();
        let started = std::time::Instant::now();
        let tau = kendall_tau_b(&x, &y).expect("defined");
        assert!(tau > 0.5, "{tau}");
        // Debug build on a shared 2-core machine: generous, but an O(n²) loop would take
        // far longer than this.
        assert!(started.elapsed().as_secs_f64() < 1.0);
    }
}
