//! The table of every metric: its description, and how a `--metrics` spec becomes a
//! [`Metric`]. This file is a registry; it is long because the table is.

use std::path::PathBuf;
use std::sync::Arc;

use crate::judged::{JudgedKind, JudgedMetric};
use crate::judged_catalogue::{JUDGED, MODE_ALIASES, SUMMARIES_ZH};
use crate::lexical::{Lexical, LexicalKind};
use crate::metric::{Input, Metric, MetricError, MetricInfo, ModeInfo};
use crate::retrieval::{Retrieval, RetrievalKind};
use crate::rubric::{DefinedRubric, RubricError, Rubrics};
use crate::tools::{ArgumentMatch, ToolKind, Tools};
use rageval_tasks::{Measurement, Rubric, TaskKind};

const ANSWER_REFERENCE: &[Input] = &[Input::Answer, Input::Reference];
const IDS: &[Input] = &[Input::ContextIds, Input::ReferenceContextIds];
const TEXTS: &[Input] = &[Input::Contexts, Input::ReferenceContexts];

/// How a catalogue entry is built.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Builder {
    Lexical(LexicalKind),
    Retrieval(RetrievalKind),
    /// One kind per mode, in the order of `MetricInfo::modes` (one kind when it has none).
    Judged(&'static [JudgedKind]),
    /// One kind per mode, as for judged metrics.
    Tools(&'static [ToolKind]),
}

pub(crate) struct Entry {
    pub(crate) info: MetricInfo,
    pub(crate) builder: Builder,
}

const fn lexical(
    name: &'static str,
    aliases: &'static [&'static str],
    summary: &'static str,
    formula: &'static str,
    source: &'static str,
    kind: LexicalKind,
) -> Entry {
    Entry {
        info: MetricInfo {
            name,
            aliases,
            summary,
            inputs: ANSWER_REFERENCE,
            formula,
            source,
            takes_cutoff: false,
            needs_model: false,
            modes: &[],
        },
        builder: Builder::Lexical(kind),
    }
}

const fn retrieval(
    name: &'static str,
    aliases: &'static [&'static str],
    summary: &'static str,
    formula: &'static str,
    source: &'static str,
    takes_cutoff: bool,
    kind: RetrievalKind,
) -> Entry {
    let inputs = match kind {
        RetrievalKind::StringPrecision | RetrievalKind::StringRecall => TEXTS,
        _ => IDS,
    };
    Entry {
        info: MetricInfo {
            name,
            aliases,
            summary,
            inputs,
            formula,
            source,
            takes_cutoff,
            needs_model: false,
            modes: &[],
        },
        builder: Builder::Retrieval(kind),
    }
}

