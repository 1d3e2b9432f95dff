//! Long premises in overlapping windows, and one claim's score over them. Pure arithmetic
//! on token offsets and probabilities: no tokenizer, no model.
//!
//! Why the maximum: a claim is supported when some passage states it. A window that lacks
//! the evidence says "not supported" only because the evidence lies elsewhere, so a
//! minimum or a mean over windows would punish long contexts for their length. The overlap
//! lets evidence that straddles a window's edge be read whole in the next window. For a
//! token head the same rule holds per token: each claim token keeps its lowest
//! hallucination probability over the windows (the union of supported spans), and the
//! claim is as supported as its least supported token.

use std::ops::Range;

/// Tokens shared by neighbouring windows, at most; a quarter of the window when that is less.
pub const OVERLAP_TOKENS: usize = 64;

/// A claim token is reported as unsupported at or above this probability of being
/// hallucinated (LettuceDetect's threshold).
pub const SPAN_THRESHOLD: f64 = 0.5;

/// Byte ranges of `text` whose tokens (by their byte `offsets`) fill windows of at most
/// `budget` tokens, neighbours sharing `overlap` tokens. No tokens, no window.
pub fn windows(offsets: &[(usize, usize)], budget: usize, overlap: usize) -> Vec<Range<usize>> {
    let budget = budget.max(1);
    let step = budget.saturating_sub(overlap).max(1);
    let mut ranges = Vec::new();
    let mut start = 0;
    while start < offsets.len() {
        let end = (start + budget).min(offsets.len());
        ranges.push(offsets[start].0..offsets[end - 1].1);
        if end == offsets.len() {
            break;
        }
        start += step;
    }
    ranges
}

/// The overlap for windows of `budget` tokens.
pub fn overlap_for(budget: usize) -> usize {
    OVERLAP_TOKENS.min(budget / 4)
}

/// What one window said about the claim.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowScore {
    /// The context the window was cut from.
    pub context: usize,
    /// P(supported) of the claim in this window.
    pub support: f64,
    /// Per claim token, P(hallucinated) (token heads only).
    pub hallucinated: Option<Vec<f64>>,
}

/// A claim's score over every window.
#[derive(Debug, Clone, PartialEq)]
pub struct Combined {
    /// P(supported): the best window's (sequence heads), or one minus the highest of the
    /// tokens' lowest hallucination probabilities (token heads).
    pub support: f64,
    /// The context of the window that supported it best.
    pub context: Option<usize>,
    /// Per claim token, its lowest P(hallucinated) over the windows (token heads only).
    pub hallucinated: Option<Vec<f64>>,
}

/// Combines the windows' scores (see the module's doc for why the maximum). `None` without
/// windows.
pub fn combine(scores: &[WindowScore]) -> Option<Combined> {
    let best = scores
        .iter()
        .max_by(|a, b| a.support.total_cmp(&b.support))?;
    let hallucinated = scores
        .iter()
        .any(|s| s.hallucinated.is_some())
        .then(|| token_minimum(scores));
    let support = match &hallucinated {
        Some(tokens) => 1.0 - tokens.iter().copied().fold(0.0, f64::max),
        None => best.support,
    };
    Some(Combined {
        support,
        context: Some(best.context),
        hallucinated,
    })
}

/// Per token, the lowest P(hallucinated) over the windows that scored tokens.
fn token_minimum(scores: &[WindowScore]) -> Vec<f64> {
    let mut lowest: Vec<f64> = Vec::new();
    for tokens in scores.iter().filter_map(|s| s.hallucinated.as_ref()) {
        if lowest.is_empty() {
            lowest = tokens.clone();
        } else {
            for (low, &p) in lowest.iter_mut().zip(tokens) {
                *low = low.min(p);
            }
        }
    }
    lowest
}

