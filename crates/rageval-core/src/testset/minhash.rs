//! Duplicate questions in a generated set: exact duplicates (the same words, whatever the
//! case and punctuation) and near duplicates by MinHash over word shingles.
//!
//! Words come from [`crate::text::words`] (jieba for Chinese), shingles are pairs of
//! neighbouring words (single words for a one-word text), and the MinHash signature estimates
//! the Jaccard similarity of two shingle sets (Broder 1997): the share of hash functions
//! whose minimum over both sets is the same. This module judges wording only, never meaning.

use serde::{Deserialize, Serialize};

use crate::text::words;

/// Hash functions per signature: the estimate's standard error is about
/// `sqrt(J(1-J)/SIGNATURE_SIZE)`, 0.05 at J = 0.8.
pub const SIGNATURE_SIZE: usize = 64;
/// Estimated Jaccard similarity from which two questions count as near duplicates.
pub const DEFAULT_NEAR_DUPLICATE: f64 = 0.7;

/// The MinHash signature of a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature(Vec<u64>);

impl Signature {
    /// The signature of `text`'s word shingles (empty text: every slot `u64::MAX`).
    pub fn of(text: &str) -> Signature {
        let mut minimum = vec![u64::MAX; SIGNATURE_SIZE];
        for shingle in shingles(&words(text)) {
            let base = fnv1a(shingle.as_bytes());
            for (slot, seed) in minimum.iter_mut().zip(SEEDS.iter()) {
                *slot = (*slot).min(mix(base ^ seed));
            }
        }
        Signature(minimum)
    }

    /// The estimated Jaccard similarity of the two texts' shingle sets, in [0, 1].
    pub fn similarity(&self, other: &Signature) -> f64 {
        let same = self.0.iter().zip(&other.0).filter(|(a, b)| a == b).count();
        same as f64 / SIGNATURE_SIZE as f64
    }
}

/// Pairs of neighbouring words, or the single word of a one-word text.
fn shingles(words: &[String]) -> Vec<String> {
    if words.len() < 2 {
        return words.to_vec();
    }
    words
        .windows(2)
        .map(|pair| format!("{}\u{1f}{}", pair[0], pair[1]))
        .collect()
}

/// The key two exact duplicates share: their words, lower-cased, without punctuation.
pub fn exact_key(text: &str) -> String {
    words(text).join(" ")
}

/// What a question duplicates, if anything.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Duplicate {
    /// The same words as the item `of`.
    Exact { of: String },
    /// Estimated similarity at least the threshold to the item `of`.
    Near { of: String, similarity: f64 },
}

/// Keeps the first of every group of duplicates, in the order texts are offered.
#[derive(Debug, Clone)]
pub struct Deduplicator {
    threshold: f64,
    kept: Vec<(String, String, Signature)>,
}

impl Deduplicator {
    /// Near duplicates from an estimated similarity of `threshold`.
    pub fn new(threshold: f64) -> Self {
        Deduplicator {
            threshold,
            kept: Vec::new(),
        }
    }

    /// Whether `text` duplicates a text kept earlier; if not, it is kept under `id`.
    pub fn offer(&mut self, id: &str, text: &str) -> Option<Duplicate> {
        let key = exact_key(text);
        let signature = Signature::of(text);
        let mut nearest: Option<(&str, f64)> = None;
        for (kept_id, kept_key, kept_signature) in &self.kept {
            if *kept_key == key {
                return Some(Duplicate::Exact {
                    of: kept_id.clone(),
                });
            }
            let similarity = signature.similarity(kept_signature);
            if similarity >= self.threshold && nearest.is_none_or(|(_, best)| similarity > best) {
                nearest = Some((kept_id, similarity));
            }
        }
        if let Some((of, similarity)) = nearest {
            return Some(Duplicate::Near {
                of: of.to_owned(),
                similarity,
            });
        }
        self.kept.push((id.to_owned(), key, signature));
        None
    }
}

/// FNV-1a, 64 bits: a fixed hash, so signatures are equal on every platform and version.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// SplitMix64's finaliser: one hash function per seed.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seeds of the hash functions: SplitMix64's stream from 0.
static SEEDS: std::sync::LazyLock<Vec<u64>> = std::sync::LazyLock::new(|| {
    let mut generator = crate::stats::SplitMix64::new(0);
    (0..SIGNATURE_SIZE).map(|_| generator.next_u64()).collect()
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_texts_have_similarity_one_and_unrelated_texts_near_zero() {
        let a = Signature::of("少儿编程教育的市场规模在2023年达到了多少？");
        assert_eq!(a.similarity(&a), 1.0);
        let b = Signature::of("What is the capital city of France and its population?");
        assert!(a.similarity(&b) < 0.1);
    }

    #[test]
    fn exact_duplicates_ignore_case_and_punctuation() {
        let mut dedup = Deduplicator::new(DEFAULT_NEAR_DUPLICATE);
        assert_eq!(dedup.offer("1", "What is Scratch?"), None);
        assert_eq!(
            dedup.offer("2", "what is scratch"),
            Some(Duplicate::Exact { of: "1".into() })
        );
    }

    #[test]
    fn a_one_word_change_in_a_long_question_is_a_near_duplicate() {
        let mut dedup = Deduplicator::new(DEFAULT_NEAR_DUPLICATE);
        let first = "Which programming languages do children learn first in the kids coding \
                     courses described by the market report of 2024";
        let second = "Which programming languages do children learn first in the kids coding \
                      courses described by the market report of 2023";
        assert_eq!(dedup.offer("a", first), None);
        match dedup.offer("b", second) {
            Some(Duplicate::Near { of, similarity }) => {
                assert_eq!(of, "a");
                assert!((DEFAULT_NEAR_DUPLICATE..1.0).contains(&similarity));
            }
            other => panic!("not a near duplicate: {other:?}"),
        }
        assert_eq!(
            dedup.offer("c", "How much does a course cost per year?"),
            None
        );
    }
}
