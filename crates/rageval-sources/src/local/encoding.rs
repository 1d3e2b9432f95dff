//! The bytes of a text-like file (plain text, Markdown, HTML, JSONL) into text, in whatever
//! encoding it was saved: UTF-8 (a BOM or none), UTF-16 with a BOM, an HTML `<meta charset>`,
//! else a guess by `chardetng` (the detector Firefox uses) among the legacy encodings —
//! GB18030/GBK, Big5, Shift-JIS, EUC-KR, the Windows code pages and others.
//!
//! Decoding is strict: a byte sequence the encoding cannot decode is an error, never a
//! replacement character, and so is text that decodes into control characters (binary data
//! read as if it were text). The caller decides what an undecodable file means (the index
//! skips it and counts it).

use encoding_rs::{Encoding, UTF_8};

/// Share of decoded characters that may be control characters (other than tab, newline,
/// carriage return and form feed) before the text is taken for binary data.
const MAX_CONTROL_SHARE: f64 = 0.01;
/// How far into an HTML file a `<meta charset>` is looked for (HTML puts it in the first
/// 1,024 bytes).
const META_SCAN_BYTES: usize = 1024;

/// A file's text and the encoding it was read in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// The text, without a byte-order mark.
    pub text: String,
    /// The encoding's WHATWG name: `UTF-8`, `UTF-16LE`, `GBK`, `Big5`, `Shift_JIS`, ...
    pub encoding: &'static str,
}

/// Decodes `bytes`; `html` looks for a `<meta charset>` before guessing. The error says why
/// the bytes are not text in any encoding tried.
pub fn decode(bytes: &[u8], html: bool) -> Result<Decoded, String> {
    if let Some((encoding, bom)) = Encoding::for_bom(bytes) {
        return strictly(encoding, &bytes[bom..]).ok_or_else(|| {
            format!(
                "starts with a {} byte-order mark, but is not valid {} text",
                encoding.name(),
                encoding.name()
            )
        });
    }
    if let Ok(text) = std::str::from_utf8(bytes) {
        return checked(text.to_owned(), UTF_8);
    }
    if bytes.contains(&0) {
        return Err("binary data (it has NUL bytes), not text".into());
    }
    let declared = html.then(|| meta_charset(bytes)).flatten();
    if let Some(decoded) = declared.and_then(|encoding| strictly(encoding, bytes)) {
        return Ok(decoded);
    }
    let mut detector = chardetng::EncodingDetector::new();
    detector.feed(bytes, true);
    let guessed = detector.guess(None, false);
    strictly(guessed, bytes).ok_or_else(|| {
        format!(
            "not text in a known encoding (not UTF-8; as {}, the best guess, it has invalid bytes)",
            guessed.name()
        )
    })
}

/// The text of `bytes` in `encoding`, or `None` when a byte sequence is invalid in it or
/// the result looks like binary data.
fn strictly(encoding: &'static Encoding, bytes: &[u8]) -> Option<Decoded> {
    let text = encoding.decode_without_bom_handling_and_without_replacement(bytes)?;
    checked(text.into_owned(), encoding).ok()
}