/// The claim's unsupported spans: the tokens at or above [`SPAN_THRESHOLD`] (by their byte
/// `offsets` in `claim`), each widened to the whole words it touches so that a reader sees
/// words rather than word pieces, overlapping or touching spans joined.
pub fn unsupported_spans(
    claim: &str,
    offsets: &[(usize, usize)],
    hallucinated: &[f64],
) -> Vec<String> {
    let mut spans: Vec<Range<usize>> = Vec::new();
    for (&(start, end), &p) in offsets.iter().zip(hallucinated) {
        // Byte-level tokens carry the space before them: the word starts after it.
        let Some(piece) = claim
            .get(start..end)
            .filter(|piece| !piece.trim().is_empty())
        else {
            continue;
        };
        if p < SPAN_THRESHOLD {
            continue;
        }
        let start = start + (piece.len() - piece.trim_start().len());
        let end = end - (piece.len() - piece.trim_end().len());
        let word = widen_to_words(claim, start..end);
        match spans.last_mut() {
            Some(last)
                if word.start <= last.end
                    || claim
                        .get(last.end..word.start)
                        .is_some_and(|gap| gap.trim().is_empty()) =>
            {
                last.end = last.end.max(word.end);
            }
            _ => spans.push(word),
        }
    }
    spans
        .into_iter()
        .filter_map(|range| claim.get(range))
        .map(|text| text.trim().to_owned())
        .filter(|text| !text.is_empty())
        .collect()
}

/// `range` of `text` (on character boundaries) grown to the whitespace on either side.
fn widen_to_words(text: &str, range: Range<usize>) -> Range<usize> {
    let start = text[..range.start]
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
        .map_or(0, |(i, c)| i + c.len_utf8());
    let end = text[range.end..]
        .char_indices()
        .find(|(_, c)| c.is_whitespace())
        .map_or(text.len(), |(i, _)| range.end + i);
    start.min(range.start)..end.max(range.end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offsets(n: usize) -> Vec<(usize, usize)> {
        (0..n).map(|i| (i * 2, i * 2 + 1)).collect()
    }

    #[test]
    fn windows_cover_every_token_and_share_the_overlap() {
        assert_eq!(windows(&offsets(10), 4, 1), [0..7, 6..13, 12..19]);
        assert_eq!(windows(&offsets(3), 4, 1), vec![Range { start: 0, end: 5 }]);
        assert!(windows(&[], 4, 1).is_empty());
        // An overlap as large as the window still moves on.
        assert_eq!(windows(&offsets(3), 2, 5), [0..3, 2..5]);
        assert_eq!(overlap_for(512), 64);
        assert_eq!(overlap_for(40), 10);
    }

    #[test]
    fn a_claim_takes_its_best_window() {
        let score = |context, support| WindowScore {
            context,
            support,
            hallucinated: None,
        };
        let combined = combine(&[score(0, 0.2), score(1, 0.9), score(1, 0.4)]).unwrap();
        assert_eq!((combined.support, combined.context), (0.9, Some(1)));
        assert!(combine(&[]).is_none());
    }

    #[test]
    fn token_heads_keep_each_tokens_best_window() {
        let score = |context, tokens: Vec<f64>| WindowScore {
            context,
            support: 1.0 - tokens.iter().copied().fold(0.0, f64::max),
            hallucinated: Some(tokens),
        };
        // Each window backs half the claim; together they back all of it.
        let combined = combine(&[score(0, vec![0.1, 0.9]), score(1, vec![0.8, 0.2])]).unwrap();
        assert_eq!(combined.hallucinated.as_deref(), Some(&[0.1, 0.2][..]));
        assert!((combined.support - 0.8).abs() < 1e-12);
    }

    #[test]
    fn spans_join_neighbouring_unsupported_tokens() {
        let claim = "It was finished in 1890 by Eiffel.";
        let offsets = [
            (0, 2),
            (2, 6),
            (6, 15),
            (15, 18),
            (18, 23),
            (23, 26),
            (26, 33),
            (33, 34),
        ];
        let p = [0.1, 0.1, 0.2, 0.6, 0.9, 0.1, 0.7, 0.1];
        assert_eq!(
            unsupported_spans(claim, &offsets, &p),
            ["in 1890", "Eiffel."]
        );
        // Word pieces are shown as the words they belong to.
        let pieces = [(0, 2), (2, 6), (6, 10), (10, 15)];
        assert_eq!(
            unsupported_spans(claim, &pieces, &[0.1, 0.1, 0.9, 0.1]),
            ["finished"]
        );
        assert_eq!(
            unsupported_spans(claim, &pieces, &[0.9, 0.1, 0.9, 0.9]),
            ["It", "finished"]
        );
    }
}
