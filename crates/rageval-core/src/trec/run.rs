//! Reading a ranked run: `qid Q0 docno rank sim run_id [ignored…]`, one retrieved document a
//! line.
//!
//! The rank column is read past and ignored: trec_eval orders by `sim`, and so do we (see
//! `judge.rs`). Columns after `run_id` are ignored too. This file does not sort or judge.

use super::error::TrecError;
use super::lines::{Arena, LineReader, Span, parse_score, same_id, split_fields};
use std::collections::HashMap;
use std::io::BufRead;

/// One retrieved document: where its id lives and its score.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RunEntry {
    pub(crate) docno: Span,
    pub(crate) sim: f64,
}

/// The retrieved documents of one topic, in file order.
#[derive(Debug, Clone)]
pub(crate) struct RunTopic {
    pub(crate) entries: Vec<RunEntry>,
}

/// A run: retrieved documents with scores for a set of topics.
#[derive(Debug, Clone)]
pub struct Run {
    run_id: String,
    topics: Vec<RunTopic>,
    index: HashMap<Vec<u8>, usize>,
    arena: Arena,
}

impl Run {
    /// Parse a run from `reader`; `source` names the input in error messages (usually the path).
    pub fn parse(reader: impl BufRead, source: &str) -> Result<Run, TrecError> {
        let mut lines = LineReader::new(reader);
        let mut arena = Arena::default();
        let mut index: HashMap<Vec<u8>, usize> = HashMap::new();
        let mut topics: Vec<RunTopic> = Vec::new();
        let mut run_id: Option<String> = None;
        // Consecutive lines usually share a topic; remembering the last one skips the hash.
        let mut last: Option<(Vec<u8>, usize)> = None;
        while let Some((line, text)) = lines.next_line(source)? {
            let (fields, count) = split_fields::<6>(text);
            if count == 0 {
                continue;
            }
            if count < 6 {
                return Err(TrecError::ColumnCount {
                    source_name: source.to_owned(),
                    line,
                    expected: "at least 6 (qid Q0 docno rank sim run_id)",
                    found: count,
                });
            }
            let [qid, _q0, docno, _rank, sim, id] = fields;
            let sim = parse_score(sim, source, line)?;
            if sim.is_nan() {
                // NaN has no place in trec_eval's ordering; refuse it rather than guess.
                return Err(TrecError::NotANumber {
                    source_name: source.to_owned(),
                    line,
                    field: "score",
                    value: "NaN".to_owned(),
                });
            }
            if run_id.is_none() {
                run_id = Some(String::from_utf8_lossy(id).into_owned());
            }
            let slot = match &last {
                Some((last_qid, slot)) if same_id(last_qid, qid) => *slot,
                _ => {
                    let slot = match index.get(qid) {
                        Some(&slot) => slot,
                        None => {
                            topics.push(RunTopic {
                                // Topics tend to be the same size: start where the
                                // previous one ended instead of growing by doubling.
                                entries: Vec::with_capacity(
                                    topics.last().map_or(16, |topic| topic.entries.len()),
                                ),
                            });
                            index.insert(qid.to_vec(), topics.len() - 1);
                            topics.len() - 1
                        }
                    };
                    last = Some((qid.to_vec(), slot));
                    slot
                }
            };
            let docno = arena.push(docno, source)?;
            topics[slot].entries.push(RunEntry { docno, sim });
        }
        let Some(run_id) = run_id else {
            return Err(TrecError::Empty {
                source_name: source.to_owned(),
            });
        };
        arena.shrink();
        Ok(Run {
            run_id,
            topics,
            index,
            arena,
        })
    }

