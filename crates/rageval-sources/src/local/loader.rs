//! Documents into text: PDF, DOCX, HTML, Markdown and plain text, plus JSONL files of
//! chunks already split (not split again).
//!
//! The kind comes from the file extension. PDF text comes from `pdf-extract` (pure Rust, on
//! `lopdf`): it reads the `ToUnicode` maps and CID fonts that Chinese PDFs written by office
//! suites use, page by page; pages are joined by a blank line so that the splitter prefers to
//! cut there. Text-like files are decoded in the encoding they were saved in
//! ([`encoding`](super::encoding): UTF-8/16 with a BOM, GBK, Big5, Shift-JIS, ...). Every
//! format's text, given chunks included, is normalised by
//! [`normalize_text`] (NFKC and the CJK radicals it leaves).
//!
//! A file whose content cannot be read is a [`SourceError::Document`] naming the file and
//! what is wrong (the index skips such files and counts them); a file that cannot be opened
//! is [`SourceError::Io`]. Nothing here panics on a malformed document (a panic inside the
//! PDF parser is caught and reported as an error).

use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::encoding::decode;
use super::normalize::normalize_text;
use super::{docx, html};
use crate::error::SourceError;
use crate::json_path::scalar_text;

/// What kind of file a document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocumentKind {
    /// `.pdf`
    Pdf,
    /// `.docx`
    Docx,
    /// `.html`, `.htm`, `.xhtml`
    Html,
    /// `.md`, `.markdown`
    Markdown,
    /// `.txt`, `.text`
    Text,
    /// `.jsonl`: one chunk per line, `{"text": …, "id": …}`, not split again.
    Chunks,
}

impl DocumentKind {
    /// Extensions recognised, for messages.
    pub const EXTENSIONS: &str = ".pdf .docx .html .htm .xhtml .md .markdown .txt .text .jsonl";

    /// The kind of a path, from its extension (case-insensitive).
    pub fn of(path: &Path) -> Option<DocumentKind> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "pdf" => DocumentKind::Pdf,
            "docx" => DocumentKind::Docx,
            "html" | "htm" | "xhtml" => DocumentKind::Html,
            "md" | "markdown" => DocumentKind::Markdown,
            "txt" | "text" => DocumentKind::Text,
            "jsonl" => DocumentKind::Chunks,
            _ => return None,
        })
    }

    /// Its name in the index manifest.
    pub fn name(self) -> &'static str {
        match self {
            DocumentKind::Pdf => "pdf",
            DocumentKind::Docx => "docx",
            DocumentKind::Html => "html",
            DocumentKind::Markdown => "markdown",
            DocumentKind::Text => "text",
            DocumentKind::Chunks => "chunks",
        }
    }
}

/// A chunk given in a JSONL file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GivenChunk {
    /// Its `id` (or `uuid`, `_id`), when it has one.
    pub id: Option<String>,
    /// Its text.
    pub text: String,
    /// Its 1-based line in the file.
    pub line: usize,
}

/// A document's content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// Text to split.
    Text(String),
    /// Chunks to index as they are.
    Chunks(Vec<GivenChunk>),
}

/// One loaded document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    /// Where it was read from.
    pub path: PathBuf,
    /// What kind of file it is.
    pub kind: DocumentKind,
    /// SHA-256 of the file's bytes, hex.
    pub sha256: String,
    /// The encoding a text-like file was read in (`UTF-8`, `GBK`, ...); `None` for PDF and
    /// DOCX.
    pub encoding: Option<&'static str>,
    /// Its text or chunks, normalised.
    pub content: Content,
}

impl Document {
    /// Whether it holds no text to index.
    pub fn is_empty(&self) -> bool {
        match &self.content {
            Content::Text(text) => text.trim().is_empty(),
            Content::Chunks(chunks) => chunks.iter().all(|c| c.text.trim().is_empty()),
        }
    }
}

/// Reads one document.
pub fn load(path: &Path) -> Result<Document, SourceError> {
    let kind = DocumentKind::of(path).ok_or_else(|| unsupported(path))?;
    let bytes = std::fs::read(path).map_err(|e| SourceError::io(path, e))?;
    let bad = |detail: String| SourceError::Document {
        path: path.to_owned(),
        detail,
    };
    let text = |html: bool| decode(&bytes, html).map_err(bad);
    let (content, encoding) = match kind {
        DocumentKind::Pdf => (Content::Text(pdf_text(&bytes).map_err(bad)?), None),
        DocumentKind::Docx => (
            Content::Text(docx::docx_to_text(&bytes).map_err(bad)?),
            None,
        ),
        DocumentKind::Html => {
            let decoded = text(true)?;
            let body = html::html_to_text(&decoded.text);
            (Content::Text(body), Some(decoded.encoding))
        }
        DocumentKind::Markdown => {
            let decoded = text(false)?;
            let body = markdown_text(&decoded.text.replace("\r\n", "\n"));
            (Content::Text(body), Some(decoded.encoding))
        }
        DocumentKind::Text => {
            let decoded = text(false)?;
            let body = decoded.text.replace("\r\n", "\n");
            (Content::Text(body), Some(decoded.encoding))
        }
        DocumentKind::Chunks => {
            let decoded = text(false)?;
            let chunks = chunk_lines(&decoded.text).map_err(bad)?;
            (Content::Chunks(chunks), Some(decoded.encoding))
        }
    };
    Ok(Document {
        path: path.to_owned(),
        kind,
        sha256: hex(&Sha256::digest(&bytes)),
        encoding,
        content: normalized(content),
    })
}

