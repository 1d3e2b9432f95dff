//! The offline heuristic judge: answers the verdict tasks (and statement splitting) without
//! a chat model, by content-word overlap (stop words removed, jieba for Chinese) and — for
//! question similarity, when an embedding model is configured — cosine similarity.
//!
//! Why it exists: measured on human-labelled pairs it beats a tiny local chat model by far
//! (see [`measured`](crate::measured) and `docs/judges.md`). Every threshold is a named
//! constant below; every verdict's reason states the share it measured and the threshold it
//! met or missed. Changing a rule or a threshold bumps [`HEURISTIC_VERSION`].
//!
//! - `words`: content words, inflection folding, coverage of one text by another.
//! - `stopwords`: the English and Chinese stop-word table.
//! - `sentences`: the sentence splitter that stands in for statement splitting.
//! - [`support`](mod@support): a statement's support — one measurement giving the label and
//!   the degree of support graded metrics read.
//! - `verdicts`: the other verdicts as pure functions.
//!
//! It writes no text beyond sentence splitting: questions, entities and answers need a
//! model.

pub(crate) mod sentences;
mod stopwords;
pub mod support;
pub(crate) mod verdicts;
pub(crate) mod words;

use rageval_judge::{Judge, Models, Usage};

use crate::error::TaskError;
use crate::judged::{HeuristicInfo, Implementation, Judged, Threshold};
use crate::prompt::Lang;
use crate::task::{
    Abstention, AbstentionVerdict, AnswerRubric, ContextOrder, ContextRelevance, ContextUsefulness,
    GradeRelevance, GradeRelevanceBatch, OrderContexts, PairwisePreference, Preference,
    QuestionSimilarity, RelevanceGrade, RelevanceVerdict, RubricScore, SimilarityVerdict,
    SplitStatements, SupportVerdict, SupportVerdicts, TaskKind, UsefulnessVerdict,
};

/// Version of the heuristic rules and thresholds, reported with every verdict. 4: words are
/// cut at sentences glued without a space (`Hawaii.Aulani`), which changes verdicts on such
/// text (one WikiEval answer-relevance pair).
pub const HEURISTIC_VERSION: u32 = 4;

/// A threshold (or rule) per script: English (and any non-Chinese text) and Chinese. Each
/// value was chosen on the development half of the shared labelled sets
/// ([`validation::choose`](crate::validation::choose)); `docs/judges.md` has the figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ByScript<T = f64> {
    /// For English and other non-Chinese text.
    pub en: T,
    /// For Chinese text.
    pub zh: T,
}

impl<T: Copy> ByScript<T> {
    /// The value for `lang`.
    pub fn get(self, lang: Lang) -> T {
        match lang {
            Lang::En => self.en,
            Lang::Zh => self.zh,
        }
    }

    /// The value for the script of `text` (Chinese when Han characters dominate).
    pub fn for_text(self, text: &str) -> T {
        self.get(Lang::detect(text))
    }
}

/// A statement is fully supported when one context holds at least this share of its content
/// words (and every number it states appears in the contexts); by the statement's script.
pub const SUPPORT_FULL: ByScript = ByScript { en: 0.5, zh: 0.65 };

/// A statement is partially supported when the contexts together hold at least this share;
/// below it a statement earns nothing in any metric. Not chosen by the sweep: the midpoint,
/// kept from version 1.
pub const SUPPORT_PARTIAL: f64 = 0.5;

/// How a statement's degree of support ([`SupportVerdict::score`]) is measured, by the
/// statement's script: what graded metrics count instead of the label's fixed weight
/// ([`SupportCredit`](crate::task::SupportCredit)).
pub const SUPPORT_DEGREE: ByScript<support::DegreeRule> = ByScript {
    en: support::DegreeRule::new(support::Scope::AllContexts, 1.0),
    zh: support::DegreeRule::new(support::Scope::AllContexts, 1.0),
};

/// A context is relevant when it holds at least this share of the question's content words;
/// by the question's script.
pub const RELEVANT_MIN: ByScript = ByScript { en: 0.45, zh: 0.6 };

/// A context is useful when it holds at least this share of what the answer adds to the
/// question; by the question's script.
pub const USEFUL_MIN: ByScript = ByScript { en: 0.55, zh: 0.35 };

/// Grades 1, 2 and 3 start at 1, 2 and 3 times this share of the question's content words
/// in the context; by the question's script.
pub const GRADE_BAND: ByScript = ByScript { en: 0.15, zh: 0.25 };

/// Differences of coverage (or focus) up to this are no preference; by the question's
/// script.
pub const PAIRWISE_MARGIN: ByScript = ByScript { en: 0.2, zh: 0.05 };

