//! DOCX to plain text: the `word/document.xml` part of the zip, its runs' text in order,
//! a blank line after each paragraph (as mammoth's raw-text output has), tabs and breaks kept.
//!
//! Uses the `zip` and `quick-xml` crates the workspace already builds for XLSX. Headers,
//! footers, comments and footnotes are left out: they are not the body a reader cites.

use std::io::{Cursor, Read};

use quick_xml::Reader;
use quick_xml::events::Event;

use super::html::entity;

/// The body text of a DOCX file's bytes, or what is wrong with them.
pub fn docx_to_text(bytes: &[u8]) -> Result<String, String> {
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes))
        .map_err(|e| format!("not a docx (zip) file: {e}"))?;
    let mut xml = String::new();
    archive
        .by_name("word/document.xml")
        .map_err(|_| "no word/document.xml inside: not a Word document".to_string())?
        .read_to_string(&mut xml)
        .map_err(|e| format!("cannot read word/document.xml: {e}"))?;
    document_text(&xml)
}

/// The text of a `word/document.xml`.
fn document_text(xml: &str) -> Result<String, String> {
    let mut reader = Reader::from_str(xml);
    let mut out = String::new();
    let mut in_text = false;
    loop {
        let event = reader
            .read_event()
            .map_err(|e| format!("word/document.xml at byte {}: {e}", reader.error_position()))?;
        match event {
            Event::Start(e) if e.local_name().as_ref() == b"t" => in_text = true,
            Event::End(e) => match e.local_name().as_ref() {
                b"t" => in_text = false,
                b"p" => out.push_str("\n\n"),
                _ => {}
            },
            Event::Empty(e) => match e.local_name().as_ref() {
                b"tab" => out.push('\t'),
                b"br" | b"cr" => out.push('\n'),
                b"p" => out.push_str("\n\n"),
                _ => {}
            },
            Event::Text(t) if in_text => {
                let text = t.decode().map_err(|e| format!("word/document.xml: {e}"))?;
                out.push_str(&text);
            }
            Event::GeneralRef(r) if in_text => {
                let name = r.decode().map_err(|e| format!("word/document.xml: {e}"))?;
                match entity(&name) {
                    Some(c) => out.push(c),
                    None => {
                        out.push('&');
                        out.push_str(&name);
                        out.push(';');
                    }
                }
            }
            Event::CData(t) if in_text => {
                out.push_str(&String::from_utf8_lossy(&t));
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(out.trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_paragraphs_tabs_breaks_and_references() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>
<w:p><w:r><w:t>少儿编程</w:t></w:r><w:r><w:t xml:space="preserve"> 报告</w:t></w:r></w:p>
<w:p><w:r><w:t>A &amp; B</w:t><w:tab/><w:t>C</w:t><w:br/><w:t>D&#x597D;</w:t></w:r></w:p>
<w:p/><w:sectPr/></w:body></w:document>"#;
        assert_eq!(
            document_text(xml).unwrap(),
            "少儿编程 报告\n\nA & B\tC\nD好"
        );
    }

    #[test]
    fn not_a_zip_is_an_error() {
        let err = docx_to_text(b"plain text").unwrap_err();
        assert!(err.starts_with("not a docx (zip) file"), "{err}");
    }
}
