//! The model-judged metrics: each asks typed judge tasks through the sample's
//! [`ScoringContext`] and turns the verdicts into an [`Outcome`] with evidence.
//!
//! - `context`: context precision (exact, ragas, strict; for the reference or for the
//!   generated answer), context relevance, context recall, context entity recall.
//! - `answer`: faithfulness, answer relevance (rubric, simulated questions, embedding),
//!   answer correctness (statement recall, ragas), semantic similarity.
//! - `noise`: noise sensitivity (relevant, irrelevant).
//! - `abstention`: answered when supported, declined when not (one verdict pair).
//! - `citation`: each citing sentence against the contexts it cites.
//! - `retention`: knowledge retention, a turn's reply against what the user said before.
//! - `tool_arguments`: tool-call arguments with the judge deciding free text.
//! - `evidence`: verdicts as evidence.
//!
//! A metric here never decides by itself: every judgement is a task answer. What a metric
//! owns is the formula, when the formula does not apply (`Undefined` with the reason) and
//! which failure stops it (`Failed` with the judge's error).

mod abstention;
mod answer;
pub mod citation;
mod context;
mod evidence;
mod noise;
mod retention;
mod tool_arguments;

use rageval_core::{Outcome, Sample};
use rageval_judge::BoxFuture;
use rageval_tasks::{SupportCredit, TaskKind};

use crate::metric::{Metric, MetricInfo, Requirements, lacking_input};
use crate::scoring::{Failure, ScoringContext};

/// The three ways S0, S1/ragas and S2 average the per-context verdicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precision {
    /// `Σ v_k·P@k / Σ v_k` (0 when nothing is useful).
    Exact,
    /// The same with ragas's `+1e-10` in the denominator.
    Ragas,
    /// S2: the mean of `P@k` over every position.
    Strict,
}

/// How answer relevance is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relevance {
    /// S4: questions written from the answer, each judged the same as the real one or not.
    SimulatedQuestions,
    /// S1: a 1–5 rubric, `(s − 1) / 4`.
    Rubric,
    /// ragas: mean cosine of the generated questions with the real one.
    Embedding,
}

/// How answer correctness is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Correctness {
    /// S4: the reference statements' support by the answer, each counted by the rule
    /// (`FullOnly`: supported ÷ reference statements, as S4 counts).
    StatementRecall(SupportCredit),
    /// ragas: `0.75 · F1(TP, FP, FN) + 0.25 · cosine(answer, reference)`.
    Ragas,
}

/// Which contexts noise sensitivity blames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Noise {
    Relevant,
    Irrelevant,
}

/// What a judged metric computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JudgedKind {
    /// Usefulness of each context for the reference answer, averaged as given.
    ContextPrecision(Precision),
    /// S0: usefulness of each context for the generated answer, exact AP.
    UsefulContextPrecision,
    ContextRelevance,
    /// The reference's statements by the contexts, each counted by the rule.
    ContextRecall(SupportCredit),
    ContextEntityRecall,
    /// The answer's statements by the contexts, each counted by the rule.
    Faithfulness(SupportCredit),
    AnswerRelevance(Relevance),
    AnswerCorrectness(Correctness),
    SemanticSimilarity,
    NoiseSensitivity(Noise),
    Abstention,
    CitationFaithfulness,
    /// The reply keeps what the user established earlier in the conversation.
    KnowledgeRetention,
    /// Tool-call arguments, free-text ones the same when the judge finds they mean it.
    ToolArgumentMeaning,
}

