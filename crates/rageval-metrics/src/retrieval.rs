//! Retrieved contexts against gold contexts, without a model: by id (set precision/recall
//! and the rank measures of trec_eval) or by string similarity (ragas's non-LLM variants).
//!
//! Rank measures use the retriever's order as given. A retrieved id counts as relevant when
//! it is among the sample's `reference_context_ids`; the number of relevant items is the
//! number of distinct gold ids, so a gold context never retrieved lowers recall and AP.

use std::collections::HashSet;

use rageval_core::rank::{self, Gain};
use rageval_core::text;
use rageval_core::{Evidence, Outcome, Sample, Verdict, VerdictTarget};
use serde_json::json;

use crate::metric::{MetricInfo, ModelFree, with_inputs};

/// ragas's default threshold for the string-similarity context metrics.
pub const STRING_MATCH_THRESHOLD: f64 = 0.5;

/// Which comparison a [`Retrieval`] metric makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetrievalKind {
    IdSetPrecision,
    IdSetRecall,
    IdPrecisionAtK,
    IdRecallAtK,
    IdHitAtK,
    IdReciprocalRank,
    IdAveragePrecision,
    IdRPrecision,
    IdNdcgAtK,
    StringPrecision,
    StringRecall,
}

/// A retrieval metric from the catalogue, with its cut-off where it takes one.
pub struct Retrieval {
    info: &'static MetricInfo,
    kind: RetrievalKind,
    cutoff: Option<usize>,
}

impl Retrieval {
    pub fn new(info: &'static MetricInfo, kind: RetrievalKind, cutoff: Option<usize>) -> Self {
        Self { info, kind, cutoff }
    }
}

impl ModelFree for Retrieval {
    fn info(&self) -> &'static MetricInfo {
        self.info
    }

    fn name(&self) -> String {
        match self.cutoff {
            Some(k) => format!("{}@{k}", self.info.name),
            None => self.info.name.to_string(),
        }
    }

    fn score(&self, sample: &Sample) -> Outcome {
        with_inputs(self.info, sample, || match self.kind {
            RetrievalKind::StringPrecision | RetrievalKind::StringRecall => {
                self.score_by_string(sample)
            }
            _ => self.score_by_id(sample),
        })
    }
}

impl Retrieval {
    fn score_by_id(&self, sample: &Sample) -> Outcome {
        let retrieved = sample.context_ids().unwrap_or_default();
        let gold: Vec<&str> = sample
            .reference_context_ids
            .iter()
            .map(String::as_str)
            .collect();
        let gold_set: HashSet<&str> = gold.iter().copied().collect();
        let relevant: Vec<bool> = retrieved.iter().map(|id| gold_set.contains(id)).collect();
        let total_relevant = gold_set.len();
        let k = self.cutoff.unwrap_or(retrieved.len()).max(1);
        let value = match self.kind {
            RetrievalKind::IdSetPrecision => rank::id_context_precision(&retrieved, &gold),
            RetrievalKind::IdSetRecall => rank::id_context_recall(&retrieved, &gold),
            RetrievalKind::IdPrecisionAtK => Some(rank::precision_at_k(&relevant, k)),
            RetrievalKind::IdRecallAtK => rank::recall_at_k(&relevant, k, total_relevant),
            RetrievalKind::IdHitAtK => Some(rank::hit_at_k(&relevant, k)),
            RetrievalKind::IdReciprocalRank => Some(rank::reciprocal_rank(&relevant)),
            RetrievalKind::IdAveragePrecision => trec_average_precision(&relevant, total_relevant),
            RetrievalKind::IdRPrecision => rank::r_precision(&relevant, total_relevant),
            RetrievalKind::IdNdcgAtK => {
                let grades: Vec<f64> = relevant.iter().map(|&r| f64::from(u8::from(r))).collect();
                let ideal = vec![1.0; total_relevant];
                rank::ndcg_at_k(&grades, &ideal, self.cutoff, Gain::Linear)
            }
            RetrievalKind::StringPrecision | RetrievalKind::StringRecall => None,
        };
        let evidence = Evidence {
            verdicts: relevant
                .iter()
                .enumerate()
                .map(|(i, &r)| binary_verdict(i, r, None))
                .collect(),
            details: Default::default(),
        };
        match value {
            Some(value) => Outcome::score(value, evidence),
            None => Outcome::undefined("sample has no reference_context_ids"),
        }
    }