static ENTRIES: [Entry; 24] = [
    retrieval(
        "id_context_precision",
        &["id_based_context_precision"],
        "share of retrieved context ids that are gold ids (order ignored)",
        "|set(retrieved_ids) ∩ set(reference_ids)| / |set(retrieved_ids)|",
        "ragas IDBasedContextPrecision",
        false,
        RetrievalKind::IdSetPrecision,
    ),
    retrieval(
        "id_context_recall",
        &["id_based_context_recall"],
        "share of gold context ids that were retrieved",
        "|set(retrieved_ids) ∩ set(reference_ids)| / |set(reference_ids)|",
        "ragas IDBasedContextRecall",
        false,
        RetrievalKind::IdSetRecall,
    ),
    retrieval(
        "id_precision",
        &["precision_at_k"],
        "share of the top k retrieved ids that are gold (k = all retrieved when not given)",
        "P@k = (relevant in top k) / k — divided by k even when fewer than k were retrieved; relevant = a gold id at its first occurrence (a repeated id counts once)",
        "trec_eval P_k",
        true,
        RetrievalKind::IdPrecisionAtK,
    ),
    retrieval(
        "id_recall",
        &["recall_at_k"],
        "share of gold ids found in the top k",
        "R@k = (relevant in top k) / |set(reference_ids)|; relevant = a gold id at its first occurrence (a repeated id counts once)",
        "trec_eval recall_k",
        true,
        RetrievalKind::IdRecallAtK,
    ),
    retrieval(
        "id_hit",
        &["hit_at_k", "hit_rate"],
        "1 when any gold id is in the top k, else 0",
        "hit@k = [relevant in top k > 0]",
        "trec_eval success_k",
        true,
        RetrievalKind::IdHitAtK,
    ),
    retrieval(
        "id_mrr",
        &["mrr", "reciprocal_rank"],
        "reciprocal rank of the first gold id (0 when none is retrieved)",
        "RR = 1 / rank of the first relevant item",
        "trec_eval recip_rank",
        false,
        RetrievalKind::IdReciprocalRank,
    ),
    retrieval(
        "id_average_precision",
        &["map"],
        "average precision over all gold ids, retrieved or not",
        "AP = Σ_k rel_k · P@k / |set(reference_ids)|; rel_k = 1 for a gold id at its first \
         occurrence (a repeated id counts once)",
        "trec_eval map",
        false,
        RetrievalKind::IdAveragePrecision,
    ),
    retrieval(
        "id_r_precision",
        &["r_precision"],
        "precision at rank R, R = number of gold ids",
        "R-prec = (relevant in top R) / R; relevant = a gold id at its first occurrence (a repeated id counts once)",
        "trec_eval Rprec",
        false,
        RetrievalKind::IdRPrecision,
    ),
    retrieval(
        "id_ndcg",
        &["ndcg"],
        "normalised discounted cumulative gain of the retrieved order, binary gains",
        "nDCG@k = Σ_{i≤k} rel_i / log2(i+1) ÷ the same sum for the ideal order; rel_i = 1 for a \
         gold id at its first occurrence (a repeated id counts once)",
        "Järvelin & Kekäläinen 2002; trec_eval ndcg_cut_k",
        true,
        RetrievalKind::IdNdcgAtK,
    ),
    retrieval(
        "string_context_precision",
        &[
            "non_llm_context_precision_with_reference",
            "non_llm_context_precision",
        ],
        "rank-weighted share of retrieved contexts that closely match a gold context",
        "v_i = [max_j sim(retrieved_i, reference_j) ≥ 0.5], sim = 1 − normalised Levenshtein; \
         score = Σ_k v_k·P@k / Σ_k v_k (exact; ragas adds 1e-10 to the denominator)",
        "ragas NonLLMContextPrecisionWithReference",
        false,
        RetrievalKind::StringPrecision,
    ),
    retrieval(
        "string_context_recall",
        &["non_llm_context_recall"],
        "share of gold contexts closely matched by a retrieved context",
        "mean_j [max_i sim(retrieved_i, reference_j) > 0.5] (strict >, as ragas)",
        "ragas NonLLMContextRecall",
        false,
        RetrievalKind::StringRecall,
    ),
    lexical(
        "exact_match",
        &[],
        "1 when the answer equals a reference after normalisation",
        "max over references r of [normalise(response) = normalise(r)]; normalise folds \
         full-width ASCII and the ideographic space to ASCII, lower-cases (Unicode), deletes \
         punctuation (ASCII, full-width, CJK and general punctuation; not replaced by a \
         space), collapses white space to one space, trims it, and drops the space between \
         two Han characters; blank references are skipped",
        "SQuAD exact match; ragas ExactMatch",
        LexicalKind::ExactMatch,
    ),
    lexical(
        "string_presence",
        &[],
        "1 when a reference occurs inside the answer",
        "max over references r of [normalise(r) is a substring of normalise(response)], \
         normalise as in exact_match (fold full-width, lower-case, delete punctuation, \
         collapse white space, drop spaces between Han characters), so case, punctuation \
         and spacing do not matter (ragas compares raw text); blank references are skipped, \
         and a reference of punctuation only normalises to \"\" and is in every response",
        "ragas StringPresence",
        LexicalKind::StringPresence,
    ),
    lexical(
        "levenshtein",
        &["levenshtein_similarity", "non_llm_string_similarity"],
        "character edit similarity of answer and reference",
        "1 − levenshtein(a, b) / max(|a|, |b|), by Unicode code points",
        "Levenshtein 1966; ragas NonLLMStringSimilarity (default)",
        LexicalKind::Levenshtein,
    ),
    lexical(
        "hamming",
        &["hamming_similarity"],
        "share of positions where answer and reference agree",
        "1 − hamming(a, b) / max(|a|, |b|), the shorter string padded",
        "ragas NonLLMStringSimilarity(HAMMING)",
        LexicalKind::Hamming,
    ),
    lexical(
        "jaro",
        &["jaro_similarity"],
        "Jaro similarity of answer and reference",
        "(m/|a| + m/|b| + (m − t)/m) / 3",
        "Jaro 1989; ragas NonLLMStringSimilarity(JARO)",
        LexicalKind::Jaro,
    ),
    lexical(
        "jaro_winkler",
        &["jaro_winkler_similarity"],
        "Jaro similarity boosted for a common prefix",
        "jaro + ℓ·0.1·(1 − jaro), ℓ = common prefix length ≤ 4",
        "Winkler 1990; ragas NonLLMStringSimilarity(JARO_WINKLER)",
        LexicalKind::JaroWinkler,
    ),
    lexical(
        "bleu",
        &["bleu_score"],
        "sentence BLEU of the whole answer against every reference, 0–1",
        "BP · exp(Σ_n ¼ log p_n), n = 1..4, exponential smoothing, effective order; \
         13a tokens, jieba tokens for Chinese",
        "Papineni et al. 2002; sacrebleu sentence_bleu (ragas scores the first sentence only; \
         we score all)",
        LexicalKind::Bleu,
    ),
    lexical(
        "rouge1",
        &["rouge_1"],
        "unigram overlap F1 of answer and reference",
        "P = |overlap| / |answer unigrams|, R = |overlap| / |reference unigrams|, \
         F = 2PR / (P + R)",
        "Lin 2004; rouge-score rouge1, Unicode-aware tokens",
        LexicalKind::Rouge1,
    ),
    lexical(
        "rouge2",
        &["rouge_2"],
        "bigram overlap F1 of answer and reference",
        "as rouge1 over bigrams",
        "Lin 2004; rouge-score rouge2, Unicode-aware tokens",
        LexicalKind::Rouge2,
    ),
    lexical(
        "rouge_l",
        &["rougeL", "rouge_score"],
        "longest-common-subsequence F1 of answer and reference",
        "P = LCS / |answer tokens|, R = LCS / |reference tokens|, F = 2PR / (P + R)",
        "Lin 2004; rouge-score rougeL; ragas RougeScore (default rougeL F)",
        LexicalKind::RougeL,
    ),
    lexical(
        "chrf",
        &["chr_f"],
        "character n-gram F-score of answer and references, 0–1",
        "chrF: mean char n-gram (n = 1..6) precision P and recall R, F_β with β = 2, \
         white space removed",
        "Popović 2015; sacrebleu CHRF",
        LexicalKind::Chrf,
    ),
    Entry {
        info: MetricInfo {
            name: "tool_selection",
            aliases: &["tool_correctness"],
            summary: "did the system call the expected tools (extra calls count against it)?",
            inputs: &[Input::ReferenceToolCalls],
            formula: "2 · pairs ÷ (expected calls + calls made); a pair is an expected call and a \
                      call of the same tool, in the data's order unless tool_call_order is any_order",
            source: "ours; pairing as ragas ToolCallAccuracy (strict_order), DeepEval ToolCorrectness",
            takes_cutoff: false,
            needs_model: false,
            modes: &[],
        },
        builder: Builder::Tools(&[ToolKind::Selection]),
    },
    Entry {
        info: MetricInfo {
            name: "tool_argument_correctness",
            aliases: &["tool_arguments"],
            summary: "did the calls of the expected tools get the expected arguments?",
            inputs: &[Input::ReferenceToolCalls],
            formula: "mean over pairs of (argument keys of either call with equal values) ÷ \
                      (argument keys of either call); undefined when no pair",
            source: "ours; ragas ToolCallAccuracy's per-argument mean",
            takes_cutoff: false,
            needs_model: false,
            modes: &[
                ModeInfo {
                    name: "normalised",
                    summary: "strings trimmed, case-folded, white space collapsed; numbers by value",
                    formula: "mean over pairs of (argument keys of either call with equal \
                              normalised values) ÷ (argument keys of either call)",
                    source: "ours",
                },
                ModeInfo {
                    name: "exact",
                    summary: "values equal as JSON (key order never matters)",
                    formula: "mean over pairs of (argument keys of either call with values \
                              equal as JSON) ÷ (argument keys of either call)",
                    source: "ragas ToolCallAccuracy (exact string match)",
                },
            ],
        },
        builder: Builder::Tools(&[
            ToolKind::Arguments(ArgumentMatch::Normalised),
            ToolKind::Arguments(ArgumentMatch::Exact),
        ]),
    },
];

