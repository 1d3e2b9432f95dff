//! Reading relevance judgments (qrels): `qid iter docno rel`, one judgment a line.
//!
//! A line whose first byte is `#` is a comment; a `#` anywhere else is part of an id (MS MARCO
//! segment ids contain one). `rel` is an integer and may be graded or negative (negative means
//! "in the pool but not judged"). This file only reads and looks up; it computes no measure.

use super::error::TrecError;
use super::judge::count_levels;
#[cfg(test)]
use super::lines::id_prefix;
use super::lines::{
    Arena, LineReader, Span, compare_after_prefix, count_fields, parse_number, same_id,
    split_fields,
};
use std::collections::HashMap;
use std::io::BufRead;

/// Relevance values above this are refused, because measures keep one counter per level.
pub const MAX_RELEVANCE: i64 = 1_000_000;

/// The judgments of one topic, sorted by document id (bytewise), and how many sit at each
/// relevance level (counted once here rather than per evaluation).
#[derive(Debug, Clone)]
pub(crate) struct QrelsTopic {
    pub(crate) qid: String,
    judgments: Vec<(Span, i64)>,
    level_counts: Vec<u64>,
}

impl QrelsTopic {
    /// Judged documents per level `0..` (see [`count_levels`]).
    pub(crate) fn level_counts(&self) -> &[u64] {
        &self.level_counts
    }

    /// The relevance of the `position`-th judgment in document-id order.
    pub(crate) fn rel_at(&self, position: usize) -> i64 {
        self.judgments[position].1
    }

    /// Number of judgments of the topic.
    pub(crate) fn len(&self) -> usize {
        self.judgments.len()
    }
}

/// Relevance judgments for a set of topics, as trec_eval reads them.
#[derive(Debug, Clone)]
pub struct Qrels {
    topics: Vec<QrelsTopic>,
    arena: Arena,
}

impl Qrels {
    /// Parse qrels from `reader`; `source` names the input in error messages (usually the path).
    pub fn parse(reader: impl BufRead, source: &str) -> Result<Qrels, TrecError> {
        let mut lines = LineReader::new(reader);
        let mut arena = Arena::default();
        let mut index: HashMap<Vec<u8>, usize> = HashMap::new();
        let mut building: Vec<(String, Vec<(Span, i64)>)> = Vec::new();
        let mut last: Option<(Vec<u8>, usize)> = None;
        while let Some((line, text)) = lines.next_line(source)? {
            if text.first() == Some(&b'#') {
                continue;
            }
            let (fields, count) = split_fields::<4>(text);
            if count == 0 {
                continue;
            }
            if count != 4 {
                return Err(TrecError::ColumnCount {
                    source_name: source.to_owned(),
                    line,
                    expected: "4 (qid iter docno rel)",
                    found: count_fields(text),
                });
            }
            let [qid, _iteration, docno, rel] = fields;
            let rel: i64 = parse_number(rel, source, line, "relevance")?;
            if rel > MAX_RELEVANCE {
                return Err(TrecError::RelevanceTooLarge {
                    source_name: source.to_owned(),
                    line,
                    value: rel,
                    max: MAX_RELEVANCE,
                });
            }
            // Judgments come grouped by topic; remembering the last one skips the hash.
            let slot = match &last {
                Some((last_qid, slot)) if same_id(last_qid, qid) => *slot,
                _ => {
                    let slot = match index.get(qid) {
                        Some(&slot) => slot,
                        None => {
                            // Start at the previous topic's size instead of doubling up.
                            let capacity = building.last().map_or(16, |topic| topic.1.len());
                            let name = String::from_utf8_lossy(qid).into_owned();
                            building.push((name, Vec::with_capacity(capacity)));
                            index.insert(qid.to_vec(), building.len() - 1);
                            building.len() - 1
                        }
                    };
                    last = Some((qid.to_vec(), slot));
                    slot
                }
            };
            let span = arena.push(docno, source)?;
            building[slot].1.push((span, rel));
        }
        if building.is_empty() {
            return Err(TrecError::Empty {
                source_name: source.to_owned(),
            });
        }
        arena.shrink();
        let mut topics = Vec::with_capacity(building.len());
        for (qid, mut judgments) in building {
            sort_by_id(&mut judgments, &arena);
            if let Some(pair) = judgments
                .windows(2)
                .find(|pair| arena.get(pair[0].0) == arena.get(pair[1].0))
            {
                return Err(TrecError::DuplicateDocument {
                    source_name: source.to_owned(),
                    qid,
                    docno: String::from_utf8_lossy(arena.get(pair[0].0)).into_owned(),
                });
            }
            let level_counts = count_levels(judgments.iter().map(|judgment| judgment.1));
            topics.push(QrelsTopic {
                qid,
                judgments,
                level_counts,
            });
        }
        // trec_eval walks topics in qid order (strcmp), which fixes the per-query output order.
        topics.sort_unstable_by(|a, b| a.qid.as_bytes().cmp(b.qid.as_bytes()));
        Ok(Qrels { topics, arena })
    }

