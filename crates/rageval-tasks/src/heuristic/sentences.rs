//! Sentence splitting: the heuristic implementation of statement splitting.
//!
//! A sentence is a sound stand-in for an atomic statement when sentences are short and
//! factual, which is what RAG answers mostly are; it does not resolve pronouns or split
//! compound sentences the way a model does, and says so in its name. Splits after `。！？!?`,
//! at line breaks, and after a `.` that ends a sentence — not in decimals (`3.14`), not after
//! an initial (`J. Robert`) or a common abbreviation (`e.g.`, `Dr.`), but also where a
//! missing space glues two sentences (`provided.The`).

use super::words::content_words;

/// Abbreviations (lower-cased, without their final dot) after which a `.` ends nothing.
const ABBREVIATIONS: &[&str] = &[
    "e.g", "i.e", "etc", "vs", "mr", "mrs", "ms", "dr", "prof", "st", "no", "inc", "ltd", "co",
    "jr", "sr", "u.s", "u.k", "fig", "approx", "dept", "est", "jan", "feb", "mar", "apr", "jun",
    "jul", "aug", "sep", "sept", "oct", "nov", "dec",
];

/// The sentences of `text` that hold at least one content word, trimmed, in order.
pub(crate) fn sentences(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut current = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c == '\n' || c == '\r' {
            flush(&mut current, &mut out);
            continue;
        }
        current.push(c);
        let ends = match c {
            '。' | '！' | '？' | '!' | '?' => true,
            '.' => full_stop_ends_sentence(&chars, i, &current),
            _ => false,
        };
        if ends {
            flush(&mut current, &mut out);
        }
    }
    flush(&mut current, &mut out);
    out
}

fn flush(current: &mut String, out: &mut Vec<String>) {
    let sentence = current.trim();
    // A bare list number ("1.") belongs to what follows it.
    let is_enumerator = sentence.len() <= 4
        && sentence.ends_with(['.', ')'])
        && sentence[..sentence.len() - 1]
            .chars()
            .all(|c| c.is_ascii_digit());
    if is_enumerator {
        return;
    }
    if !content_words(sentence).is_empty() {
        out.push(sentence.to_owned());
    }
    current.clear();
}

fn full_stop_ends_sentence(chars: &[char], i: usize, current: &str) -> bool {
    let before = i.checked_sub(1).map(|j| chars[j]);
    let after = chars.get(i + 1).copied();
    if before.is_some_and(|b| b.is_ascii_digit()) && after.is_some_and(|a| a.is_ascii_digit()) {
        return false;
    }
    let word: String = current[..current.len() - 1]
        .chars()
        .rev()
        .take_while(|c| !c.is_whitespace())
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let word = word.trim_start_matches(['(', '"', '\'']);
    let is_initial = word.chars().count() == 1 && word.chars().all(char::is_uppercase);
    if is_initial || ABBREVIATIONS.contains(&word.to_lowercase().as_str()) {
        return false;
    }
    match after {
        None => true,
        Some(a) if a.is_whitespace() || a == '"' || a == '\'' || a == ')' => true,
        // "provided.The": a glued sentence start after a lower-case word.
        Some(a) if a.is_uppercase() => {
            word.chars().count() >= 2 && word.chars().all(|c| c.is_lowercase())
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_sentences_but_not_decimals_initials_or_abbreviations() {
        assert_eq!(
            sentences("Pi is 3.14 roughly. J. Robert Oppenheimer led it, e.g. at Los Alamos! Why?"),
            [
                "Pi is 3.14 roughly.",
                "J. Robert Oppenheimer led it, e.g. at Los Alamos!"
            ]
        );
        assert_eq!(
            sentences("The date has not been provided.The mission is important.'"),
            [
                "The date has not been provided.",
                "The mission is important."
            ]
        );
        assert_eq!(
            sentences("少儿编程市场规模很大。家长很重视！\n1. 课程多样\n- 价格高"),
            [
                "少儿编程市场规模很大。",
                "家长很重视！",
                "1. 课程多样",
                "- 价格高"
            ]
        );
    }
}