/// Every entry: the model-free ones, then the judged ones.
fn entries() -> impl Iterator<Item = &'static Entry> {
    ENTRIES.iter().chain(JUDGED.iter())
}

/// Every built-in metric's description, in catalogue order (a run's rubrics are in its
/// [`MetricCatalogue`]).
pub fn catalogue() -> impl Iterator<Item = &'static MetricInfo> {
    entries().map(|entry| &entry.info)
}

/// The built-in entry whose name or alias is `name` (no mode, no cut-off).
pub fn find(name: &str) -> Option<&'static MetricInfo> {
    find_builtin(name)
}

/// The metrics one run can build: the built-in table and the run's rubrics.
///
/// A value each run makes from its own rubric files, not a process-wide registry, so two
/// runs in one process never see each other's rubrics.
#[derive(Debug, Clone, Default)]
pub struct MetricCatalogue {
    rubrics: Rubrics,
}

impl MetricCatalogue {
    /// The built-in table and `rubrics`; refused when a rubric takes a built-in name or
    /// another rubric's.
    pub fn with_rubrics(rubrics: Vec<DefinedRubric>) -> Result<Self, RubricError> {
        Ok(MetricCatalogue {
            rubrics: Rubrics::new(rubrics)?,
        })
    }

    /// The built-in table and the rubrics of `files` ([`crate::rubric::file::load`]).
    pub fn from_rubric_files(files: &[PathBuf]) -> Result<Self, RubricError> {
        Self::with_rubrics(crate::rubric::file::load(files)?)
    }

