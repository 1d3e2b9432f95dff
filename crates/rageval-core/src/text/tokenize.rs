//! Tokenisers: rageval's Unicode-aware word splitter, the ROUGE tokeniser built on it, and
//! faithful re-implementations of sacrebleu's `13a` and `zh` tokenisers.
//!
//! Han text is segmented with one shared jieba instance, built on first use (its compiled-in
//! dictionary takes ~150 ms to load). Every other script is kept: no tokeniser here drops a
//! letter because it is not ASCII, which is the bug of rouge-score's tokeniser that ragas
//! inherits.

use std::sync::OnceLock;

use jieba_rs::Jieba;
use unicode_segmentation::UnicodeSegmentation;

use super::glued::separate_glued_sentences;
use super::language::is_han;

/// The process-wide jieba segmenter.
fn jieba() -> &'static Jieba {
    static JIEBA: OnceLock<Jieba> = OnceLock::new();
    JIEBA.get_or_init(Jieba::new)
}

/// Segments a run of Han characters with jieba (HMM on, jieba's default for `cut`), keeping
/// only pieces that contain a letter or digit.
fn push_han_words(run: &str, out: &mut Vec<String>) {
    for token in jieba().cut(run, true) {
        if token.word.chars().any(char::is_alphanumeric) {
            out.push(token.word.to_string());
        }
    }
}

/// Splits `text` into maximal runs of Han and non-Han characters, in order.
fn script_runs(text: &str) -> impl Iterator<Item = (bool, &str)> {
    let mut rest = text;
    std::iter::from_fn(move || {
        let first = rest.chars().next()?;
        let han = is_han(first);
        let end = rest
            .char_indices()
            .find(|&(_, c)| is_han(c) != han)
            .map_or(rest.len(), |(i, _)| i);
        let (run, tail) = rest.split_at(end);
        rest = tail;
        Some((han, run))
    })
}

/// Lower-cased word tokens of `text`, for any script.
///
/// - Sentences glued without a space (`Hawaii.Aulani`) are separated first
///   ([`separate_glued_sentences`]); decimals, abbreviations, file names and URLs are not.
/// - The text is lower-cased with Unicode's full case mapping (`str::to_lowercase`).
/// - Runs of Han characters are segmented with jieba (`cut`, HMM on).
/// - Everything else is split on Unicode word boundaries (UAX #29), keeping the pieces
///   that contain a letter or digit: `don't` and `3.14` stay whole, punctuation and emoji
///   are dropped, combining marks stay on their letter.
///
/// Non-ASCII letters are never dropped. Hiragana splits one character per token (UAX #29
/// has no rule for it), katakana runs stay whole:
///
/// ```
/// use rageval_core::text::words;
///
/// assert_eq!(words("Naïve Привет 日本語!"), ["naïve", "привет", "日本", "語"]);
/// assert_eq!(words("使用Python进行数据分析"), ["使用", "python", "进行", "数据分析"]);
/// assert_eq!(words("のテキスト"), ["の", "テキスト"]);
/// assert_eq!(words("in Hawaii.Aulani, see report.pdf"), ["in", "hawaii", "aulani", "see", "report.pdf"]);
/// ```
pub fn words(text: &str) -> Vec<String> {
    // Before lower-casing: whether a glued full stop ends a sentence depends on the capital.
    let lower = separate_glued_sentences(text).to_lowercase();
    let mut out = Vec::new();
    for (han, run) in script_runs(&lower) {
        if han {
            push_han_words(run, &mut out);
        } else {
            out.extend(run.unicode_words().map(str::to_string));
        }
    }
    out
}

/// What one grapheme cluster is, for the ROUGE tokeniser.
#[derive(PartialEq, Eq, Clone, Copy)]
enum Cluster {
    Han,
    Word,
    Separator,
}

/// Tokens for ROUGE: rouge-score's tokeniser made Unicode-aware.
///
/// rouge-score lower-cases, turns every run of characters outside `[a-z0-9]` into a space
/// and splits. We lower-case and keep maximal runs of grapheme clusters whose base
/// character is a letter or digit of any script (so accents and viramas stay attached);
/// runs of Han go through jieba. On ASCII text this is exactly rouge-score's tokenisation
/// without stemming: `don't` → `don`, `t`; `3.14` → `3`, `14`.
pub(crate) fn rouge_tokens(text: &str) -> Vec<String> {
    let lower = text.to_lowercase();
    let mut out = Vec::new();
    let mut run = String::new();
    let mut run_kind = Cluster::Separator;
    let flush = |run: &mut String, kind: Cluster, out: &mut Vec<String>| {
        match kind {
            Cluster::Han => push_han_words(run, out),
            Cluster::Word => out.push(run.clone()),
            Cluster::Separator => {}
        }
        run.clear();
    };
    for cluster in lower.graphemes(true) {
        let kind = match cluster.chars().next() {
            Some(c) if is_han(c) => Cluster::Han,
            Some(c) if c.is_alphanumeric() => Cluster::Word,
            _ => Cluster::Separator,
        };
        if kind != run_kind {
            flush(&mut run, run_kind, &mut out);
            run_kind = kind;
        }
        if kind != Cluster::Separator {
            run.push_str(cluster);
        }
    }
    flush(&mut run, run_kind, &mut out);
    out
}