    /// Append a run parsed from a later part of the same file (so that a large file can be
    /// read in pieces, in parallel). Topics found in both are joined; the run id stays this
    /// run's. The order of a topic's documents may change, which no measure depends on.
    pub fn append(&mut self, mut other: Run, source: &str) -> Result<(), TrecError> {
        // Copy the smaller part into the larger one; evaluation does not depend on the order
        // of a topic's lines, only the run id must stay the first line's.
        if other.arena.len() > self.arena.len() {
            std::mem::swap(self, &mut other);
            std::mem::swap(&mut self.run_id, &mut other.run_id);
        }
        let offset = self.arena.append(&other.arena, source)?;
        let mut order: Vec<(Vec<u8>, usize)> = other.index.into_iter().collect();
        order.sort_unstable_by_key(|(_, slot)| *slot);
        let mut topics = other.topics;
        for (qid, slot) in order {
            let entries = std::mem::take(&mut topics[slot].entries);
            let shifted = entries.into_iter().map(|entry| RunEntry {
                docno: entry.docno.shifted(offset),
                sim: entry.sim,
            });
            match self.index.get(&qid) {
                Some(&mine) => self.topics[mine].entries.extend(shifted),
                None => {
                    self.topics.push(RunTopic {
                        entries: shifted.collect(),
                    });
                    self.index.insert(qid, self.topics.len() - 1);
                }
            }
        }
        Ok(())
    }

    /// The run id of the first line (what trec_eval prints as `runid`).
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Number of distinct topics in the run.
    pub fn num_topics(&self) -> usize {
        self.topics.len()
    }

    pub(crate) fn topic(&self, qid: &str) -> Option<&RunTopic> {
        self.index
            .get(qid.as_bytes())
            .map(|&slot| &self.topics[slot])
    }

    pub(crate) fn docno(&self, entry: &RunEntry) -> &[u8] {
        self.arena.get(entry.docno)
    }

    /// Bytewise order of two retrieved documents' ids.
    pub(crate) fn compare_docnos(&self, left: &RunEntry, right: &RunEntry) -> std::cmp::Ordering {
        self.arena.compare(left.docno, right.docno)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_interleaved_topics_and_ignores_junk() {
        let text = "1 Q0 a 1 2.5 runA junk at end\n2 Q0 b 1 1.0 runA\n1 Q0 c 2 0.5 runA\n";
        let run = Run::parse(text.as_bytes(), "r").unwrap();
        assert_eq!(run.run_id(), "runA");
        assert_eq!(run.num_topics(), 2);
        let one = run.topic("1").unwrap();
        assert_eq!(one.entries.len(), 2);
        assert_eq!(run.docno(&one.entries[1]), b"c");
    }

    #[test]
    fn appending_parts_equals_parsing_the_whole() {
        let head = "1 Q0 a 1 2.5 runA\n2 Q0 b 1 1.0 runA\n";
        let tail = "2 Q0 c 2 0.5 runB\n3 Q0 d 1 0.1 runB\n";
        let mut joined = Run::parse(head.as_bytes(), "r").unwrap();
        joined
            .append(Run::parse(tail.as_bytes(), "r").unwrap(), "r")
            .unwrap();
        assert_eq!(joined.run_id(), "runA");
        assert_eq!(joined.num_topics(), 3);
        let two = joined.topic("2").unwrap();
        let mut ids: Vec<&[u8]> = two.entries.iter().map(|e| joined.docno(e)).collect();
        ids.sort_unstable();
        assert_eq!(ids, [&b"b"[..], b"c"]);
        assert_eq!(joined.docno(&joined.topic("3").unwrap().entries[0]), b"d");
        // A larger second part becomes the base; the first line's run id is kept.
        let mut small = Run::parse("9 Q0 z 1 1 first\n".as_bytes(), "r").unwrap();
        small.append(joined, "r").unwrap();
        assert_eq!(small.run_id(), "first");
        assert_eq!(small.num_topics(), 4);
        assert_eq!(small.docno(&small.topic("9").unwrap().entries[0]), b"z");
        assert_eq!(small.docno(&small.topic("1").unwrap().entries[0]), b"a");
    }

    #[test]
    fn errors_name_file_and_line() {
        let short = Run::parse("1 Q0 a 1 2.5\n".as_bytes(), "run.txt").unwrap_err();
        assert_eq!(
            short.to_string(),
            "run.txt:1: expected at least 6 (qid Q0 docno rank sim run_id) columns, found 5"
        );
        let score =
            Run::parse("1 Q0 a 1 2.5 r\n1 Q0 b 2 high r\n".as_bytes(), "run.txt").unwrap_err();
        assert_eq!(
            score.to_string(),
            "run.txt:2: score `high` is not a valid number"
        );
        let empty = Run::parse("\n\n".as_bytes(), "run.txt").unwrap_err();
        assert_eq!(empty.to_string(), "run.txt: empty file, no data lines");
    }
}
