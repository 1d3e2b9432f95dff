//! Context precision and recall without a model: ragas's ID-based and string-based variants
//! (ragas.md §1.4, §1.5, §2.2, §2.3).
//!
//! The caller supplies the contexts (or their ids) and, for the string variants, the
//! similarity function, typically `1 − normalised Levenshtein` from [`crate::text`]. Nothing
//! here calls a model or chooses a similarity; an LLM judge's verdicts go straight to
//! [`super::average_precision`] instead.

use std::collections::HashSet;

use super::precision::average_precision;

/// Share of the distinct retrieved ids that are reference ids:
/// `|set(retrieved) ∩ set(reference)| / |set(retrieved)|` (ragas `IDBasedContextPrecision`).
///
/// Order and duplicates are ignored, so this is set precision, not average precision.
/// `None` when nothing was retrieved (ragas gives NaN). Ids compare as exact strings;
/// ragas compares `str(id)`, so convert numbers the same way before calling.
pub fn id_context_precision(retrieved: &[&str], reference: &[&str]) -> Option<f64> {
    let retrieved: HashSet<&str> = retrieved.iter().copied().collect();
    if retrieved.is_empty() {
        return None;
    }
    let reference: HashSet<&str> = reference.iter().copied().collect();
    let shared = retrieved.intersection(&reference).count();
    Some(shared as f64 / retrieved.len() as f64)
}

/// Share of the distinct reference ids that were retrieved:
/// `|set(retrieved) ∩ set(reference)| / |set(reference)|` (ragas `IDBasedContextRecall`).
///
/// `None` when there is no reference id (ragas gives NaN).
pub fn id_context_recall(retrieved: &[&str], reference: &[&str]) -> Option<f64> {
    let reference: HashSet<&str> = reference.iter().copied().collect();
    if reference.is_empty() {
        return None;
    }
    let retrieved: HashSet<&str> = retrieved.iter().copied().collect();
    let shared = reference.intersection(&retrieved).count();
    Some(shared as f64 / reference.len() as f64)
}

/// Per-item evidence behind a string-based score: for each scored item (a retrieved context
/// for precision, a reference context for recall), its best similarity to the other list and
/// whether that passed the threshold.
#[derive(Debug, Clone, PartialEq)]
pub struct StringMatch {
    /// Whether each item's best similarity passed the threshold.
    pub verdicts: Vec<bool>,
    /// Each item's best similarity; NaN similarities are skipped, and an item whose every
    /// similarity was NaN gets negative infinity (and a false verdict).
    pub best: Vec<f64>,
}

/// The highest finite-or-infinite similarity of `item` to any of `others`, skipping NaN.
fn best_similarity(score: impl Fn(&str) -> f64, others: &[&str]) -> f64 {
    others
        .iter()
        .map(|&other| score(other))
        .fold(f64::NEG_INFINITY, f64::max)
}

/// String-based context precision (ragas `NonLLMContextPrecisionWithReference`).
///
/// For each retrieved context `r_i`, `best_i = max_j similarity(r_i, reference_j)` and the
/// verdict is `best_i >= threshold` (inclusive, as ragas; its default threshold is 0.5). The
/// score is the exact [`average_precision`] of the verdicts in retrieved order. ragas divides
/// by `Σv + 1e-10` instead, so its perfect score is 0.9999999999; to reproduce it, pass the
/// returned verdicts to [`super::average_precision_ragas`].
///
/// `None` when either list is empty (ragas raises on an empty reference list and the row
/// becomes NaN).
pub fn string_context_precision(
    retrieved: &[&str],
    reference: &[&str],
    threshold: f64,
    similarity: impl Fn(&str, &str) -> f64,
) -> Option<(f64, StringMatch)> {
    if retrieved.is_empty() || reference.is_empty() {
        return None;
    }
    let best: Vec<f64> = retrieved
        .iter()
        .map(|&item| best_similarity(|other| similarity(item, other), reference))
        .collect();
    let verdicts: Vec<bool> = best.iter().map(|&value| value >= threshold).collect();
    let score = average_precision(&verdicts)?;
    Some((score, StringMatch { verdicts, best }))
}