/// Python's `str.isspace`, which `str.split()` and `str.strip()` use: Rust's `White_Space`
/// plus the four information separators U+001C–U+001F.
pub(crate) fn is_python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// sacrebleu's `13a` tokeniser (mteval-v13a, the WMT standard), token by token.
///
/// Removes `<skipped>` and hyphen-newline, turns newlines into spaces, unescapes `&quot;`,
/// `&amp;`, `&lt;`, `&gt;`, then applies [`mteval_rules`].
pub(crate) fn tokenize_13a(line: &str) -> Vec<String> {
    let mut line = line
        .replace("<skipped>", "")
        .replace("-\n", "")
        .replace('\n', " ");
    if line.contains('&') {
        line = line
            .replace("&quot;", "\"")
            .replace("&amp;", "&")
            .replace("&lt;", "<")
            .replace("&gt;", ">");
    }
    mteval_rules(&format!(" {line} "))
}

/// sacrebleu's `zh` tokeniser: strip, put spaces around every character in sacrebleu's
/// "Chinese" ranges ([`is_sacrebleu_chinese`]), then apply [`mteval_rules`].
pub(crate) fn tokenize_zh(line: &str) -> Vec<String> {
    let mut spaced = String::with_capacity(line.len() * 2);
    for c in line.trim_matches(is_python_space).chars() {
        if is_sacrebleu_chinese(c) {
            spaced.push(' ');
            spaced.push(c);
            spaced.push(' ');
        } else {
            spaced.push(c);
        }
    }
    mteval_rules(&spaced)
}

/// The character ranges sacrebleu's `zh` tokeniser separates, as they actually behave.
///
/// sacrebleu writes two of its ranges with four-hex-digit escapes followed by a fifth digit
/// (`'\u20000'`, `'\u2f800'`), which Python reads as two-character strings; compared with a
/// single character they select U+2001–U+2A6D (general punctuation such as “ ” — …, symbols
/// and arrows) and U+2F81–U+2FA1, and CJK Extension B is never separated. We reproduce that,
/// because the `zh` tokeniser exists to give sacrebleu's numbers. (The first range swallows
/// sacrebleu's U+2600–27BF ranges and the second lies inside its Kangxi range, so neither
/// is listed below.)
fn is_sacrebleu_chinese(c: char) -> bool {
    matches!(
        u32::from(c),
        0x3400..=0x4DB5
            | 0x4E00..=0x9FBB
            | 0xF900..=0xFA2D
            | 0xFA30..=0xFA6A
            | 0xFA70..=0xFAD9
            | 0x2001..=0x2A6D
            | 0xFF00..=0xFFEF
            | 0x2E80..=0x2EFF
            | 0x3000..=0x303F
            | 0x31C0..=0x31EF
            | 0x2F00..=0x2FDF
            | 0x2FF0..=0x2FFF
            | 0x3100..=0x312F
            | 0x31A0..=0x31BF
            | 0xFE10..=0xFE1F
            | 0xFE30..=0xFE4F
            | 0x3200..=0x32FF
            | 0x3300..=0x33FF
    )
}

/// The ASCII symbols mteval-v13a always separates: `{|}~ [\]^_` `` ` `` space `!"#$%&`
/// `()*+ :;<=>?@ /` (not `'`, `-`, `.` or `,`).
fn is_mteval_symbol(c: char) -> bool {
    matches!(c, '{'..='~' | '['..='`' | ' '..='&' | '('..='+' | ':'..='@' | '/')
}

/// One left-to-right, non-overlapping pass of a two-character rewrite rule, as Python's
/// `re.sub` does with a fixed two-character pattern.
fn rewrite_pairs(chars: &[char], rule: impl Fn(char, char) -> Option<[char; 4]>) -> Vec<char> {
    let mut out = Vec::with_capacity(chars.len() + chars.len() / 4);
    let mut i = 0;
    while i < chars.len() {
        let replacement = chars.get(i + 1).and_then(|&next| rule(chars[i], next));
        match replacement {
            Some(pair) => {
                out.extend(pair);
                i += 2;
            }
            None => {
                out.push(chars[i]);
                i += 1;
            }
        }
    }
    out
}

