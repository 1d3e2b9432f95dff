//! Character-level string distances and their normalised similarities, with rapidfuzz's
//! definitions (the library behind ragas's `NonLLMStringSimilarity`).
//!
//! Every function counts Unicode scalar values (Rust `char`s, Python code points), is
//! case-sensitive and normalises nothing: callers that want case-folding do it first.
//! Similarities lie in `[0, 1]` and two empty strings are identical (1.0).

/// The most character pairs one comparison of two texts may take ([`too_long_to_compare`]):
/// 10⁸, e.g. two texts of 10,000 characters. Levenshtein, Jaro and ROUGE-L cost time in
/// the product of the lengths; two texts of 200,000 characters took 1,900 s (issue 40),
/// and a stop (Ctrl-C, SIGTERM) waits for the comparison in flight.
pub const MAX_CHARACTER_PAIRS: u64 = 100_000_000;

/// Why `a` and `b` are too long to compare by a measure whose time grows with the product
/// of their lengths (over [`MAX_CHARACTER_PAIRS`]), or `None` when they are not: the
/// caller's cell is `undefined` with this reason, never an hour of CPU.
pub fn too_long_to_compare(a: &str, b: &str) -> Option<String> {
    let (len_a, len_b) = (a.chars().count() as u64, b.chars().count() as u64);
    (len_a.saturating_mul(len_b) > MAX_CHARACTER_PAIRS).then(|| {
        format!(
            "texts of {len_a} and {len_b} characters are too long to compare: over the \
             {MAX_CHARACTER_PAIRS} character pairs one comparison may take (e.g. 10000 × 10000)"
        )
    })
}

/// Levenshtein distance between `a` and `b`: the fewest insertions, deletions and
/// substitutions of single characters (unit costs) that turn one into the other.
///
/// Classic two-row dynamic programme (Wagner & Fischer 1974), O(|a|·|b|) time and
/// O(min) memory after stripping the common prefix and suffix, which cannot change the
/// distance.
pub fn levenshtein_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let (a, b) = (&a[prefix..], &b[prefix..]);
    let suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (a, b) = (&a[..a.len() - suffix], &b[..b.len() - suffix]);
    // Keep the shorter string along the row so memory is O(min(|a|, |b|)).
    let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    if short.is_empty() {
        return long.len();
    }
    let mut previous: Vec<usize> = (0..=short.len()).collect();
    let mut current = vec![0; short.len() + 1];
    for (i, &lc) in long.iter().enumerate() {
        current[0] = i + 1;
        for (j, &sc) in short.iter().enumerate() {
            let substitution = previous[j] + usize::from(lc != sc);
            let deletion = previous[j + 1] + 1;
            let insertion = current[j] + 1;
            current[j + 1] = substitution.min(deletion).min(insertion);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[short.len()]
}

/// Normalised Levenshtein similarity: `1 − distance / max(|a|, |b|)`; 1.0 when both are
/// empty. This is rapidfuzz's `Levenshtein.normalized_similarity` with unit weights.
pub fn levenshtein_similarity(a: &str, b: &str) -> f64 {
    let longest = a.chars().count().max(b.chars().count());
    if longest == 0 {
        return 1.0;
    }
    1.0 - levenshtein_distance(a, b) as f64 / longest as f64
}

/// Normalised Hamming similarity with rapidfuzz's padding for unequal lengths
/// (`Hamming.normalized_similarity(a, b, pad=True)`): the distance is the number of
/// positions where the characters differ over the shorter length plus the difference in
/// lengths, and the similarity is `1 − distance / max(|a|, |b|)`; 1.0 when both are empty.
pub fn hamming_similarity(a: &str, b: &str) -> f64 {
    let (len_a, len_b) = (a.chars().count(), b.chars().count());
    let longest = len_a.max(len_b);
    if longest == 0 {
        return 1.0;
    }
    let equal = a.chars().zip(b.chars()).filter(|(x, y)| x == y).count();
    let distance = longest - equal;
    1.0 - distance as f64 / longest as f64
}

/// Jaro similarity (Jaro 1989) as rapidfuzz computes it.
///
/// Two characters match when equal and no further apart than
/// `⌊max(|a|, |b|) / 2⌋ − 1` positions, each character matching at most once, greedily
/// from the left. With `m` matches and `t` the number of matched characters that appear in
/// a different order, halved (rounded down):
/// `sim = (m/|a| + m/|b| + (m − t)/m) / 3`, and 0 when `m = 0`. Both empty → 1.0; one
/// empty → 0.0; two single characters → 1.0 if equal else 0.0.
pub fn jaro_similarity(a: &str, b: &str) -> f64 {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    through_distance(jaro_chars(&a, &b))
}

fn jaro_chars(a: &[char], b: &[char]) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    // Also covers the single-character case, where the window would be negative.
    let window = (a.len().max(b.len()) / 2).saturating_sub(1);
    let mut a_matched = vec![false; a.len()];
    let mut b_matched = vec![false; b.len()];
    let mut matches = 0usize;
    for (i, &ca) in a.iter().enumerate() {
        let low = i.saturating_sub(window);
        let high = (i + window).min(b.len() - 1);
        if low > high {
            continue;
        }
        for j in low..=high {
            if !b_matched[j] && b[j] == ca {
                a_matched[i] = true;
                b_matched[j] = true;
                matches += 1;
                break;
            }
        }
    }
    if matches == 0 {
        return 0.0;
    }
    // Walk the matched characters of both strings in order and count disagreements.
    let a_in_order = a
        .iter()
        .zip(&a_matched)
        .filter(|(_, m)| **m)
        .map(|(c, _)| c);
    let b_in_order = b
        .iter()
        .zip(&b_matched)
        .filter(|(_, m)| **m)
        .map(|(c, _)| c);
    let half_transpositions = a_in_order.zip(b_in_order).filter(|(x, y)| x != y).count() / 2;
    let m = matches as f64;
    (m / a.len() as f64 + m / b.len() as f64 + (matches - half_transpositions) as f64 / m) / 3.0
}

