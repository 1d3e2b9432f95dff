//! Text as the index stores and searches it: Unicode NFKC, the CJK radicals NFKC leaves
//! mapped to their unified ideographs, and the full-width punctuation of Chinese and Japanese
//! text kept as written.
//!
//! Why: PDFs printed by Chromium or office suites with CJK fonts such as Noto Sans CJK often
//! map common ideographs to radical code points in their text layer (`⼈` U+2F08 for `人`,
//! `⼉` U+2F09 for `儿`, `⻓` U+2ED3 for `长`), so `少儿` would never match `少⼉`. NFKC maps
//! the Kangxi Radicals block (U+2F00–U+2FDF) and other compatibility forms (full-width
//! letters and digits, ligatures, circled numbers); the CJK Radicals Supplement
//! (U+2E80–U+2EFF) has no decompositions, so those with an equivalent unified ideograph are
//! mapped by [`RADICALS_SUPPLEMENT`]. Full-width punctuation (`，：（）；！？`) and the
//! ideographic space are exempt: NFKC would turn every Chinese comma into an ASCII one,
//! which changes the text people and judges read and helps no search (the tokenizer drops
//! punctuation).

use unicode_normalization::UnicodeNormalization;

/// The text normalised for indexing and searching (see the module doc). Idempotent.
pub fn normalize_text(text: &str) -> String {
    if text.is_ascii() {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut run_start = 0;
    for (at, c) in text.char_indices() {
        if keeps_its_width(c) {
            push_nfkc(&text[run_start..at], &mut out);
            out.push(c);
            run_start = at + c.len_utf8();
        }
    }
    push_nfkc(&text[run_start..], &mut out);
    out
}

/// NFKC of `run`, then the radicals NFKC leaves.
fn push_nfkc(run: &str, out: &mut String) {
    out.extend(run.nfkc().map(|c| supplement_radical(c).unwrap_or(c)));
}

/// Full-width punctuation and symbols (U+FF01–U+FF0F, U+FF1A–U+FF20, U+FF3B–U+FF40,
/// U+FF5B–U+FF65, U+FFE0–U+FFEE) and the ideographic space (U+3000).
fn keeps_its_width(c: char) -> bool {
    matches!(c,
        '\u{3000}'
        | '\u{FF01}'..='\u{FF0F}'
        | '\u{FF1A}'..='\u{FF20}'
        | '\u{FF3B}'..='\u{FF40}'
        | '\u{FF5B}'..='\u{FF65}'
        | '\u{FFE0}'..='\u{FFEE}')
}

/// The unified ideograph equivalent to a CJK Radicals Supplement character, if any.
fn supplement_radical(c: char) -> Option<char> {
    if !('\u{2E80}'..='\u{2EFF}').contains(&c) {
        return None;
    }
    RADICALS_SUPPLEMENT
        .binary_search_by_key(&c, |(radical, _)| *radical)
        .ok()
        .map(|i| RADICALS_SUPPLEMENT[i].1)
}

/// Every CJK Radicals Supplement character with an equivalent unified ideograph, sorted.
/// Source: Unicode's `EquivalentUnifiedIdeograph.txt` (UCD 15.0.0, Debian's `unicode-data`
/// package), the rows of U+2E80–U+2EFF expanded; the one radical it lists without an
/// equivalent, U+2E80 CJK RADICAL REPEAT, is left as it is.
pub const RADICALS_SUPPLEMENT: [(char, char); 114] = [
    ('\u{2E81}', '\u{5382}'),
    ('\u{2E82}', '\u{4E5B}'),
    ('\u{2E83}', '\u{4E5A}'),
    ('\u{2E84}', '\u{4E59}'),
    ('\u{2E85}', '\u{4EBB}'),
    ('\u{2E86}', '\u{5182}'),
    ('\u{2E87}', '\u{20628}'),
    ('\u{2E88}', '\u{5200}'),
    ('\u{2E89}', '\u{5202}'),
    ('\u{2E8A}', '\u{535C}'),
    ('\u{2E8B}', '\u{353E}'),
    ('\u{2E8C}', '\u{5C0F}'),
    ('\u{2E8D}', '\u{5C0F}'),
    ('\u{2E8E}', '\u{5140}'),
    ('\u{2E8F}', '\u{5C23}'),
    ('\u{2E90}', '\u{5C22}'),
    ('\u{2E91}', '\u{21BC2}'),
    ('\u{2E92}', '\u{5DF3}'),
    ('\u{2E93}', '\u{5E7A}'),
    ('\u{2E94}', '\u{5F51}'),
    ('\u{2E95}', '\u{2B739}'),
    ('\u{2E96}', '\u{5FC4}'),
    ('\u{2E97}', '\u{5FC3}'),
    ('\u{2E98}', '\u{624C}'),
    ('\u{2E99}', '\u{6535}'),
    ('\u{2E9B}', '\u{65E1}'),
    ('\u{2E9C}', '\u{65E5}'),
    ('\u{2E9D}', '\u{6708}'),
    ('\u{2E9E}', '\u{6B7A}'),
    ('\u{2E9F}', '\u{6BCD}'),
    ('\u{2EA0}', '\u{6C11}'),
    ('\u{2EA1}', '\u{6C35}'),
    ('\u{2EA2}', '\u{6C3A}'),
    ('\u{2EA3}', '\u{706C}'),
    ('\u{2EA4}', '\u{722B}'),
    ('\u{2EA5}', '\u{722B}'),
    ('\u{2EA6}', '\u{4E2C}'),
    ('\u{2EA7}', '\u{725B}'),
    ('\u{2EA8}', '\u{72AD}'),
    ('\u{2EA9}', '\u{738B}'),
    ('\u{2EAA}', '\u{24D14}'),
    ('\u{2EAB}', '\u{76EE}'),
    ('\u{2EAC}', '\u{793A}'),
    ('\u{2EAD}', '\u{793B}'),
    ('\u{2EAE}', '\u{25AD7}'),
    ('\u{2EAF}', '\u{7CF9}'),
    ('\u{2EB0}', '\u{7E9F}'),
    ('\u{2EB1}', '\u{7F53}'),
    ('\u{2EB2}', '\u{7F52}'),
    ('\u{2EB3}', '\u{34C1}'),
    ('\u{2EB4}', '\u{5197}'),
    ('\u{2EB5}', '\u{2626B}'),
    ('\u{2EB6}', '\u{7F8A}'),
    ('\u{2EB7}', '\u{2634C}'),
    ('\u{2EB8}', '\u{2634B}'),
    ('\u{2EB9}', '\u{8002}'),
    ('\u{2EBA}', '\u{8080}'),
    ('\u{2EBB}', '\u{807F}'),
    ('\u{2EBC}', '\u{8089}'),
    ('\u{2EBD}', '\u{26951}'),
    ('\u{2EBE}', '\u{8279}'),
    ('\u{2EBF}', '\u{8279}'),
    ('\u{2EC0}', '\u{8279}'),
    ('\u{2EC1}', '\u{864E}'),
    ('\u{2EC2}', '\u{8864}'),
    ('\u{2EC3}', '\u{8980}'),
    ('\u{2EC4}', '\u{897F}'),
    ('\u{2EC5}', '\u{89C1}'),
    ('\u{2EC6}', '\u{89D2}'),
    ('\u{2EC7}', '\u{278B2}'),
    ('\u{2EC8}', '\u{8BA0}'),
    ('\u{2EC9}', '\u{8D1D}'),
    ('\u{2ECA}', '\u{27FB7}'),
    ('\u{2ECB}', '\u{8F66}'),
    ('\u{2ECC}', '\u{8FB6}'),
    ('\u{2ECD}', '\u{8FB6}'),
    ('\u{2ECE}', '\u{8FB6}'),
    ('\u{2ECF}', '\u{9091}'),
    ('\u{2ED0}', '\u{9485}'),
    ('\u{2ED1}', '\u{9577}'),
    ('\u{2ED2}', '\u{9578}'),
    ('\u{2ED3}', '\u{957F}'),
    ('\u{2ED4}', '\u{95E8}'),
    ('\u{2ED5}', '\u{28E0F}'),
    ('\u{2ED6}', '\u{961D}'),
    ('\u{2ED7}', '\u{96E8}'),
    ('\u{2ED8}', '\u{9752}'),
    ('\u{2ED9}', '\u{97E6}'),
    ('\u{2EDA}', '\u{9875}'),
    ('\u{2EDB}', '\u{98CE}'),
    ('\u{2EDC}', '\u{98DE}'),
    ('\u{2EDD}', '\u{98DF}'),
    ('\u{2EDE}', '\u{2967F}'),
    ('\u{2EDF}', '\u{98E0}'),
    ('\u{2EE0}', '\u{9963}'),
    ('\u{2EE1}', '\u{29810}'),
    ('\u{2EE2}', '\u{9A6C}'),
    ('\u{2EE3}', '\u{9AA8}'),
    ('\u{2EE4}', '\u{9B3C}'),
    ('\u{2EE5}', '\u{9C7C}'),
    ('\u{2EE6}', '\u{9E1F}'),
    ('\u{2EE7}', '\u{5364}'),
    ('\u{2EE8}', '\u{9EA6}'),
    ('\u{2EE9}', '\u{9EC4}'),
    ('\u{2EEA}', '\u{9EFE}'),
    ('\u{2EEB}', '\u{6589}'),
    ('\u{2EEC}', '\u{9F50}'),
    ('\u{2EED}', '\u{6B6F}'),
    ('\u{2EEE}', '\u{9F7F}'),
    ('\u{2EEF}', '\u{7ADC}'),
    ('\u{2EF0}', '\u{9F99}'),
    ('\u{2EF1}', '\u{9F9C}'),
    ('\u{2EF2}', '\u{4E80}'),
    ('\u{2EF3}', '\u{9F9F}'),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kangxi_and_supplement_radicals_become_ideographs() {
        // As Chromium + Noto Sans CJK write them: ⼉ U+2F09, ⼈ U+2F08, ⼯ U+2F2F, ⼀ U+2F00,
        // ⻓ U+2ED3 (CJK RADICAL C-SIMPLIFIED LONG).
        assert_eq!(
            normalize_text("少⼉编程，⼈⼯智能；⼀个家⻓"),
            "少儿编程，人工智能；一个家长"
        );
    }

    #[test]
    fn compatibility_forms_fold_and_chinese_punctuation_stays() {
        assert_eq!(
            normalize_text("ＡＩ编程　１２３：ﬁne ①（好）"),
            "AI编程　123：fine 1（好）"
        );
        assert_eq!(normalize_text("e\u{301}"), "é");
        assert_eq!(normalize_text("plain ascii"), "plain ascii");
    }

    #[test]
    fn normalising_twice_changes_nothing() {
        let text = "⺀⺁⻳ ＡＢ ⼉，ｶﾞ";
        let once = normalize_text(text);
        assert_eq!(normalize_text(&once), once);
        assert!(once.starts_with("⺀厂龟"), "{once}");
    }

    #[test]
    fn the_table_is_sorted_and_inside_the_block() {
        assert!(RADICALS_SUPPLEMENT.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(
            RADICALS_SUPPLEMENT
                .iter()
                .all(|(r, _)| ('\u{2E80}'..='\u{2EFF}').contains(r))
        );
    }
}