/// mteval-v13a's language-dependent rules (sacrebleu's `TokenizerRegexp`), in order:
/// separate the symbols of [`is_mteval_symbol`]; separate `.`/`,` unless preceded by a
/// digit; separate `.`/`,` unless followed by a digit; separate `-` after a digit; split
/// on whitespace. Digits are ASCII `0-9` only, as in the Python patterns.
fn mteval_rules(line: &str) -> Vec<String> {
    let mut chars = Vec::with_capacity(line.len() * 2);
    for c in line.chars() {
        if is_mteval_symbol(c) {
            chars.extend([' ', c, ' ']);
        } else {
            chars.push(c);
        }
    }
    let is_digit = |c: char| c.is_ascii_digit();
    let is_period_comma = |c: char| c == '.' || c == ',';
    let chars = rewrite_pairs(&chars, |a, b| {
        (!is_digit(a) && is_period_comma(b)).then_some([a, ' ', b, ' '])
    });
    let chars = rewrite_pairs(&chars, |a, b| {
        (is_period_comma(a) && !is_digit(b)).then_some([' ', a, ' ', b])
    });
    let chars = rewrite_pairs(&chars, |a, b| {
        (is_digit(a) && b == '-').then_some([a, ' ', b, ' '])
    });
    let text: String = chars.into_iter().collect();
    text.split(is_python_space)
        .filter(|token| !token.is_empty())
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strs(tokens: &[String]) -> Vec<&str> {
        tokens.iter().map(String::as_str).collect()
    }

    #[test]
    fn words_keep_every_script() {
        let tokens = words("Naïve Привет, Ångström! café 한국어 カタカナ");
        assert_eq!(
            strs(&tokens),
            ["naïve", "привет", "ångström", "café", "한국어", "カタカナ"]
        );
        let tokens = words("日本語");
        assert!(!tokens.is_empty());
        assert_eq!(tokens.concat(), "日本語");
    }

    #[test]
    fn words_keep_combining_marks_and_drop_punctuation_and_emoji() {
        // "nai\u{308}ve": the diaeresis is a separate combining code point.
        assert_eq!(
            strs(&words("nai\u{308}ve!! 😀 — ok")),
            ["nai\u{308}ve", "ok"]
        );
        assert_eq!(strs(&words("Don't stop: 3.14")), ["don't", "stop", "3.14"]);
        assert!(words("").is_empty());
        assert!(words("，。！？、…").is_empty());
    }

    #[test]
    fn words_segment_han_with_jieba() {
        assert_eq!(
            strs(&words("我来到北京清华大学")),
            ["我", "来到", "北京", "清华大学"]
        );
        assert_eq!(
            strs(&words("用Python写代码。")),
            ["用", "python", "写", "代码"]
        );
    }

    #[test]
    fn regression_issue_23_words_split_sentences_glued_without_a_space() {
        let tokens = words("…a spa in Hawaii.Aulani, a Disney resort…");
        assert_eq!(
            strs(&tokens),
            [
                "a", "spa", "in", "hawaii", "aulani", "a", "disney", "resort"
            ]
        );
        assert_eq!(
            strs(&words("Really?Yes.It works")),
            ["really", "yes", "it", "works"]
        );
    }

    #[test]
    fn regression_issue_23_words_keep_decimals() {
        assert_eq!(
            strs(&words("It rose 3.5.Then 3.5%")),
            ["it", "rose", "3.5", "then", "3.5"]
        );
    }

    #[test]
    fn regression_issue_23_words_keep_e_g_and_i_e() {
        assert_eq!(
            strs(&words("cities, e.g.Paris, i.e. Lyon")),
            ["cities", "e.g.paris", "i.e", "lyon"]
        );
    }

    #[test]
    fn regression_issue_23_words_keep_u_s() {
        assert_eq!(
            strs(&words("the U.S.Army and U.S. Navy")),
            ["the", "u.s.army", "and", "u.s", "navy"]
        );
    }

    #[test]
    fn regression_issue_23_words_keep_file_names() {
        assert_eq!(
            strs(&words("open report.pdf, main.rs and Report.PDF")),
            ["open", "report.pdf", "main.rs", "and", "report.pdf"]
        );
    }

    #[test]
    fn regression_issue_23_words_keep_urls_and_domains() {
        assert_eq!(
            strs(&words(
                "www.Example.com or https://Docs.Example.org/Guide.Intro"
            )),
            [
                "www.example.com",
                "or",
                "https",
                "docs.example.org",
                "guide.intro"
            ]
        );
    }

    #[test]
    fn regression_issue_23_words_keep_version_strings() {
        assert_eq!(
            strs(&words("v2.Beta and 1.10.Final")),
            ["v2", "beta", "and", "1.10", "final"]
        );
    }

    #[test]
    fn regression_issue_23_words_leave_chinese_unchanged() {
        assert_eq!(
            strs(&words("少儿编程市场规模很大。家长很重视！")),
            ["少儿", "编程", "市场", "规模", "很大", "家长", "很", "重视"]
        );
    }

    #[test]
    fn rouge_tokens_match_rouge_score_on_ascii() {
        assert_eq!(
            strs(&rouge_tokens("Don't stop: 3.14, a_b-c!")),
            ["don", "t", "stop", "3", "14", "a", "b", "c"]
        );
        assert_eq!(strs(&rouge_tokens("Müller fährt")), ["müller", "fährt"]);
        assert_eq!(
            strs(&rouge_tokens("巴黎是法国的首都")),
            ["巴黎", "是", "法国", "的", "首都"]
        );
        assert!(rouge_tokens(" \u{301}!! ").is_empty());
    }

    #[test]
    fn mteval_13a_examples() {
        assert_eq!(
            strs(&tokenize_13a("Hello, world! It's 3.5-4 \"great\".")),
            [
                "Hello", ",", "world", "!", "It's", "3.5", "-", "4", "\"", "great", "\"", "."
            ]
        );
        assert_eq!(strs(&tokenize_13a("a &amp; b<skipped>")), ["a", "&", "b"]);
        assert!(tokenize_13a("").is_empty());
    }

    #[test]
    fn sacrebleu_zh_examples() {
        assert_eq!(
            strs(&tokenize_zh("我爱Python，“真的”")),
            ["我", "爱", "Python", "，", "“", "真", "的", "”"]
        );
    }
}