    /// Every metric's description, in catalogue order, then the rubrics.
    pub fn infos(&self) -> impl Iterator<Item = &'static MetricInfo> + '_ {
        catalogue().chain(self.rubrics.infos())
    }

    /// The entry whose name or alias is `name` (no mode, no cut-off), or the rubric of
    /// that name.
    pub fn find(&self, name: &str) -> Option<&'static MetricInfo> {
        find_builtin(name).or_else(|| self.rubrics.infos().find(|info| info.name == name))
    }

    /// [`build`], or the rubric called `spec`.
    pub fn build(&self, spec: &str) -> Result<Box<dyn Metric>, MetricError> {
        match self.rubrics.build(spec.trim()) {
            Some(rubric) => Ok(rubric),
            None => build(spec),
        }
    }

    /// The rubric called `name`, if this catalogue holds one.
    pub fn rubric(&self, name: &str) -> Option<Arc<Rubric>> {
        self.rubrics.rubric(name)
    }

    /// Every metric (in its default mode) whose inputs `sample` has, rubrics included, in
    /// catalogue order; the caller drops those its judges cannot answer.
    pub fn input_defaults(&self, sample: &rageval_core::Sample) -> Vec<&'static str> {
        self.infos()
            .filter(|info| info.missing_input(sample).is_none())
            .map(|info| info.name)
            .collect()
    }
}

/// The Chinese summary of the built-in judged metric `name` (or an alias; a mode after `:`
/// is ignored), for pages shown in Chinese; `None` for the others.
pub fn summary_zh(name: &str) -> Option<&'static str> {
    let base = name.split(':').next().unwrap_or(name);
    let info = find_builtin(base)?;
    SUMMARIES_ZH
        .iter()
        .find(|(metric, _)| *metric == info.name)
        .map(|(_, summary)| *summary)
}

