//! ROUGE-1, ROUGE-2 and ROUGE-L (Lin 2004) with Google's rouge-score definitions, over a
//! tokeniser that keeps every script.
//!
//! rouge-score's tokeniser keeps only `[a-z0-9]`, so Chinese scores 0 even against itself
//! and "Müller" becomes "m ller"; ragas inherits this. We tokenise as rouge-score does on
//! ASCII and keep letters of all scripts, with Han segmented by jieba.
//!
//! Stemming: ragas calls rouge-score with `use_stemmer=True` (Porter stemmer on tokens of
//! more than three characters). We do not stem — English-only and a second source of
//! mismatch — so our English scores equal rouge-score's with `use_stemmer=False` and can
//! differ from ragas's when the texts differ only in inflection ("cats" vs "cat").

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::tokenize::rouge_tokens;

/// Precision, recall and F1 of one ROUGE variant, each in `[0, 1]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rouge {
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
}

/// Which ROUGE variant to compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RougeKind {
    /// Unigram overlap.
    Rouge1,
    /// Bigram overlap.
    Rouge2,
    /// Longest common subsequence of tokens (rouge-score's `rougeL`, not `rougeLsum`).
    RougeL,
}

impl Rouge {
    /// Builds the score from an overlap count; precision is over the hypothesis count and
    /// recall over the reference count, each with a floor of one as rouge-score has, and
    /// `F1 = 2PR / (P + R)`, 0 when both are 0.
    fn from_overlap(overlap: usize, hypothesis_count: usize, reference_count: usize) -> Rouge {
        let precision = overlap as f64 / hypothesis_count.max(1) as f64;
        let recall = overlap as f64 / reference_count.max(1) as f64;
        let f1 = if precision + recall > 0.0 {
            2.0 * precision * recall / (precision + recall)
        } else {
            0.0
        };
        Rouge {
            precision,
            recall,
            f1,
        }
    }
}

/// ROUGE of `hypothesis` (rouge-score's "prediction") against `reference` ("target").
///
/// - ROUGE-N: with `overlap = Σ_g min(count_hyp(g), count_ref(g))` over n-grams,
///   `P = overlap / #hyp n-grams`, `R = overlap / #ref n-grams`.
/// - ROUGE-L: `P = LCS / #hyp tokens`, `R = LCS / #ref tokens`; all zero when either side
///   has no tokens.
/// - `F1 = 2PR / (P + R)`.
///
/// Tokens: lower-cased runs of letters and digits of any script, Han segmented with jieba,
/// no stemming (see the module documentation).
pub fn rouge(hypothesis: &str, reference: &str, kind: RougeKind) -> Rouge {
    let hyp = rouge_tokens(hypothesis);
    let reference = rouge_tokens(reference);
    match kind {
        RougeKind::Rouge1 => rouge_n(&hyp, &reference, 1),
        RougeKind::Rouge2 => rouge_n(&hyp, &reference, 2),
        RougeKind::RougeL => {
            if hyp.is_empty() || reference.is_empty() {
                return Rouge::from_overlap(0, 0, 0);
            }
            Rouge::from_overlap(lcs_len(&hyp, &reference), hyp.len(), reference.len())
        }
    }
}

fn ngram_counts(tokens: &[String], n: usize) -> HashMap<&[String], usize> {
    let mut counts = HashMap::new();
    for gram in tokens.windows(n) {
        *counts.entry(gram).or_insert(0) += 1;
    }
    counts
}

fn rouge_n(hyp: &[String], reference: &[String], n: usize) -> Rouge {
    let hyp_counts = ngram_counts(hyp, n);
    let ref_counts = ngram_counts(reference, n);
    let overlap = ref_counts
        .iter()
        .map(|(gram, &count)| count.min(hyp_counts.get(gram).copied().unwrap_or(0)))
        .sum();
    Rouge::from_overlap(
        overlap,
        hyp_counts.values().sum(),
        ref_counts.values().sum(),
    )
}

