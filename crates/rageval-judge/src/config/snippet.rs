//! A TOML parse error as a person reads it: the line and column where it starts, and the
//! line itself with a caret under the offending span, the way compilers show them.
//!
//! Values are never quoted back: every quoted string in the message and in the shown line
//! prints as `"…"`, a value the message quotes in backticks (serde's `integer `5``) as
//! `` `…` ``, and so does the offending span when it is a value (right of the line's first
//! `=` and not itself followed by one: an unquoted password is exactly such an error),
//! since a misplaced value may be a key. Keys are shown. Used by `rageval.toml`'s reader
//! and by the sources settings (`rageval-sources`).

use std::ops::Range;

/// Where a TOML error is, ready to print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// The gutter, the line (strings masked) and a caret line, newline-separated.
    pub snippet: String,
}

/// Where `error` is in `text`, when the parser gave a span.
pub fn locate_error(text: &str, error: &toml::de::Error) -> Option<Located> {
    error.span().map(|span| locate(text, span))
}

/// The line, column and snippet of the byte range `span` of `text`.
pub fn locate(text: &str, span: Range<usize>) -> Located {
    let start = floor_char_boundary(text, span.start.min(text.len()));
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let line_text = text[line_start..line_end].trim_end_matches('\r');
    let line = text[..start].matches('\n').count() + 1;
    let column = text[line_start..start].chars().count() + 1;
    let end = floor_char_boundary(text, span.end.clamp(start, line_start + line_text.len()));
    let first = column - 1;
    let last = first + text[start..end].chars().count();
    let is_key = line_text
        .chars()
        .skip(last)
        .find(|c| !c.is_whitespace())
        .is_some_and(|c| c == '=' || c == '.');
    let in_value = !is_key && value_start(line_text).is_some_and(|at| first >= at);
    let (shown, map) = masked(line_text, in_value.then_some(first..last));
    let from = map.get(first).copied().unwrap_or(shown.chars().count());
    let to = if last > first {
        map.get(last - 1).map_or(from + 1, |m| m + 1)
    } else {
        from + 1
    };
    let gutter = " ".repeat(line.to_string().len());
    let caret = format!(
        "{}{}",
        " ".repeat(from),
        "^".repeat(to.saturating_sub(from).max(1))
    );
    Located {
        line,
        column,
        snippet: format!("{gutter} |\n{line} | {shown}\n{gutter} | {caret}"),
    }
}

/// `message` with every double-quoted string replaced by `"…"`, and every value serde quotes
/// in backticks (`integer `5``, `unknown variant `x``, ...) by `` `…` ``. Backticked keys
/// (`unknown field `modle``) and the names an error expects stay.
pub fn mask_quoted(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut inside = false;
    for c in message.chars() {
        if c == '"' {
            if inside {
                out.push('…');
            }
            inside = !inside;
            out.push(c);
        } else if !inside {
            out.push(c);
        }
    }
    mask_backticked_values(out.trim_end())
}

/// How serde writes a value it did not expect, or a variant it does not know, just before
/// the value's opening backtick (`serde::de::Unexpected` and `Error::unknown_variant`).
const VALUE_BEFORE_BACKTICK: [&str; 5] = [
    "boolean ",
    "integer ",
    "floating point ",
    "character ",
    "unknown variant ",
];