/// The threshold the heuristic's rule for `task` uses on `lang` text — the value the
/// development sweep chose (a band width for grades, a margin for preferences); `None` for
/// a task whose rule has no such threshold or was not chosen by the sweep.
pub fn chosen_threshold(task: TaskKind, lang: Lang) -> Option<f64> {
    let table = match task {
        TaskKind::SupportVerdicts => SUPPORT_FULL,
        TaskKind::ContextRelevance => RELEVANT_MIN,
        TaskKind::ContextUsefulness => USEFUL_MIN,
        TaskKind::GradeRelevance => GRADE_BAND,
        TaskKind::PairwisePreference => PAIRWISE_MARGIN,
        _ => return None,
    };
    Some(table.get(lang))
}

/// Two questions are similar when their content-word Dice overlap reaches this.
pub const SIMILAR_OVERLAP: f64 = 0.5;

/// With an embedding model, two questions are similar when their cosine reaches this.
pub const SIMILAR_COSINE: f64 = 0.8;

/// Phrases (lower-cased) that make an answer noncommittal, rubric score 1.
pub const NONCOMMITTAL: &[&str] = &[
    "i don't know",
    "i do not know",
    "not sure",
    "cannot be determined",
    "can't be determined",
    "cannot answer",
    "unable to answer",
    "not been provided",
    "not provided",
    "no information",
    "not mentioned",
    "is unknown",
    "不知道",
    "不确定",
    "无法回答",
    "无法确定",
    "无法判断",
    "没有提供",
    "未提供",
    "未提及",
    "没有相关信息",
    "不清楚",
];

/// Phrases (lower-cased) by which an answer declines to answer: [`NONCOMMITTAL`]'s
/// without its hedges (`not sure`, `不确定`, which also match `不确定性`, "uncertainty"),
/// plus the refusals RGB asks models to write (`can not answer`, `insufficient
/// information`, `信息不足`). Measured by `examples/measure_abstention.rs`.
pub const REFUSAL: &[&str] = &[
    "i don't know",
    "i do not know",
    "cannot be determined",
    "can't be determined",
    "cannot answer",
    "can't answer",
    "can not answer",
    "unable to answer",
    "not able to answer",
    "not been provided",
    "not provided",
    "no information",
    "insufficient information",
    "not enough information",
    "not mentioned",
    "is unknown",
    "不知道",
    "无法回答",
    "无法确定",
    "无法判断",
    "无法基于",
    "信息不足",
    "没有提供",
    "未提供",
    "未提及",
    "没有提及",
    "没有相关信息",
    "不清楚",
];

/// What the heuristic judge says about whether the contexts support an answer.
pub const UNDECIDED_SUPPORT: &str =
    "the heuristic judge cannot tell whether the contexts support an answer";

/// The heuristic judge. Cheap to clone.
#[derive(Clone, Default)]
pub struct Heuristic {
    embeddings: Option<Judge<Models>>,
}

impl std::fmt::Debug for Heuristic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Heuristic")
            .field("embedder", &self.embedder_name())
            .finish()
    }
}

impl Heuristic {
    /// Content-word overlap only: no model of any kind.
    pub fn lexical() -> Self {
        Heuristic { embeddings: None }
    }

    /// Overlap, plus cosine similarity from `judge`'s embedding model where a rule uses it
    /// (question similarity). Embeddings go through the judge: cached, limited, retried.
    /// A judge without an embedding model gives the lexical heuristic.
    pub fn with_embeddings(judge: Judge<Models>) -> Self {
        Heuristic {
            embeddings: judge.model().embedder.is_some().then_some(judge),
        }
    }

    /// Whether a heuristic implementation of `task` exists.
    pub fn supports(task: TaskKind) -> bool {
        !matches!(
            task,
            TaskKind::GenerateQuestions
                | TaskKind::ExtractEntities
                | TaskKind::AnswerFromContexts
                | TaskKind::MergeAnswers
                | TaskKind::ContextsCheck
                | TaskKind::CustomRubric
                | TaskKind::WriteTestItem
                | TaskKind::AnswerClosedBook
        )
    }

    fn embedder_name(&self) -> Option<String> {
        self.embeddings.as_ref().map(|judge| {
            use rageval_judge::Embedder;
            judge.model().embedding_model().to_owned()
        })
    }