/// Built-in metrics whose score is built on a cosine of embeddings, so it may fall below 0.
const COSINE_BASED: &[&str] = &[
    "semantic_similarity",
    "answer_relevance",
    "answer_correctness",
];

/// The range the metric journaled as `name` (`NAME`, `NAME@k`, `NAME:MODE`, a rubric's
/// name) scores in: [−1, 1] for those built on a cosine of embeddings, [0, 1] for every
/// other (a rubric's grade is scored into [0, 1] too).
pub fn score_range(name: &str) -> std::ops::RangeInclusive<f64> {
    let base = name.split(['@', ':']).next().unwrap_or(name);
    let canonical = find_builtin(base).map_or(base, |info| info.name);
    if COSINE_BASED.contains(&canonical) {
        -1.0..=1.0
    } else {
        0.0..=1.0
    }
}

/// The built-in entry whose name or alias is `name`.
pub(crate) fn find_builtin(name: &str) -> Option<&'static MetricInfo> {
    entry(name).map(|entry| &entry.info)
}

fn entry(name: &str) -> Option<&'static Entry> {
    entries().find(|entry| entry.info.name == name || entry.info.aliases.contains(&name))
}

/// Builds a built-in metric from a spec: a name or alias, `:MODE` for metrics with modes,
/// `@k` for metrics that take a cut-off (`answer_relevance:embedding`, `id_ndcg@10`). A
/// run's rubrics are built by its [`MetricCatalogue`].
pub fn build(spec: &str) -> Result<Box<dyn Metric>, MetricError> {
    let spec = spec.trim();
    let (base, cutoff) = match spec.split_once('@') {
        Some((base, k)) => match k.parse::<usize>() {
            Ok(k) if k >= 1 => (base, Some(k)),
            _ => {
                return Err(MetricError::BadCutoff {
                    spec: spec.to_string(),
                });
            }
        },
        None => (spec, None),
    };
    let (name, mode) = match base.split_once(':') {
        Some((name, mode)) => (name, Some(mode)),
        None => match MODE_ALIASES.iter().find(|(alias, _, _)| *alias == base) {
            Some((_, name, mode)) => (*name, Some(*mode)),
            None => (base, None),
        },
    };
    let entry = entry(name).ok_or_else(|| MetricError::Unknown {
        name: name.to_string(),
        closest: closest_name(name),
    })?;
    if cutoff.is_some() && !entry.info.takes_cutoff {
        return Err(MetricError::UnexpectedCutoff {
            name: entry.info.name,
            spec: spec.to_string(),
        });
    }
    let mode = match mode {
        None => 0,
        Some(mode) => entry
            .info
            .modes
            .iter()
            .position(|m| m.name == mode)
            .ok_or_else(|| MetricError::UnknownMode {
                name: entry.info.name,
                mode: mode.to_string(),
                modes: entry.info.modes.iter().map(|m| m.name).collect(),
            })?,
    };
    Ok(match entry.builder {
        Builder::Lexical(kind) => Box::new(Lexical::new(&entry.info, kind)),
        Builder::Retrieval(kind) => Box::new(Retrieval::new(&entry.info, kind, cutoff)),
        Builder::Tools(kinds) => {
            let kind = kinds.get(mode).or(kinds.first()).copied();
            Box::new(Tools::new(
                &entry.info,
                mode,
                kind.unwrap_or(ToolKind::Selection),
            ))
        }
        Builder::Judged(kinds) => {
            let kind = kinds.get(mode).or(kinds.first()).copied();
            match kind {
                Some(kind) => Box::new(JudgedMetric::new(&entry.info, mode, kind)),
                None => {
                    return Err(MetricError::Unknown {
                        name: name.to_string(),
                        closest: None,
                    });
                }
            }
        }
    })
}

/// The model-free metrics whose inputs `sample` has, in catalogue order: what `rageval eval`
/// runs when no `--metrics` is given and no judge is usable.
pub fn model_free_defaults(sample: &rageval_core::Sample) -> Vec<&'static str> {
    catalogue()
        .filter(|info| !info.needs_model && info.missing_input(sample).is_none())
        .map(|info| info.name)
        .collect()
}

