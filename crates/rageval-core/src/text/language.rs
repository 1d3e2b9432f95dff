//! Language detection by script: which writing system dominates a text's letters.
//!
//! rageval only needs to know whether a text should be segmented as Chinese (jieba) or
//! split on word boundaries, so detection counts characters by script and never looks at
//! vocabulary. French and English are both "English" here: both are Latin-script text that
//! the same word splitter handles.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Share of Han characters among all letters at or above which a text counts as Chinese.
///
/// One Han character carries roughly what a short Latin word does, so a fifth is already a
/// Chinese sentence with a few English terms ("使用Python进行数据分析" is 8 Han of 14
/// letters), while an English sentence that quotes a two-character Chinese name stays
/// English ("The city of 北京 is large": 2 of 17).
pub const CHINESE_HAN_SHARE: f64 = 0.2;

/// Share of kana (hiragana and katakana) among letters at or above which a text is taken
/// as Japanese and therefore not Chinese, however many kanji it holds.
pub const JAPANESE_KANA_SHARE: f64 = 0.1;

/// Share of Latin-script letters among letters at or above which a text is "English".
pub const LATIN_SHARE: f64 = 0.5;

/// The language family a text is treated as, decided by script alone.
///
/// Serialised with the same codes as [`Display`](fmt::Display): `"en"`, `"zh"`, `"other"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Language {
    /// Latin-script text (English, but also French, German, ...): split on word boundaries.
    #[serde(rename = "en")]
    English,
    /// Text dominated by Han characters: segmented with jieba.
    #[serde(rename = "zh")]
    Chinese,
    /// Anything else: other scripts, Japanese, or text with no letters at all.
    #[serde(rename = "other")]
    Other,
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Language::English => "en",
            Language::Chinese => "zh",
            Language::Other => "other",
        })
    }
}

/// Detects the language of `text` from the scripts of its letters.
///
/// Letters are characters with the Unicode `Alphabetic` property (Han ideographs included;
/// digits, punctuation, emoji and spaces are ignored). With `han`, `kana` and `latin` the
/// counts of each script:
///
/// 1. no letters → [`Language::Other`];
/// 2. `kana / letters ≥` [`JAPANESE_KANA_SHARE`] → [`Language::Other`] (Japanese mixes kanji
///    with kana and must not be segmented as Chinese);
/// 3. `han / letters ≥` [`CHINESE_HAN_SHARE`] → [`Language::Chinese`] (so mixed text with
///    enough Han is Chinese);
/// 4. `latin / letters ≥` [`LATIN_SHARE`] → [`Language::English`];
/// 5. otherwise [`Language::Other`].
pub fn detect_language(text: &str) -> Language {
    let (mut letters, mut han, mut kana, mut latin) = (0usize, 0usize, 0usize, 0usize);
    for c in text.chars() {
        if !c.is_alphabetic() {
            continue;
        }
        letters += 1;
        if is_han(c) {
            han += 1;
        } else if is_kana(c) {
            kana += 1;
        } else if is_latin(c) {
            latin += 1;
        }
    }
    if letters == 0 {
        return Language::Other;
    }
    let share = |count: usize| count as f64 / letters as f64;
    if share(kana) >= JAPANESE_KANA_SHARE {
        Language::Other
    } else if share(han) >= CHINESE_HAN_SHARE {
        Language::Chinese
    } else if share(latin) >= LATIN_SHARE {
        Language::English
    } else {
        Language::Other
    }
}

/// Whether `c` is a Han ideograph (Unicode script Han: the unified ideographs and their
/// extensions, compatibility ideographs, radicals, and the iteration marks 々 and 〇).
pub fn is_han(c: char) -> bool {
    matches!(
        u32::from(c),
        0x2E80..=0x2E99
            | 0x2E9B..=0x2EF3
            | 0x2F00..=0x2FD5
            | 0x3005
            | 0x3007
            | 0x3021..=0x3029
            | 0x3038..=0x303B
            | 0x3400..=0x4DBF
            | 0x4E00..=0x9FFF
            | 0xF900..=0xFA6D
            | 0xFA70..=0xFAD9
            | 0x20000..=0x2A6DF
            | 0x2A700..=0x2EBEF
            | 0x2F800..=0x2FA1F
            | 0x30000..=0x323AF
    )
}

/// Hiragana, katakana and their phonetic extensions, including half-width katakana.
fn is_kana(c: char) -> bool {
    matches!(
        u32::from(c),
        0x3041..=0x309F | 0x30A0..=0x30FF | 0x31F0..=0x31FF | 0xFF66..=0xFF9D
    )
}

/// Latin script: ASCII letters, Latin-1 letters, Latin Extended A/B and Additional, and
/// full-width Latin letters.
fn is_latin(c: char) -> bool {
    c.is_ascii_alphabetic()
        || matches!(
            u32::from(c),
            0x00AA | 0x00BA | 0x00C0..=0x024F | 0x1E00..=0x1EFF | 0xFF21..=0xFF3A | 0xFF41..=0xFF5A
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_and_serde_codes_agree() {
        for (language, code) in [
            (Language::English, "en"),
            (Language::Chinese, "zh"),
            (Language::Other, "other"),
        ] {
            assert_eq!(language.to_string(), code);
            let json = serde_json::to_string(&language).expect("serialises");
            assert_eq!(json, format!("\"{code}\""));
            assert_eq!(serde_json::from_str::<Language>(&json).ok(), Some(language));
        }
    }

    #[test]
    fn detects_by_script() {
        assert_eq!(
            detect_language("The capital of France is Paris."),
            Language::English
        );
        assert_eq!(
            detect_language("Où est la bibliothèque ?"),
            Language::English
        );
        assert_eq!(detect_language("法国的首都是巴黎。"), Language::Chinese);
        assert_eq!(detect_language("使用Python进行数据分析"), Language::Chinese);
        assert_eq!(
            detect_language("The city of 北京 is large"),
            Language::English
        );
        assert_eq!(detect_language("日本語のテキストです"), Language::Other);
        assert_eq!(detect_language("Привет, мир"), Language::Other);
        assert_eq!(detect_language("안녕하세요"), Language::Other);
    }

    #[test]
    fn no_letters_is_other() {
        for text in ["", "   ", "12345", "?!…", "😀🎉", "\u{301}"] {
            assert_eq!(detect_language(text), Language::Other, "{text:?}");
        }
    }
}
