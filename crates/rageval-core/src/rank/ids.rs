//! Which retrieved ids are relevant, given the gold ids: the binary relevance list every
//! id-based rank measure ([`super::cutoff`], [`super::average_precision`], nDCG) reads.
//!
//! RAG data often repeats one document id across chunks, so a retrieved list may hold an
//! id twice. trec_eval refuses such a run outright (`form_res_rels.c`: "duplicate docs");
//! rageval scores it as trec_eval would score the same list with every repeat replaced by
//! a distinct non-relevant document: a document counts once, at its first rank, and each
//! later occurrence keeps its rank but is not relevant (the slot it takes holds nothing
//! new). Counting a repeat again would let recall, AP, nDCG and R-precision pass 1
//! (`[a, a]` against gold `{a, b}` would score recall 1).

use std::collections::{HashMap, HashSet};

/// The relevance of each retrieved id, in retrieved order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdRelevance {
    /// `relevant[i]`: the id at rank `i + 1` is a gold id seen here for the first time.
    pub relevant: Vec<bool>,
    /// `repeat_of[i]`: for a repeated id, the index of its first occurrence.
    pub repeat_of: Vec<Option<usize>>,
    /// R: the number of distinct gold ids, retrieved or not.
    pub total_relevant: usize,
}

impl IdRelevance {
    /// How many retrieved ids repeat an earlier one.
    pub fn repeats(&self) -> usize {
        self.repeat_of.iter().filter(|r| r.is_some()).count()
    }
}

/// Judges `retrieved` against `gold`: relevant at its first occurrence only.
pub fn id_relevance(retrieved: &[&str], gold: &[&str]) -> IdRelevance {
    let gold: HashSet<&str> = gold.iter().copied().collect();
    let mut first_seen: HashMap<&str, usize> = HashMap::new();
    let mut relevant = Vec::with_capacity(retrieved.len());
    let mut repeat_of = Vec::with_capacity(retrieved.len());
    for (index, &id) in retrieved.iter().enumerate() {
        match first_seen.get(id) {
            Some(&first) => {
                relevant.push(false);
                repeat_of.push(Some(first));
            }
            None => {
                first_seen.insert(id, index);
                relevant.push(gold.contains(id));
                repeat_of.push(None);
            }
        }
    }
    IdRelevance {
        relevant,
        repeat_of,
        total_relevant: gold.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_id_counts_once_at_its_first_rank() {
        let judged = id_relevance(&["d12", "d3", "d3", "d12"], &["d12", "d3"]);
        assert_eq!(judged.relevant, vec![true, true, false, false]);
        assert_eq!(judged.repeat_of, vec![None, None, Some(1), Some(0)]);
        assert_eq!((judged.total_relevant, judged.repeats()), (2, 2));

        // A repeated non-gold id is a repeat too; gold ids are counted once.
        let judged = id_relevance(&["x", "a", "x"], &["a", "a", "b"]);
        assert_eq!(judged.relevant, vec![false, true, false]);
        assert_eq!(judged.repeat_of, vec![None, None, Some(0)]);
        assert_eq!(judged.total_relevant, 2);
        assert_eq!(id_relevance(&[], &[]).relevant, Vec::<bool>::new());
    }
}
