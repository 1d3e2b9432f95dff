//! Sentences glued without a space: `…a spa in Hawaii.Aulani, a Disney resort…`.
//!
//! Text scraped from web pages often drops the space after a full stop. Unicode word
//! segmentation (UAX #29) then keeps `Hawaii.Aulani` as one word, because a `.` between two
//! letters is word-internal there (it is what keeps `e.g` and `example.com` whole), and a
//! one-word answer ("Hawaii") no longer matches its context. [`glued_sentence_end`] decides
//! whether a `.`, `!` or `?` ends a sentence glued to the next one; [`separate_glued_sentences`]
//! puts the missing space back, and [`words`](super::words) tokenises the result.
//!
//! The rule is deliberately narrow, since a wrong split breaks a token that was right:
//! the left side must be a word of two or more letters, the right side must start like a
//! sentence (a capital followed by a lower-case letter, or a one-letter word such as `I`).
//! Decimals and versions (`3.5`, `v2.Beta`), initialisms and abbreviations (`U.S.Army`,
//! `e.g.Paris`, `Dr.Smith`), file names (`report.pdf`, `Report.PDF`) and URLs, domains,
//! e-mail addresses and paths (`www.Example.com`, `https://…`) are never split.

use std::borrow::Cow;

/// Abbreviations (lower-cased, without their dot) that stand before a capitalised name, so
/// that a capital after them starts no sentence (`Dr.Smith`, `St.Louis`). Single letters
/// (`J.`, `U.S.`, `e.g.`) need no entry: a one-letter left side never splits.
const TITLES: &[&str] = &[
    "mr", "mrs", "ms", "mx", "dr", "prof", "st", "mt", "ft", "rev", "gen", "col", "capt", "lt",
    "sgt", "gov", "sen", "rep", "hon", "fr", "jr", "sr", "messrs", "mme", "mlle",
];

/// Whether the terminator (`.`, `!` or `?`) at byte offset `at` of `text` ends a sentence that
/// the next one is glued to without a space. `false` for any other character, for an offset
/// that is not a character boundary, and at the end of the text.
///
/// ```
/// use rageval_core::text::glued_sentence_end;
///
/// assert!(glued_sentence_end("a spa in Hawaii.Aulani, a Disney resort", 15));
/// assert!(!glued_sentence_end("costs 3.5 dollars", 7));
/// assert!(!glued_sentence_end("the U.S.Army", 7));
/// ```
pub fn glued_sentence_end(text: &str, at: usize) -> bool {
    let Some(terminator) = text.get(at..).and_then(|rest| rest.chars().next()) else {
        return false;
    };
    if !matches!(terminator, '.' | '!' | '?') {
        return false;
    }
    let after = &text[at + terminator.len_utf8()..];
    starts_a_sentence(after)
        && ends_with_a_word(&text[..at])
        && !inside_an_address(text, at)
        && !continues_a_dotted_name(after)
}

/// `text` with a space put after every [`glued_sentence_end`]; borrowed when there is none,
/// which is nearly always, so tokenising costs no copy.
///
/// ```
/// use rageval_core::text::separate_glued_sentences;
///
/// assert_eq!(separate_glued_sentences("in Hawaii.Aulani, a resort"), "in Hawaii. Aulani, a resort");
/// assert_eq!(separate_glued_sentences("see report.pdf"), "see report.pdf");
/// ```
pub fn separate_glued_sentences(text: &str) -> Cow<'_, str> {
    let mut ends = text
        .match_indices(['.', '!', '?'])
        .map(|(at, _)| at)
        .filter(|&at| glued_sentence_end(text, at))
        .peekable();
    if ends.peek().is_none() {
        return Cow::Borrowed(text);
    }
    let mut separated = String::with_capacity(text.len() + 8);
    let mut copied = 0;
    for at in ends {
        // Every terminator is one byte long.
        separated.push_str(&text[copied..=at]);
        separated.push(' ');
        copied = at + 1;
    }
    separated.push_str(&text[copied..]);
    Cow::Owned(separated)
}

/// Whether `after` opens like a sentence: a capital followed by a lower-case letter
/// (`Aulani`), or a one-letter capital word followed by a space (`I`, `A`). All-capital
/// words are left alone: they are as often a file extension (`Report.PDF`) or an acronym in
/// a name (`ASP.NET`) as a sentence start.
fn starts_a_sentence(after: &str) -> bool {
    let mut chars = after.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    if !first.is_uppercase() {
        return false;
    }
    match chars.next() {
        Some(second) => second.is_lowercase() || second.is_whitespace(),
        None => false,
    }
}

/// Whether `before` ends with a word of two or more letters (no digits) that is neither
/// part of a dotted chain (`e.g`, `a.b.Cd`, `example.com.Au`), an identifier (`my_mod`) nor
/// a title abbreviation ([`TITLES`]).
fn ends_with_a_word(before: &str) -> bool {
    let start = before
        .char_indices()
        .rev()
        .take_while(|&(_, c)| c.is_alphanumeric() || is_combining_mark(c))
        .last()
        .map_or(before.len(), |(i, _)| i);
    let word = &before[start..];
    if word.chars().filter(|c| c.is_alphabetic()).count() < 2 || word.chars().any(char::is_numeric)
    {
        return false;
    }
    if before[..start].ends_with(['.', '_']) {
        return false;
    }
    !TITLES.contains(&word.to_lowercase().as_str())
}

