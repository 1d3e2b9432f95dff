//! The overlap measures the heuristic's rules share, as pure functions of the texts: the
//! share of a question's content words a context holds, the share of what an answer adds,
//! how focused a context is on the question, and phrase lookup. The rules themselves (each
//! with its named threshold) live in their tasks' files; the validation sweep reads these
//! same measures, so the rule it scores is the rule the judge applies.

use super::sentences::sentences;
use super::words::{Material, content_words, share};

/// The share of the question's content words found in `context` (0 when the question has
/// none): the overlap signal of the relevance-type verdicts.
pub(crate) fn question_overlap(question: &str, context: &str) -> f64 {
    question_coverage(question, &Material::new(context)).map_or(0.0, |(covered, _)| covered)
}

/// The share of a question's content words found in `context`, with how many words; `Err`
/// with the reason when the question has none.
pub(crate) fn question_coverage(
    question: &str,
    context: &Material,
) -> Result<(f64, usize), String> {
    let words = content_words(question);
    if words.is_empty() {
        return Err("the question has no content words to look up".into());
    }
    Ok((context.coverage(&words), words.len()))
}

/// The share of what the answer adds to the question (its content words that are not the
/// question's; all of them when it adds none) found in `context`, with how many words and
/// which kind; `Err` with the reason when the answer has no content words.
pub(crate) fn answer_overlap(
    question: &str,
    answer: &str,
    context: &str,
) -> Result<(f64, usize, &'static str), String> {
    let asked: Vec<String> = content_words(question);
    let all = content_words(answer);
    let added: Vec<String> = all.iter().filter(|w| !asked.contains(w)).cloned().collect();
    let (words, what) = if added.is_empty() {
        (all, "content words")
    } else {
        (added, "content words beyond the question")
    };
    if words.is_empty() {
        return Err("the answer has no content words to look up".into());
    }
    Ok((Material::new(context).coverage(&words), words.len(), what))
}

/// The first of `phrases` (lower-cased) that `text` contains, if any.
pub(crate) fn first_phrase(text: &str, phrases: &[&'static str]) -> Option<&'static str> {
    let lower = text.to_lowercase();
    phrases.iter().copied().find(|p| lower.contains(p))
}

/// The share of a context's sentences that mention a question word: how focused it is.
pub(crate) fn focus(words: &[String], context: &str) -> f64 {
    let sentences = sentences(context);
    let on_topic = sentences
        .iter()
        .filter(|s| {
            let m = Material::new(s);
            words.iter().any(|w| m.contains(w))
        })
        .count();
    share(on_topic, sentences.len())
}