/// The catalogue name nearest to a misspelt one, when it is near enough to suggest.
fn closest_name(name: &str) -> Option<&'static str> {
    let names =
        entries().flat_map(|entry| std::iter::once(&entry.info.name).chain(entry.info.aliases));
    names
        .map(|candidate| {
            (
                *candidate,
                rageval_core::text::levenshtein_distance(name, candidate),
            )
        })
        .filter(|(candidate, distance)| *distance <= 2.max(candidate.len() / 4))
        .min_by_key(|(_, distance)| *distance)
        .map(|(candidate, _)| find(candidate).map(|info| info.name).unwrap_or(candidate))
}

/// The agreement figures in `figures` that speak for `metric`: figures of the judge tasks it
/// asks, measured in its setting. Every support-verdict figure was measured judging an
/// answer's claims against retrieved passages, so it speaks for metrics that judge the
/// answer by the contexts (faithfulness) and not for, say, answer_correctness (the answer
/// against the reference); a figure whose measure names a metric (`answer relevance
/// pairwise accuracy`), or that was measured in one metric's setting (its `metric`),
/// speaks only for that metric.
pub fn measured_for(metric: &dyn Metric, figures: Vec<Measurement>) -> Vec<Measurement> {
    let requirements = metric.requirements();
    let own = metric.info().name.replace('_', " ");
    figures
        .into_iter()
        .filter(|figure| requirements.tasks.contains(&figure.task))
        .filter(|figure| match &figure.metric {
            // Measured in one metric's setting: it speaks for that metric alone.
            Some(metric) => metric.replace('_', " ") == own,
            None => figure.task != TaskKind::SupportVerdicts || requirements.answer_by_contexts,
        })
        .filter(|figure| {
            catalogue()
                .map(|info| info.name.replace('_', " "))
                .filter(|name| figure.measure.starts_with(&format!("{name} ")))
                .all(|name| name == own)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_metrics_reach_minus_one_and_every_other_stays_in_zero_to_one() {
        for name in COSINE_BASED {
            assert!(find_builtin(name).is_some(), "{name} is a metric");
            assert_eq!(score_range(name), -1.0..=1.0);
        }
        assert_eq!(score_range("answer_relevance:embedding"), -1.0..=1.0);
        assert_eq!(score_range("id_ndcg@10"), 0.0..=1.0);
        assert_eq!(score_range("faithfulness"), 0.0..=1.0);
    }

    /// Regression: `metrics explain answer_correctness` listed faithfulness's figures (the
    /// same support-verdict task, measured judging answers against contexts, not against a
    /// reference).
    #[test]
    fn every_judged_metric_has_a_chinese_summary() {
        for entry in JUDGED.iter() {
            assert!(
                summary_zh(entry.info.name).is_some(),
                "{} has no Chinese summary",
                entry.info.name
            );
        }
        assert_eq!(
            summary_zh("answer_relevance:embedding"),
            summary_zh("answer_relevance")
        );
        assert_eq!(summary_zh("bleu"), None);
    }

    #[test]
    fn figures_speak_only_for_the_metric_s_own_tasks_and_setting() {
        let figures = rageval_tasks::measurements();
        let measured = |name: &str| {
            let metric = build(name).unwrap();
            measured_for(metric.as_ref(), figures.clone())
        };
        let faithfulness = measured("faithfulness");
        assert!(!faithfulness.is_empty());
        assert!(
            faithfulness
                .iter()
                .all(|f| f.task == TaskKind::SupportVerdicts)
        );
        assert!(
            measured("answer_correctness")
                .iter()
                .all(|f| f.task != TaskKind::SupportVerdicts),
            "{:?}",
            measured("answer_correctness")
        );
        for figure in measured("answer_relevance") {
            assert!(!figure.measure.starts_with("faithfulness"), "{figure}");
        }
        assert!(measured("rouge_l").is_empty());
        // Regression: the kids-coding support figure (a reference's claim against passages)
        // was claimed for faithfulness and context_recall read "unmeasured".
        let kids = |f: &Measurement| f.dataset.contains("kids-coding");
        assert!(!faithfulness.iter().any(kids), "{faithfulness:?}");
        assert!(measured("context_recall").iter().any(kids));
    }

    #[test]
    fn names_and_aliases_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for entry in entries() {
            for name in std::iter::once(&entry.info.name).chain(entry.info.aliases) {
                assert!(seen.insert(*name), "{name} appears twice");
            }
        }
        for (alias, _, _) in MODE_ALIASES {
            assert!(seen.insert(alias), "{alias} appears twice");
        }
    }

    /// Regression: `metrics explain string_presence` said `[reference ⊆ response]`, while
    /// the code compares normalised texts (case, punctuation, full-width forms and spacing
    /// ignored). Each normalisation step the text names changes a score the raw rule gives.
    #[test]
    fn string_presence_says_how_it_normalises() {
        let info = find("string_presence").unwrap();
        for step in [
            "full-width",
            "lower-case",
            "punctuation",
            "white space",
            "Han",
        ] {
            assert!(info.formula.contains(step), "{step}: {}", info.formula);
        }
        let presence = |answer: &str, reference: &str| {
            let sample = rageval_core::Sample {
                answer: Some(answer.into()),
                references: vec![reference.into()],
                ..rageval_core::Sample::default()
            };
            build("string_presence")
                .unwrap()
                .score_now(&sample)
                .and_then(|o| o.value())
        };
        assert_eq!(presence("The capital is PARIS.", "paris"), Some(1.0));
        assert_eq!(presence("Ｐａｒｉｓ is it", "paris"), Some(1.0));
        assert_eq!(presence("首都是北京 大学", "北京大学"), Some(1.0));
        assert_eq!(presence("it is U.S. law", "us law"), Some(1.0));
        assert_eq!(presence("Lyon", "paris"), Some(0.0));
        assert_eq!(presence("Lyon", "!!"), Some(1.0));
    }

    #[test]
    fn every_entry_and_mode_builds() {
        for info in catalogue() {
            let metric = build(info.name).unwrap();
            assert_eq!(metric.info().name, info.name);
            for (index, mode) in info.modes.iter().enumerate() {
                let metric = build(&format!("{}:{}", info.name, mode.name)).unwrap();
                // The default mode is filed under the bare name.
                let expected = if index == 0 {
                    info.name.to_owned()
                } else {
                    format!("{}:{}", info.name, mode.name)
                };
                assert_eq!(metric.name(), expected);
                assert_eq!(metric.formula().0, mode.formula);
            }
        }
        for (alias, name, mode) in MODE_ALIASES {
            assert_eq!(build(alias).unwrap().name(), format!("{name}:{mode}"));
        }
    }

    #[test]
    fn unknown_modes_list_the_known_ones() {
        assert_eq!(
            build("answer_relevance:vibes")
                .err()
                .map(|e| e.to_string())
                .as_deref(),
            Some(
                "metric `answer_relevance` has no mode `vibes` (modes: simulated_questions, \
                 rubric, embedding)"
            )
        );
    }

    #[test]
    fn bad_specs_are_explained() {
        assert_eq!(
            build("rouge_ll").err().map(|e| e.to_string()).as_deref(),
            Some("unknown metric `rouge_ll` (did you mean `rouge_l`?)")
        );
        assert!(matches!(
            build("bleu@3"),
            Err(MetricError::UnexpectedCutoff { .. })
        ));
        assert!(matches!(
            build("id_precision@0"),
            Err(MetricError::BadCutoff { .. })
        ));
        assert!(matches!(
            build("id_precision@x"),
            Err(MetricError::BadCutoff { .. })
        ));
        assert!(matches!(
            build("completely_unknown"),
            Err(MetricError::Unknown { closest: None, .. })
        ));
    }

    #[test]
    fn aliases_resolve_to_the_catalogue_name() {
        assert_eq!(
            build("non_llm_string_similarity").unwrap().name(),
            "levenshtein"
        );
        assert_eq!(build("map").unwrap().name(), "id_average_precision");
    }
}
