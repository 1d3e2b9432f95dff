//! Escaping of text from data (answers, contexts, reasons, ids) before it goes into HTML,
//! SVG, XML or a Markdown table. Every string that came from a run passes through here.

/// Escapes `& < > " '` so the text is inert in HTML and XML content and attribute values.
pub fn escape_html(text: &str) -> String {
    escape(text, Destination::Html)
}

/// Makes text safe for one Markdown table cell: no line breaks, no column separators, and
/// no raw HTML (a renderer would otherwise run `<script>` from an answer). Quotes stay as
/// they are: outside a tag they start nothing, and the same text is printed on a terminal.
pub fn escape_markdown_cell(text: &str) -> String {
    escape(text, Destination::MarkdownCell)
}

/// Where escaped text goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Destination {
    Html,
    MarkdownCell,
}

fn escape(text: &str, into: Destination) -> String {
    let cell = into == Destination::MarkdownCell;
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if !cell => out.push_str("&quot;"),
            '\'' if !cell => out.push_str("&#39;"),
            '|' if cell => out.push_str("\\|"),
            '\n' | '\r' if cell => out.push(' '),
            // Control characters other than tab and newline are not allowed in XML 1.0.
            c if c.is_control() && c != '\n' && c != '\t' && c != '\r' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_become_text() {
        assert_eq!(
            escape_html("<script>alert('x&y')</script>"),
            "&lt;script&gt;alert(&#39;x&amp;y&#39;)&lt;/script&gt;"
        );
        assert_eq!(escape_markdown_cell("a|b\nc<i>"), "a\\|b c&lt;i&gt;");
        assert_eq!(escape_markdown_cell("people's \"x\""), "people's \"x\"");
        assert_eq!(escape_html("\u{1}"), "\u{FFFD}");
    }
}
