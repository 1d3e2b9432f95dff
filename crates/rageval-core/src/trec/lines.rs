//! Shared plumbing for the qrels and run readers: reading a file in large chunks and handing
//! out its lines without copying them, splitting lines into whitespace-separated fields,
//! parsing numbers (with an exact fast path for scores), and storing document ids in one
//! byte arena instead of one `String` per line.
//!
//! It knows nothing of either file format; the readers decide what the fields mean.

use super::error::TrecError;
use std::io::{self, Read};

/// Where one id lives inside an [`Arena`], with its first 8 bytes as a big-endian number so
/// that most comparisons never touch the arena (profiling showed `memcmp` dominating).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    prefix: u64,
    start: u32,
    len: u32,
}

impl Span {
    /// The same id after its arena was appended to another at `offset` (see
    /// [`Arena::append`], which checks the sum fits).
    pub(crate) fn shifted(self, offset: u32) -> Span {
        Span {
            start: self.start + offset,
            ..self
        }
    }

    /// The id's first 8 bytes, zero-padded, big-endian: ordering these numbers orders the
    /// ids bytewise, except that equal prefixes need the full bytes.
    pub(crate) fn prefix(self) -> u64 {
        self.prefix
    }
}

/// Bytewise order of two ids whose prefixes are equal. The shared head is skipped and the
/// rest compared in a plain loop: ids are short, and a `memcmp` call per comparison showed
/// up in profiles.
pub(crate) fn compare_after_prefix(left: &[u8], right: &[u8]) -> std::cmp::Ordering {
    let skip = left.len().min(right.len()).min(8);
    left[skip..].iter().cmp(right[skip..].iter())
}

/// Whether two short ids are equal, without a `memcmp` call.
pub(crate) fn same_id(left: &[u8], right: &[u8]) -> bool {
    left.len() == right.len() && left.iter().zip(right).all(|(a, b)| a == b)
}

/// The [`Span::prefix`] of an id not stored in an arena.
pub(crate) fn id_prefix(id: &[u8]) -> u64 {
    let mut bytes = [0_u8; 8];
    let length = id.len().min(8);
    bytes[..length].copy_from_slice(&id[..length]);
    u64::from_be_bytes(bytes)
}

/// All document ids of one file, back to back. Ids are compared as bytes, exactly like
/// trec_eval's `strcmp`, so they are never decoded.
#[derive(Debug, Default, Clone)]
pub(crate) struct Arena {
    bytes: Vec<u8>,
}

impl Arena {
    /// Store `id` and return where it went.
    pub(crate) fn push(&mut self, id: &[u8], source_name: &str) -> Result<Span, TrecError> {
        let too_large = || TrecError::TooLarge {
            source_name: source_name.to_owned(),
        };
        let start = u32::try_from(self.bytes.len()).map_err(|_| too_large())?;
        let len = u32::try_from(id.len()).map_err(|_| too_large())?;
        start.checked_add(len).ok_or_else(too_large)?;
        self.bytes.extend_from_slice(id);
        Ok(Span {
            prefix: id_prefix(id),
            start,
            len,
        })
    }

    /// The bytes of a stored id.
    pub(crate) fn get(&self, span: Span) -> &[u8] {
        let start = span.start as usize;
        &self.bytes[start..start + span.len as usize]
    }

    /// Append another arena's bytes; its spans must then be [`Span::shifted`] by the
    /// returned offset.
    pub(crate) fn append(&mut self, other: &Arena, source_name: &str) -> Result<u32, TrecError> {
        let too_large = || TrecError::TooLarge {
            source_name: source_name.to_owned(),
        };
        let offset = u32::try_from(self.bytes.len()).map_err(|_| too_large())?;
        let added = u32::try_from(other.bytes.len()).map_err(|_| too_large())?;
        offset.checked_add(added).ok_or_else(too_large)?;
        self.bytes.extend_from_slice(&other.bytes);
        Ok(offset)
    }

    /// Bytewise order of two ids stored here (trec_eval's `strcmp`).
    pub(crate) fn compare(&self, left: Span, right: Span) -> std::cmp::Ordering {
        left.prefix
            .cmp(&right.prefix)
            .then_with(|| compare_after_prefix(self.get(left), self.get(right)))
    }

    /// Bytes stored.
    pub(crate) fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Give back the slack left by the growth strategy.
    pub(crate) fn shrink(&mut self) {
        self.bytes.shrink_to_fit();
    }
}

/// Bytes read from the underlying reader at a time.
const CHUNK: usize = 256 * 1024;