/// String-based context recall (ragas `NonLLMContextRecall`).
///
/// For each reference context `t_j`, `best_j = max_i similarity(retrieved_i, t_j)` (the
/// retrieved context is always the first argument) and the verdict is `best_j > threshold`:
/// **strict**, as ragas has it, unlike precision's `>=`. The score is the mean verdict,
/// `Σ_j v_j / |reference|`; the returned evidence is per reference context.
///
/// `None` when either list is empty (ragas gives NaN for both).
pub fn string_context_recall(
    retrieved: &[&str],
    reference: &[&str],
    threshold: f64,
    similarity: impl Fn(&str, &str) -> f64,
) -> Option<(f64, StringMatch)> {
    if retrieved.is_empty() || reference.is_empty() {
        return None;
    }
    let best: Vec<f64> = reference
        .iter()
        .map(|&item| best_similarity(|other| similarity(other, item), retrieved))
        .collect();
    let verdicts: Vec<bool> = best.iter().map(|&value| value > threshold).collect();
    let hits = verdicts.iter().filter(|&&v| v).count();
    let score = hits as f64 / verdicts.len() as f64;
    Some((score, StringMatch { verdicts, best }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A toy similarity: 1 for equal strings, 0.5 when one contains the other, else 0.
    fn toy(a: &str, b: &str) -> f64 {
        if a == b {
            1.0
        } else if a.contains(b) || b.contains(a) {
            0.5
        } else {
            0.0
        }
    }

    #[test]
    fn id_based_is_set_arithmetic() {
        // ragas.md §1.5/§2.3: sets, duplicates collapsed, order ignored.
        let retrieved = ["d1", "d2", "d2", "d3", "d4"];
        let reference = ["d2", "d4", "d9"];
        assert_eq!(id_context_precision(&retrieved, &reference), Some(0.5));
        assert_eq!(id_context_recall(&retrieved, &reference), Some(2.0 / 3.0));
        assert_eq!(id_context_precision(&[], &reference), None);
        assert_eq!(id_context_recall(&retrieved, &[]), None);
        assert_eq!(id_context_recall(&[], &reference), Some(0.0));
    }

    #[test]
    fn string_precision_uses_inclusive_threshold_and_exact_ap() {
        let retrieved = ["noise", "alpha beta", "alpha"];
        let reference = ["alpha"];
        let (score, evidence) =
            string_context_precision(&retrieved, &reference, 0.5, toy).expect("non-empty");
        // best = [0, 0.5, 1]; 0.5 >= 0.5 passes: verdicts [0, 1, 1];
        // AP = (1/2 + 2/3) / 2 = 7/12.
        assert_eq!(evidence.best, vec![0.0, 0.5, 1.0]);
        assert_eq!(evidence.verdicts, vec![false, true, true]);
        assert!((score - 7.0 / 12.0).abs() < 1e-15);
        // ragas's float for the same verdicts: 7/6 / (2 + 1e-10).
        let ragas = super::super::average_precision_ragas(&evidence.verdicts).expect("non-empty");
        assert!((ragas - (7.0 / 6.0) / (2.0 + 1e-10)).abs() < 1e-15);
    }

    #[test]
    fn string_recall_uses_strict_threshold() {
        let retrieved = ["alpha beta", "gamma"];
        let reference = ["alpha", "gamma", "delta"];
        let (score, evidence) =
            string_context_recall(&retrieved, &reference, 0.5, toy).expect("non-empty");
        // best per reference = [0.5, 1, 0]; 0.5 > 0.5 fails: verdicts [0, 1, 0].
        assert_eq!(evidence.best, vec![0.5, 1.0, 0.0]);
        assert_eq!(evidence.verdicts, vec![false, true, false]);
        assert!((score - 1.0 / 3.0).abs() < 1e-15);
    }

    #[test]
    fn empty_lists_and_nan_similarities() {
        assert!(string_context_precision(&[], &["a"], 0.5, toy).is_none());
        assert!(string_context_precision(&["a"], &[], 0.5, toy).is_none());
        assert!(string_context_recall(&[], &["a"], 0.5, toy).is_none());
        assert!(string_context_recall(&["a"], &[], 0.5, toy).is_none());
        let nan = |_: &str, _: &str| f64::NAN;
        let (score, evidence) = string_context_precision(&["a"], &["b"], 0.5, nan).expect("ok");
        assert_eq!(score, 0.0);
        assert_eq!(evidence.best, vec![f64::NEG_INFINITY]);
        // The similarity is called with the retrieved context first in both functions.
        let ordered = |r: &str, t: &str| {
            if r.starts_with('r') && t.starts_with('t') {
                1.0
            } else {
                0.0
            }
        };
        assert_eq!(
            string_context_recall(&["r1"], &["t1"], 0.5, ordered).map(|(s, _)| s),
            Some(1.0)
        );
        assert_eq!(
            string_context_precision(&["r1"], &["t1"], 0.5, ordered).map(|(s, _)| s),
            Some(1.0)
        );
    }
}
