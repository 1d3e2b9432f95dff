//! Retrieved contexts against gold contexts, without a model: by id (set precision/recall
//! and the rank measures of trec_eval) or by string similarity (ragas's non-LLM variants).
//!
//! Rank measures use the retriever's order as given. A retrieved id counts as relevant when
//! it is among the sample's `reference_context_ids` and has not been retrieved before: a
//! repeated id (chunks of one document) counts once, at its first rank, and its later
//! occurrences are not relevant (`rageval_core::rank::id_relevance`), so every score stays
//! in [0, 1]. The number of relevant items is the number of distinct gold ids, so a gold
//! context never retrieved lowers recall and AP.

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
        let judged = rank::id_relevance(&retrieved, &gold);
        let relevant = &judged.relevant;
        let total_relevant = judged.total_relevant;
        let k = self.cutoff.unwrap_or(retrieved.len()).max(1);
        let value = match self.kind {
            RetrievalKind::IdSetPrecision => rank::id_context_precision(&retrieved, &gold),
            RetrievalKind::IdSetRecall => rank::id_context_recall(&retrieved, &gold),
            RetrievalKind::IdPrecisionAtK => Some(rank::precision_at_k(relevant, k)),
            RetrievalKind::IdRecallAtK => rank::recall_at_k(relevant, k, total_relevant),
            RetrievalKind::IdHitAtK => Some(rank::hit_at_k(relevant, k)),
            RetrievalKind::IdReciprocalRank => Some(rank::reciprocal_rank(relevant)),
            RetrievalKind::IdAveragePrecision => trec_average_precision(relevant, total_relevant),
            RetrievalKind::IdRPrecision => rank::r_precision(relevant, total_relevant),
            RetrievalKind::IdNdcgAtK => {
                let grades: Vec<f64> = relevant.iter().map(|&r| f64::from(u8::from(r))).collect();
                let ideal = vec![1.0; total_relevant];
                rank::ndcg_at_k(&grades, &ideal, self.cutoff, Gain::Linear)
            }
            RetrievalKind::StringPrecision | RetrievalKind::StringRecall => None,
        };
        let verdicts = relevant
            .iter()
            .zip(&judged.repeat_of)
            .enumerate()
            .map(|(i, (&hit, repeat))| Verdict {
                reason: repeat.map(|first| {
                    format!(
                        "repeats the id of context {first}: a document counts once, at its \
                         first rank"
                    )
                }),
                ..binary_verdict(i, hit, None)
            })
            .collect();
        let mut evidence = Evidence {
            verdicts,
            details: Default::default(),
        };
        if judged.repeats() > 0 {
            evidence
                .details
                .insert("repeated_ids".into(), json!(judged.repeats()));
        }
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
        let too_long = retrieved.iter().find_map(|context| {
            gold.iter()
                .find_map(|reference| text::too_long_to_compare(context, reference))
        });
        if let Some(reason) = too_long {
            return Outcome::undefined(format!("a context and a reference context: {reason}"));
        }
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
                    hop: None,
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

    /// Regression: a gold id retrieved twice was counted twice: `[a, a]` against gold
    /// `{a, b}` scored recall, AP, nDCG, R-precision and precision 1.0, and
    /// `[d12, d3, d3, d12]` against `{d12, d3}` scored AP 2.0 and nDCG 1.57.
    #[test]
    fn a_repeated_gold_id_counts_once_at_its_first_rank() {
        let close = |a: Option<f64>, b: f64| (a.unwrap() - b).abs() < 1e-12;
        // By hand: relevant [1, 0], R = 2. AP = (1/1) / 2; DCG = 1, ideal = 1 + 1/log2(3).
        let s = sample(&["a", "a"], &["a", "b"]);
        assert!(close(value("id_recall@2", &s), 0.5));
        assert!(close(value("id_average_precision", &s), 0.5));
        assert!(close(value("id_ndcg", &s), 1.0 / (1.0 + 1.0 / 3f64.log2())));
        assert!(close(value("id_r_precision", &s), 0.5));
        assert!(close(value("id_precision@2", &s), 0.5));
        assert!(close(value("id_context_recall", &s), 0.5));
        // Set precision is over distinct ids: {a} is all gold.
        assert!(close(value("id_context_precision", &s), 1.0));

        // By hand: relevant [1, 1, 0, 0], R = 2: every gold id at the top.
        let s = sample(&["d12", "d3", "d3", "d12"], &["d12", "d3"]);
        assert!(close(value("id_average_precision", &s), 1.0));
        assert!(close(value("id_ndcg", &s), 1.0));
        assert!(close(value("id_precision@4", &s), 0.5));
        assert!(close(value("id_recall@4", &s), 1.0));
        assert!(close(value("id_r_precision", &s), 1.0));
        let outcome = build("id_ndcg").unwrap().score_now(&s).unwrap();
        let Outcome::Score { evidence, .. } = outcome else {
            panic!("not scored");
        };
        assert_eq!(evidence.details["repeated_ids"], 2);
        assert!(
            evidence.verdicts[3]
                .reason
                .as_deref()
                .unwrap()
                .starts_with("repeats the id of context 0")
        );
    }

    /// trec_eval refuses a run that lists one document twice; the rule here scores a list
    /// as trec_eval scores it with each repeat replaced by a distinct unjudged document.
    /// Checked with this crate's trec_eval port over random lists with many repeats.
    #[test]
    fn repeated_ids_score_as_trec_eval_scores_them_made_distinct() {
        use rageval_core::stats::SplitMix64;
        use rageval_core::trec::{Qrels, Run, TrecOptions, evaluate};
        let mut rng = SplitMix64::new(15);
        for case in 0..200 {
            let length = 1 + rng.below(8);
            let ids: Vec<String> = (0..length).map(|_| format!("d{}", rng.below(5))).collect();
            let gold: Vec<String> = (0..1 + rng.below(3))
                .map(|_| format!("d{}", rng.below(6)))
                .collect();
            let retrieved: Vec<&str> = ids.iter().map(String::as_str).collect();
            let gold_ids: Vec<&str> = gold.iter().map(String::as_str).collect();
            let s = sample(&retrieved, &gold_ids);

            let distinct: std::collections::BTreeSet<&String> = gold.iter().collect();
            let qrels: String = distinct.iter().map(|g| format!("q 0 {g} 1\n")).collect();
            let mut seen = std::collections::HashSet::new();
            let run: String = ids
                .iter()
                .enumerate()
                .map(|(rank, id)| {
                    let docno = if seen.insert(id) {
                        id.clone()
                    } else {
                        format!("{id}-repeat{rank}")
                    };
                    format!("q Q0 {docno} {} {} r\n", rank + 1, length - rank)
                })
                .collect();
            let k = length.to_string();
            let options = TrecOptions {
                measures: ["map", "ndcg", "Rprec", "recip_rank"]
                    .into_iter()
                    .map(String::from)
                    .chain([format!("P.{k}"), format!("recall.{k}")])
                    .collect(),
                ..TrecOptions::default()
            };
            let report = evaluate(
                &Qrels::parse(qrels.as_bytes(), "qrels").unwrap(),
                &Run::parse(run.as_bytes(), "run").unwrap(),
                &options,
            )
            .unwrap();
            let (precision, recall) = (format!("id_precision@{k}"), format!("id_recall@{k}"));
            let (p_k, recall_k) = (format!("P_{k}"), format!("recall_{k}"));
            for (ours, theirs) in [
                ("id_average_precision", "map"),
                ("id_ndcg", "ndcg"),
                ("id_r_precision", "Rprec"),
                ("id_mrr", "recip_rank"),
                (precision.as_str(), p_k.as_str()),
                (recall.as_str(), recall_k.as_str()),
            ] {
                let expected = report.query_value("q", theirs).unwrap();
                let got = value(ours, &s).unwrap();
                assert!(
                    (got - expected).abs() < 1e-12 && (0.0..=1.0).contains(&got),
                    "case {case}: {ids:?} vs {gold:?}: {ours} {got}, trec_eval {theirs} {expected}"
                );
            }
        }
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