fn checked(text: String, encoding: &'static Encoding) -> Result<Decoded, String> {
    let total = text.chars().count();
    let control = text
        .chars()
        .filter(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r' | '\u{c}'))
        .count();
    if total > 0 && control as f64 / total as f64 > MAX_CONTROL_SHARE {
        return Err(format!(
            "binary data ({control} of {total} characters are control characters as {}), not text",
            encoding.name()
        ));
    }
    Ok(Decoded {
        text,
        encoding: encoding.name(),
    })
}

/// The encoding an HTML file declares in `<meta charset="…">` or `content="…; charset=…"`
/// within its first bytes (ASCII-compatible declarations only, as HTML requires).
fn meta_charset(bytes: &[u8]) -> Option<&'static Encoding> {
    let head = &bytes[..bytes.len().min(META_SCAN_BYTES)];
    let lower: Vec<u8> = head.to_ascii_lowercase();
    let at = lower.windows(8).position(|w| w == b"charset=")? + 8;
    let rest = &lower[at..];
    let rest = rest
        .strip_prefix(b"\"")
        .or_else(|| rest.strip_prefix(b"'"))
        .unwrap_or(rest);
    let end = rest
        .iter()
        .position(|b| matches!(b, b'"' | b'\'' | b';' | b'>' | b'/') || b.is_ascii_whitespace())
        .unwrap_or(rest.len());
    Encoding::for_label(&rest[..end]).filter(|e| e.is_ascii_compatible())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHINESE: &str =
        "少儿编程教育行业发展趋势报告：2024年市场规模约为488亿元，渗透率持续提升。";

    fn encode(text: &str, encoding: &'static Encoding) -> Vec<u8> {
        let (bytes, _, unmappable) = encoding.encode(text);
        assert!(!unmappable);
        bytes.into_owned()
    }

    #[test]
    fn utf8_with_and_without_bom() {
        let plain = decode(CHINESE.as_bytes(), false).unwrap();
        assert_eq!((plain.text.as_str(), plain.encoding), (CHINESE, "UTF-8"));
        let with_bom = [b"\xEF\xBB\xBF".as_slice(), CHINESE.as_bytes()].concat();
        assert_eq!(decode(&with_bom, false).unwrap(), plain);
    }

    #[test]
    fn utf16_with_a_bom() {
        let mut bytes = vec![0xFF, 0xFE];
        bytes.extend(CHINESE.encode_utf16().flat_map(u16::to_le_bytes));
        let decoded = decode(&bytes, false).unwrap();
        assert_eq!(
            (decoded.text.as_str(), decoded.encoding),
            (CHINESE, "UTF-16LE")
        );
        let mut big = vec![0xFE, 0xFF];
        big.extend(CHINESE.encode_utf16().flat_map(u16::to_be_bytes));
        assert_eq!(decode(&big, false).unwrap().encoding, "UTF-16BE");
        // An unpaired surrogate after the mark.
        assert!(decode(&[0xFF, 0xFE, 0x00, 0xD8, 0x41, 0x00], false).is_err());
    }

    #[test]
    fn legacy_cjk_encodings_are_detected() {
        let gbk = decode(&encode(CHINESE, encoding_rs::GBK), false).unwrap();
        assert_eq!((gbk.text.as_str(), gbk.encoding), (CHINESE, "GBK"));
        let traditional =
            "少兒程式教育行業發展趨勢報告：市場規模持續擴大，家長對程式設計教育的認知逐年提高。";
        let big5 = decode(&encode(traditional, encoding_rs::BIG5), false).unwrap();
        assert_eq!((big5.text.as_str(), big5.encoding), (traditional, "Big5"));
        let japanese =
            "子供向けプログラミング教育の市場は拡大を続けています。保護者の関心も高まっています。";
        let sjis = decode(&encode(japanese, encoding_rs::SHIFT_JIS), false).unwrap();
        assert_eq!((sjis.text.as_str(), sjis.encoding), (japanese, "Shift_JIS"));
    }

    #[test]
    fn html_meta_charset_is_honoured() {
        let html =
            format!("<html><head><meta charset=\"gb18030\"></head><body>{CHINESE}</body></html>");
        let decoded = decode(&encode(&html, encoding_rs::GB18030), true).unwrap();
        assert_eq!((decoded.text, decoded.encoding), (html, "gb18030"));
    }

    #[test]
    fn binary_data_is_not_text() {
        let png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00";
        assert!(decode(png, false).unwrap_err().contains("binary"));
        let noise: Vec<u8> = (0u16..600).map(|i| (i * 7 % 31) as u8 + 1).collect();
        let err = decode(&[b"\xC3\x28".as_slice(), &noise].concat(), false).unwrap_err();
        assert!(err.contains("not text"), "{err}");
    }
}
