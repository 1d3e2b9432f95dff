//! The lexical gates of a generated item: is the question self-contained (no "according to
//! the passage", no pronoun with nothing to refer to at its start), and does an answer say
//! that it does not know.
//!
//! Word lists, not understanding: a question that leans on the passage in other words passes.
//! `docs/testset.md` says what these checks cannot catch.

use crate::text::{Language, detect_language};

/// Phrases that point at a passage the reader of a test question does not have.
const PASSAGE_PHRASES_EN: [&str; 16] = [
    "according to the passage",
    "according to the text",
    "according to the context",
    "according to the document",
    "according to the article",
    "according to the above",
    "in the passage",
    "in the given text",
    "in the text above",
    "in the above",
    "the passage",
    "this passage",
    "the given context",
    "mentioned above",
    "the above text",
    "the excerpt",
];
const PASSAGE_PHRASES_ZH: [&str; 18] = [
    "根据上文",
    "根据以上",
    "根据文中",
    "根据材料",
    "根据段落",
    "根据这段",
    "根据本文",
    "根据文章",
    "根据该段",
    "上文",
    "文中",
    "本段",
    "该段",
    "这段话",
    "这段文字",
    "以上内容",
    "段落中",
    "材料中",
];
/// Words that, opening a question, refer to something the question never names.
const OPENING_PRONOUNS_EN: [&str; 10] = [
    "it", "its", "they", "their", "them", "he", "she", "this", "these", "those",
];
const OPENING_PRONOUNS_ZH: [&str; 8] = ["它", "他", "她", "其", "该", "此", "这", "那"];
/// Answers that say the answer is not known.
const UNKNOWN_ANSWERS_EN: [&str; 10] = [
    "unknown",
    "i don't know",
    "i do not know",
    "not mentioned",
    "not stated",
    "not provided",
    "no answer",
    "cannot be determined",
    "does not say",
    "n/a",
];
const UNKNOWN_ANSWERS_ZH: [&str; 9] = [
    "不知道",
    "未知",
    "无法回答",
    "无法确定",
    "没有提到",
    "未提及",
    "未提到",
    "没有说明",
    "无从得知",
];
/// Answers longer than this (in characters) are taken as answers even when they contain one
/// of the phrases above ("... is not mentioned in the 2023 figures, but ...").
const UNKNOWN_MAX_CHARS: usize = 40;

/// Why a question is not self-contained, or `None` when no word list catches it.
pub fn not_self_contained(question: &str) -> Option<String> {
    let lower = question.trim().to_lowercase();
    let phrases: &[&str] = match detect_language(&lower) {
        Language::Chinese => &PASSAGE_PHRASES_ZH,
        _ => &PASSAGE_PHRASES_EN,
    };
    if let Some(phrase) = phrases.iter().find(|p| lower.contains(**p)) {
        return Some(format!("it refers to the passage (\"{phrase}\")"));
    }
    if let Some(first) = lower.split_whitespace().next() {
        let first = first.trim_matches(|c: char| !c.is_alphanumeric());
        if OPENING_PRONOUNS_EN.contains(&first) {
            return Some(format!("it opens with the pronoun \"{first}\""));
        }
    }
    let opening = OPENING_PRONOUNS_ZH
        .iter()
        .find(|p| lower.starts_with(**p) && !lower.starts_with("这些年"));
    opening.map(|p| format!("it opens with the pronoun \"{p}\""))
}

/// Whether `answer` says that the answer is not known (blank included).
pub fn says_unknown(answer: &str) -> bool {
    let lower = answer.trim().to_lowercase();
    if lower.is_empty() {
        return true;
    }
    if lower.chars().count() > UNKNOWN_MAX_CHARS {
        return false;
    }
    UNKNOWN_ANSWERS_EN
        .iter()
        .chain(UNKNOWN_ANSWERS_ZH.iter())
        .any(|phrase| lower.contains(phrase))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passage_references_and_opening_pronouns_are_caught_in_both_languages() {
        assert!(not_self_contained("According to the passage, who founded it?").is_some());
        assert!(not_self_contained("It was founded in which year?").is_some());
        assert!(not_self_contained("根据上文，少儿编程的市场规模是多少？").is_some());
        assert!(not_self_contained("它的用户规模有多大？").is_some());
        assert!(not_self_contained("2023年中国少儿编程的市场规模是多少？").is_none());
        assert!(not_self_contained("Which company founded Scratch?").is_none());
    }

    #[test]
    fn short_refusals_say_unknown_and_answers_do_not() {
        assert!(says_unknown(""));
        assert!(says_unknown("Unknown."));
        assert!(says_unknown("文中未提及。"));
        assert!(!says_unknown("约500亿元。"));
        assert!(!says_unknown(
            "The report gives 50 billion yuan; the 2022 figure is not mentioned there."
        ));
    }
}