/// Reads a file in large chunks and hands out its lines as slices of the chunk (no copy per
/// line), counting lines from 1. A line longer than the buffer grows it.
pub(crate) struct LineReader<R> {
    reader: R,
    buffer: Vec<u8>,
    start: usize,
    end: usize,
    line: usize,
    finished: bool,
}

impl<R: Read> LineReader<R> {
    pub(crate) fn new(reader: R) -> Self {
        Self {
            reader,
            buffer: vec![0; CHUNK],
            start: 0,
            end: 0,
            line: 0,
            finished: false,
        }
    }

    /// The next line (without its terminator) and its 1-based number, or `None` at the end.
    pub(crate) fn next_line(
        &mut self,
        source_name: &str,
    ) -> Result<Option<(usize, &[u8])>, TrecError> {
        loop {
            if let Some(offset) = find_newline(&self.buffer[self.start..self.end]) {
                let line_start = self.start;
                self.start += offset + 1;
                self.line += 1;
                return Ok(Some((
                    self.line,
                    &self.buffer[line_start..line_start + offset],
                )));
            }
            if self.finished {
                if self.start == self.end {
                    return Ok(None);
                }
                let line_start = self.start;
                self.start = self.end;
                self.line += 1;
                return Ok(Some((self.line, &self.buffer[line_start..self.end])));
            }
            self.buffer.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            if self.end == self.buffer.len() {
                self.buffer.resize(self.buffer.len() * 2, 0);
            }
            let read = loop {
                match self.reader.read(&mut self.buffer[self.end..]) {
                    Ok(read) => break read,
                    Err(cause) if cause.kind() == io::ErrorKind::Interrupted => continue,
                    Err(cause) => {
                        return Err(TrecError::Read {
                            source_name: source_name.to_owned(),
                            cause,
                        });
                    }
                }
            };
            if read == 0 {
                self.finished = true;
            } else {
                self.end += read;
            }
        }
    }
}

/// Position of the first `\n`, eight bytes at a time (the classic "has zero byte" test on
/// the word XOR-ed with newlines; the lowest flagged byte is always a true match).
fn find_newline(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    const NEWLINES: u64 = ONES * b'\n' as u64;
    let words = bytes.chunks_exact(8);
    let tail = bytes.len() - words.remainder().len();
    for (index, word) in words.enumerate() {
        let mut array = [0_u8; 8];
        array.copy_from_slice(word);
        let x = u64::from_le_bytes(array) ^ NEWLINES;
        let found = x.wrapping_sub(ONES) & !x & HIGHS;
        if found != 0 {
            return Some(index * 8 + (found.trailing_zeros() / 8) as usize);
        }
    }
    bytes[tail..]
        .iter()
        .position(|&byte| byte == b'\n')
        .map(|position| tail + position)
}

/// Parse a score. Plain decimals with at most 15 digits (nearly every run file) take the
/// exact fast path: the digits as an integer divided by a power of ten, both exactly
/// representable, so the one rounding is the correct one (Clinger 1990). Anything else goes
/// to the standard parser.
pub(crate) fn parse_score(field: &[u8], source_name: &str, line: usize) -> Result<f64, TrecError> {
    const POWERS: [f64; 16] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
    ];
    let (negative, digits) = match field.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, field),
    };
    let mut mantissa = 0_u64;
    let mut count = 0_usize;
    let mut decimals = 0_usize;
    let mut seen_point = false;
    let mut simple = true;
    for &byte in digits {
        match byte {
            b'0'..=b'9' if count < 15 => {
                mantissa = mantissa * 10 + u64::from(byte - b'0');
                count += 1;
                decimals += usize::from(seen_point);
            }
            b'.' if !seen_point => seen_point = true,
            _ => {
                simple = false;
                break;
            }
        }
    }
    if simple && count > 0 {
        let value = mantissa as f64 / POWERS[decimals];
        return Ok(if negative { -value } else { value });
    }
    parse_number(field, source_name, line, "score")
}

/// Split a line into at most `N` fields; the second value is the total field count, so a
/// caller can report a wrong count without collecting the rest.
///
/// The scan stops at the start of field `N + 1`, so junk after a run's sixth column costs
/// nothing; a count of `N + 1` means "more than `N`" (ask [`count_fields`] for the number).
pub(crate) fn split_fields<const N: usize>(line: &[u8]) -> ([&[u8]; N], usize) {
    let mut fields: [&[u8]; N] = [&[]; N];
    let mut count = 0;
    let mut position = 0;
    while position < line.len() {
        if line[position].is_ascii_whitespace() {
            position += 1;
            continue;
        }
        if count == N {
            return (fields, N + 1);
        }
        let start = position;
        while position < line.len() && !line[position].is_ascii_whitespace() {
            position += 1;
        }
        fields[count] = &line[start..position];
        count += 1;
    }
    (fields, count)
}

