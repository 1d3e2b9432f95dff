//! Typed judge tasks: the layer between the judge pipeline and everything that needs a
//! judgement (metrics, ranking, reference generation, the baseline RAG, judge-check).
//!
//! Callers ask a [`TaskJudge`] for a typed task — [`SplitStatements`], [`SupportVerdicts`],
//! [`ContextRelevance`], [`ContextUsefulness`], [`AnswerRubric`], [`GenerateQuestions`],
//! [`QuestionSimilarity`], [`ExtractEntities`], [`GradeRelevance`], [`PairwisePreference`],
//! [`GradeRelevanceBatch`], [`OrderContexts`], [`AnswerFromContexts`], [`MergeAnswers`],
//! [`Abstention`], [`ResolveQuestion`] (a follow-up made standalone),
//! [`KnowledgeRetention`] (a reply that keeps what the user said earlier),
//! [`ToolArgumentMeaning`] (a tool call's free-text arguments against the expected ones), and
//! [`ContextsCheck`] (several of these against one sample's contexts in one call),
//! [`WriteTestItem`] and [`AnswerClosedBook`] (`rageval testset`), and [`JudgeRubric`] (a
//! [`Rubric`] of the user's own) — and get a [`Judged`] value that says
//! who answered (model and template `id@version`, or heuristic and thresholds), the ladder
//! rung, token usage and whether it came from the cache.
//!
//! - [`task`]: the tasks, one file per task (`src/task/NAME.rs`: input, typed output, the
//!   chat model's raw answer and its schema, the prompt pack entry, the heuristic rule, the
//!   [`TaskJudge`] method), and the table that registers them ([`TaskKind`]).
//! - [`router`]: [`TaskJudge`] and its [`Policy`] (verdicts and generation each to the chat
//!   model or the heuristic judge), one generic routing function for every task;
//!   [`TaskJudge::describe`] for stderr and the manifest.
//! - [`prompt`]: the `en` and `zh` prompt packs (versioned files under `prompts/`), picked
//!   per call by script; untrusted text fenced with tags it cannot forge.
//! - [`schema`]: the schema pieces every task's output JSON Schema is built from, strict
//!   enough for the ladder to re-ask; [`schema::output_schema`] by kind.
//! - [`checker`]: support verdicts from a checker model a team brings (`--judge
//!   checker:DIR`), which the router prefers for [`SupportVerdicts`] when one is set.
//! - [`heuristic`]: the offline judge's shared measures — content-word overlap (jieba for
//!   Chinese), cosine for question similarity when an embedder is configured; each task's
//!   rule and named thresholds are in its file and re-exported there.
//! - [`measured`]: the heuristic's measured agreement on human-labelled data;
//!   [`validation`] computes such figures for any [`TaskJudge`].
//! - [`judged`]: [`Judged`] and the provenance types; [`error`]: [`TaskError`].
//!
//! **Adding a typed task** touches three Rust files — its own `src/task/NAME.rs`, its row in
//! the table of `src/task/mod.rs` (with the `mod` line and re-export), and the re-export
//! below — plus its two prompt files, `prompts/en/NAME.txt` and `prompts/zh/NAME.txt`.
//!
//! Model calls go through `rageval_judge::Judge` only (cache, limits, retries, parse
//! ladder); this crate computes no metric — formulas over verdicts live in
//! `rageval-metrics`. What one support verdict counts for ([`SupportCredit`]) is defined
//! beside the verdict, so the metrics and the [`validation`] sweep count it alike.

pub mod checker;
pub mod error;
pub mod heuristic;
pub mod judged;
mod llm;
pub mod measured;
pub mod prompt;
pub mod router;
pub mod schema;
pub mod task;
pub mod validation;

pub use checker::{
    CHECKER_CACHE_FORMAT, CheckerCache, CheckerInfo, DEFAULT_BAND, EVERY_CLAIM, EscalationBand,
};
pub use error::TaskError;
pub use heuristic::Heuristic;
pub use judged::{HeuristicInfo, Implementation, Judged, Threshold};
pub use measured::{FigureKind, Measurement, measurements, published};
pub use prompt::{Lang, LangChoice};
pub use router::{Answerer, Policy, Route, TaskCalls, TaskJudge, TaskRoute};
pub use task::{
    Abstention, AbstentionVerdict, AnswerClosedBook, AnswerFromContexts, AnswerRubric,
    ArgumentVerdict, CompareAnswers, ContextAnswer, ContextOrder, ContextRelevance,
    ContextUsefulness, ContextsCheck, ContextsChecked, ExtractEntities, GenerateQuestions,
    GeneratedQuestions, GradeRelevance, GradeRelevanceBatch, JudgeRubric, KnowledgeRetention,
    MergeAnswers, OrderContexts, PARTIAL_SUPPORT_CREDIT, PairwisePreference, Preference, Preferred,
    Premise, QuestionSimilarity, RelevanceGrade, RelevanceVerdict, ResolveQuestion,
    RetentionVerdict, Rubric, RubricExample, RubricField, RubricGrade, RubricScale, RubricScore,
    ShownAnswer, SimilarityVerdict, SplitStatements, Support, SupportCredit, SupportVerdict,
    SupportVerdicts, TaskFamily, TaskKind, TestItemDraft, ToolArgumentMeaning, UsefulnessVerdict,
    WriteTestItem,
};
