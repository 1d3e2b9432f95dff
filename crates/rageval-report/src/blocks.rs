//! A report as a list of blocks — headings, paragraphs, bullet lists, tables of text cells —
//! written once and rendered as Markdown or as HTML, so `report.md` and `report.html` of
//! a run say the same thing. Every text passes through [`crate::escape`] on the way out;
//! the blocks themselves hold plain text.

use std::fmt::Write as _;

use crate::escape::{escape_html as e, escape_markdown_cell};

/// A run of text inside a paragraph.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Span {
    Text(String),
    /// A name the reader could type (a criterion, a flag): `code` in both formats.
    Code(String),
}

/// A table of text cells; `numeric` columns are right-aligned in HTML.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Table {
    pub headers: Vec<String>,
    pub numeric: Vec<bool>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these headers, the columns marked `#` in `kinds` numeric.
    pub fn new(headers: &[&str], kinds: &str) -> Self {
        Table {
            headers: headers.iter().map(|h| (*h).to_owned()).collect(),
            numeric: headers
                .iter()
                .enumerate()
                .map(|(i, _)| kinds.as_bytes().get(i) == Some(&b'#'))
                .collect(),
            rows: Vec::new(),
        }
    }
}

/// One block of a report.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Block {
    /// The page's title (`#`, `<h1>`).
    Title(String),
    /// A section's heading (`##`, `<h2>`).
    Heading(String),
    Paragraph(Vec<Span>),
    Bullets(Vec<String>),
    Table(Table),
}

impl Block {
    /// A paragraph of plain text.
    pub fn text(text: impl Into<String>) -> Self {
        Block::Paragraph(vec![Span::Text(text.into())])
    }
}

/// The blocks as Markdown: blocks apart by one empty line, the title first.
pub(crate) fn to_markdown(blocks: &[Block]) -> String {
    let mut md = String::new();
    for block in blocks {
        if !md.is_empty() {
            md.push('\n');
        }
        match block {
            Block::Title(title) => {
                let _ = writeln!(md, "# {title}");
            }
            Block::Heading(heading) => {
                let _ = writeln!(md, "## {heading}");
            }
            Block::Paragraph(spans) => {
                for span in spans {
                    match span {
                        Span::Text(text) => md.push_str(text),
                        Span::Code(code) => {
                            let _ = write!(md, "`{code}`");
                        }
                    }
                }
                md.push('\n');
            }
            Block::Bullets(items) => {
                for item in items {
                    let _ = writeln!(md, "- {item}");
                }
            }
            Block::Table(table) => {
                let row = |cells: &[String]| {
                    let cells: Vec<String> =
                        cells.iter().map(|c| escape_markdown_cell(c)).collect();
                    format!("| {} |\n", cells.join(" | "))
                };
                md.push_str(&row(&table.headers));
                md.push_str(&format!("|{}\n", "---|".repeat(table.headers.len())));
                for cells in &table.rows {
                    md.push_str(&row(cells));
                }
            }
        }
    }
    md
}

/// The blocks as HTML (a page's body, without the shell): each table in a box that
/// scrolls sideways on its own, so a wide table never widens the page.
pub(crate) fn to_html(blocks: &[Block]) -> String {
    let mut html = String::new();
    for block in blocks {
        match block {
            Block::Title(title) => {
                let _ = writeln!(html, "<h1>{}</h1>", e(title));
            }
            Block::Heading(heading) => {
                let _ = writeln!(html, "<h2>{}</h2>", e(heading));
            }
            Block::Paragraph(spans) => {
                html.push_str("<p>");
                for span in spans {
                    match span {
                        Span::Text(text) => html.push_str(&e(text)),
                        Span::Code(code) => {
                            let _ = write!(html, "<code>{}</code>", e(code));
                        }
                    }
                }
                html.push_str("</p>\n");
            }
            Block::Bullets(items) => {
                html.push_str("<ul>\n");
                for item in items {
                    let _ = writeln!(html, "<li>{}</li>", e(item));
                }
                html.push_str("</ul>\n");
            }
            Block::Table(table) => html.push_str(&table_html(table)),
        }
    }
    html
}

fn table_html(table: &Table) -> String {
    let class = |column: usize| {
        if table.numeric.get(column) == Some(&true) {
            " class=\"num\""
        } else {
            ""
        }
    };
    let mut html = String::from("<div class=\"wide\"><table><thead><tr>");
    for (column, header) in table.headers.iter().enumerate() {
        let _ = write!(html, "<th{}>{}</th>", class(column), e(header));
    }
    html.push_str("</tr></thead><tbody>\n");
    for cells in &table.rows {
        html.push_str("<tr>");
        for (column, cell) in cells.iter().enumerate() {
            let _ = write!(html, "<td{}>{}</td>", class(column), e(cell));
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody></table></div>\n");
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_formats_escape_what_came_from_data() {
        let mut table = Table::new(&["name", "n"], " #");
        table.rows.push(vec!["<b>a|b</b>".into(), "3".into()]);
        let blocks = [
            Block::Title("T <x>".into()),
            Block::Paragraph(vec![Span::Text("see ".into()), Span::Code("rag".into())]),
            Block::Table(table),
        ];
        assert_eq!(
            to_markdown(&blocks),
            "# T <x>\n\nsee `rag`\n\n| name | n |\n|---|---|\n| &lt;b&gt;a\\|b&lt;/b&gt; | 3 |\n"
        );
        let html = to_html(&blocks);
        assert!(html.contains("<h1>T &lt;x&gt;</h1>"), "{html}");
        assert!(html.contains("<p>see <code>rag</code></p>"), "{html}");
        assert!(
            html.contains("<td>&lt;b&gt;a|b&lt;/b&gt;</td><td class=\"num\">3</td>"),
            "{html}"
        );
    }
}
