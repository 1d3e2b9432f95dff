//! Turning one topic's retrieved documents into the ranked list of relevance values every
//! measure reads, the way trec_eval does it.
//!
//! Order: score descending, ties broken by document id in *descending* bytewise order; then
//! the `-M` cut. Each retrieved document gets its judged level, [`NONPOOL`] when the qrels
//! never mention it, or [`UNJUDGED`] when the qrels list it with a negative value. Counts of
//! judged documents per level come from the whole qrels topic, retrieved or not. No measure
//! is computed here.

use super::error::TrecError;
use super::evaluate::TrecOptions;
use super::qrels::{Qrels, QrelsTopic};
use super::run::{Run, RunEntry};
use std::cmp::Ordering;

/// A retrieved document the qrels do not mention.
pub(crate) const NONPOOL: i64 = -1;
/// A retrieved document the qrels list with a negative value (pooled, never judged).
pub(crate) const UNJUDGED: i64 = -2;

/// One topic, ranked and judged.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct JudgedQuery {
    /// Relevance of the document at each rank (index 0 is rank 1).
    pub(crate) rels: Vec<i64>,
    /// Judged documents in the qrels per level `0..`, retrieved or not.
    pub(crate) level_counts: Vec<u64>,
    /// Judged documents at or above the relevance threshold.
    pub(crate) num_rel: u64,
    /// Retrieved documents judged at or above the threshold.
    pub(crate) num_rel_ret: u64,
    /// The `-l` threshold.
    pub(crate) rel_level: i64,
}

impl JudgedQuery {
    /// Build from relevance values already in rank order and the topic's judged documents
    /// per level (from [`count_levels`]).
    pub(crate) fn new(rels: Vec<i64>, level_counts: &[u64], rel_level: i64) -> Self {
        let level_counts = level_counts.to_vec();
        let num_rel = level_counts
            .iter()
            .enumerate()
            .filter(|(level, _)| *level as i64 >= rel_level)
            .map(|(_, count)| count)
            .sum();
        let num_rel_ret = rels
            .iter()
            .filter(|&&rel| rel >= 0 && rel >= rel_level)
            .count() as u64;
        Self {
            rels,
            level_counts,
            num_rel,
            num_rel_ret,
            rel_level,
        }
    }

    /// Number of retrieved documents (after the `-M` cut).
    pub(crate) fn num_ret(&self) -> usize {
        self.rels.len()
    }

    /// Whether a relevance value counts as relevant under `-l` (trec_eval compares the raw
    /// value, so a negative threshold makes unjudged documents relevant too).
    pub(crate) fn is_rel(&self, rel: i64) -> bool {
        rel >= self.rel_level
    }
}

/// Judged documents per relevance level `0..=max`; negative values (pooled, unjudged) are
/// not counted, and the list ends at the highest level with a document (trec_eval's
/// `num_rel_levels`).
pub(crate) fn count_levels(judged: impl Iterator<Item = i64>) -> Vec<u64> {
    let mut level_counts: Vec<u64> = Vec::new();
    for rel in judged {
        if let Ok(level) = usize::try_from(rel) {
            if level >= level_counts.len() {
                level_counts.resize(level + 1, 0);
            }
            level_counts[level] += 1;
        }
    }
    level_counts
}

/// Reusable scratch space so that judging 10,000 topics allocates a handful of times.
#[derive(Debug, Default)]
pub(crate) struct Judge {
    ranked: Vec<RunEntry>,
    by_docno: Vec<(u64, usize)>,
}

impl Judge {
    /// Rank `entries` trec_eval's way, cut to `max_docs`, and look each one up in the qrels.
    pub(crate) fn judge(
        &mut self,
        run: &Run,
        entries: &[RunEntry],
        qrels: &Qrels,
        topic: &QrelsTopic,
        options: &TrecOptions,
        run_name: &str,
    ) -> Result<JudgedQuery, TrecError> {
        self.ranked.clear();
        self.ranked.extend_from_slice(entries);
        // NaN scores are refused by the reader, so this is a total order.
        self.ranked.sort_unstable_by(|a, b| {
            b.sim
                .partial_cmp(&a.sim)
                .unwrap_or(Ordering::Equal)
                .then_with(|| run.compare_docnos(b, a))
        });
        // trec_eval cuts before it looks for duplicates, so a duplicate below -M is allowed.
        if let Some(max) = options.max_docs {
            self.ranked.truncate(max);
        }
        let rels = self.look_up(run, qrels, topic, run_name)?;
        Ok(JudgedQuery::new(
            rels,
            topic.level_counts(),
            options.rel_level,
        ))
    }

