//! The lexical verdicts other than support (`support`), as pure functions of the texts:
//! each measures a share of content words, compares it with a named threshold and says
//! both in its reason. Contexts are numbered from 1 in reasons, as in the prompts; indices
//! in values are 0-based.

use super::words::{Material, content_words, share};
use super::{
    GRADE_BAND, NONCOMMITTAL, PAIRWISE_MARGIN, REFUSAL, RELEVANT_MIN, SIMILAR_OVERLAP, USEFUL_MIN,
};
use crate::task::{
    ContextOrder, Preference, Preferred, RelevanceGrade, RelevanceVerdict, RubricScore,
    SimilarityVerdict, UsefulnessVerdict,
};

/// The share of the question's content words found in `context` (0 when the question has
/// none): the overlap signal of the relevance-type verdicts.
pub(crate) fn question_overlap(question: &str, context: &str) -> f64 {
    question_coverage(question, &Material::new(context)).map_or(0.0, |(covered, _)| covered)
}

/// The share of a question's content words found in `context`, with a reason prefix.
fn question_coverage(question: &str, context: &Material) -> Result<(f64, usize), String> {
    let words = content_words(question);
    if words.is_empty() {
        return Err("the question has no content words to look up".into());
    }
    Ok((context.coverage(&words), words.len()))
}

/// Relevant when the context holds at least [`RELEVANT_MIN`] of the question's content
/// words.
pub(crate) fn relevance(question: &str, context: &str) -> RelevanceVerdict {
    match question_coverage(question, &Material::new(context)) {
        Err(reason) => RelevanceVerdict {
            relevant: false,
            reason,
        },
        Ok((covered, n)) => {
            let min = RELEVANT_MIN.for_text(question);
            let relevant = covered >= min;
            RelevanceVerdict {
                relevant,
                reason: format!(
                    "{covered:.2} of the question's {n} content words appear in the context ({} {min:.2})",
                    if relevant { "≥" } else { "<" }
                ),
            }
        }
    }
}

/// Grade by the question's coverage: grade k from k × [`GRADE_BAND`].
pub(crate) fn grade(question: &str, context: &str) -> RelevanceGrade {
    match question_coverage(question, &Material::new(context)) {
        Err(reason) => RelevanceGrade { grade: 0, reason },
        Ok((covered, n)) => {
            let band = GRADE_BAND.for_text(question);
            let grade = (1..=3u8)
                .filter(|&k| covered >= band * f64::from(k))
                .count() as u8;
            RelevanceGrade {
                grade,
                reason: format!(
                    "{covered:.2} of the question's {n} content words appear in the context \
                     (grade bands at {:.2}, {:.2}, {:.2})",
                    band,
                    2.0 * band,
                    3.0 * band
                ),
            }
        }
    }
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

/// Useful when the context holds at least [`USEFUL_MIN`] of what the answer adds to the
/// question ([`answer_overlap`]).
pub(crate) fn usefulness(question: &str, answer: &str, context: &str) -> UsefulnessVerdict {
    let (covered, n, what) = match answer_overlap(question, answer, context) {
        Ok(measured) => measured,
        Err(reason) => {
            return UsefulnessVerdict {
                useful: false,
                reason,
            };
        }
    };
    let min = USEFUL_MIN.for_text(question);
    let useful = covered >= min;
    UsefulnessVerdict {
        useful,
        reason: format!(
            "{covered:.2} of the answer's {n} {what} appear in the context ({} {min:.2})",
            if useful { "≥" } else { "<" }
        ),
    }
}

/// The noncommittal phrase `answer` contains, if any.
pub(crate) fn noncommittal(answer: &str) -> Option<&'static str> {
    first_phrase(answer, NONCOMMITTAL)
}

/// The refusal phrase `answer` contains, if any.
pub(crate) fn refusal(answer: &str) -> Option<&'static str> {
    first_phrase(answer, REFUSAL)
}