/// Whether the whitespace-delimited chunk of `text` around byte `at` is a URL, a domain
/// written with `www.`, an e-mail address or a path.
fn inside_an_address(text: &str, at: usize) -> bool {
    let start = text[..at]
        .char_indices()
        .rev()
        .find(|&(_, c)| c.is_whitespace())
        .map_or(0, |(i, c)| i + c.len_utf8());
    let end = text[at..]
        .find(char::is_whitespace)
        .map_or(text.len(), |i| at + i);
    let chunk = &text[start..end];
    let bare = chunk.trim_start_matches(|c: char| !c.is_alphanumeric());
    chunk.contains("://")
        || chunk.contains(['@', '/', '\\'])
        || bare
            .get(..4)
            .is_some_and(|prefix| prefix.eq_ignore_ascii_case("www."))
}

/// Whether the word after the terminator is itself followed by `.`, `_` or `:` and more
/// of a name (`System.IO.File`, `Example.Com.au`, `Foo.Bar_baz`): then the whole is a
/// name, not two sentences.
fn continues_a_dotted_name(after: &str) -> bool {
    let rest = after.trim_start_matches(|c: char| c.is_alphanumeric() || is_combining_mark(c));
    let mut chars = rest.chars();
    matches!(chars.next(), Some('.' | '_' | ':')) && chars.next().is_some_and(char::is_alphanumeric)
}

/// Combining marks, which belong to the letter before them (`nai\u{308}ve`). Only the
/// common Latin, Greek and Cyrillic block is checked; other scripts' marks are rare next to
/// a glued full stop and at worst make a word look shorter.
fn is_combining_mark(c: char) -> bool {
    ('\u{300}'..='\u{36f}').contains(&c)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The offsets of every glued sentence end in `text`.
    fn ends(text: &str) -> Vec<usize> {
        text.char_indices()
            .filter(|&(at, _)| glued_sentence_end(text, at))
            .map(|(at, _)| at)
            .collect()
    }

    #[test]
    fn regression_issue_23_hawaii_aulani_splits() {
        let text = "a spa in Hawaii.Aulani, a Disney resort";
        assert_eq!(ends(text), [15]);
        assert_eq!(
            separate_glued_sentences(text),
            "a spa in Hawaii. Aulani, a Disney resort"
        );
    }

    #[test]
    fn exclamation_question_and_one_letter_words_split() {
        assert_eq!(
            separate_glued_sentences("Really?Yes!It was fine.I think so.A resort."),
            "Really? Yes! It was fine. I think so. A resort."
        );
        assert_eq!(
            separate_glued_sentences("Москва.Это город"),
            "Москва. Это город"
        );
    }

    #[test]
    fn decimals_are_not_split() {
        for text in ["costs 3.5 dollars", "about 3.5.It rose", "Pi is 3.14"] {
            assert_eq!(separate_glued_sentences(text), text);
        }
    }

    #[test]
    fn abbreviations_and_initialisms_are_not_split() {
        for text in [
            "big cities, e.g.Paris and Rome",
            "that is, i.e.Lyon",
            "the U.S.Army base",
            "a Ph.D.Thesis",
            "J.Robert Oppenheimer",
            "ask Dr.Smith or Mr.Jones in St.Louis",
        ] {
            assert!(ends(text).is_empty(), "{text:?}");
        }
    }

    #[test]
    fn file_names_are_not_split() {
        for text in [
            "open report.pdf now",
            "see main.rs and Cargo.toml",
            "the scan Report.PDF and IMG_001.JPG",
            "edit my_module.Settings",
        ] {
            assert!(ends(text).is_empty(), "{text:?}");
        }
    }

    #[test]
    fn urls_domains_and_addresses_are_not_split() {
        for text in [
            "visit www.Example.com today",
            "visit (www.Example.com) today",
            "see https://Example.org/Docs.Page?Query=1",
            "mail Support@Example.Org",
            "the docs at docs/Guide.Intro",
            "call System.IO.File or Example.Com.au",
        ] {
            assert!(ends(text).is_empty(), "{text:?}");
        }
    }

    #[test]
    fn version_strings_are_not_split() {
        for text in ["upgrade to v2.Beta", "release 1.10.Final", "python3.Next"] {
            assert!(ends(text).is_empty(), "{text:?}");
        }
    }

    #[test]
    fn chinese_text_is_unchanged() {
        let text = "少儿编程市场规模很大。家长很重视！北京.清华大学";
        assert!(matches!(separate_glued_sentences(text), Cow::Borrowed(_)));
    }

    #[test]
    fn offsets_that_are_not_terminators_or_boundaries_are_false() {
        let text = "Naïve.Start";
        assert!(glued_sentence_end(text, 6));
        assert!(!glued_sentence_end(text, 0));
        assert!(!glued_sentence_end(text, 3), "inside 'ï'");
        assert!(!glued_sentence_end(text, text.len()));
        assert!(!glued_sentence_end("end.", 3));
    }
}
