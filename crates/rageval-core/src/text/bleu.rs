//! BLEU (Papineni et al. 2002) with sacrebleu's definitions and defaults (Post 2018).
//!
//! Corpus BLEU sums n-gram statistics over all segments before taking the geometric mean;
//! sentence BLEU is corpus BLEU of one segment with effective order on. Unlike ragas, which
//! splits the texts on `". "` and, by passing the pieces as reference streams, scores only
//! the first sentence of the response, [`sentence_bleu`] scores the whole text.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::language::{Language, detect_language};
use super::tokenize::{tokenize_13a, tokenize_zh, words};

/// Highest n-gram order (sacrebleu's default, 4).
pub const MAX_NGRAM_ORDER: usize = 4;

/// How BLEU splits text into tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BleuTokenizer {
    /// sacrebleu's `13a` (mteval-v13a), the WMT standard and sacrebleu's default:
    /// case-sensitive, punctuation split off, Chinese left unsegmented.
    Mteval13a,
    /// sacrebleu's `zh`: every character in sacrebleu's CJK ranges is its own token, the
    /// rest as `13a`.
    Zh,
    /// rageval's [`words`]: lower-cased, punctuation dropped, Han segmented with jieba into
    /// words rather than single characters.
    Jieba,
    /// [`BleuTokenizer::Jieba`] when the references (or, with none, the hypotheses),
    /// joined, are detected as [`Language::Chinese`], else [`BleuTokenizer::Mteval13a`].
    /// Decided once per call so every segment of a corpus is tokenised alike.
    Auto,
}

impl BleuTokenizer {
    /// The tokeniser actually used for `texts`: [`BleuTokenizer::Auto`] resolved (detection
    /// on the texts joined), any other variant unchanged. [`corpus_bleu`] and
    /// [`sentence_bleu`] pass the references; callers can do the same to record what `Auto`
    /// chose.
    pub fn resolve<'a>(self, texts: impl IntoIterator<Item = &'a str>) -> BleuTokenizer {
        if self != BleuTokenizer::Auto {
            return self;
        }
        let joined: Vec<&str> = texts.into_iter().collect();
        if detect_language(&joined.join("\n")) == Language::Chinese {
            BleuTokenizer::Jieba
        } else {
            BleuTokenizer::Mteval13a
        }
    }

    /// Tokens of one segment. sacrebleu strips trailing whitespace before tokenising.
    fn tokens(self, segment: &str) -> Vec<String> {
        let segment = segment.trim_end_matches(super::tokenize::is_python_space);
        match self {
            BleuTokenizer::Mteval13a | BleuTokenizer::Auto => tokenize_13a(segment),
            BleuTokenizer::Zh => tokenize_zh(segment),
            BleuTokenizer::Jieba => words(segment),
        }
    }
}

/// A BLEU score and the statistics behind it, as sacrebleu's `BLEUScore` reports them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bleu {
    /// BLEU on sacrebleu's 0–100 scale.
    pub score: f64,
    /// Modified n-gram precisions for n = 1..4, in percent (after smoothing).
    pub precisions: [f64; MAX_NGRAM_ORDER],
    /// `exp(1 − ref_len / hyp_len)` when the hypothesis is shorter, else 1.
    pub brevity_penalty: f64,
    /// Hypothesis tokens, summed over segments.
    pub hyp_len: usize,
    /// Closest reference lengths, summed over segments.
    pub ref_len: usize,
}

/// Sufficient statistics of one or more segments.
#[derive(Debug, Default, Clone, Copy)]
struct Stats {
    hyp_len: usize,
    ref_len: usize,
    correct: [usize; MAX_NGRAM_ORDER],
    total: [usize; MAX_NGRAM_ORDER],
}

impl Stats {
    fn add(&mut self, other: &Stats) {
        self.hyp_len += other.hyp_len;
        self.ref_len += other.ref_len;
        for n in 0..MAX_NGRAM_ORDER {
            self.correct[n] += other.correct[n];
            self.total[n] += other.total[n];
        }
    }
}

/// Counts of every n-gram of order 1..=4.
fn ngram_counts(tokens: &[String]) -> HashMap<&[String], usize> {
    let mut counts = HashMap::new();
    for n in 1..=MAX_NGRAM_ORDER {
        for gram in tokens.windows(n) {
            *counts.entry(gram).or_insert(0) += 1;
        }
    }
    counts
}

/// The reference length closest to `hyp_len`, the shorter one on ties (sacrebleu's rule).
fn closest_ref_len(hyp_len: usize, ref_lens: &[usize]) -> usize {
    ref_lens
        .iter()
        .copied()
        .min_by_key(|&len| (len.abs_diff(hyp_len), len))
        .unwrap_or(0)
}

