//! The judge tasks: one input type per task (what the judge reads) and the typed value it
//! answers with. Every metric, ranker and generator asks for these, never for a raw prompt.
//!
//! Inputs own their text, so callers can build them once and send them to concurrent calls.
//! Indices in outputs are 0-based and refer to the input's lists. This module only defines
//! the vocabulary; [`TaskJudge`](crate::TaskJudge) answers the tasks.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Which task, for routing, reports and the manifest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskKind {
    /// [`SplitStatements`].
    SplitStatements,
    /// [`SupportVerdicts`].
    SupportVerdicts,
    /// [`ContextRelevance`].
    ContextRelevance,
    /// [`ContextUsefulness`].
    ContextUsefulness,
    /// [`AnswerRubric`].
    AnswerRubric,
    /// [`GenerateQuestions`].
    GenerateQuestions,
    /// [`QuestionSimilarity`].
    QuestionSimilarity,
    /// [`ExtractEntities`].
    ExtractEntities,
    /// [`GradeRelevance`].
    GradeRelevance,
    /// [`PairwisePreference`].
    PairwisePreference,
    /// [`GradeRelevanceBatch`].
    GradeRelevanceBatch,
    /// [`OrderContexts`].
    OrderContexts,
    /// [`AnswerFromContexts`].
    AnswerFromContexts,
    /// [`MergeAnswers`].
    MergeAnswers,
    /// [`ContextsCheck`].
    ContextsCheck,
    /// [`JudgeRubric`](crate::rubric::JudgeRubric): a rubric of the user's own.
    CustomRubric,
    /// [`WriteTestItem`].
    WriteTestItem,
    /// [`AnswerClosedBook`].
    AnswerClosedBook,
    /// [`Abstention`].
    Abstention,
}

/// Whether a task judges given material or writes new text; the router's policy chooses an
/// implementation per family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskFamily {
    /// Decides about given text (supported? relevant? which is better?).
    Verdict,
    /// Writes text (statements, questions, entities, answers).
    Generation,
}

impl TaskKind {
    /// Every task, in a stable order.
    pub const ALL: [TaskKind; 19] = [
        TaskKind::SplitStatements,
        TaskKind::SupportVerdicts,
        TaskKind::ContextRelevance,
        TaskKind::ContextUsefulness,
        TaskKind::AnswerRubric,
        TaskKind::GenerateQuestions,
        TaskKind::QuestionSimilarity,
        TaskKind::ExtractEntities,
        TaskKind::GradeRelevance,
        TaskKind::PairwisePreference,
        TaskKind::GradeRelevanceBatch,
        TaskKind::OrderContexts,
        TaskKind::AnswerFromContexts,
        TaskKind::MergeAnswers,
        TaskKind::ContextsCheck,
        TaskKind::CustomRubric,
        TaskKind::WriteTestItem,
        TaskKind::AnswerClosedBook,
        TaskKind::Abstention,
    ];

    /// The snake_case name (also the prompt template's name).
    pub fn name(self) -> &'static str {
        match self {
            TaskKind::SplitStatements => "split_statements",
            TaskKind::SupportVerdicts => "support_verdicts",
            TaskKind::ContextRelevance => "context_relevance",
            TaskKind::ContextUsefulness => "context_usefulness",
            TaskKind::AnswerRubric => "answer_rubric",
            TaskKind::GenerateQuestions => "generate_questions",
            TaskKind::QuestionSimilarity => "question_similarity",
            TaskKind::ExtractEntities => "extract_entities",
            TaskKind::GradeRelevance => "grade_relevance",
            TaskKind::PairwisePreference => "pairwise_preference",
            TaskKind::GradeRelevanceBatch => "grade_relevance_batch",
            TaskKind::OrderContexts => "order_contexts",
            TaskKind::AnswerFromContexts => "answer_from_contexts",
            TaskKind::MergeAnswers => "merge_answers",
            TaskKind::ContextsCheck => "contexts_check",
            TaskKind::CustomRubric => "custom_rubric",
            TaskKind::WriteTestItem => "write_test_item",
            TaskKind::AnswerClosedBook => "answer_closed_book",
            TaskKind::Abstention => "abstention",
        }
    }

    /// Verdict or generation. [`TaskKind::ContextsCheck`] counts as a verdict task, though it
    /// may also split a text: the router answers it in one call only when the chat model
    /// answers all of its parts.
    pub fn family(self) -> TaskFamily {
        match self {
            TaskKind::SplitStatements
            | TaskKind::GenerateQuestions
            | TaskKind::ExtractEntities
            | TaskKind::AnswerFromContexts
            | TaskKind::MergeAnswers
            | TaskKind::WriteTestItem
            | TaskKind::AnswerClosedBook => TaskFamily::Generation,
            _ => TaskFamily::Verdict,
        }
    }
}