    /// Name, version and thresholds of the implementation of `task`, or `None` when there
    /// is none.
    pub fn info(&self, task: TaskKind) -> Option<HeuristicInfo> {
        let threshold = |name: &str, value: f64| Threshold {
            name: name.to_owned(),
            value,
        };
        let by_script = |name: &str, values: ByScript| {
            vec![
                threshold(&format!("{name}.en"), values.en),
                threshold(&format!("{name}.zh"), values.zh),
            ]
        };
        let (name, thresholds, embedder) = match task {
            TaskKind::SplitStatements => ("sentence_split", vec![], None),
            TaskKind::SupportVerdicts => (
                "content_word_overlap",
                vec![
                    threshold("support_full.en", SUPPORT_FULL.en),
                    threshold("support_full.zh", SUPPORT_FULL.zh),
                    threshold("support_partial", SUPPORT_PARTIAL),
                    threshold(
                        "support_degree_number_weight.en",
                        SUPPORT_DEGREE.en.number_weight,
                    ),
                    threshold(
                        "support_degree_number_weight.zh",
                        SUPPORT_DEGREE.zh.number_weight,
                    ),
                ],
                None,
            ),
            TaskKind::ContextRelevance => (
                "content_word_overlap",
                by_script("relevant_min", RELEVANT_MIN),
                None,
            ),
            TaskKind::ContextUsefulness => (
                "content_word_overlap",
                by_script("useful_min", USEFUL_MIN),
                None,
            ),
            TaskKind::AnswerRubric => ("content_word_overlap", vec![], None),
            TaskKind::GradeRelevance | TaskKind::GradeRelevanceBatch => (
                "content_word_overlap",
                by_script("grade_band", GRADE_BAND),
                None,
            ),
            TaskKind::PairwisePreference => (
                "content_word_overlap",
                by_script("pairwise_margin", PAIRWISE_MARGIN),
                None,
            ),
            TaskKind::OrderContexts => ("content_word_overlap", vec![], None),
            TaskKind::Abstention => ("refusal_phrases", vec![], None),
            TaskKind::QuestionSimilarity => match self.embedder_name() {
                Some(model) => (
                    "embedding_cosine",
                    vec![threshold("similar_cosine", SIMILAR_COSINE)],
                    Some(model),
                ),
                None => (
                    "content_word_overlap",
                    vec![threshold("similar_overlap", SIMILAR_OVERLAP)],
                    None,
                ),
            },
            TaskKind::GenerateQuestions
            | TaskKind::ExtractEntities
            | TaskKind::AnswerFromContexts
            | TaskKind::MergeAnswers
            | TaskKind::ContextsCheck
            | TaskKind::CustomRubric
            | TaskKind::WriteTestItem
            | TaskKind::AnswerClosedBook => return None,
        };
        Some(HeuristicInfo {
            name: name.to_owned(),
            version: HEURISTIC_VERSION,
            thresholds,
            embedder,
        })
    }

    fn judged<T>(&self, task: TaskKind, value: T, usage: Usage, cached: bool) -> Judged<T> {
        let info = self.info(task).unwrap_or_else(|| HeuristicInfo {
            name: "none".into(),
            version: HEURISTIC_VERSION,
            thresholds: Vec::new(),
            embedder: None,
        });
        Judged {
            value,
            by: Implementation::Heuristic(info),
            rung: None,
            usage,
            cached,
        }
    }

    /// Sentences as statements.
    pub fn split_statements(&self, task: &SplitStatements) -> Judged<Vec<String>> {
        self.judged(
            TaskKind::SplitStatements,
            sentences::sentences(&task.text),
            Usage::default(),
            false,
        )
    }

    /// See [`SUPPORT_FULL`], [`SUPPORT_PARTIAL`] and [`SUPPORT_DEGREE`].
    pub fn support_verdicts(&self, task: &SupportVerdicts) -> Judged<Vec<SupportVerdict>> {
        let contexts: Vec<words::Material> = task
            .contexts
            .iter()
            .map(|c| words::Material::new(c))
            .collect();
        let verdicts = task
            .statements
            .iter()
            .map(|s| support::support(s, &contexts, task.premise))
            .collect();
        self.judged(TaskKind::SupportVerdicts, verdicts, Usage::default(), false)
    }

    /// See [`RELEVANT_MIN`].
    pub fn context_relevance(&self, task: &ContextRelevance) -> Judged<RelevanceVerdict> {
        let verdict = verdicts::relevance(&task.question, &task.context);
        self.judged(TaskKind::ContextRelevance, verdict, Usage::default(), false)
    }

    /// See [`USEFUL_MIN`].
    pub fn context_usefulness(&self, task: &ContextUsefulness) -> Judged<UsefulnessVerdict> {
        let verdict = verdicts::usefulness(&task.question, &task.answer, &task.context);
        self.judged(
            TaskKind::ContextUsefulness,
            verdict,
            Usage::default(),
            false,
        )
    }

    /// See [`NONCOMMITTAL`]; otherwise 1 + 4 × the question's coverage in the answer.
    pub fn answer_rubric(&self, task: &AnswerRubric) -> Judged<RubricScore> {
        let score = verdicts::rubric(&task.question, &task.answer);
        self.judged(TaskKind::AnswerRubric, score, Usage::default(), false)
    }