    /// Relevance of each ranked document, found by walking the ranked ids in id order beside
    /// the topic's judgments (also sorted by id) — trec_eval's merge, cheaper than one binary
    /// search per document. A run that retrieves one id twice for a topic is refused, as
    /// trec_eval refuses it.
    fn look_up(
        &mut self,
        run: &Run,
        qrels: &Qrels,
        topic: &QrelsTopic,
        run_name: &str,
    ) -> Result<Vec<i64>, TrecError> {
        let ranked = &self.ranked;
        // Sort (prefix, position) pairs natively, then order runs of equal prefixes by the
        // full ids: much cheaper than a comparator that chases every entry.
        self.by_docno.clear();
        self.by_docno.extend(
            ranked
                .iter()
                .enumerate()
                .map(|(position, entry)| (entry.docno.prefix(), position)),
        );
        self.by_docno.sort_unstable();
        let mut start = 0;
        while start < self.by_docno.len() {
            let prefix = self.by_docno[start].0;
            let end = start
                + self.by_docno[start..]
                    .iter()
                    .take_while(|key| key.0 == prefix)
                    .count();
            if end - start > 1 {
                self.by_docno[start..end]
                    .sort_unstable_by(|a, b| run.compare_docnos(&ranked[a.1], &ranked[b.1]));
            }
            start = end;
        }
        let mut rels = vec![NONPOOL; ranked.len()];
        let mut judged = 0;
        let mut previous: Option<&RunEntry> = None;
        for &(_, index) in &self.by_docno {
            let entry = &ranked[index];
            let docno = run.docno(entry);
            if previous.is_some_and(|previous| run.compare_docnos(previous, entry).is_eq()) {
                return Err(TrecError::DuplicateDocument {
                    source_name: run_name.to_owned(),
                    qid: topic.qid.clone(),
                    docno: String::from_utf8_lossy(docno).into_owned(),
                });
            }
            previous = Some(entry);
            let prefix = entry.docno.prefix();
            while judged < topic.len() {
                match qrels.compare_judged(topic, judged, docno, prefix) {
                    Ordering::Less => judged += 1,
                    Ordering::Equal => {
                        let rel = topic.rel_at(judged);
                        rels[index] = if rel < 0 { UNJUDGED } else { rel };
                        break;
                    }
                    Ordering::Greater => break,
                }
            }
        }
        Ok(rels)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(max_docs: Option<usize>, rel_level: i64) -> TrecOptions {
        TrecOptions {
            max_docs,
            rel_level,
            ..TrecOptions::default()
        }
    }

    fn judge(qrels: &str, run: &str, max_docs: Option<usize>, rel_level: i64) -> JudgedQuery {
        let qrels = Qrels::parse(qrels.as_bytes(), "q").unwrap();
        let run = Run::parse(run.as_bytes(), "r").unwrap();
        let topic = &qrels.topics()[0];
        let entries = &run.topic(&topic.qid).unwrap().entries;
        Judge::default()
            .judge(
                &run,
                entries,
                &qrels,
                topic,
                &options(max_docs, rel_level),
                "r",
            )
            .unwrap()
    }

    #[test]
    fn ties_break_by_docno_descending() {
        let judged = judge(
            "q 0 a 1\nq 0 b 0\nq 0 c 0\n",
            "q Q0 a 1 1.0 r\nq Q0 b 2 1.0 r\nq Q0 c 3 1.0 r\n",
            None,
            1,
        );
        assert_eq!(judged.rels, vec![0, 0, 1]);
    }

    #[test]
    fn unjudged_and_nonpool_are_marked() {
        let judged = judge(
            "q 0 a 2\nq 0 b -1\nq 0 z 1\nq 0 y 0\n",
            "q Q0 a 1 3 r\nq Q0 b 2 2 r\nq Q0 x 3 1 r\n",
            None,
            1,
        );
        assert_eq!(judged.rels, vec![2, UNJUDGED, NONPOOL]);
        assert_eq!(judged.level_counts, vec![1, 1, 1]);
        assert_eq!((judged.num_rel, judged.num_rel_ret), (2, 1));
    }

    #[test]
    fn max_docs_cuts_after_sorting() {
        let judged = judge("q 0 a 1\n", "q Q0 a 2 0.1 r\nq Q0 b 1 0.9 r\n", Some(1), 1);
        assert_eq!(judged.rels, vec![NONPOOL]);
        assert_eq!(judged.num_rel_ret, 0);
    }

    #[test]
    fn duplicate_retrieved_document_is_an_error() {
        let qrels = Qrels::parse("q 0 a 1\n".as_bytes(), "q").unwrap();
        let run = Run::parse("q Q0 a 1 0.5 r\nq Q0 a 2 0.1 r\n".as_bytes(), "r").unwrap();
        let topic = &qrels.topics()[0];
        let entries = &run.topic("q").unwrap().entries;
        let error = Judge::default()
            .judge(&run, entries, &qrels, topic, &options(None, 1), "run.txt")
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "run.txt: document `a` appears twice for topic `q`"
        );
    }
}