impl fmt::Display for TaskKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Split `text` (an answer or a reference, written for `question`) into self-contained
/// atomic statements: one fact each, pronouns replaced by what they refer to.
/// Answered with the statements, possibly none (an evasive answer states nothing).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SplitStatements {
    /// The question the text answers (context for resolving references).
    pub question: String,
    /// The text to split.
    pub text: String,
}

/// Judge every statement of one text against the contexts, in one call.
/// Answered with one [`SupportVerdict`] per statement, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SupportVerdicts {
    /// The statements to check.
    pub statements: Vec<String>,
    /// The material they may be supported by (retrieved contexts, or a reference answer).
    pub contexts: Vec<String>,
    /// What `contexts` are, so that reasons name it ("in the answer", not "in no context").
    /// Prompts do not read it: a chat model is shown the material as contexts either way.
    #[serde(default, skip_serializing_if = "Premise::is_contexts")]
    pub premise: Premise,
}

/// What the statements of a [`SupportVerdicts`] task are checked against.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Premise {
    /// Retrieved contexts (faithfulness, context recall, noise sensitivity).
    #[default]
    Contexts,
    /// The system's answer (answer correctness checks the reference's statements in it).
    Answer,
    /// The reference answer (answer correctness checks the answer's statements in it).
    Reference,
}

impl Premise {
    /// Whether this is the default, retrieved contexts.
    pub fn is_contexts(&self) -> bool {
        *self == Premise::Contexts
    }

    /// The premise as reasons name it when it is one text: "the answer", "the reference".
    pub fn noun(self) -> &'static str {
        match self {
            Premise::Contexts => "the contexts",
            Premise::Answer => "the answer",
            Premise::Reference => "the reference",
        }
    }
}

/// How far the contexts back a statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Support {
    /// Everything the statement says follows from the contexts.
    FullySupported,
    /// Part of it follows; the rest is missing.
    PartiallySupported,
    /// The contexts do not say it.
    NotSupported,
    /// The contexts say otherwise.
    Contradicted,
}

impl Support {
    /// The label as written in prompts and evidence (`fully_supported`, ...).
    pub fn label(self) -> &'static str {
        match self {
            Support::FullySupported => "fully_supported",
            Support::PartiallySupported => "partially_supported",
            Support::NotSupported => "not_supported",
            Support::Contradicted => "contradicted",
        }
    }

    /// Only full support counts as supported in seeds S1 and S4's counts (and ragas's).
    pub fn is_supported(self) -> bool {
        self == Support::FullySupported
    }
}

/// What a partially supported statement earns in a graded metric when the judge gives no
/// degree of support: the middle of the three-step scale not / partially / fully
/// supported mapped linearly onto [0, 1] (TruLens's groundedness likewise maps its
/// per-sentence ordinal rating linearly and averages it).
pub const PARTIAL_SUPPORT_CREDIT: f64 = 0.5;

/// How a metric counts one support verdict: the metric's score is the mean credit of its
/// statements. The judge's degree of support ([`SupportVerdict::score`]) is used where
/// one is given and the rule lets the statement earn anything; chat models give none,
/// and every rule then falls back on the label alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SupportCredit {
    /// 1 for `fully_supported`, else 0, whatever the degree: the counts of seeds S1 and S4
    /// (and ragas).
    FullOnly,
    /// `fully_supported` earns its degree (1 without one), anything else 0: only full
    /// support counts, as in S1, but a statement the contexts state word for word counts
    /// more than one that barely passed (faithfulness).
    FullByDegree,
    /// `fully_supported` earns its degree (1 without one), `partially_supported` its degree
    /// ([`PARTIAL_SUPPORT_CREDIT`] without one), not supported and contradicted 0: how much
    /// of a text the other holds (context recall, answer correctness).
    Graded,
}

