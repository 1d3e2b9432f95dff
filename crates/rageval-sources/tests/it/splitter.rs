//! The splitter against seed S4's own chunks: `doc_chunks.jsonl` holds the 125 chunks the
//! article's pipeline (LangChain's RecursiveCharacterTextSplitter, 500 / 50) made of the
//! report, each with the lines it covers. Putting every chunk's lines back at their line
//! numbers rebuilds the text the pipeline split; splitting it again must give the same 125
//! chunks with the same line ranges.
//!
//! `report_text_reconstructed.txt`, the report's text as shipped beside them, is another
//! reconstruction: it has the same non-blank lines but 72 fewer blank ones (4,069 lines
//! against 4,141), so fewer `\n\n` separators, and LangChain itself splits it into 124
//! chunks, not 125. The splitter must agree with LangChain there too.

use rageval_sources::Splitter;

use super::fixtures::{KidsChunk, kids_chunks};

/// The report's text, rebuilt from the chunks' line ranges (lines no chunk covers were
/// blank: the splitter strips them). Where overlapping chunks hold the same line, one may hold
/// only its tail (a cut inside a long line): the longest copy is the line.
fn rebuild(chunks: &[KidsChunk]) -> String {
    let last = chunks.iter().map(|c| c.line_to).max().unwrap();
    let mut lines = vec![String::new(); last + 1];
    for chunk in chunks {
        let parts: Vec<&str> = chunk.text.split('\n').collect();
        assert_eq!(
            parts.len(),
            chunk.line_to - chunk.line_from + 1,
            "{}",
            chunk.uuid
        );
        for (offset, part) in parts.into_iter().enumerate() {
            let line = &mut lines[chunk.line_from + offset];
            if part.chars().count() > line.chars().count() {
                *line = part.to_owned();
            }
        }
    }
    lines[1..].join("\n")
}

#[test]
fn seed_s4_chunks_are_reproduced_exactly() {
    if super::fixtures::skip_without_kids("seed_s4_chunks_are_reproduced_exactly") {
        return;
    }
    let expected = kids_chunks();
    assert_eq!(expected.len(), 125);
    let text = rebuild(&expected);
    let chunks = Splitter::default().split(&text);
    assert_eq!(chunks.len(), expected.len());
    for (i, (got, want)) in chunks.iter().zip(&expected).enumerate() {
        assert_eq!(got.text, want.text, "chunk {i}");
        assert_eq!(
            (got.line_from, got.line_to),
            (want.line_from, want.line_to),
            "lines of chunk {i}"
        );
    }
}

/// Reference: langchain_text_splitters 1.1.3, `RecursiveCharacterTextSplitter(chunk_size=500,
/// chunk_overlap=50).split_text(text)` on the shipped file: 124 chunks, and the SHA-256 of
/// the chunks joined by NUL characters.
#[test]
fn the_shipped_report_text_splits_as_langchain_splits_it() {
    if super::fixtures::skip_without_kids("the_shipped_report_text_splits_as_langchain_splits_it") {
        return;
    }
    use sha2::Digest as _;
    let text =
        std::fs::read_to_string(super::fixtures::kids_dir().join("report_text_reconstructed.txt"))
            .unwrap();
    let chunks = Splitter::default().split_text(&text);
    assert_eq!(chunks.len(), 124);
    let digest = sha2::Sha256::digest(chunks.join("\0").as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(
        hex,
        "4797d44618952a7ed1d3128ae7da4b2b3a133516ae4b3c266220ecec0eceeafc"
    );
    // Loading normalises the text (NFKC, full-width punctuation kept): this report has no
    // character that changes, so the index gets these same 124 chunks.
    let loaded = rageval_sources::local::load(
        &super::fixtures::kids_dir().join("report_text_reconstructed.txt"),
    )
    .unwrap();
    assert_eq!(
        loaded.content,
        rageval_sources::local::Content::Text(text.clone())
    );
}

#[test]
fn no_chunk_is_longer_than_the_size_or_cut_inside_a_character() {
    if super::fixtures::skip_without_kids(
        "no_chunk_is_longer_than_the_size_or_cut_inside_a_character",
    ) {
        return;
    }
    let text =
        std::fs::read_to_string(super::fixtures::kids_dir().join("report_text_reconstructed.txt"))
            .unwrap();
    for (size, overlap) in [(500, 50), (100, 20), (37, 5)] {
        let chunks = Splitter::new(size, overlap).unwrap().split_text(&text);
        assert!(chunks.len() > 1);
        for chunk in &chunks {
            // Strings are always valid UTF-8, so "never inside a character" is the count.
            assert!(
                chunk.chars().count() <= size,
                "{size}/{overlap}: {} chars",
                chunk.chars().count()
            );
            assert!(
                text.contains(chunk.as_str()),
                "every chunk is a piece of the text"
            );
        }
    }
}
