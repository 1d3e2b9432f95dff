//! The recursive character splitter of seed S4 (LangChain's `RecursiveCharacterTextSplitter`
//! with its defaults: separators `\n\n`, `\n`, space, `""`; each separator kept at the start
//! of the piece that follows it; chunks stripped of surrounding whitespace).
//!
//! The algorithm: split on the first separator that occurs in the text; pieces shorter than
//! the chunk size are merged greedily into chunks of at most `chunk_size` characters, and
//! when a chunk is full the next one starts with the tail of the previous pieces, up to
//! `chunk_overlap` characters; a piece that is too long is split again with the remaining
//! separators. Lengths are counted in Unicode scalar values (Python's `len`), and text is only
//! ever cut between characters, so Chinese text never breaks inside a character. Checked
//! against the 125 chunks the seed's own pipeline produced (the integration tests).

/// Characters per chunk in seed S4.
pub const DEFAULT_CHUNK_SIZE: usize = 500;
/// Characters shared by neighbouring chunks in seed S4.
pub const DEFAULT_CHUNK_OVERLAP: usize = 50;
/// Seed S4's separators, tried in order.
pub const DEFAULT_SEPARATORS: [&str; 4] = ["\n\n", "\n", " ", ""];

/// One chunk of a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// The text, stripped of surrounding whitespace (never empty).
    pub text: String,
    /// First line of the document the chunk covers (1-based).
    pub line_from: usize,
    /// Last line it covers.
    pub line_to: usize,
}

/// Chunk size and overlap, in characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Splitter {
    /// Longest chunk, in characters (a piece with no separator left may be longer).
    pub chunk_size: usize,
    /// Characters carried over from the end of one chunk to the start of the next, at most.
    pub chunk_overlap: usize,
}

impl Default for Splitter {
    fn default() -> Self {
        Splitter {
            chunk_size: DEFAULT_CHUNK_SIZE,
            chunk_overlap: DEFAULT_CHUNK_OVERLAP,
        }
    }
}

impl Splitter {
    /// A splitter; `None` when the overlap is not smaller than the size or the size is 0.
    pub fn new(chunk_size: usize, chunk_overlap: usize) -> Option<Splitter> {
        (chunk_size > 0 && chunk_overlap < chunk_size).then_some(Splitter {
            chunk_size,
            chunk_overlap,
        })
    }

    /// The chunk texts of `text`, in order.
    pub fn split_text(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.split_recursive(text, &DEFAULT_SEPARATORS, &mut out);
        out
    }

    /// The chunks of `text` with the lines each covers, found by locating each chunk in the
    /// text after the start of the previous one.
    pub fn split(&self, text: &str) -> Vec<Chunk> {
        let mut search_from = 0;
        let mut chunks = Vec::new();
        for chunk in self.split_text(text) {
            let start = text[search_from..]
                .find(chunk.as_str())
                .map_or(search_from, |i| search_from + i);
            let line_from = text[..start].matches('\n').count() + 1;
            let line_to = line_from + chunk.matches('\n').count();
            search_from = start + chunk.chars().next().map_or(0, char::len_utf8);
            chunks.push(Chunk {
                text: chunk,
                line_from,
                line_to,
            });
        }
        chunks
    }

    fn split_recursive(&self, text: &str, separators: &[&str], out: &mut Vec<String>) {
        // The first separator present in the text; "" (every character) always is.
        let (position, separator) = separators
            .iter()
            .enumerate()
            .find(|(_, sep)| sep.is_empty() || text.contains(**sep))
            .map_or((separators.len(), ""), |(i, sep)| (i, *sep));
        let rest = separators.get(position + 1..).unwrap_or(&[]);
        let mut short: Vec<&str> = Vec::new();
        for piece in split_keeping_separator(text, separator) {
            if char_len(piece) < self.chunk_size {
                short.push(piece);
                continue;
            }
            if !short.is_empty() {
                self.merge(&short, out);
                short.clear();
            }
            if rest.is_empty() {
                out.push(piece.to_owned());
            } else {
                self.split_recursive(piece, rest, out);
            }
        }
        if !short.is_empty() {
            self.merge(&short, out);
        }
    }

