//! HTML to plain text, without a DOM: the text of the page in reading order, with block
//! elements on their own lines, `script`/`style`-like elements dropped, whitespace collapsed
//! outside `pre`, and character references decoded.
//!
//! A hand-written scanner rather than an HTML5 parser: loaders need the words and the
//! paragraph breaks (the splitter cuts at blank lines first), not a tree, and html5ever would
//! double the dependency tree of this crate. Malformed markup never fails: an unclosed tag
//! ends the text.

/// Elements whose content is not text a reader sees.
const SKIPPED: [&str; 7] = [
    "script", "style", "noscript", "template", "svg", "head", "iframe",
];

/// Elements that start and end a paragraph (a blank line around them).
const PARAGRAPHS: [&str; 18] = [
    "p",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "pre",
    "blockquote",
    "table",
    "ul",
    "ol",
    "dl",
    "section",
    "article",
    "header",
    "footer",
    "figure",
];

/// Elements that start and end a line.
const LINES: [&str; 11] = [
    "div", "li", "tr", "dt", "dd", "br", "hr", "main", "nav", "aside", "title",
];

/// The visible text of an HTML document.
pub fn html_to_text(html: &str) -> String {
    let mut out = Text::default();
    let mut rest = html;
    let mut pre_depth = 0usize;
    while !rest.is_empty() {
        let Some(lt) = rest.find('<') else {
            out.push_text(&decode_entities(rest), pre_depth > 0);
            break;
        };
        out.push_text(&decode_entities(&rest[..lt]), pre_depth > 0);
        rest = &rest[lt..];
        if let Some(after) = rest.strip_prefix("<!--") {
            rest = after.find("-->").map_or("", |i| &after[i + 3..]);
            continue;
        }
        let Some(gt) = rest.find('>') else { break };
        let tag = &rest[1..gt];
        rest = &rest[gt + 1..];
        if tag.starts_with('!') || tag.starts_with('?') {
            continue;
        }
        let closing = tag.starts_with('/');
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        if !closing && SKIPPED.contains(&name.as_str()) && !tag.ends_with('/') {
            let end = format!("</{name}");
            rest = find_ascii_case_insensitive(rest, &end).map_or("", |i| {
                rest[i..].find('>').map_or("", |j| &rest[i + j + 1..])
            });
            continue;
        }
        if name == "pre" {
            pre_depth = if closing {
                pre_depth.saturating_sub(1)
            } else {
                pre_depth + 1
            };
        }
        if PARAGRAPHS.contains(&name.as_str()) {
            out.break_line(2);
        } else if LINES.contains(&name.as_str()) {
            out.break_line(1);
        } else if matches!(name.as_str(), "td" | "th") && !closing {
            out.push_text(" ", false);
        }
    }
    out.finish()
}

/// The text built so far: runs of whitespace become one space, line breaks wait until the
/// next character so that several collapse into the largest.
#[derive(Default)]
struct Text {
    out: String,
    pending_breaks: usize,
    pending_space: bool,
}

impl Text {
    fn push_text(&mut self, text: &str, preformatted: bool) {
        if preformatted {
            if !text.is_empty() {
                self.flush_breaks();
                self.out.push_str(text);
            }
            return;
        }
        for c in text.chars() {
            if c.is_whitespace() {
                self.pending_space = true;
                continue;
            }
            if self.pending_breaks > 0 {
                self.flush_breaks();
            } else if self.pending_space && !self.out.is_empty() && !self.out.ends_with('\n') {
                self.out.push(' ');
            }
            self.pending_space = false;
            self.out.push(c);
        }
    }

    fn break_line(&mut self, lines: usize) {
        self.pending_breaks = self.pending_breaks.max(lines);
        self.pending_space = false;
    }

    fn flush_breaks(&mut self) {
        if self.pending_breaks > 0 && !self.out.is_empty() {
            let have = self.out.len() - self.out.trim_end_matches('\n').len();
            for _ in have..self.pending_breaks {
                self.out.push('\n');
            }
        }
        self.pending_breaks = 0;
        self.pending_space = false;
    }

    fn finish(self) -> String {
        self.out.trim().to_owned()
    }
}

fn find_ascii_case_insensitive(haystack: &str, needle: &str) -> Option<usize> {
    let needle = needle.as_bytes();
    haystack
        .as_bytes()
        .windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
}

/// Replaces character references (`&amp;`, `&#22909;`, `&#x597D;`) by their characters;
/// unknown ones stay as written.
pub(super) fn decode_entities(text: &str) -> String {
    if !text.contains('&') {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let decoded = rest[1..]
            .find(';')
            .filter(|&end| end <= 32)
            .and_then(|end| Some((entity(&rest[1..1 + end])?, end + 2)));
        match decoded {
            Some((c, consumed)) => {
                out.push(c);
                rest = &rest[consumed..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The character a reference names (`amp`, `#123`, `#x7B`), for the references that occur
/// in real documents.
pub(super) fn entity(name: &str) -> Option<char> {
    if let Some(number) = name.strip_prefix('#') {
        let code = match number.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => number.parse().ok()?,
        };
        return char::from_u32(code);
    }
    Some(match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => ' ',
        "copy" => '©',
        "reg" => '®',
        "trade" => '™',
        "hellip" => '…',
        "mdash" => '—',
        "ndash" => '–',
        "lsquo" => '‘',
        "rsquo" => '’',
        "ldquo" => '“',
        "rdquo" => '”',
        "middot" => '·',
        "bull" => '•',
        "times" => '×',
        "deg" => '°',
        "yen" => '¥',
        "euro" => '€',
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_become_paragraphs_and_inline_text_flows() {
        let html = "<!DOCTYPE html><html><head><title>t</title><style>p{color:red}</style></head>\
            <body><h1>少儿编程</h1><p>市场规模约 <b>488</b> 亿元。</p>\
            <script>var x = '<p>no</p>';</script><ul><li>Python</li><li>C&#43;&#x2B; &amp; Scratch</li></ul>\
            <!-- hidden --><div>a<br>b</div></body></html>";
        assert_eq!(
            html_to_text(html),
            "少儿编程\n\n市场规模约 488 亿元。\n\nPython\nC++ & Scratch\n\na\nb"
        );
    }

    #[test]
    fn pre_keeps_whitespace_and_bad_markup_does_not_fail() {
        assert_eq!(html_to_text("<pre>a  b\n  c</pre>x"), "a  b\n  c\n\nx");
        assert_eq!(html_to_text("text <b unclosed"), "text");
        assert_eq!(
            decode_entities("a &unknown; &#xZZ; &lt;"),
            "a &unknown; &#xZZ; <"
        );
    }
}