impl SupportCredit {
    /// `full_only`, `full_by_degree` or `graded`, as evidence names the rule.
    pub fn name(self) -> &'static str {
        match self {
            SupportCredit::FullOnly => "full_only",
            SupportCredit::FullByDegree => "full_by_degree",
            SupportCredit::Graded => "graded",
        }
    }

    /// The credit of a statement judged `support`, with the judge's degree `score` when it
    /// gave one; always in [0, 1].
    pub fn credit(self, support: Support, score: Option<f64>) -> f64 {
        let degree = |fallback: f64| score.map_or(fallback, |s| s.clamp(0.0, 1.0));
        match (self, support) {
            (SupportCredit::FullOnly, Support::FullySupported) => 1.0,
            (SupportCredit::FullByDegree | SupportCredit::Graded, Support::FullySupported) => {
                degree(1.0)
            }
            (SupportCredit::Graded, Support::PartiallySupported) => degree(PARTIAL_SUPPORT_CREDIT),
            _ => 0.0,
        }
    }
}

/// The verdict on one statement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SupportVerdict {
    /// How far it is supported.
    pub support: Support,
    /// The context (0-based index into [`SupportVerdicts::contexts`]) that supports or
    /// contradicts it best, when one does.
    pub context: Option<usize>,
    /// Why.
    pub reason: String,
    /// The judge's degree of support in [0, 1], when it measures one: the heuristic judge
    /// gives the weighted share of the statement's content words the contexts hold
    /// (`heuristic::SUPPORT_DEGREE`); chat models give none. It refines the label, never
    /// replaces it: see [`SupportCredit`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
}

impl SupportVerdict {
    /// A verdict no model gave: not supported, for `reason` (no context to read, a dry run).
    pub fn unsupported_by_rule(reason: impl Into<String>) -> Self {
        SupportVerdict {
            support: Support::NotSupported,
            context: None,
            reason: reason.into(),
            score: None,
        }
    }

    /// This verdict's credit under `rule`.
    pub fn credit(&self, rule: SupportCredit) -> f64 {
        rule.credit(self.support, self.score)
    }
}

/// Is `context` about `question` (S4 context relevance)? One call per context; callers run
/// a sample's contexts concurrently.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextRelevance {
    /// The user's question.
    pub question: String,
    /// One retrieved context.
    pub context: String,
}

/// The answer to [`ContextRelevance`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RelevanceVerdict {
    /// Relevant to the question.
    pub relevant: bool,
    /// Why.
    pub reason: String,
}

/// Did `context` help to arrive at `answer` (S0 useful context precision with the generated
/// answer; ragas context precision with the reference answer)?
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextUsefulness {
    /// The user's question.
    pub question: String,
    /// The answer the context is judged for (a reference or a generated answer).
    pub answer: String,
    /// One retrieved context.
    pub context: String,
}

/// The answer to [`ContextUsefulness`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UsefulnessVerdict {
    /// Useful for the answer.
    pub useful: bool,
    /// Why.
    pub reason: String,
}

/// Rate how well `answer` addresses `question` on a 1–5 rubric (S1 answer relevance).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnswerRubric {
    /// The user's question.
    pub question: String,
    /// The answer to rate.
    pub answer: String,
}

/// The answer to [`AnswerRubric`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RubricScore {
    /// 1 (does not address the question) to 5 (addresses it fully and directly).
    pub score: u8,
    /// Why.
    pub reason: String,
}

impl RubricScore {
    /// The score mapped to [0, 1] as S1 does: `(score − 1) / 4`.
    pub fn normalised(&self) -> f64 {
        (f64::from(self.score.clamp(1, 5)) - 1.0) / 4.0
    }
}