    /// Greedy merge of pieces (joined with nothing: each carries its separator) into chunks
    /// of at most `chunk_size` characters, overlapping by at most `chunk_overlap`.
    fn merge(&self, pieces: &[&str], out: &mut Vec<String>) {
        let mut window: std::collections::VecDeque<(&str, usize)> = Default::default();
        let mut total = 0;
        for &piece in pieces {
            let len = char_len(piece);
            if total + len > self.chunk_size && !window.is_empty() {
                push_joined(window.iter().map(|(p, _)| *p), out);
                while total > self.chunk_overlap || (total + len > self.chunk_size && total > 0) {
                    match window.pop_front() {
                        Some((_, dropped)) => total -= dropped,
                        None => break,
                    }
                }
            }
            window.push_back((piece, len));
            total += len;
        }
        push_joined(window.iter().map(|(p, _)| *p), out);
    }
}

fn push_joined<'a>(pieces: impl Iterator<Item = &'a str>, out: &mut Vec<String>) {
    let joined: String = pieces.collect();
    let trimmed = joined.trim();
    if !trimmed.is_empty() {
        out.push(trimmed.to_owned());
    }
}

/// Splits before each occurrence of `separator` (found left to right, not overlapping), so
/// each piece after the first starts with it; `""` splits into characters. Empty pieces are
/// dropped.
fn split_keeping_separator<'a>(text: &'a str, separator: &str) -> Vec<&'a str> {
    if separator.is_empty() {
        return text
            .char_indices()
            .map(|(i, c)| &text[i..i + c.len_utf8()])
            .collect();
    }
    let mut pieces = Vec::new();
    let mut start = 0;
    for (at, _) in text.match_indices(separator) {
        if at > start {
            pieces.push(&text[start..at]);
        }
        start = at;
    }
    if start < text.len() {
        pieces.push(&text[start..]);
    }
    pieces
}

fn char_len(text: &str) -> usize {
    text.chars().count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separators_stay_at_the_start_of_the_next_piece() {
        assert_eq!(
            split_keeping_separator("a\n\nb\n\n\nc", "\n\n"),
            ["a", "\n\nb", "\n\n\nc"]
        );
        assert_eq!(split_keeping_separator("\n\nx", "\n\n"), ["\n\nx"]);
        assert_eq!(split_keeping_separator("少儿", ""), ["少", "儿"]);
    }

    #[test]
    fn short_text_is_one_chunk_and_blank_text_none() {
        let s = Splitter::default();
        assert_eq!(s.split_text("  hello world \n"), ["hello world"]);
        assert!(s.split_text(" \n\n ").is_empty());
    }

    #[test]
    fn chunks_respect_size_and_overlap_in_characters() {
        // Reference: langchain_text_splitters 1.1.3 RecursiveCharacterTextSplitter(chunk_size=10,
        // chunk_overlap=3, separators=["\n\n", "\n", " ", ""]) on the same texts.
        let s = Splitter::new(10, 3).unwrap();
        assert_eq!(
            s.split_text("one two three four five six"),
            ["one two", "three", "four five", "six"]
        );
        let cjk = "少儿编程教育行业发展趋势报告多鲸教育研究院";
        let chunks = s.split_text(cjk);
        assert_eq!(
            chunks,
            [
                "少儿编程教育行业发展",
                "业发展趋势报告多鲸教",
                "多鲸教育研究院"
            ]
        );
        assert!(chunks.iter().all(|c| c.chars().count() <= 10));
    }

    #[test]
    fn lines_follow_the_chunk_positions() {
        let s = Splitter::new(12, 0).unwrap();
        let chunks = s.split("line one\nline two\n\nline four\n");
        let spans: Vec<(usize, usize)> = chunks.iter().map(|c| (c.line_from, c.line_to)).collect();
        assert_eq!(chunks[0].text, "line one");
        assert_eq!(spans, [(1, 1), (2, 2), (4, 4)]);
    }

    #[test]
    fn invalid_settings_are_refused() {
        assert!(Splitter::new(0, 0).is_none());
        assert!(Splitter::new(10, 10).is_none());
    }
}
