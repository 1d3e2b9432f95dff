//! The lexical gates of a generated item: is it a question at all (not a fragment of the
//! prompt, a bare number or date, or a phrase without a question's form), is the question
//! self-contained (no "according to the passage", no pronoun with nothing to refer to at its
//! start), and does an answer say that it does not know.
//!
//! Word lists, not understanding: a question that leans on the passage in other words passes.
//! `docs/testset.md` says what these checks cannot catch.

use crate::text::language::is_han;
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

/// Words that open an English question (or a request that asks like one).
const QUESTION_OPENINGS_EN: [&str; 27] = [
    "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "is", "are", "was",
    "were", "do", "does", "did", "can", "could", "should", "would", "will", "has", "have", "name",
    "list", "describe", "explain",
];
/// Words that make a Chinese sentence a question (or a request that asks like one).
const QUESTION_WORDS_ZH: [&str; 19] = [
    "什么",
    "哪",
    "谁",
    "多少",
    "几",
    "如何",
    "怎么",
    "怎样",
    "为什么",
    "为何",
    "是否",
    "吗",
    "呢",
    "么",
    "有没有",
    "是不是",
    "请列举",
    "请说明",
    "请比较",
];
/// The fewest content words (English) or Han characters (Chinese) a question has.
const MIN_WORDS_EN: usize = 3;
const MIN_HAN_ZH: usize = 4;

/// Why `question` is not a question at all, or `None` when it has a question's form: a
/// prompt's fence marker (`<<<DATA-…`), a bare number or date (`2023/10`, `12%`), fewer
/// than three words (four Han characters), or no question mark, question word or opening.
pub fn not_a_question(question: &str) -> Option<String> {
    let text = question.trim();
    if text.contains("<<<") || text.contains(">>>") || text.contains("DATA-") {
        return Some("it is a fragment of the prompt's fence marker".into());
    }
    if !text.chars().any(char::is_alphabetic) {
        return Some(format!(
            "\"{text}\" is a bare number or date, not a question"
        ));
    }
    let lower = text.to_lowercase();
    let asks = lower.ends_with('?') || lower.ends_with('？');
    if detect_language(&lower) == Language::Chinese {
        let han = lower.chars().filter(|c| is_han(*c)).count();
        if han < MIN_HAN_ZH {
            return Some(format!(
                "it has {han} Han characters, fewer than {MIN_HAN_ZH}"
            ));
        }
        let form = asks || QUESTION_WORDS_ZH.iter().any(|w| lower.contains(w));
        return (!form).then(|| "it has no question mark or question word".into());
    }
    let words: Vec<&str> = lower
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|w| w.chars().any(char::is_alphabetic))
        .collect();
    if words.len() < MIN_WORDS_EN {
        return Some(format!(
            "it has {} words, fewer than {MIN_WORDS_EN}",
            words.len()
        ));
    }
    let wh = [
        "what", "which", "who", "whom", "whose", "when", "where", "why", "how",
    ];
    let form = asks
        || words
            .first()
            .is_some_and(|w| QUESTION_OPENINGS_EN.contains(w))
        || words.iter().any(|w| wh.contains(w));
    (!form).then(|| "it has no question mark or question opening".into())
}

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

    /// Issue 39, item 4: drafts copied from the prompt — its fence marker, a bare date or
    /// percentage — passed every gate before the judged ones.
    #[test]
    fn regression_issue_39_fragments_numbers_and_phrases_are_not_questions() {
        for fragment in [
            "<<<DATA-21db3f69 passage 2",
            "2023/10",
            "12%",
            "  ",
            "Scratch",
            "少儿编程",
            "Scratch is a visual language.",
            "少儿编程市场规模约为488亿元。",
        ] {
            assert!(not_a_question(fragment).is_some(), "{fragment:?} passed");
        }
        for question in [
            "2023年中国少儿编程的市场规模是多少？",
            "少儿编程教育的主要机构有哪些",
            "Which company founded Scratch?",
            "How large was the kids-coding market in 2023",
            "Name the three largest kids-coding companies.",
            "In 2023, how large was the market",
        ] {
            assert_eq!(not_a_question(question), None, "{question:?} failed");
        }
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
