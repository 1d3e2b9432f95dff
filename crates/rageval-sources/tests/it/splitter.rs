//! The splitter against seed S4's own chunks: `doc_chunks.jsonl` holds the 125 chunks the
//! article's pipeline (LangChain's RecursiveCharacterTextSplitter, 500 / 50) made of the
//! report, each with the lines it covers. Putting every chunk's lines back at their line
//! numbers rebuilds the text the pipeline split; splitting it again must give the same 125
//! chunks with the same line ranges.

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

#[test]
fn no_chunk_is_longer_than_the_size_or_cut_inside_a_character() {
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
