//! Counts in words for what people read: `1 question`, `3 questions`, `1 question was`.
//! Only regular plurals (a trailing `s`), which is all the units here need; no other text
//! is made here.

/// `n` and the unit, given in the plural, in the number `n` asks for: `1 question`,
/// `0 questions`.
pub fn counted(n: usize, plural: &str) -> String {
    if n == 1 {
        format!("1 {}", plural.strip_suffix('s').unwrap_or(plural))
    } else {
        format!("{n} {plural}")
    }
}

/// [`counted`] with `was` or `were`.
pub fn counted_were(n: usize, plural: &str) -> String {
    format!(
        "{} {}",
        counted(n, plural),
        if n == 1 { "was" } else { "were" }
    )
}

/// [`counted`] with `has` or `have`.
pub fn counted_have(n: usize, plural: &str) -> String {
    format!(
        "{} {}",
        counted(n, plural),
        if n == 1 { "has" } else { "have" }
    )
}

/// [`counted`] with `is` or `are`.
pub fn counted_are(n: usize, plural: &str) -> String {
    format!(
        "{} {}",
        counted(n, plural),
        if n == 1 { "is" } else { "are" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(counted(1, "questions"), "1 question");
        assert_eq!(counted(0, "questions"), "0 questions");
        assert_eq!(counted(2, "references"), "2 references");
        assert_eq!(counted_were(1, "cells"), "1 cell was");
        assert_eq!(counted_have(3, "questions"), "3 questions have");
        assert_eq!(counted_are(1, "items"), "1 item is");
    }
}