/// Length of the longest common subsequence, two rows of the classic table.
fn lcs_len(a: &[String], b: &[String]) -> usize {
    let mut previous = vec![0usize; b.len() + 1];
    let mut current = vec![0usize; b.len() + 1];
    for x in a {
        for (j, y) in b.iter().enumerate() {
            current[j + 1] = if x == y {
                previous[j] + 1
            } else {
                previous[j + 1].max(current[j])
            };
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::tokenize::{random_text, rouge_tokens};

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn reordered_sentence() {
        // ragas's research notes: rouge1 = 1.0, rougeL = 0.667 for this pair.
        let (reference, hypothesis) = (
            "The capital of France is Paris.",
            "Paris is the capital of France.",
        );
        assert!(close(
            rouge(hypothesis, reference, RougeKind::Rouge1).f1,
            1.0
        ));
        let l = rouge(hypothesis, reference, RougeKind::RougeL);
        assert!(close(l.f1, 4.0 / 6.0), "{l:?}");
    }

    /// rouge-score keeps only `[a-z0-9]`, so identical Chinese texts score 0 there.
    /// Tokens here (jieba): 巴黎 是 法国 的 首都 / 法国 的 首都 是 巴黎.
    #[test]
    fn regression_rouge_score_drops_chinese() {
        let reference = "巴黎是法国的首都";
        let hypothesis = "法国的首都是巴黎";
        let one = rouge(hypothesis, reference, RougeKind::Rouge1);
        assert!(close(one.f1, 1.0), "{one:?}");
        // Bigrams: ref {巴黎是, 是法国, 法国的, 的首都}, hyp {法国的, 的首都, 首都是, 是巴黎}: 2 of 4.
        let two = rouge(hypothesis, reference, RougeKind::Rouge2);
        assert!(close(two.precision, 0.5) && close(two.recall, 0.5) && close(two.f1, 0.5));
        // LCS: 法国 的 首都 → 3 of 5 each way.
        let l = rouge(hypothesis, reference, RougeKind::RougeL);
        assert!(close(l.precision, 0.6) && close(l.recall, 0.6) && close(l.f1, 0.6));
        assert!(close(
            rouge(reference, reference, RougeKind::RougeL).f1,
            1.0
        ));
    }

    #[test]
    fn asymmetric_lengths_and_empty_inputs() {
        let r = rouge("the cat", "the cat sat on the mat", RougeKind::Rouge1);
        assert!(close(r.precision, 1.0) && close(r.recall, 2.0 / 6.0));
        for kind in [RougeKind::Rouge1, RougeKind::Rouge2, RougeKind::RougeL] {
            assert_eq!(rouge("", "", kind).f1, 0.0);
            assert_eq!(rouge("a b", "", kind).f1, 0.0);
            assert_eq!(rouge("!!", "a b", kind).f1, 0.0);
        }
    }

    #[test]
    fn properties_on_random_texts() {
        let mut rng = crate::stats::SplitMix64::new(5);
        for _ in 0..300 {
            let (a, b) = (random_text(&mut rng), random_text(&mut rng));
            for kind in [RougeKind::Rouge1, RougeKind::Rouge2, RougeKind::RougeL] {
                let ab = rouge(&a, &b, kind);
                let ba = rouge(&b, &a, kind);
                for v in [ab.precision, ab.recall, ab.f1] {
                    assert!((0.0..=1.0).contains(&v), "{a:?} {b:?} {ab:?}");
                }
                // Swapping the texts swaps precision and recall; F1 is symmetric.
                assert!(close(ab.precision, ba.recall) && close(ab.recall, ba.precision));
                assert!(close(ab.f1, ba.f1));
            }
            let tokens = rouge_tokens(&a).len();
            let same = rouge(&a, &a, RougeKind::RougeL).f1;
            assert_eq!(same, if tokens > 0 { 1.0 } else { 0.0 }, "{a:?}");
            if tokens > 1 {
                assert_eq!(rouge(&a, &a, RougeKind::Rouge2).f1, 1.0, "{a:?}");
            }
        }
    }
}