/// Write `n` questions that `answer` would answer, and say whether the answer is
/// noncommittal (S4 simulated questions; ragas answer relevancy).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GenerateQuestions {
    /// The answer.
    pub answer: String,
    /// How many questions (S4 and ragas use 3).
    pub n: usize,
}

/// The answer to [`GenerateQuestions`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GeneratedQuestions {
    /// Exactly `n` questions.
    pub questions: Vec<String>,
    /// The answer evades, hedges or declines ("I don't know").
    pub noncommittal: bool,
}

/// Is each candidate question the same question as `question`? One call for all candidates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuestionSimilarity {
    /// The real question.
    pub question: String,
    /// Generated questions to compare with it.
    pub candidates: Vec<String>,
}

/// The verdict on one candidate of [`QuestionSimilarity`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimilarityVerdict {
    /// Asks for the same information as the real question.
    pub similar: bool,
    /// Why.
    pub reason: String,
}

/// The named entities of `text`, each once (ragas context entity recall).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExtractEntities {
    /// The text.
    pub text: String,
}

/// Grade `context` for `question` from 0 to 3 (ranking round 0, issue 4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GradeRelevance {
    /// The user's question.
    pub question: String,
    /// One retrieved context.
    pub context: String,
}

/// The answer to [`GradeRelevance`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RelevanceGrade {
    /// 0 not useful, 1 on the topic, 2 helps to answer, 3 answers the question.
    pub grade: u8,
    /// Why.
    pub reason: String,
}

/// Which of two contexts is better for `question` (ranking comparisons, issue 4). Ask in
/// both orders to expose position bias.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairwisePreference {
    /// The user's question.
    pub question: String,
    /// Context shown first (as "A").
    pub first: String,
    /// Context shown second (as "B").
    pub second: String,
}

/// Which side won a [`PairwisePreference`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Preferred {
    /// [`PairwisePreference::first`].
    First,
    /// [`PairwisePreference::second`].
    Second,
    /// Neither is better.
    Tie,
}

/// The answer to [`PairwisePreference`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Preference {
    /// The winner.
    pub preferred: Preferred,
    /// Why.
    pub reason: String,
}

/// Grade each of several contexts for `question` from 0 to 3 in one call (ranking round 0
/// with fewer calls, issue 4). The contexts are shown as passages `p1`, `p2`, …; the judge
/// must grade every one of them once and nothing else. Answered with one [`RelevanceGrade`]
/// per context, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GradeRelevanceBatch {
    /// The user's question.
    pub question: String,
    /// The retrieved contexts, in the order shown.
    pub contexts: Vec<String>,
}

/// Order several contexts by how useful they are for `question`, most useful first (listwise
/// ranking, issue 4). The contexts are shown as passages `p1`, `p2`, …; the answer must be a
/// permutation of exactly those. Answered with the 0-based indices into
/// [`OrderContexts::contexts`], best first. Ask each list in two orders to expose position
/// bias.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderContexts {
    /// The user's question.
    pub question: String,
    /// The contexts, in the order shown.
    pub contexts: Vec<String>,
}

/// The answer to [`OrderContexts`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextOrder {
    /// 0-based indices into [`OrderContexts::contexts`], each once, most useful first.
    pub order: Vec<usize>,
    /// Why.
    pub reason: String,
}

/// Answer `question` from `contexts` alone, or say the contexts do not tell (reference
/// generation and the baseline RAG, issues 4 and 5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnswerFromContexts {
    /// The user's question.
    pub question: String,
    /// The material to answer from.
    pub contexts: Vec<String>,
}

/// The answer to [`AnswerFromContexts`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextAnswer {
    /// The answer, or `None` when the contexts do not contain it ("unknown").
    pub answer: Option<String>,
}