    /// Whether the answer declines, by [`REFUSAL`]'s phrases. Whether the contexts support
    /// an answer it does not decide (`supported` is `None`): passages retrieved for a
    /// question share its words whether or not they hold the answer, and the overlap rules
    /// told RGB's positive passages from its negative ones at chance on both fact sets
    /// (`examples/measure_abstention.rs`), so the judge says so rather than guess.
    pub fn abstention(&self, task: &Abstention) -> Judged<AbstentionVerdict> {
        let phrase = verdicts::refusal(&task.answer);
        let verdict = AbstentionVerdict {
            supported: None,
            refused: phrase.is_some(),
            reason: match phrase {
                Some(phrase) => format!("the answer declines (\"{phrase}\"); {UNDECIDED_SUPPORT}"),
                None => format!("the answer holds no refusal phrase; {UNDECIDED_SUPPORT}"),
            },
        };
        self.judged(TaskKind::Abstention, verdict, Usage::default(), false)
    }

    /// See [`GRADE_BAND`].
    pub fn grade_relevance(&self, task: &GradeRelevance) -> Judged<RelevanceGrade> {
        let grade = verdicts::grade(&task.question, &task.context);
        self.judged(TaskKind::GradeRelevance, grade, Usage::default(), false)
    }

    /// Each context as [`Heuristic::grade_relevance`] grades it alone.
    pub fn grade_relevance_batch(&self, task: &GradeRelevanceBatch) -> Judged<Vec<RelevanceGrade>> {
        let grades = task
            .contexts
            .iter()
            .map(|context| verdicts::grade(&task.question, context))
            .collect();
        self.judged(
            TaskKind::GradeRelevanceBatch,
            grades,
            Usage::default(),
            false,
        )
    }

    /// The contexts by the question's content words they hold, then by focus (the measure
    /// [`Heuristic::pairwise_preference`] compares, without its margin).
    pub fn order_contexts(&self, task: &OrderContexts) -> Judged<ContextOrder> {
        let order = verdicts::order(&task.question, &task.contexts);
        self.judged(TaskKind::OrderContexts, order, Usage::default(), false)
    }

    /// See [`PAIRWISE_MARGIN`].
    pub fn pairwise_preference(&self, task: &PairwisePreference) -> Judged<Preference> {
        let preference = verdicts::pairwise(&task.question, &task.first, &task.second);
        self.judged(
            TaskKind::PairwisePreference,
            preference,
            Usage::default(),
            false,
        )
    }

    /// See [`SIMILAR_COSINE`] (with an embedding model) and [`SIMILAR_OVERLAP`] (without).
    pub async fn question_similarity(
        &self,
        task: &QuestionSimilarity,
    ) -> Result<Judged<Vec<SimilarityVerdict>>, TaskError> {
        let Some(judge) = &self.embeddings else {
            let verdicts = task
                .candidates
                .iter()
                .map(|c| verdicts::similarity(&task.question, c))
                .collect();
            return Ok(self.judged(
                TaskKind::QuestionSimilarity,
                verdicts,
                Usage::default(),
                false,
            ));
        };
        let mut inputs = vec![task.question.clone()];
        inputs.extend(task.candidates.iter().cloned());
        let embedded = judge
            .embed(&inputs)
            .await
            .map_err(|source| TaskError::Judge {
                task: TaskKind::QuestionSimilarity,
                source,
            })?;
        let cached = embedded.cached == inputs.len();
        let question = &embedded.vectors[0];
        let verdicts = embedded.vectors[1..]
            .iter()
            .map(|candidate| {
                let cosine = cosine(question, candidate);
                let similar = cosine >= SIMILAR_COSINE;
                SimilarityVerdict {
                    similar,
                    reason: format!(
                        "embedding cosine {cosine:.2} {} {SIMILAR_COSINE:.2}",
                        if similar { "≥" } else { "<" }
                    ),
                }
            })
            .collect();
        Ok(self.judged(
            TaskKind::QuestionSimilarity,
            verdicts,
            Usage::default(),
            cached,
        ))
    }
}

/// The sentences of `text` as the heuristic splits statements (see `sentences`), for
/// metrics that attach something to each sentence (citation markers).
pub fn sentences(text: &str) -> Vec<String> {
    sentences::sentences(text)
}

/// Cosine similarity; 0 when either vector is zero or they differ in length.
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    if a.len() != b.len() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0.0f64, 0.0f64, 0.0f64);
    for (&x, &y) in a.iter().zip(b) {
        let (x, y) = (f64::from(x), f64::from(y));
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}