    /// Number of topics with at least one judgment line.
    pub fn num_topics(&self) -> usize {
        self.topics.len()
    }

    /// Judgments with a positive relevance value, over all topics.
    pub fn positive_judgments(&self) -> u64 {
        let positive = self
            .topics
            .iter()
            .flat_map(|topic| &topic.judgments)
            .filter(|judgment| judgment.1 > 0);
        positive.count() as u64
    }

    pub(crate) fn topics(&self) -> &[QrelsTopic] {
        &self.topics
    }

    /// Bytewise order of the topic's `position`-th judged id against `docno` (whose
    /// [`id_prefix`] is `prefix`).
    pub(crate) fn compare_judged(
        &self,
        topic: &QrelsTopic,
        position: usize,
        docno: &[u8],
        prefix: u64,
    ) -> std::cmp::Ordering {
        let span = topic.judgments[position].0;
        span.prefix()
            .cmp(&prefix)
            .then_with(|| compare_after_prefix(self.arena.get(span), docno))
    }

    /// The judged relevance of `docno` (whose [`id_prefix`] is `prefix`) for `topic`, if it
    /// was judged at all.
    #[cfg(test)]
    pub(crate) fn relevance(&self, topic: &QrelsTopic, docno: &[u8], prefix: u64) -> Option<i64> {
        topic
            .judgments
            .binary_search_by(|(span, _)| {
                span.prefix()
                    .cmp(&prefix)
                    .then_with(|| self.arena.get(*span).cmp(docno))
            })
            .ok()
            .map(|position| topic.rel_at(position))
    }
}

/// Sort judgments bytewise by id: by the numeric prefixes first (a plain integer sort), then
/// each run of equal prefixes by the full ids.
fn sort_by_id(judgments: &mut [(Span, i64)], arena: &Arena) {
    judgments.sort_unstable_by_key(|judgment| judgment.0.prefix());
    let mut start = 0;
    while start < judgments.len() {
        let prefix = judgments[start].0.prefix();
        let end = start
            + judgments[start..]
                .iter()
                .take_while(|judgment| judgment.0.prefix() == prefix)
                .count();
        if end - start > 1 {
            judgments[start..end].sort_unstable_by(|a, b| arena.compare(a.0, b.0));
        }
        start = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_sharing_a_prefix_sort_bytewise() {
        let text = "q 0 prefix00b 1\nq 0 prefix00a 0\nq 0 prefix0 1\nq 0 a 1\n";
        let qrels = Qrels::parse(text.as_bytes(), "q").unwrap();
        let topic = &qrels.topics()[0];
        let ids: Vec<&[u8]> = topic
            .judgments
            .iter()
            .map(|j| qrels.arena.get(j.0))
            .collect();
        assert_eq!(ids, [&b"a"[..], b"prefix0", b"prefix00a", b"prefix00b"]);
    }

    #[test]
    fn comments_only_at_line_start() {
        let text = "# header\nq1 0 doc#1 1\nq1 0 d2 0\n\nq0 0 x -1\n";
        let qrels = Qrels::parse(text.as_bytes(), "q").unwrap();
        assert_eq!(qrels.num_topics(), 2);
        let q1 = &qrels.topics()[1];
        assert_eq!(q1.qid, "q1");
        let relevance = |topic, id: &[u8]| qrels.relevance(topic, id, id_prefix(id));
        assert_eq!(relevance(q1, b"doc#1"), Some(1));
        assert_eq!(relevance(q1, b"doc"), None);
        assert_eq!(relevance(&qrels.topics()[0], b"x"), Some(-1));
    }

    #[test]
    fn wrong_column_count_names_file_and_line() {
        let error = Qrels::parse("q1 0 d1 1\nq1 0 d2\n".as_bytes(), "qrels.txt").unwrap_err();
        assert_eq!(
            error.to_string(),
            "qrels.txt:2: expected 4 (qid iter docno rel) columns, found 3"
        );
    }

    #[test]
    fn non_numeric_relevance_is_an_error() {
        let error = Qrels::parse("q1 0 d1 high\n".as_bytes(), "qrels.txt").unwrap_err();
        assert_eq!(
            error.to_string(),
            "qrels.txt:1: relevance `high` is not a valid number"
        );
    }

    #[test]
    fn empty_and_duplicate_are_errors() {
        let empty = Qrels::parse("# only a comment\n".as_bytes(), "e").unwrap_err();
        assert_eq!(empty.to_string(), "e: empty file, no data lines");
        let duplicate = Qrels::parse("q 0 d 1\nq 0 d 0\n".as_bytes(), "d").unwrap_err();
        assert!(matches!(duplicate, TrecError::DuplicateDocument { .. }));
    }
}