fn first_phrase(text: &str, phrases: &[&'static str]) -> Option<&'static str> {
    let lower = text.to_lowercase();
    phrases.iter().copied().find(|p| lower.contains(p))
}

/// 1 for a noncommittal answer; else 1 + 4 × the question's coverage in the answer, rounded.
pub(crate) fn rubric(question: &str, answer: &str) -> RubricScore {
    if let Some(phrase) = noncommittal(answer) {
        return RubricScore {
            score: 1,
            reason: format!("the answer is noncommittal (\"{phrase}\")"),
        };
    }
    match question_coverage(question, &Material::new(answer)) {
        Err(reason) => RubricScore { score: 1, reason },
        Ok((covered, n)) => RubricScore {
            score: (1.0 + 4.0 * covered).round() as u8,
            reason: format!(
                "{covered:.2} of the question's {n} content words appear in the answer \
                 (score = 1 + 4 × share, rounded)"
            ),
        },
    }
}

/// Dice overlap of the two questions' content words.
pub(crate) fn dice(a: &str, b: &str) -> f64 {
    let (wa, wb) = (content_words(a), content_words(b));
    let (ma, mb) = (Material::new(a), Material::new(b));
    let hits =
        wa.iter().filter(|w| mb.contains(w)).count() + wb.iter().filter(|w| ma.contains(w)).count();
    share(hits, wa.len() + wb.len())
}

/// Similar when the Dice overlap reaches [`SIMILAR_OVERLAP`].
pub(crate) fn similarity(question: &str, candidate: &str) -> SimilarityVerdict {
    let overlap = dice(question, candidate);
    let similar = overlap >= SIMILAR_OVERLAP;
    SimilarityVerdict {
        similar,
        reason: format!(
            "content-word overlap (Dice) {overlap:.2} {} {SIMILAR_OVERLAP:.2}",
            if similar { "≥" } else { "<" }
        ),
    }
}

/// The share of a context's sentences that mention a question word: how focused it is.
pub(crate) fn focus(words: &[String], context: &str) -> f64 {
    let sentences = super::sentences::sentences(context);
    let on_topic = sentences
        .iter()
        .filter(|s| {
            let m = Material::new(s);
            words.iter().any(|w| m.contains(w))
        })
        .count();
    share(on_topic, sentences.len())
}

/// The context covering more of the question wins; within [`PAIRWISE_MARGIN`], the more
/// focused one (a larger share of sentences on the question's words); else a tie.
pub(crate) fn pairwise(question: &str, first: &str, second: &str) -> Preference {
    let words = content_words(question);
    let margin = PAIRWISE_MARGIN.for_text(question);
    let (a, b) = (
        Material::new(first).coverage(&words),
        Material::new(second).coverage(&words),
    );
    let pick = |x: f64, y: f64| {
        if x - y > margin {
            Some(Preferred::First)
        } else if y - x > margin {
            Some(Preferred::Second)
        } else {
            None
        }
    };
    if let Some(preferred) = pick(a, b) {
        return Preference {
            preferred,
            reason: format!(
                "the question's content words: {a:.2} appear in A, {b:.2} in B (margin {margin:.2})"
            ),
        };
    }
    let (fa, fb) = (focus(&words, first), focus(&words, second));
    let preferred = pick(fa, fb).unwrap_or(Preferred::Tie);
    Preference {
        preferred,
        reason: format!(
            "the question's content words: {a:.2} appear in A, {b:.2} in B (within {margin:.2}); \
             sentences mentioning them: {fa:.2} of A, {fb:.2} of B"
        ),
    }
}

/// The contexts sorted by the share of the question's content words each holds, then by
/// focus (the share of its sentences mentioning them), most first; equal keys keep the shown
/// order. The listwise counterpart of [`pairwise`], without its margin (a margin does not
/// sort: it is not transitive).
pub(crate) fn order(question: &str, contexts: &[String]) -> ContextOrder {
    let words = content_words(question);
    let keys: Vec<(f64, f64)> = contexts
        .iter()
        .map(|c| (Material::new(c).coverage(&words), focus(&words, c)))
        .collect();
    let mut order: Vec<usize> = (0..contexts.len()).collect();
    order.sort_by(|&x, &y| {
        keys[y]
            .0
            .total_cmp(&keys[x].0)
            .then(keys[y].1.total_cmp(&keys[x].1))
    });
    let shares: Vec<String> = order
        .iter()
        .map(|&i| format!("p{} {:.2}", i + 1, keys[i].0))
        .collect();
    ContextOrder {
        order,
        reason: format!(
            "sorted by the share of the question's content words each passage holds ({}), \
             then by the share of its sentences that mention them",
            shares.join(", ")
        ),
    }
}