/// The content with every text normalised.
fn normalized(content: Content) -> Content {
    match content {
        Content::Text(text) => Content::Text(normalize_text(&text)),
        Content::Chunks(chunks) => Content::Chunks(
            chunks
                .into_iter()
                .map(|chunk| GivenChunk {
                    text: normalize_text(&chunk.text),
                    ..chunk
                })
                .collect(),
        ),
    }
}

/// One file to index, and the name its chunks are indexed under: its path below the
/// directory that was given (`guide/intro.md`, `/`-separated), or its file name when the
/// file itself was given. Never the path as typed: the same corpus indexed from two places
/// gives the same chunk ids, and no home directory ends up in every dataset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputFile {
    /// Where the file is read from.
    pub path: PathBuf,
    /// Its name in the index: chunk ids are `NAME#N`.
    pub name: String,
}

/// The files to index: each file as given (it must have a known extension), and every file
/// with a known extension under each directory, in path order. Two files that would be
/// indexed under one name are an error naming both.
pub fn expand_inputs(inputs: &[PathBuf]) -> Result<Vec<InputFile>, SourceError> {
    let mut files = Vec::new();
    for input in inputs {
        let meta = std::fs::metadata(input).map_err(|e| SourceError::io(input, e))?;
        if meta.is_dir() {
            let mut found = Vec::new();
            walk(input, &mut found)?;
            found.sort();
            files.extend(found.into_iter().map(|path| {
                let below = path.strip_prefix(input).unwrap_or(&path);
                let name = below
                    .components()
                    .map(|part| part.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/");
                InputFile { path, name }
            }));
        } else if DocumentKind::of(input).is_some() {
            let name = input.file_name().map_or_else(
                || input.display().to_string(),
                |name| name.to_string_lossy().into_owned(),
            );
            files.push(InputFile {
                path: input.clone(),
                name,
            });
        } else {
            return Err(unsupported(input));
        }
    }
    let mut named: std::collections::HashMap<&str, &Path> = std::collections::HashMap::new();
    for file in &files {
        if let Some(first) = named.insert(&file.name, &file.path) {
            return Err(SourceError::Document {
                path: file.path.clone(),
                detail: format!(
                    "would be indexed under the same name, `{}`, as {}: chunk ids are named \
                     after each file's path below the folder given, so index the folder \
                     that holds both",
                    file.name,
                    first.display()
                ),
            });
        }
    }
    Ok(files)
}

fn walk(dir: &Path, found: &mut Vec<PathBuf>) -> Result<(), SourceError> {
    let entries = std::fs::read_dir(dir).map_err(|e| SourceError::io(dir, e))?;
    for entry in entries {
        let path = entry.map_err(|e| SourceError::io(dir, e))?.path();
        if path.is_dir() {
            walk(&path, found)?;
        } else if DocumentKind::of(&path).is_some() {
            found.push(path);
        }
    }
    Ok(())
}

fn unsupported(path: &Path) -> SourceError {
    SourceError::Document {
        path: path.to_owned(),
        detail: format!(
            "unsupported file type (supported: {})",
            DocumentKind::EXTENSIONS
        ),
    }
}

/// The text of every page, pages separated by a blank line; empty when no page has text
/// (scanned pages without a text layer).
fn pdf_text(bytes: &[u8]) -> Result<String, String> {
    let pages = std::panic::catch_unwind(|| pdf_extract::extract_text_from_mem_by_pages(bytes))
        .map_err(|_| {
            "the pdf parser gave up on this file (malformed or unsupported pdf)".to_string()
        })?
        .map_err(|e| format!("cannot read pdf: {e}"))?;
    let pages: Vec<String> = pages
        .iter()
        .map(|p| p.trim())
        .filter(|p| !p.is_empty())
        .map(join_wrapped_han_lines)
        .collect();
    Ok(pages.join("\n\n"))
}

/// A PDF's text layer breaks a line where the page wrapped it; between two Han ideographs
/// that break is inside a word (`重要分` / `支`), and a break read as a space would cut the
/// word for every tokenizer after it. Such a single line break (with any spaces around it)
/// goes; blank lines, and breaks beside punctuation or other scripts, stay.
fn join_wrapped_han_lines(page: &str) -> String {
    let lines: Vec<&str> = page.split('\n').collect();
    let mut out = String::with_capacity(page.len());
    for (i, line) in lines.iter().enumerate() {
        if i == 0 {
            out.push_str(line);
            continue;
        }
        let previous = out.trim_end_matches([' ', '\t', '\r']);
        let ends_han = previous
            .chars()
            .last()
            .is_some_and(rageval_core::text::language::is_han);
        let next = line.trim_start_matches([' ', '\t']);
        let starts_han = next
            .chars()
            .next()
            .is_some_and(rageval_core::text::language::is_han);
        if ends_han && starts_han {
            out.truncate(previous.len());
            out.push_str(next);
        } else {
            out.push('\n');
            out.push_str(line);
        }
    }
    out
}

/// Markdown's text: paragraphs, headings, list items and code blocks separated by blank
/// lines, soft breaks kept as newlines, link targets and raw HTML left out.
fn markdown_text(source: &str) -> String {
    use pulldown_cmark::{Event, Parser, TagEnd};
    let mut out = String::new();
    for event in Parser::new(source) {
        match event {
            Event::Text(text) | Event::Code(text) => out.push_str(&text),
            Event::SoftBreak | Event::HardBreak => out.push('\n'),
            Event::End(
                TagEnd::Paragraph
                | TagEnd::Heading(_)
                | TagEnd::CodeBlock
                | TagEnd::Item
                | TagEnd::TableRow
                | TagEnd::TableHead,
            ) => {
                let trimmed = out.trim_end_matches([' ', '\n']).len();
                out.truncate(trimmed);
                out.push_str("\n\n");
            }
            Event::End(TagEnd::TableCell) => out.push(' '),
            _ => {}
        }
    }
    out.trim().to_owned()
}

/// Chunks from JSONL lines: `text` (or `content`, `page_content`) and an optional `id` (or
/// `uuid`, `_id`). Blank lines are skipped.
fn chunk_lines(text: &str) -> Result<Vec<GivenChunk>, String> {
    let mut chunks = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let value: Value =
            serde_json::from_str(line).map_err(|e| format!("line {}: not json: {e}", i + 1))?;
        let text = ["text", "content", "page_content"]
            .iter()
            .find_map(|k| value.get(*k).and_then(Value::as_str))
            .ok_or_else(|| {
                format!(
                    "line {}: no `text` (or `content`, `page_content`) string",
                    i + 1
                )
            })?;
        let id = ["id", "uuid", "_id"]
            .iter()
            .find_map(|k| value.get(*k).and_then(scalar_text));
        chunks.push(GivenChunk {
            id,
            text: text.to_owned(),
            line: i + 1,
        });
    }
    Ok(chunks)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapped_lines_between_han_ideographs_join_without_a_space() {
        assert_eq!(
            join_wrapped_han_lines("编程是重要分 \n 支。\n第二段\n\n新的一页\nPython 与\nC++"),
            "编程是重要分支。\n第二段\n\n新的一页\nPython 与\nC++"
        );
    }

    #[test]
    fn markdown_keeps_words_and_paragraphs() {
        let md = "# 少儿编程\n\n市场规模 **488** 亿，见[报告](http://x.invalid)。\n第二行\n\n- Python\n- `C++`\n\n<div>raw</div>\n";
        assert_eq!(
            markdown_text(md),
            "少儿编程\n\n市场规模 488 亿，见报告。\n第二行\n\nPython\n\nC++"
        );
    }

    #[test]
    fn jsonl_chunks_need_text_and_name_the_line() {
        let chunks =
            chunk_lines("{\"uuid\": \"a\", \"text\": \"x\"}\n\n{\"content\": \"y\"}\n").unwrap();
        assert_eq!(chunks[0].id.as_deref(), Some("a"));
        assert_eq!((chunks[1].id.clone(), chunks[1].line), (None, 3));
        let err = chunk_lines("{\"title\": 1}").unwrap_err();
        assert!(err.starts_with("line 1: no `text`"), "{err}");
    }

    #[test]
    fn kinds_come_from_extensions() {
        assert_eq!(
            DocumentKind::of(Path::new("a/B.PDF")),
            Some(DocumentKind::Pdf)
        );
        assert_eq!(
            DocumentKind::of(Path::new("x.docx")),
            Some(DocumentKind::Docx)
        );
        assert_eq!(DocumentKind::of(Path::new("x.csv")), None);
        assert!(pdf_text(b"%PDF-1.4 garbage").is_err());
    }
}