impl JudgedKind {
    /// The tasks it asks and whether it embeds.
    pub fn requirements(self) -> Requirements {
        use TaskKind::*;
        let (tasks, embeddings): (&[TaskKind], bool) = match self {
            JudgedKind::ContextPrecision(_) | JudgedKind::UsefulContextPrecision => {
                (&[ContextUsefulness], false)
            }
            JudgedKind::ContextRelevance => (&[TaskKind::ContextRelevance], false),
            JudgedKind::ContextRecall(_) | JudgedKind::Faithfulness(_) => {
                (&[SplitStatements, SupportVerdicts], false)
            }
            JudgedKind::ContextEntityRecall => (&[ExtractEntities], false),
            JudgedKind::AnswerRelevance(Relevance::SimulatedQuestions) => {
                (&[GenerateQuestions, QuestionSimilarity], false)
            }
            JudgedKind::AnswerRelevance(Relevance::Rubric) => (&[AnswerRubric], false),
            JudgedKind::AnswerRelevance(Relevance::Embedding) => (&[GenerateQuestions], true),
            JudgedKind::AnswerCorrectness(Correctness::StatementRecall(_)) => {
                (&[SplitStatements, SupportVerdicts], false)
            }
            JudgedKind::AnswerCorrectness(Correctness::Ragas) => {
                (&[SplitStatements, SupportVerdicts], true)
            }
            JudgedKind::SemanticSimilarity => (&[], true),
            JudgedKind::NoiseSensitivity(_) => (&[SplitStatements, SupportVerdicts], false),
            JudgedKind::Abstention => (&[TaskKind::Abstention], false),
            JudgedKind::CitationFaithfulness => (&[SupportVerdicts], false),
            JudgedKind::KnowledgeRetention => (&[TaskKind::KnowledgeRetention], false),
            JudgedKind::ToolArgumentMeaning => (&[TaskKind::ToolArgumentMeaning], false),
        };
        Requirements {
            tasks: tasks.to_vec(),
            embeddings,
            answer_by_contexts: matches!(self, JudgedKind::Faithfulness(_)),
            reference_by_contexts: matches!(self, JudgedKind::ContextRecall(_)),
            reference_usefulness: matches!(self, JudgedKind::ContextPrecision(_)),
            resolves_question: matches!(
                self,
                JudgedKind::ContextPrecision(_)
                    | JudgedKind::UsefulContextPrecision
                    | JudgedKind::ContextRelevance
                    | JudgedKind::ContextRecall(_)
                    | JudgedKind::AnswerRelevance(_)
            ),
        }
    }
}

/// A judged metric from the catalogue, in one of its modes.
pub struct JudgedMetric {
    info: &'static MetricInfo,
    /// Index into `info.modes` (0, the default, when it has none).
    mode: usize,
    kind: JudgedKind,
}

impl JudgedMetric {
    pub fn new(info: &'static MetricInfo, mode: usize, kind: JudgedKind) -> Self {
        JudgedMetric { info, mode, kind }
    }

    /// What it computes.
    pub fn kind(&self) -> JudgedKind {
        self.kind
    }

    async fn compute(&self, sample: &Sample, scoring: &ScoringContext) -> Result<Outcome, Failure> {
        match self.kind {
            JudgedKind::ContextPrecision(precision) => {
                context::reference_precision(sample, scoring, precision).await
            }
            JudgedKind::UsefulContextPrecision => context::answer_precision(sample, scoring).await,
            JudgedKind::ContextRelevance => context::relevance(sample, scoring).await,
            JudgedKind::ContextRecall(credit) => context::recall(sample, scoring, credit).await,
            JudgedKind::ContextEntityRecall => context::entity_recall(sample, scoring).await,
            JudgedKind::Faithfulness(credit) => answer::faithfulness(sample, scoring, credit).await,
            JudgedKind::AnswerRelevance(mode) => answer::relevance(sample, scoring, mode).await,
            JudgedKind::AnswerCorrectness(mode) => answer::correctness(sample, scoring, mode).await,
            JudgedKind::SemanticSimilarity => answer::similarity(sample, scoring).await,
            JudgedKind::NoiseSensitivity(mode) => noise::sensitivity(sample, scoring, mode).await,
            JudgedKind::Abstention => abstention::abstention(sample, scoring).await,
            JudgedKind::CitationFaithfulness => {
                citation::citation_faithfulness(sample, scoring).await
            }
            JudgedKind::KnowledgeRetention => retention::knowledge_retention(sample, scoring).await,
            JudgedKind::ToolArgumentMeaning => {
                tool_arguments::tool_argument_meaning(sample, scoring).await
            }
        }
    }
}

impl Metric for JudgedMetric {
    fn info(&self) -> &'static MetricInfo {
        self.info
    }

    fn name(&self) -> String {
        self.info.mode_name(self.mode)
    }

    fn formula(&self) -> (&'static str, &'static str) {
        self.info.mode_formula(self.mode)
    }

    fn requirements(&self) -> Requirements {
        self.kind.requirements()
    }

    fn score<'a>(
        &'a self,
        sample: &'a Sample,
        scoring: &'a ScoringContext,
    ) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            if let Some(undefined) = lacking_input(self.info, sample) {
                return undefined;
            }
            self.compute(sample, scoring)
                .await
                .unwrap_or_else(|failure| Outcome::failed(failure.to_string()))
        })
    }
}