fn mask_backticked_values(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(open) = rest.find('`') {
        let (before, after) = rest.split_at(open);
        out.push_str(before);
        let is_value = VALUE_BEFORE_BACKTICK.iter().any(|lead| out.ends_with(lead));
        match after[1..].find('`') {
            Some(close) if is_value => {
                out.push_str("`…`");
                rest = &after[close + 2..];
            }
            Some(close) => {
                out.push_str(&after[..close + 2]);
                rest = &after[close + 2..];
            }
            None => {
                out.push_str(after);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// The character index just after the first `=` outside quotes, if the line has one.
fn value_start(line: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    for (i, c) in line.chars().enumerate() {
        match quote {
            None if c == '=' => return Some(i + 1),
            None if c == '"' || c == '\'' => quote = Some(c),
            Some(q) if c == q => quote = None,
            _ => {}
        }
    }
    None
}

/// A TOML line with the contents of its quoted strings (basic and literal), and the
/// characters of `hide`, each replaced by one `…`, and for each character of the original
/// line its column in the masked one.
fn masked(line: &str, hide: Option<Range<usize>>) -> (String, Vec<usize>) {
    let mut shown = String::with_capacity(line.len());
    let mut map = Vec::with_capacity(line.len());
    let mut column = 0;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut ellipsis_at: Option<usize> = None;
    let mut hidden_at: Option<usize> = None;
    for (i, c) in line.chars().enumerate() {
        if hide.as_ref().is_some_and(|h| h.contains(&i)) {
            let at = *hidden_at.get_or_insert_with(|| {
                shown.push('…');
                column += 1;
                column - 1
            });
            map.push(at);
            // A quote inside the hidden span still opens or closes a string.
            if quote.is_none() && (c == '"' || c == '\'') {
                quote = Some(c);
                ellipsis_at = Some(at);
            } else if quote == Some(c) {
                quote = None;
            }
            continue;
        }
        match quote {
            None => {
                if c == '"' || c == '\'' {
                    quote = Some(c);
                    ellipsis_at = None;
                }
                map.push(column);
                shown.push(c);
                column += 1;
            }
            Some(q) if c == q && !escaped => {
                quote = None;
                map.push(column);
                shown.push(c);
                column += 1;
            }
            Some(q) => {
                escaped = q == '"' && c == '\\' && !escaped;
                let at = *ellipsis_at.get_or_insert_with(|| {
                    shown.push('…');
                    column += 1;
                    column - 1
                });
                map.push(at);
            }
        }
    }
    (shown, map)
}

/// The largest char boundary of `text` at or before `at`.
fn floor_char_boundary(text: &str, mut at: usize) -> usize {
    while at > 0 && !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_column_and_caret_under_the_span() {
        let text = "[service]\nurl = \"http://x\"\nrespones = \"json\"\n";
        let start = text.find("respones").unwrap();
        let located = locate(text, start..start + "respones".len());
        assert_eq!((located.line, located.column), (3, 1));
        assert_eq!(located.snippet, "  |\n3 | respones = \"…\"\n  | ^^^^^^^^");
    }

    #[test]
    fn quoted_values_are_masked_and_the_caret_follows() {
        let text = "[judge]\npassword = \"hunter2\"   weight = 0\n";
        let start = text.find("weight").unwrap();
        let located = locate(text, start..start + 6);
        assert_eq!(located.column, 24);
        assert!(!located.snippet.contains("hunter2"), "{}", located.snippet);
        assert_eq!(
            located.snippet,
            "  |\n2 | password = \"…\"   weight = 0\n  |                  ^^^^^^"
        );
        let inside = text.find("hunter2").unwrap();
        let located = locate(text, inside - 1..inside + 8);
        assert!(
            located.snippet.ends_with("|            ^"),
            "{}",
            located.snippet
        );
    }

    #[test]
    fn an_unquoted_value_in_error_is_masked_and_a_key_is_shown() {
        let text = "[elasticsearch]\npassword = hunter2\n";
        let start = text.find("hunter2").unwrap();
        let located = locate(text, start..start + 7);
        assert_eq!(located.column, 12);
        assert_eq!(located.snippet, "  |\n2 | password = …\n  |            ^");
        let text = "[elasticsearch]\nsize = 200\n";
        let key = text.find("size").unwrap();
        let located = locate(text, key..key + 4);
        assert_eq!(located.snippet, "  |\n2 | size = 200\n  | ^^^^");
    }

    #[test]
    fn wide_characters_count_as_one_column_and_empty_spans_get_one_caret() {
        let text = "# 设置\nk = [1,";
        let located = locate(text, text.len()..text.len());
        assert_eq!((located.line, located.column), (2, 8));
        assert!(
            located.snippet.ends_with("|        ^"),
            "{:?}",
            located.snippet
        );
        assert_eq!(
            mask_quoted("invalid type: string \"sk-1\", expected"),
            "invalid type: string \"…\", expected"
        );
    }

    #[test]
    fn values_serde_quotes_in_backticks_are_masked_and_keys_are_not() {
        assert_eq!(
            mask_quoted("invalid type: integer `123456`, expected a string"),
            "invalid type: integer `…`, expected a string"
        );
        assert_eq!(
            mask_quoted("invalid type: floating point `1.5`, expected u64"),
            "invalid type: floating point `…`, expected u64"
        );
        assert_eq!(
            mask_quoted("unknown variant `sk-9`, expected `response_format` or `in_prompt`"),
            "unknown variant `…`, expected `response_format` or `in_prompt`"
        );
        assert_eq!(
            mask_quoted("unknown field `modle`, expected one of `model`, `base_url`"),
            "unknown field `modle`, expected one of `model`, `base_url`"
        );
        assert_eq!(mask_quoted("a stray ` backtick"), "a stray ` backtick");
    }
}
