//! Content words and how much of one text another covers — the measurement every lexical
//! heuristic verdict rests on.
//!
//! Content words are [`words`] (lower-cased; Han text segmented by jieba) minus stop words,
//! with English inflections folded by a light suffix rule (`launched`, `launching` →
//! `launch`; `studies` → `study`). A Chinese word also counts as present when it occurs
//! anywhere in the other text, because jieba may cut the same characters differently in two
//! texts (`数据分析` against `数据` + `分析`).

use std::collections::HashSet;

use rageval_core::text::language::is_han;
use rageval_core::text::words;

use super::stopwords::is_stop_word;

/// The content words of `text`, each once, in order of first appearance.
pub(crate) fn content_words(text: &str) -> Vec<String> {
    let mut seen = HashSet::new();
    words(text)
        .into_iter()
        .filter(|word| !is_stop_word(word))
        .map(|word| fold_inflection(&word))
        .filter(|word| seen.insert(word.clone()))
        .collect()
}

/// Folds common English inflections of an ASCII word; other words are returned as they are.
fn fold_inflection(word: &str) -> String {
    if word.len() < 4 || !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return word.to_owned();
    }
    if let Some(stem) = word.strip_suffix("ies").filter(|s| s.len() >= 2) {
        return format!("{stem}y");
    }
    for suffix in ["ing", "ed"] {
        if let Some(stem) = word.strip_suffix(suffix) {
            if stem.len() >= 3 {
                return stem.to_owned();
            }
        }
    }
    if word.ends_with('s')
        && !(word.ends_with("ss") || word.ends_with("us") || word.ends_with("is"))
    {
        return word[..word.len() - 1].to_owned();
    }
    word.to_owned()
}

/// Whether a token is (or holds) a number: numbers carry the facts a heuristic must not
/// wave through (dates, counts, amounts).
pub(crate) fn is_number(word: &str) -> bool {
    word.chars().any(|c| c.is_ascii_digit())
}

fn is_han_word(word: &str) -> bool {
    word.chars().any(is_han)
}

/// A text prepared for lookups: its content words and its lower-cased text.
#[derive(Debug, Clone)]
pub(crate) struct Material {
    words: HashSet<String>,
    lower: String,
}

impl Material {
    pub(crate) fn new(text: &str) -> Self {
        Material {
            words: content_words(text).into_iter().collect(),
            lower: text.to_lowercase(),
        }
    }

    /// Whether `word` (a content word of another text) appears here.
    pub(crate) fn contains(&self, word: &str) -> bool {
        self.words.contains(word) || (is_han_word(word) && self.lower.contains(word))
    }

    /// The share of `words` that appear here (0 when `words` is empty).
    pub(crate) fn coverage(&self, words: &[String]) -> f64 {
        share(
            words.iter().filter(|w| self.contains(w)).count(),
            words.len(),
        )
    }
}

/// `part / whole`, 0 when `whole` is 0.
pub(crate) fn share(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_go_and_inflections_fold() {
        assert_eq!(
            content_words("The mission was launched from the Space Centre"),
            ["mission", "launch", "space", "centre"]
        );
        assert_eq!(
            content_words("launching launches studies"),
            ["launch", "launche", "study"]
        );
        assert_eq!(
            content_words("少儿编程的市场规模是多少？"),
            ["少儿", "编程", "市场", "规模"]
        );
    }

    #[test]
    fn han_words_match_across_segmentations_and_latin_words_do_not_match_inside_others() {
        let context = Material::new("这份报告做了数据分析。A category of cats.");
        assert!(context.contains("数据"));
        assert!(context.contains("cat"));
        assert!(!context.contains("categ"));
        let statement = content_words("报告包含数据");
        assert_eq!(context.coverage(&statement), 2.0 / 3.0);
        assert_eq!(context.coverage(&[]), 0.0);
    }
}