/// Random text for property tests: words and pieces from many scripts, punctuation,
/// emoji, combining marks, zero-width joiners and odd whitespace.
#[cfg(test)]
pub(crate) fn random_text(rng: &mut crate::stats::SplitMix64) -> String {
    const PIECES: [&str; 32] = [
        "the",
        "cat",
        "Sat",
        "on",
        "mat",
        "Paris",
        "3.14",
        "don't",
        "e-mail",
        "naïve",
        "Привет",
        "日本語",
        "のテキスト",
        "한국어",
        "北京",
        "清华大学",
        "我",
        "来到",
        "的",
        "首都",
        "😀",
        "👩\u{200d}💻",
        "\u{301}",
        "a\u{308}",
        ",",
        ".",
        "，",
        "。",
        "“",
        "—",
        "&amp;",
        "<skipped>",
    ];
    const SPACES: [&str; 5] = [" ", "", "\n", "\u{3000}", "\t"];
    let count = rng.below(12);
    let mut text = String::new();
    for _ in 0..count {
        text.push_str(PIECES[rng.below(PIECES.len())]);
        text.push_str(SPACES[rng.below(SPACES.len())]);
    }
    text
}

#[cfg(test)]
mod properties {
    use super::*;
    use crate::stats::SplitMix64;

    #[test]
    fn tokenisers_never_panic_and_yield_clean_tokens() {
        let mut rng = SplitMix64::new(11);
        for _ in 0..500 {
            let text = random_text(&mut rng);
            for token in words(&text).iter().chain(&rouge_tokens(&text)) {
                assert!(!token.is_empty(), "{text:?}");
                assert_eq!(token, &token.to_lowercase(), "{text:?}");
                assert!(token.chars().any(char::is_alphanumeric), "{text:?}");
            }
            for token in tokenize_13a(&text).iter().chain(&tokenize_zh(&text)) {
                assert!(
                    !token.is_empty() && !token.contains(is_python_space),
                    "{text:?}"
                );
            }
        }
    }
}

/// sacrebleu's own tokenisers, token by token, on the fixture texts.
#[cfg(test)]
mod sacrebleu_reference {
    use super::*;

    #[test]
    fn tokenisers_match_sacrebleu() {
        let fixture: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/fixtures/text/tokenizers.json"))
                .expect("fixture is valid JSON");
        let cases = fixture["cases"].as_array().expect("cases array");
        assert!(cases.len() > 30);
        for case in cases {
            let text = case["text"].as_str().expect("text");
            let expected = |key: &str| -> Vec<String> {
                serde_json::from_value(case[key].clone()).expect("token list")
            };
            assert_eq!(tokenize_13a(text), expected("13a"), "13a {text:?}");
            assert_eq!(tokenize_zh(text), expected("zh"), "zh {text:?}");
        }
    }
}