/// The exact number of whitespace-separated fields (for error messages).
pub(crate) fn count_fields(line: &[u8]) -> usize {
    line.split(|byte| byte.is_ascii_whitespace())
        .filter(|field| !field.is_empty())
        .count()
}

/// Parse a numeric field, naming the file, line and column when it is not a number.
pub(crate) fn parse_number<T: std::str::FromStr>(
    field: &[u8],
    source_name: &str,
    line: usize,
    what: &'static str,
) -> Result<T, TrecError> {
    std::str::from_utf8(field)
        .ok()
        .and_then(|text| text.parse::<T>().ok())
        .ok_or_else(|| TrecError::NotANumber {
            source_name: source_name.to_owned(),
            line,
            field: what,
            value: String::from_utf8_lossy(field).into_owned(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_fields_counts_beyond_capacity() {
        let (fields, count) = split_fields::<2>(b"  a\tb  c d \r");
        assert_eq!(fields, [b"a".as_slice(), b"b".as_slice()]);
        assert_eq!(count, 3);
        assert_eq!(count_fields(b"  a\tb  c d \r"), 4);
        let (fields, count) = split_fields::<3>(b"x y");
        assert_eq!((fields[1], count), (b"y".as_slice(), 2));
    }

    #[test]
    fn arena_round_trips_ids() {
        let mut arena = Arena::default();
        let first = arena.push(b"doc#1", "x").unwrap();
        let second = arena.push(b"d2", "x").unwrap();
        assert_eq!(arena.get(first), b"doc#1");
        assert_eq!(arena.get(second), b"d2");
        assert_eq!(arena.compare(first, second), std::cmp::Ordering::Greater);
        let long_a = arena.push(b"prefix00a", "x").unwrap();
        let long_b = arena.push(b"prefix00b", "x").unwrap();
        let short = arena.push(b"prefix0", "x").unwrap();
        assert_eq!(arena.compare(long_a, long_b), std::cmp::Ordering::Less);
        assert_eq!(arena.compare(short, long_a), std::cmp::Ordering::Less);
    }

    #[test]
    fn line_reader_handles_chunk_edges_and_missing_final_newline() {
        let text: String = (0..50_000)
            .map(|n| format!("line {n}\n"))
            .collect::<String>()
            + "last";
        let mut reader = LineReader::new(text.as_bytes());
        let mut count = 0;
        let mut last = Vec::new();
        while let Some((number, line)) = reader.next_line("t").unwrap() {
            count += 1;
            assert_eq!(number, count);
            last = line.to_vec();
        }
        assert_eq!(count, 50_001);
        assert_eq!(last, b"last");
        let long = "x".repeat(3 * CHUNK) + "\ny";
        let mut reader = LineReader::new(long.as_bytes());
        assert_eq!(reader.next_line("t").unwrap().unwrap().1.len(), 3 * CHUNK);
        assert_eq!(reader.next_line("t").unwrap().unwrap().1, b"y");
        assert!(reader.next_line("t").unwrap().is_none());
    }

    #[test]
    fn find_newline_agrees_with_a_scan() {
        for length in 0..40 {
            for position in 0..=length {
                let mut bytes = vec![b'a'; length];
                if position < length {
                    bytes[position] = b'\n';
                }
                let expected = bytes.iter().position(|&b| b == b'\n');
                assert_eq!(find_newline(&bytes), expected, "{length} {position}");
            }
        }
        assert_eq!(find_newline(b"\x8a\x0b\n"), Some(2));
    }

    #[test]
    fn parse_score_fast_path_matches_the_standard_parser() {
        for text in [
            "0",
            "1",
            "-0",
            "2.138276",
            "-3.5",
            "+7",
            "0.1",
            "29.8086",
            "123456789012345",
            "0.000000000000001",
            "1234567890.12345",
            "1e5",
            "1.5E-3",
            "inf",
            "-inf",
            "1234567890123456789",
            "0.1234567890123456789",
            "7.",
        ] {
            let ours = parse_score(text.as_bytes(), "r", 1).unwrap();
            let standard: f64 = text.parse().unwrap();
            assert_eq!(ours.to_bits(), standard.to_bits(), "{text}");
        }
        assert!(parse_score(b"1.2.3", "r", 1).is_err());
        assert!(parse_score(b".", "r", 1).is_err());
        assert!(parse_score(b"-", "r", 1).is_err());
    }

    #[test]
    fn parse_number_names_the_line() {
        let error = parse_number::<i64>(b"x1", "q.txt", 7, "relevance").unwrap_err();
        assert_eq!(
            error.to_string(),
            "q.txt:7: relevance `x1` is not a valid number"
        );
    }
}