/// Statistics of one hypothesis against its references: each n-gram's count is clipped
/// to its largest count in any single reference.
fn segment_stats(hypothesis: &[String], references: &[Vec<String>]) -> Stats {
    let mut max_ref_counts: HashMap<&[String], usize> = HashMap::new();
    for reference in references {
        for (gram, count) in ngram_counts(reference) {
            let entry = max_ref_counts.entry(gram).or_insert(0);
            *entry = (*entry).max(count);
        }
    }
    let ref_lens: Vec<usize> = references.iter().map(Vec::len).collect();
    let mut stats = Stats {
        hyp_len: hypothesis.len(),
        ref_len: closest_ref_len(hypothesis.len(), &ref_lens),
        ..Stats::default()
    };
    for (gram, count) in ngram_counts(hypothesis) {
        let n = gram.len() - 1;
        stats.total[n] += count;
        if let Some(&ref_count) = max_ref_counts.get(gram) {
            stats.correct[n] += count.min(ref_count);
        }
    }
    stats
}

/// sacrebleu's `my_log`: the logarithm, with a huge negative stand-in for log 0.
fn log_or_floor(x: f64) -> f64 {
    if x == 0.0 { -9_999_999_999.0 } else { x.ln() }
}

/// sacrebleu's `compute_bleu` with `exp` smoothing (NIST's: the k-th order with no match
/// gets precision `100 / (2^k · total)`).
fn score_from_stats(stats: &Stats, effective_order: bool) -> Bleu {
    let (hyp_len, ref_len) = (stats.hyp_len, stats.ref_len);
    let brevity_penalty = if hyp_len < ref_len {
        if hyp_len > 0 {
            (1.0 - ref_len as f64 / hyp_len as f64).exp()
        } else {
            0.0
        }
    } else {
        1.0
    };
    let mut precisions = [0.0; MAX_NGRAM_ORDER];
    let zero = Bleu {
        score: 0.0,
        precisions,
        brevity_penalty,
        hyp_len,
        ref_len,
    };
    if stats.correct.iter().all(|&c| c == 0) {
        return zero;
    }
    let mut smooth = 1.0;
    let mut order = MAX_NGRAM_ORDER;
    for (n, precision) in precisions.iter_mut().enumerate() {
        let (correct, total) = (stats.correct[n], stats.total[n]);
        if total == 0 {
            break;
        }
        if effective_order {
            order = n + 1;
        }
        *precision = if correct == 0 {
            smooth *= 2.0;
            100.0 / (smooth * total as f64)
        } else {
            100.0 * correct as f64 / total as f64
        };
    }
    let log_sum: f64 = precisions[..order].iter().map(|&p| log_or_floor(p)).sum();
    Bleu {
        score: brevity_penalty * (log_sum / order as f64).exp(),
        precisions,
        ..zero
    }
}

/// Corpus BLEU with sacrebleu's `corpus_bleu` defaults: 4-grams, `exp` smoothing, effective
/// order off, closest reference length, case-sensitive (except [`BleuTokenizer::Jieba`]).
///
/// `references[i]` holds every reference for `hypotheses[i]` (one list per segment, any
/// number each) — the transpose of sacrebleu's reference streams. A hypothesis with no
/// references still counts its n-grams and length, with reference length 0; references
/// beyond the last hypothesis are ignored.
///
/// `score = BP · exp(Σₙ log pₙ / 4)` with `pₙ` the clipped n-gram precision summed over the
/// corpus and `BP = exp(1 − r/c)` when the corpus is shorter than its references.
pub fn corpus_bleu(
    hypotheses: &[&str],
    references: &[Vec<&str>],
    tokenizer: BleuTokenizer,
) -> Bleu {
    let tokenizer = if references.iter().any(|refs| !refs.is_empty()) {
        tokenizer.resolve(references.iter().flatten().copied())
    } else {
        tokenizer.resolve(hypotheses.iter().copied())
    };
    let mut stats = Stats::default();
    for (i, hypothesis) in hypotheses.iter().enumerate() {
        let refs: Vec<Vec<String>> = references
            .get(i)
            .map(|refs| refs.iter().map(|r| tokenizer.tokens(r)).collect())
            .unwrap_or_default();
        stats.add(&segment_stats(&tokenizer.tokens(hypothesis), &refs));
    }
    score_from_stats(&stats, false)
}

