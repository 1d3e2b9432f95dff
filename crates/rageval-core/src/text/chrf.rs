//! chrF (Popović 2015) with sacrebleu's definitions and defaults: character n-grams of
//! order 1–6, no word n-grams, β = 2, case-sensitive, whitespace removed.
//!
//! Characters are Unicode scalar values, so chrF works for every script without a
//! tokeniser; this is what makes it the lexical metric of choice for Chinese.

use std::collections::HashMap;

use super::tokenize::is_python_space;

/// Highest character n-gram order (sacrebleu's `char_order`).
pub const CHRF_CHAR_ORDER: usize = 6;
/// Recall weight β (sacrebleu's `beta`): recall counts β² times as much as precision.
pub const CHRF_BETA: f64 = 2.0;

/// Per order: hypothesis n-grams, reference n-grams, matched n-grams.
type Stats = [[usize; 3]; CHRF_CHAR_ORDER];

/// A text with its whitespace removed (Python's definition of whitespace, as sacrebleu
/// joins `str.split()`); the n-gram maps borrow from it.
struct Grams {
    chars: Vec<char>,
}

impl Grams {
    fn new(text: &str) -> Grams {
        Grams {
            chars: text.chars().filter(|&c| !is_python_space(c)).collect(),
        }
    }

    /// Character n-gram counts for n = 1..=6.
    fn counts(&self) -> Vec<HashMap<&[char], usize>> {
        (1..=CHRF_CHAR_ORDER)
            .map(|n| {
                let mut counts: HashMap<&[char], usize> = HashMap::new();
                for gram in self.chars.windows(n) {
                    *counts.entry(gram).or_insert(0) += 1;
                }
                counts
            })
            .collect()
    }
}

fn match_stats(hyp: &[HashMap<&[char], usize>], reference: &[HashMap<&[char], usize>]) -> Stats {
    let mut stats = [[0; 3]; CHRF_CHAR_ORDER];
    for (n, (h, r)) in hyp.iter().zip(reference).enumerate() {
        let matched = h
            .iter()
            .map(|(gram, &count)| count.min(r.get(gram).copied().unwrap_or(0)))
            .sum();
        stats[n] = [h.values().sum(), r.values().sum(), matched];
    }
    stats
}

/// sacrebleu's chrF F-score (without eps smoothing): precision and recall are averaged over
/// the orders that both sides have, then `F_β = (1 + β²)·P·R / (β²·P + R)`, times 100; 0 when
/// no order qualifies or `P + R = 0`.
fn f_score(stats: &Stats) -> f64 {
    let factor = CHRF_BETA * CHRF_BETA;
    let (mut precision, mut recall, mut orders) = (0.0, 0.0, 0usize);
    for &[hyp, reference, matched] in stats {
        if hyp > 0 && reference > 0 {
            precision += matched as f64 / hyp as f64;
            recall += matched as f64 / reference as f64;
            orders += 1;
        }
    }
    if orders == 0 {
        return 0.0;
    }
    precision /= orders as f64;
    recall /= orders as f64;
    if precision + recall == 0.0 {
        return 0.0;
    }
    // Same operation order as sacrebleu, so the floats agree to the last bit.
    let score = (1.0 + factor) * precision * recall / (factor * precision + recall);
    100.0 * score
}

/// Statistics of one segment against the reference with the best sentence chrF (the first
/// on ties). With no references the hypothesis n-grams still count, unmatched.
fn segment_stats(hypothesis: &str, references: &[&str]) -> Stats {
    let hyp_grams = Grams::new(hypothesis);
    let hyp = hyp_grams.counts();
    let mut best: Option<(f64, Stats)> = None;
    for reference in references {
        let ref_grams = Grams::new(reference);
        let stats = match_stats(&hyp, &ref_grams.counts());
        let score = f_score(&stats);
        if best.is_none_or(|(best_score, _)| score > best_score) {
            best = Some((score, stats));
        }
    }
    let nothing = Grams::new("");
    best.map_or_else(|| match_stats(&hyp, &nothing.counts()), |(_, stats)| stats)
}

/// Sentence chrF of `hypothesis` against its `references`, on the 0–100 scale: sacrebleu's
/// `sentence_chrf` (`CHRF()` defaults — char order 6, word order 0, β = 2, whitespace
/// removed, case-sensitive, no eps smoothing). With several references the best one counts.
/// No references, or no characters on either side, gives 0.
pub fn chrf(hypothesis: &str, references: &[&str]) -> f64 {
    f_score(&segment_stats(hypothesis, references))
}

/// Corpus chrF: the statistics of each segment (against its best reference) are summed
/// before the F-score, as sacrebleu's `corpus_chrf`. `references[i]` holds every reference
/// of `hypotheses[i]`; missing reference lists count as none.
pub fn corpus_chrf(hypotheses: &[&str], references: &[Vec<&str>]) -> f64 {
    let mut total: Stats = [[0; 3]; CHRF_CHAR_ORDER];
    for (i, hypothesis) in hypotheses.iter().enumerate() {
        let refs = references.get(i).map_or(&[][..], Vec::as_slice);
        let stats = segment_stats(hypothesis, refs);
        for (sum, order) in total.iter_mut().zip(stats) {
            for (s, v) in sum.iter_mut().zip(order) {
                *s += v;
            }
        }
    }
    f_score(&total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::tokenize::random_text;

    #[test]
    fn identical_and_disjoint() {
        assert!((chrf("the cat sat", &["the cat sat"]) - 100.0).abs() < 1e-9);
        assert!((chrf("北京大学", &["北京大学"]) - 100.0).abs() < 1e-9);
        assert_eq!(chrf("abc", &["xyz"]), 0.0);
        // Whitespace does not count.
        assert!((chrf("thecat", &["the cat"]) - 100.0).abs() < 1e-9);
    }

    #[test]
    fn best_reference_wins() {
        let single = chrf("the cat sat", &["the cat sat"]);
        assert_eq!(chrf("the cat sat", &["a dog ran", "the cat sat"]), single);
    }

    #[test]
    fn empty_inputs() {
        assert_eq!(chrf("", &[""]), 0.0);
        assert_eq!(chrf("abc", &[]), 0.0);
        assert_eq!(chrf("", &["abc"]), 0.0);
        assert_eq!(corpus_chrf(&[], &[]), 0.0);
        assert_eq!(corpus_chrf(&["abc"], &[]), 0.0);
    }

    #[test]
    fn corpus_sums_statistics() {
        let score = corpus_chrf(&["the cat", "a dog"], &[vec!["the cat"], vec!["a dog"]]);
        assert!((score - 100.0).abs() < 1e-9);
    }

    #[test]
    fn properties_on_random_texts() {
        let mut rng = crate::stats::SplitMix64::new(3);
        for _ in 0..300 {
            let (a, b) = (random_text(&mut rng), random_text(&mut rng));
            let score = chrf(&a, &[&b]);
            assert!((0.0..=100.0).contains(&score), "{a:?} {b:?} {score}");
            let has_chars = a.chars().any(|c| !is_python_space(c));
            let same = chrf(&a, &[&a]);
            if has_chars {
                assert!((same - 100.0).abs() < 1e-9, "{a:?} {same}");
            } else {
                assert_eq!(same, 0.0);
            }
            // Adding the identical text as a second reference can only help.
            assert!(chrf(&a, &[&b, &a]) >= score);
        }
    }
}
