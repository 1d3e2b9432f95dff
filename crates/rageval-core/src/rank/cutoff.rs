//! Cut-off measures over one ranked list, with trec_eval 10.0 semantics (ranking.md §1.4).
//!
//! `relevant[i]` is whether the item at rank `i + 1` is relevant; the caller has already
//! ordered the list and applied the relevance threshold. `total_relevant` is R, the number of
//! relevant items known for the query, retrieved or not. These functions do not sort, read
//! qrels or average over queries: that is [`crate::trec`]'s job.
//!
//! If the list holds more relevant items than `total_relevant` claims, R is raised to that
//! count, so recall and R-precision stay within [0, 1] instead of reporting an impossible
//! value.

/// Relevant items among the first `k` ranks.
fn hits_in_top(relevant: &[bool], k: usize) -> usize {
    relevant.iter().take(k).filter(|&&r| r).count()
}

/// R as the caller gave it, but never fewer than the relevant items actually retrieved.
fn effective_total(relevant: &[bool], total_relevant: usize) -> usize {
    total_relevant.max(hits_in_top(relevant, relevant.len()))
}

/// Precision at `k`: `(relevant in the top k) / k`.
///
/// Divides by `k` even when fewer than `k` items were retrieved, as trec_eval's `P_k` pads a
/// short list with non-relevant items (4 relevant in 15 retrieved gives P@20 = 0.2).
/// `k == 0` gives 0.0: an empty cut-off contains nothing relevant.
pub fn precision_at_k(relevant: &[bool], k: usize) -> f64 {
    if k == 0 {
        return 0.0;
    }
    hits_in_top(relevant, k) as f64 / k as f64
}

/// Recall at `k`: `(relevant in the top k) / R` (trec_eval `recall_k`).
///
/// `None` when R is 0, where recall is undefined (trec_eval prints 0 there; we let the
/// caller decide whether such a query counts).
pub fn recall_at_k(relevant: &[bool], k: usize, total_relevant: usize) -> Option<f64> {
    let total = effective_total(relevant, total_relevant);
    if total == 0 {
        return None;
    }
    Some(hits_in_top(relevant, k) as f64 / total as f64)
}

/// Hit rate at `k`: 1.0 if any of the top `k` is relevant, else 0.0 (trec_eval
/// `success_k`, ir_measures `Success@k`).
pub fn hit_at_k(relevant: &[bool], k: usize) -> f64 {
    if relevant.iter().take(k).any(|&r| r) {
        1.0
    } else {
        0.0
    }
}

/// Reciprocal rank: `1 / (rank of the first relevant item)`, 0.0 when none is relevant
/// (trec_eval `recip_rank`, which has no cut-off; truncate the slice for MRR@k).
pub fn reciprocal_rank(relevant: &[bool]) -> f64 {
    relevant
        .iter()
        .position(|&r| r)
        .map_or(0.0, |index| 1.0 / (index + 1) as f64)
}

/// R-precision: precision at depth R, `(relevant in the top R) / R` (trec_eval `Rprec`).
///
/// Padded like [`precision_at_k`] when fewer than R items were retrieved. `None` when R is 0.
pub fn r_precision(relevant: &[bool], total_relevant: usize) -> Option<f64> {
    let total = effective_total(relevant, total_relevant);
    if total == 0 {
        return None;
    }
    Some(precision_at_k(relevant, total))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits(values: &[u8]) -> Vec<bool> {
        values.iter().map(|&v| v != 0).collect()
    }

    #[test]
    fn precision_pads_short_lists() {
        // ranking.md §1.4: 4 relevant in 15 retrieved gives P@20 = 0.2.
        let mut list = vec![false; 15];
        for i in [0, 3, 7, 14] {
            list[i] = true;
        }
        assert_eq!(precision_at_k(&list, 20), 0.2);
        assert_eq!(precision_at_k(&list, 5), 0.4);
        assert_eq!(precision_at_k(&list, 0), 0.0);
        assert_eq!(precision_at_k(&[], 3), 0.0);
    }

    #[test]
    fn recall_hit_and_rank() {
        let list = bits(&[0, 1, 0, 1, 0]);
        assert_eq!(recall_at_k(&list, 2, 4), Some(0.25));
        assert_eq!(recall_at_k(&list, 10, 4), Some(0.5));
        assert_eq!(
            recall_at_k(&list, 3, 0),
            Some(0.5),
            "R raised to the 2 retrieved"
        );
        assert_eq!(recall_at_k(&bits(&[0, 0]), 3, 0), None);
        assert_eq!(hit_at_k(&list, 1), 0.0);
        assert_eq!(hit_at_k(&list, 2), 1.0);
        assert_eq!(hit_at_k(&list, 0), 0.0);
        assert_eq!(reciprocal_rank(&list), 0.5);
        assert_eq!(reciprocal_rank(&bits(&[0, 0, 0])), 0.0);
        assert_eq!(reciprocal_rank(&[]), 0.0);
    }

    #[test]
    fn r_precision_cases() {
        // R = 3: top 3 hold 1 relevant.
        assert_eq!(r_precision(&bits(&[0, 1, 0, 1, 1]), 3), Some(1.0 / 3.0));
        // R = 4 with only 2 retrieved: padded, 2/4.
        assert_eq!(r_precision(&bits(&[1, 1]), 4), Some(0.5));
        assert_eq!(r_precision(&bits(&[0, 0]), 0), None);
    }
}
