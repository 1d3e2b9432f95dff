//! Graded-relevance measures: discounted cumulative gain and its normalised form.
//!
//! Grades are the judge's or the qrels' relevance levels (0 = not relevant, 1, 2, 3, …) for
//! each retrieved item in rank order. The discount is `log2(rank + 1)` (Järvelin & Kekäläinen
//! 2002 as trec_eval implements it), the ideal ranking is built from **all judged grades of
//! the query**, not only the retrieved ones (trec_eval `ndcg`, ranking.md §1.4). Nothing here
//! chooses the gain for the caller or clamps a result.

/// How a grade becomes a gain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gain {
    /// `gain = grade` (trec_eval's default, ranx `ndcg`).
    Linear,
    /// `gain = 2^grade − 1` (Burges et al. 2005, ranx `ndcg_burges`), which rewards the top
    /// grades much more than the middle ones.
    Exponential,
}

impl Gain {
    /// The gain of one grade under this scheme.
    pub fn of(self, grade: f64) -> f64 {
        match self {
            Gain::Linear => grade,
            Gain::Exponential => grade.exp2() - 1.0,
        }
    }
}

/// Discounted cumulative gain of the first `k` items (all items when `k` is `None`):
/// `DCG@k = Σ_{i=1..min(k,n)} gain(grade_i) / log2(i + 1)`.
///
/// Empty lists and `k = Some(0)` give 0.0. A NaN grade makes the sum NaN; [`ndcg_at_k`]
/// turns that into `None`.
pub fn dcg_at_k(grades: &[f64], k: Option<usize>, gain: Gain) -> f64 {
    let depth = k.unwrap_or(grades.len());
    grades
        .iter()
        .take(depth)
        .enumerate()
        .map(|(index, &grade)| gain.of(grade) / ((index + 2) as f64).log2())
        .sum()
}

/// Normalised DCG: `nDCG@k = DCG@k(grades) / DCG@k(ideal)`, where the ideal list is
/// `ideal_grades` sorted by grade, highest first (this function sorts a copy).
///
/// `ideal_grades` should be every judged grade of the query, retrieved or not, so that
/// missing a highly relevant item costs score; the ideal is truncated at `k` but not at the
/// length of `grades` (trec_eval `ndcg` and `ndcg_cut`). If `grades` holds items that are
/// absent from `ideal_grades`, the ratio can exceed 1; it is not clamped.
///
/// `None` when the ideal DCG is not positive (no relevant item is known: trec_eval scores
/// that query 0, we leave the decision to the caller) or when the ratio is not finite.
pub fn ndcg_at_k(
    grades: &[f64],
    ideal_grades: &[f64],
    k: Option<usize>,
    gain: Gain,
) -> Option<f64> {
    let mut ideal = ideal_grades.to_vec();
    // Both gains rise with the grade, so sorting grades sorts gains.
    ideal.sort_by(|a, b| b.total_cmp(a));
    let ideal_dcg = dcg_at_k(&ideal, k, gain);
    if ideal_dcg.is_nan() || ideal_dcg <= 0.0 {
        return None;
    }
    let ratio = dcg_at_k(grades, k, gain) / ideal_dcg;
    ratio.is_finite().then_some(ratio)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(actual: f64, expected: f64) {
        assert!((actual - expected).abs() < 1e-12, "{actual} vs {expected}");
    }

    /// For the six-digit values written out by hand in the comments.
    fn about(actual: f64, expected: f64) {
        assert!((actual - expected).abs() < 1e-6, "{actual} vs {expected}");
    }

    #[test]
    fn dcg_by_hand() {
        // grades [3, 2, 0, 1]; discounts log2(2) = 1, log2(3), log2(4) = 2, log2(5).
        let grades = [3.0, 2.0, 0.0, 1.0];
        let l3 = 3f64.log2();
        let l5 = 5f64.log2();
        // Linear: 3/1 + 2/log2 3 + 0/2 + 1/log2 5 = 3 + 1.261860 + 0 + 0.430677 = 4.692536.
        close(
            dcg_at_k(&grades, None, Gain::Linear),
            3.0 + 2.0 / l3 + 1.0 / l5,
        );
        about(dcg_at_k(&grades, None, Gain::Linear), 4.692_536);
        // Exponential gains 7, 3, 0, 1: 7 + 1.892789 + 0 + 0.430677 = 9.323466.
        close(
            dcg_at_k(&grades, None, Gain::Exponential),
            7.0 + 3.0 / l3 + 1.0 / l5,
        );
        about(dcg_at_k(&grades, None, Gain::Exponential), 9.323_466);
        // Cut at 2: only the first two terms.
        close(dcg_at_k(&grades, Some(2), Gain::Linear), 3.0 + 2.0 / l3);
        assert_eq!(dcg_at_k(&grades, Some(0), Gain::Linear), 0.0);
        assert_eq!(dcg_at_k(&[], None, Gain::Exponential), 0.0);
    }

    #[test]
    fn ndcg_by_hand() {
        // Retrieved grades [1, 3, 0]; the query's judged grades are {3, 1, 2, 0}, so the
        // ideal order is [3, 2, 1, 0].
        let grades = [1.0, 3.0, 0.0];
        let judged = [3.0, 1.0, 2.0, 0.0];
        let l3 = 3f64.log2();
        // Linear, full depth: DCG = 1 + 3/log2 3 = 2.892789;
        // IDCG = 3 + 2/log2 3 + 1/2 = 4.761860; nDCG = 0.607492.
        let expected = (1.0 + 3.0 / l3) / (3.0 + 2.0 / l3 + 0.5);
        close(
            ndcg_at_k(&grades, &judged, None, Gain::Linear).expect("ideal > 0"),
            expected,
        );
        about(expected, 0.607_492);
        // Exponential at k = 2: DCG = 1 + 7/log2 3 = 5.416508; IDCG = 7 + 3/log2 3 =
        // 8.892789; nDCG = 0.609090.
        let expected = (1.0 + 7.0 / l3) / (7.0 + 3.0 / l3);
        close(
            ndcg_at_k(&grades, &judged, Some(2), Gain::Exponential).expect("ideal > 0"),
            expected,
        );
        about(expected, 0.609_090);
        // The ideal ranking scores 1 under both gains.
        for gain in [Gain::Linear, Gain::Exponential] {
            close(
                ndcg_at_k(&[3.0, 2.0, 1.0], &judged, None, gain).expect("ideal > 0"),
                1.0,
            );
        }
    }

    #[test]
    fn ndcg_undefined_cases() {
        assert_eq!(
            ndcg_at_k(&[0.0, 0.0], &[0.0, 0.0], None, Gain::Linear),
            None
        );
        assert_eq!(ndcg_at_k(&[1.0], &[], None, Gain::Linear), None);
        assert_eq!(ndcg_at_k(&[1.0], &[1.0], Some(0), Gain::Linear), None);
        assert_eq!(ndcg_at_k(&[f64::NAN], &[1.0], None, Gain::Linear), None);
    }
}