/// Everything judged against the retrieved contexts of one sample, in one call that reads
/// the contexts once: any of
/// - the reference split into statements, each judged like a [`SupportVerdicts`] statement
///   (`split_reference`; ragas's context recall splits and classifies in one call too);
/// - each context judged useful or not for arriving at the reference (`usefulness`; the
///   [`ContextUsefulness`] question, asked for all contexts at once);
/// - given statements judged like [`SupportVerdicts`] (the answer's statements for
///   faithfulness, or a dataset's reference statements).
///
/// Answered with [`ContextsChecked`]. Callers ask it only when the router answers it with
/// the chat model ([`TaskJudge::route`](crate::TaskJudge::route)); otherwise they ask the
/// parts as separate tasks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextsCheck {
    /// The user's question.
    pub question: String,
    /// The retrieved contexts (at least one not blank).
    pub contexts: Vec<String>,
    /// The reference answer; needed by `split_reference` and `usefulness`.
    pub reference: Option<String>,
    /// Split the reference into statements and judge each.
    pub split_reference: bool,
    /// Judge each context useful or not for arriving at the reference.
    pub usefulness: bool,
    /// Statements judged as given.
    pub statements: Vec<String>,
}

/// The answer to [`ContextsCheck`]; the parts not asked for are empty.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ContextsChecked {
    /// The reference's statements, in its order (`split_reference`).
    pub reference_statements: Vec<String>,
    /// The verdict on each of `reference_statements`, in order.
    pub reference_verdicts: Vec<SupportVerdict>,
    /// One per context, in order (`usefulness`).
    pub usefulness: Vec<UsefulnessVerdict>,
    /// One per given statement, in order.
    pub verdicts: Vec<SupportVerdict>,
}

/// Merge partial answers to `question` into one answer (reference generation, issue 4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MergeAnswers {
    /// The user's question.
    pub question: String,
    /// The partial answers, each from a different part of the material.
    pub answers: Vec<String>,
}

/// Two separate decisions about one sample: do the contexts support an answer to the
/// question, and does the answer decline to give one (abstention; DeepEval's
/// `AbstentionMetric` proposal and ragas's risk-control metrics ask the same pair)?
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Abstention {
    /// The user's question.
    pub question: String,
    /// The retrieved contexts.
    pub contexts: Vec<String>,
    /// The system's answer.
    pub answer: String,
}

/// The answer to [`Abstention`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbstentionVerdict {
    /// The contexts hold what a correct answer needs; `None` when the implementation cannot
    /// tell (the heuristic judge, which says so rather than guess).
    pub supported: Option<bool>,
    /// The answer declines to answer ("I don't know", 无法回答).
    pub refused: bool,
    /// Why.
    pub reason: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_match_serde() {
        let mut names: Vec<&str> = TaskKind::ALL.iter().map(|k| k.name()).collect();
        for kind in TaskKind::ALL {
            let json = serde_json::to_value(kind).unwrap_or_default();
            assert_eq!(json, serde_json::json!(kind.name()));
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TaskKind::ALL.len());
    }

    #[test]
    fn rubric_normalises_like_s1() {
        let score = |s| RubricScore {
            score: s,
            reason: String::new(),
        };
        assert_eq!(score(1).normalised(), 0.0);
        assert_eq!(score(3).normalised(), 0.5);
        assert_eq!(score(5).normalised(), 1.0);
    }
}

/// Write one test-set item (`rageval testset`) of `category` from `passages`, in the
/// passages' language: a question a reader without the passages can understand, its answer
/// from the passages alone, and the answer's key points. Answered with a [`TestItemDraft`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteTestItem {
    /// What kind of question to write.
    pub category: rageval_core::testset::Category,
    /// One passage, or two for multi-hop and comparison questions.
    pub passages: Vec<String>,
}

/// The answer to [`WriteTestItem`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestItemDraft {
    /// The question (for a follow-up: the second turn).
    pub question: String,
    /// The reference answer (for an unanswerable question: that the documents do not say).
    pub answer: String,
    /// Short statements that together make the answer, each checkable on its own.
    pub key_points: Vec<String>,
    /// A follow-up's first turn: the opening question and its answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opening: Option<(String, String)>,
}

/// Answer `question` from the model's own knowledge, with no passage: the closed-book check
/// of a generated item. Answered with the answer, or `None` when the model says it does not
/// know.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnswerClosedBook {
    /// The question.
    pub question: String,
}
