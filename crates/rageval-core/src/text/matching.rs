//! Exact match and string presence over normalised answers.
//!
//! ragas compares raw strings (`reference == response`, `reference in response`), so
//! `"Paris."` does not match `"paris"`. rageval normalises both sides first, in the spirit
//! of SQuAD's `normalize_answer`, but for every script: see [`normalize_answer`].

use super::language::is_han;

/// Normalises an answer for exact matching:
///
/// 1. fold full-width ASCII (U+FF01–FF5E, e.g. `Ｐａｒｉｓ１２`) and the ideographic space to
///    their ASCII forms — the one part of NFKC that Chinese input methods make common;
/// 2. lower-case (Unicode full case mapping);
/// 3. delete punctuation (see below) — deleted, not replaced by a space, as SQuAD does, so
///    `"U.S."` and `"us"` agree;
/// 4. collapse every run of whitespace to one space, trim the ends, and drop the space
///    between two Han characters entirely (Chinese does not separate words, so
///    `"北京 大学"` is `"北京大学"`).
///
/// Punctuation is: ASCII punctuation and symbols (Python's `string.punctuation`, which is
/// what SQuAD strips), their full-width forms (U+FF01–FF0F, FF1A–FF20, FF3B–FF40,
/// FF5B–FF65), CJK punctuation (`、。〈〉《》「」『』【】〔〕〖〗〘〙〚〛〜〝〞〟〰〽・`), the
/// General and Supplemental Punctuation blocks (dashes, quotes, `…`, `‰`, `※`, ...), Latin-1
/// punctuation (`¡§«¶·»¿`) and the vertical and small CJK forms. Letters, digits, currency
/// and other symbols stay. Unlike SQuAD, articles (`a`, `an`, `the`) are kept: dropping them
/// is English-only. No other Unicode normalisation is applied (`é` precomposed and `e` +
/// combining acute stay different).
pub fn normalize_answer(text: &str) -> String {
    let folded: String = text.chars().map(fold_full_width).collect();
    let lower = folded.to_lowercase();
    let mut out = String::with_capacity(lower.len());
    let mut last: Option<char> = None;
    let mut space_pending = false;
    for c in lower.chars().filter(|&c| !is_punctuation(c)) {
        if c.is_whitespace() {
            // Only a space between two kept characters survives, so the ends are trimmed.
            space_pending = last.is_some();
            continue;
        }
        if space_pending && !(last.is_some_and(is_han) && is_han(c)) {
            out.push(' ');
        }
        space_pending = false;
        out.push(c);
        last = Some(c);
    }
    out
}

/// Full-width ASCII variants and the ideographic space, mapped to ASCII.
fn fold_full_width(c: char) -> char {
    match u32::from(c) {
        0x3000 => ' ',
        code @ 0xFF01..=0xFF5E => char::from_u32(code - 0xFEE0).unwrap_or(c),
        _ => c,
    }
}

/// Whether the two answers are equal after [`normalize_answer`].
pub fn exact_match(prediction: &str, reference: &str) -> bool {
    normalize_answer(prediction) == normalize_answer(reference)
}

/// Whether `reference` occurs in `text` as a substring, both taken through
/// [`normalize_answer`] (so case and punctuation do not matter, unlike ragas's
/// case-sensitive `reference in response`).
///
/// A reference that normalises to the empty string is present in every text, as Python's
/// `"" in s` is; callers that treat an empty reference as undefined must check first.
pub fn string_presence(text: &str, reference: &str) -> bool {
    normalize_answer(text).contains(&normalize_answer(reference))
}

/// Punctuation as [`normalize_answer`] documents it.
pub(crate) fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation()
        || matches!(
            u32::from(c),
            0x00A1
                | 0x00A7
                | 0x00AB
                | 0x00B6
                | 0x00B7
                | 0x00BB
                | 0x00BF
                | 0x037E
                | 0x0387
                | 0x055A..=0x055F
                | 0x0589..=0x058A
                | 0x05BE
                | 0x05C0
                | 0x05C3
                | 0x05C6
                | 0x05F3..=0x05F4
                | 0x0609..=0x060A
                | 0x060C..=0x060D
                | 0x061B
                | 0x061D..=0x061F
                | 0x066A..=0x066D
                | 0x06D4
                | 0x0964..=0x0965
                | 0x0970
                | 0x0E4F
                | 0x0E5A..=0x0E5B
                | 0x2010..=0x2027
                | 0x2030..=0x2043
                | 0x2045..=0x2051
                | 0x2053..=0x205E
                | 0x207D..=0x207E
                | 0x208D..=0x208E
                | 0x2E00..=0x2E5D
                | 0x3001..=0x3003
                | 0x3008..=0x3011
                | 0x3014..=0x301F
                | 0x3030
                | 0x303D
                | 0x30A0
                | 0x30FB
                | 0xFE10..=0xFE19
                | 0xFE30..=0xFE52
                | 0xFE54..=0xFE61
                | 0xFE63
                | 0xFE68
                | 0xFE6A..=0xFE6B
                | 0xFF01..=0xFF0F
                | 0xFF1A..=0xFF20
                | 0xFF3B..=0xFF40
                | 0xFF5B..=0xFF65
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::tokenize::random_text;

    #[test]
    fn normalises_case_punctuation_and_spaces() {
        assert_eq!(
            normalize_answer("  The  Capital,\tis PARIS!  "),
            "the capital is paris"
        );
        assert_eq!(normalize_answer("“北京”，中国。"), "北京中国");
        assert_eq!(
            normalize_answer("Ｈｅｌｌｏ！（ｗｏｒｌｄ）１２"),
            "helloworld12"
        );
        assert_eq!(
            normalize_answer(" 北京　大学 , Peking  University "),
            "北京大学 peking university"
        );
        assert_eq!(normalize_answer("中国 GDP 增长"), "中国 gdp 增长");
        assert_eq!(normalize_answer("U.S. — ok…"), "us ok");
        assert_eq!(normalize_answer("Привет, Мир"), "привет мир");
        assert_eq!(normalize_answer("€5 + 😀"), "€5 😀");
        assert_eq!(normalize_answer(""), "");
    }

    #[test]
    fn exact_match_after_normalisation() {
        assert!(exact_match("Paris.", "paris"));
        assert!(exact_match("北京。", "北京"));
        assert!(exact_match("北京 大学", "北京大学"));
        assert!(exact_match("１９４９年", "1949年"));
        assert!(exact_match("", "  ...  "));
        assert!(!exact_match("Paris", "Pari s"));
        assert!(!exact_match("Paris", "London"));
    }

    #[test]
    fn presence_after_normalisation() {
        assert!(string_presence("The capital is Paris, France.", "paris"));
        assert!(string_presence("首都是北京。", "北京"));
        assert!(!string_presence("The capital is Paris.", "London"));
        assert!(string_presence("anything", ""));
        assert!(!string_presence("", "x"));
    }

    #[test]
    fn properties_on_random_texts() {
        let mut rng = crate::stats::SplitMix64::new(17);
        for _ in 0..500 {
            let (a, b) = (random_text(&mut rng), random_text(&mut rng));
            let normal = normalize_answer(&a);
            assert_eq!(normalize_answer(&normal), normal, "idempotent {a:?}");
            assert!(!normal.starts_with(' ') && !normal.ends_with(' ') && !normal.contains("  "));
            assert!(exact_match(&a, &a));
            assert_eq!(exact_match(&a, &b), exact_match(&b, &a));
            assert!(string_presence(&a, &a));
            assert!(string_presence(&format!("{b} {a} {b}"), &a), "{a:?} {b:?}");
        }
    }
}
