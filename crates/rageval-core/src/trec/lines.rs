//! Shared plumbing for the qrels and run readers: streaming lines out of a `BufRead` into one
//! reused buffer, splitting them into whitespace-separated fields, and storing document ids in
//! one byte arena instead of one `String` per line.
//!
//! It knows nothing of either file format; the readers decide what the fields mean.

use super::error::TrecError;
use std::io::BufRead;

/// Where one id lives inside an [`Arena`], with its first 8 bytes as a big-endian number so
/// that most comparisons never touch the arena (profiling showed `memcmp` dominating).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    prefix: u64,
    start: u32,
    len: u32,
}

impl Span {
    /// The id's first 8 bytes, zero-padded, big-endian: ordering these numbers orders the
    /// ids bytewise, except that equal prefixes need the full bytes.
    pub(crate) fn prefix(self) -> u64 {
        self.prefix
    }
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

    /// Bytewise order of two ids stored here (trec_eval's `strcmp`).
    pub(crate) fn compare(&self, left: Span, right: Span) -> std::cmp::Ordering {
        left.prefix
            .cmp(&right.prefix)
            .then_with(|| self.get(left).cmp(self.get(right)))
    }

    /// Give back the slack left by the growth strategy.
    pub(crate) fn shrink(&mut self) {
        self.bytes.shrink_to_fit();
    }
}

/// Reads a file line by line into one buffer, counting lines from 1.
pub(crate) struct LineReader<R> {
    reader: R,
    buffer: Vec<u8>,
    line: usize,
}

impl<R: BufRead> LineReader<R> {
    pub(crate) fn new(reader: R) -> Self {
        Self {
            reader,
            buffer: Vec::with_capacity(256),
            line: 0,
        }
    }

    /// The next line (without its terminator) and its 1-based number, or `None` at the end.
    pub(crate) fn next_line(
        &mut self,
        source_name: &str,
    ) -> Result<Option<(usize, &[u8])>, TrecError> {
        self.buffer.clear();
        let read = self
            .reader
            .read_until(b'\n', &mut self.buffer)
            .map_err(|cause| TrecError::Read {
                source_name: source_name.to_owned(),
                cause,
            })?;
        if read == 0 {
            return Ok(None);
        }
        self.line += 1;
        Ok(Some((self.line, self.buffer.as_slice())))
    }
}

/// Split a line into at most `N` fields; the second value is the total field count, so a
/// caller can report a wrong count without collecting the rest.
pub(crate) fn split_fields<const N: usize>(line: &[u8]) -> ([&[u8]; N], usize) {
    let mut fields: [&[u8]; N] = [&[]; N];
    let mut count = 0;
    for field in line
        .split(|byte| byte.is_ascii_whitespace())
        .filter(|field| !field.is_empty())
    {
        if count < N {
            fields[count] = field;
        }
        count += 1;
    }
    (fields, count)
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
        let (fields, count) = split_fields::<2>(b"  a\tb  c \r");
        assert_eq!(fields, [b"a".as_slice(), b"b".as_slice()]);
        assert_eq!(count, 3);
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
    fn parse_number_names_the_line() {
        let error = parse_number::<i64>(b"x1", "q.txt", 7, "relevance").unwrap_err();
        assert_eq!(
            error.to_string(),
            "q.txt:7: relevance `x1` is not a valid number"
        );
    }
}