/// rapidfuzz's `normalized_similarity` for Jaro is `1 − normalized_distance`, itself
/// `1 − similarity`, and ragas computes `1 − normalized_distance` too; the round trip can
/// move the last bit, so we take it as well and agree with both exactly.
fn through_distance(sim: f64) -> f64 {
    1.0 - (1.0 - sim)
}

/// Weight of each common-prefix character in [`jaro_winkler_similarity`].
pub const JARO_WINKLER_PREFIX_WEIGHT: f64 = 0.1;
/// Longest common prefix that [`jaro_winkler_similarity`] rewards.
pub const JARO_WINKLER_MAX_PREFIX: usize = 4;

/// Jaro–Winkler similarity (Winkler 1990) as rapidfuzz computes it: with `j` the
/// [`jaro_similarity`] and `ℓ` the length of the common prefix, capped at 4,
/// `j + ℓ · 0.1 · (1 − j)` when `j > 0.7`, else `j` (the boost threshold is rapidfuzz's).
pub fn jaro_winkler_similarity(a: &str, b: &str) -> f64 {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let jaro = jaro_chars(&a, &b);
    if jaro <= 0.7 {
        return through_distance(jaro);
    }
    let prefix = a
        .iter()
        .zip(&b)
        .take(JARO_WINKLER_MAX_PREFIX)
        .take_while(|(x, y)| x == y)
        .count();
    through_distance(jaro + prefix as f64 * JARO_WINKLER_PREFIX_WEIGHT * (1.0 - jaro))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::SplitMix64;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn textbook_values() {
        assert_eq!(levenshtein_distance("kitten", "sitting"), 3);
        assert_eq!(levenshtein_distance("", "abc"), 3);
        assert_eq!(levenshtein_distance("北京大学", "北京"), 2);
        assert!(close(
            levenshtein_similarity("kitten", "sitting"),
            1.0 - 3.0 / 7.0
        ));
        // Hamming with padding: k/s, e/i mismatch, plus one missing character.
        assert!(close(
            hamming_similarity("kitten", "sitting"),
            1.0 - 3.0 / 7.0
        ));
        // MARTHA/MARHTA: m = 6, t = 1 → (1 + 1 + 5/6) / 3; prefix 3.
        let jaro = (1.0 + 1.0 + 5.0 / 6.0) / 3.0;
        assert!(close(jaro_similarity("MARTHA", "MARHTA"), jaro));
        assert!(close(
            jaro_winkler_similarity("MARTHA", "MARHTA"),
            jaro + 0.3 * (1.0 - jaro)
        ));
    }

    #[test]
    fn edge_cases() {
        for f in [
            levenshtein_similarity,
            hamming_similarity,
            jaro_similarity,
            jaro_winkler_similarity,
        ] {
            assert_eq!(f("", ""), 1.0);
            assert_eq!(f("", "a"), 0.0);
            assert_eq!(f("a", ""), 0.0);
            assert_eq!(f("a", "a"), 1.0);
            assert_eq!(f("a", "b"), 0.0);
        }
    }

    fn random_string(rng: &mut SplitMix64) -> String {
        const ALPHABET: [char; 10] = ['a', 'b', 'c', 'é', '北', '京', ' ', '😀', '\u{301}', 'Z'];
        let len = rng.below(12);
        (0..len)
            .map(|_| ALPHABET[rng.below(ALPHABET.len())])
            .collect()
    }

    #[test]
    fn properties_on_random_strings() {
        let mut rng = SplitMix64::new(7);
        let sims: [fn(&str, &str) -> f64; 4] = [
            levenshtein_similarity,
            hamming_similarity,
            jaro_similarity,
            jaro_winkler_similarity,
        ];
        for _ in 0..2000 {
            let a = random_string(&mut rng);
            let b = random_string(&mut rng);
            for sim in sims {
                let s = sim(&a, &b);
                assert!((0.0..=1.0).contains(&s), "{a:?} {b:?} {s}");
                assert!(close(s, sim(&b, &a)), "symmetry {a:?} {b:?}");
                assert_eq!(sim(&a, &a), 1.0);
            }
            let d = levenshtein_distance(&a, &b);
            assert_eq!(d, levenshtein_distance(&b, &a));
            assert!(d <= a.chars().count().max(b.chars().count()));
        }
    }
}