    fn score_by_string(&self, sample: &Sample) -> Outcome {
        let retrieved: Vec<&str> = sample.contexts.iter().map(|c| c.text.as_str()).collect();
        let gold: Vec<&str> = sample
            .reference_contexts
            .iter()
            .map(String::as_str)
            .collect();
        let (result, target): (_, fn(usize) -> VerdictTarget) = match self.kind {
            RetrievalKind::StringRecall => (
                rank::string_context_recall(
                    &retrieved,
                    &gold,
                    STRING_MATCH_THRESHOLD,
                    text::levenshtein_similarity,
                ),
                // Recall's verdicts are about the gold contexts, which have no target kind of
                // their own: they are reported as statements of the reference.
                VerdictTarget::Statement,
            ),
            _ => (
                rank::string_context_precision(
                    &retrieved,
                    &gold,
                    STRING_MATCH_THRESHOLD,
                    text::levenshtein_similarity,
                ),
                VerdictTarget::Context,
            ),
        };
        match result {
            Some((value, matched)) => {
                let verdicts = matched
                    .verdicts
                    .iter()
                    .zip(&matched.best)
                    .enumerate()
                    .map(|(i, (&hit, &best))| Verdict {
                        target: target(i),
                        ..binary_verdict(i, hit, Some(best))
                    })
                    .collect();
                Outcome::score(
                    value,
                    Evidence {
                        verdicts,
                        details: [("threshold".to_string(), json!(STRING_MATCH_THRESHOLD))]
                            .into_iter()
                            .collect(),
                    },
                )
            }
            None => Outcome::undefined("sample has no reference_contexts"),
        }
    }
}

/// trec_eval's AP: precision at each relevant retrieved item, summed, over *all* relevant
/// items (retrieved or not). `None` when nothing is relevant.
fn trec_average_precision(relevant: &[bool], total_relevant: usize) -> Option<f64> {
    if total_relevant == 0 {
        return None;
    }
    let retrieved_relevant = relevant.iter().filter(|&&r| r).count();
    let over_retrieved = rank::average_precision(relevant)?;
    Some(over_retrieved * retrieved_relevant as f64 / total_relevant as f64)
}

fn binary_verdict(index: usize, hit: bool, similarity: Option<f64>) -> Verdict {
    Verdict {
        target: VerdictTarget::Context(index),
        value: if hit { 1.0 } else { 0.0 },
        label: None,
        text: None,
        reason: similarity.map(|s| format!("best similarity {s:.4}")),
        supporting_contexts: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build;
    use rageval_core::Context;

    fn sample(retrieved: &[&str], gold: &[&str]) -> Sample {
        Sample {
            id: "1".into(),
            question: "q".into(),
            contexts: retrieved
                .iter()
                .map(|id| Context {
                    id: Some(id.to_string()),
                    text: format!("text of {id}"),
                    score: None,
                })
                .collect(),
            reference_context_ids: gold.iter().map(|g| g.to_string()).collect(),
            ..Sample::default()
        }
    }

    fn value(metric: &str, sample: &Sample) -> Option<f64> {
        build(metric)
            .unwrap()
            .score_now(sample)
            .and_then(|o| o.value())
    }

    #[test]
    fn id_measures_follow_trec_eval() {
        // Retrieved d1 d2 d3 d4, gold {d2, d4, d9}: relevant at ranks 2 and 4, one never
        // retrieved. AP = (1/2 + 2/4) / 3 = 1/3 (trec_eval divides by all relevant).
        let s = sample(&["d1", "d2", "d3", "d4"], &["d2", "d4", "d9"]);
        let close = |a: Option<f64>, b: f64| (a.unwrap() - b).abs() < 1e-12;
        assert!(close(value("id_average_precision", &s), 1.0 / 3.0));
        assert!(close(value("id_precision@2", &s), 0.5));
        assert!(close(value("id_recall@4", &s), 2.0 / 3.0));
        assert!(close(value("id_hit@1", &s), 0.0));
        assert!(close(value("id_mrr", &s), 0.5));
        assert!(close(value("id_context_precision", &s), 0.5));
        assert!(close(value("id_context_recall", &s), 2.0 / 3.0));
        // R = 3: top 3 holds one relevant.
        assert!(close(value("id_r_precision", &s), 1.0 / 3.0));
        // DCG = 1/log2(3) + 1/log2(5); ideal = 1 + 1/log2(3) + 1/log2(4).
        let dcg = 1.0 / 3f64.log2() + 1.0 / 5f64.log2();
        let ideal = 1.0 + 1.0 / 3f64.log2() + 0.5;
        assert!(close(value("id_ndcg", &s), dcg / ideal));
    }

    #[test]
    fn id_metrics_without_ids_are_undefined() {
        let mut s = sample(&["d1"], &[]);
        assert_eq!(
            build("id_mrr").unwrap().score_now(&s).unwrap(),
            Outcome::undefined("sample has no reference_context_ids")
        );
        s.reference_context_ids = vec!["d1".into()];
        s.contexts[0].id = None;
        assert_eq!(
            build("id_mrr").unwrap().score_now(&s).unwrap(),
            Outcome::undefined("sample has no retrieved_context_ids")
        );
    }

    #[test]
    fn string_precision_uses_ragas_threshold() {
        let s = Sample {
            contexts: vec![
                Context::text("The Eiffel Tower is in Paris."),
                Context::text("Bananas are yellow."),
            ],
            reference_contexts: vec!["The Eiffel Tower is in Paris".into()],
            ..sample(&[], &[])
        };
        // First context matches (similarity ≥ 0.5), second does not: AP over [1, 0] = 1.
        assert_eq!(value("string_context_precision", &s), Some(1.0));
        assert_eq!(value("string_context_recall", &s), Some(1.0));
    }

    #[test]
    fn cutoff_names_are_kept() {
        assert_eq!(build("id_ndcg@10").unwrap().name(), "id_ndcg@10");
        assert_eq!(build("id_mrr").unwrap().name(), "id_mrr");
    }
}