/// Sentence BLEU with sacrebleu's `sentence_bleu` defaults: as [`corpus_bleu`] on the one
/// segment, with effective order on (orders the hypothesis is too short to have are left
/// out of the geometric mean). The whole hypothesis is scored, every sentence of it.
pub fn sentence_bleu(hypothesis: &str, references: &[&str], tokenizer: BleuTokenizer) -> Bleu {
    let tokenizer = if references.is_empty() {
        tokenizer.resolve(std::iter::once(hypothesis))
    } else {
        tokenizer.resolve(references.iter().copied())
    };
    let refs: Vec<Vec<String>> = references.iter().map(|r| tokenizer.tokens(r)).collect();
    score_from_stats(&segment_stats(&tokenizer.tokens(hypothesis), &refs), true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::tokenize::random_text;

    #[test]
    fn identical_text_scores_100() {
        let text = "The cat sat on the mat.";
        let bleu = sentence_bleu(text, &[text], BleuTokenizer::Mteval13a);
        assert!((bleu.score - 100.0).abs() < 1e-9);
        assert_eq!(bleu.brevity_penalty, 1.0);
        assert_eq!((bleu.hyp_len, bleu.ref_len), (7, 7));
    }

    /// ragas's BLEU scores only the first response sentence; ours scores them all.
    #[test]
    fn regression_ragas_bleu_first_sentence_only() {
        let reference = "The cat sat on the big mat. A dog barked loudly at night.";
        let response = "The cat sat on the big mat. Foo bar baz qux lorem ipsum.";
        let bleu = sentence_bleu(response, &[reference], BleuTokenizer::Mteval13a);
        assert!(bleu.score > 10.0 && bleu.score < 90.0, "{bleu:?}");
        // Two short sentences: ragas got 0 because the first has no 4-gram.
        let text = "The cat sat. The dog ran.";
        assert!(
            (sentence_bleu(text, &[text], BleuTokenizer::Mteval13a).score - 100.0).abs() < 1e-9
        );
    }

    #[test]
    fn empty_inputs_do_not_panic() {
        for tokenizer in [
            BleuTokenizer::Mteval13a,
            BleuTokenizer::Zh,
            BleuTokenizer::Jieba,
            BleuTokenizer::Auto,
        ] {
            assert_eq!(sentence_bleu("", &[""], tokenizer).score, 0.0);
            assert_eq!(sentence_bleu("a b", &[], tokenizer).score, 0.0);
            assert_eq!(corpus_bleu(&[], &[], tokenizer).score, 0.0);
            assert_eq!(corpus_bleu(&["x y"], &[], tokenizer).score, 0.0);
            assert_eq!(
                sentence_bleu("", &["a b c"], tokenizer).brevity_penalty,
                0.0
            );
        }
    }

    #[test]
    fn auto_uses_jieba_for_chinese() {
        let (hyp, reference) = ("我来到北京清华大学", "我来到北京清华大学");
        let auto = sentence_bleu(hyp, &[reference], BleuTokenizer::Auto);
        assert_eq!(auto, sentence_bleu(hyp, &[reference], BleuTokenizer::Jieba));
        assert_eq!(auto.hyp_len, 4);
        let english = sentence_bleu("a b c d", &["a b c d"], BleuTokenizer::Auto);
        assert_eq!(
            english,
            sentence_bleu("a b c d", &["a b c d"], BleuTokenizer::Mteval13a)
        );
    }

    #[test]
    fn closest_reference_length_prefers_shorter_on_ties() {
        assert_eq!(closest_ref_len(5, &[3, 7]), 3);
        assert_eq!(closest_ref_len(5, &[7, 3, 6]), 6);
        assert_eq!(closest_ref_len(5, &[]), 0);
    }

    #[test]
    fn properties_on_random_texts() {
        let mut rng = crate::stats::SplitMix64::new(13);
        let tokenizers = [
            BleuTokenizer::Mteval13a,
            BleuTokenizer::Zh,
            BleuTokenizer::Jieba,
            BleuTokenizer::Auto,
        ];
        for _ in 0..200 {
            let (a, b) = (random_text(&mut rng), random_text(&mut rng));
            for tokenizer in tokenizers {
                let bleu = sentence_bleu(&a, &[&b], tokenizer);
                assert!((0.0..=100.0).contains(&bleu.score), "{a:?} {b:?} {bleu:?}");
                assert!((0.0..=1.0).contains(&bleu.brevity_penalty));
                let same = sentence_bleu(&a, &[&a], tokenizer);
                let expected = if same.hyp_len > 0 { 100.0 } else { 0.0 };
                assert!(
                    (same.score - expected).abs() < 1e-9,
                    "{tokenizer:?} {a:?} {same:?}"
                );
                let corpus = corpus_bleu(&[&a, &b], &[vec![&b], vec![&a]], tokenizer);
                assert!((0.0..=100.0).contains(&corpus.score));
            }
        }
    }
}
