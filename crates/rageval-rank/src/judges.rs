//! The judge calls this crate makes, as small traits: a graded relevance judgement (of one
//! context, or of a batch in one call), a pairwise preference, an ordering of a window of
//! contexts, and the answer / merge calls of reference generation.
//!
//! The typed judge tasks (prompts, schemas, the `rageval-judge` pipeline with its cache,
//! limiter and retries) implement these; this crate only decides *which* calls to make and
//! in what order, and never retries: a call that fails here has already been retried by
//! the judge. Futures must be `Send` so that a whole ranking can run on a multi-threaded
//! runtime.

use std::fmt;
use std::future::Future;

use serde::{Deserialize, Serialize};

/// Why a judge call failed, as the implementation reports it (a `JudgeError`, a parse
/// failure of the model's answer, ...). Recorded as text in the outputs.
pub type CallError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// One judge call as recorded: its answer, or the error it failed with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallRecord<T> {
    /// The judge answered.
    Answer(T),
    /// The call failed (after the judge's own retries); the error's text.
    Failed(String),
}

impl<T: Copy> CallRecord<T> {
    /// The answer, if the call succeeded.
    pub fn answer(&self) -> Option<T> {
        self.answer_ref().copied()
    }
}

impl<T> CallRecord<T> {
    /// The answer, by reference, if the call succeeded.
    pub fn answer_ref(&self) -> Option<&T> {
        match self {
            CallRecord::Answer(value) => Some(value),
            CallRecord::Failed(_) => None,
        }
    }
}

/// A graded relevance judgement, 0–3 (UMBRELA-style, ranking.md §3.6):
/// 0 not useful, 1 related, 2 partially answers, 3 answers the question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "u8", into = "u8")]
pub struct Grade(u8);

impl Grade {
    /// Not useful for the question: the seed's "bad" list.
    pub const NOT_USEFUL: Grade = Grade(0);
    /// About the topic but does not help answer.
    pub const RELATED: Grade = Grade(1);
    /// Answers part of the question.
    pub const PARTIAL: Grade = Grade(2);
    /// Answers the question.
    pub const ANSWERS: Grade = Grade(3);
    /// The highest grade.
    pub const MAX: u8 = 3;

    /// A grade from its number; `None` above 3.
    pub fn new(value: u8) -> Option<Grade> {
        (value <= Self::MAX).then_some(Grade(value))
    }

    /// The number, 0–3.
    pub fn value(self) -> u8 {
        self.0
    }

    /// Grade 1 or more: the context goes on to the pairwise rounds.
    pub fn is_useful(self) -> bool {
        self.0 > 0
    }
}

/// A number outside 0–3 given as a grade.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("grade {0} is outside 0-3")]
pub struct GradeOutOfRange(pub u8);

impl TryFrom<u8> for Grade {
    type Error = GradeOutOfRange;
    fn try_from(value: u8) -> Result<Self, Self::Error> {
        Grade::new(value).ok_or(GradeOutOfRange(value))
    }
}

impl From<Grade> for u8 {
    fn from(grade: Grade) -> u8 {
        grade.0
    }
}

impl fmt::Display for Grade {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Which of two contexts, in the order they were shown, the judge prefers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Preference {
    /// The context shown first (the seed's "1", a task's "A").
    First,
    /// The context shown second.
    Second,
    /// Neither is better.
    Tie,
}

/// Round 0 of a ranking: grade one context for one question.
pub trait Grader: Sync {
    /// The judge's grade of `context` for `question`.
    fn grade(
        &self,
        question: &str,
        context: &str,
    ) -> impl Future<Output = Result<Grade, CallError>> + Send;
}

/// The pairwise rounds: which of two contexts helps more to answer the question.
pub trait Comparator: Sync {
    /// The judge's preference between `first` and `second`, shown in that order.
    fn compare(
        &self,
        question: &str,
        first: &str,
        second: &str,
    ) -> impl Future<Output = Result<Preference, CallError>> + Send;
}

/// Round 0 in fewer calls: grade several contexts in one call.
pub trait BatchGrader: Sync {
    /// The judge's grade of each of `contexts` for `question`, in order: exactly one per
    /// context (the ranker refuses any other count as a failed call).
    fn grade_batch(
        &self,
        question: &str,
        contexts: &[&str],
    ) -> impl Future<Output = Result<Vec<Grade>, CallError>> + Send;
}

/// Listwise ordering: put a window of contexts in order of usefulness.
pub trait ListOrderer: Sync {
    /// The judge's order of `contexts` (shown in that order), most useful first, as indices
    /// into `contexts`: a permutation of `0..contexts.len()` (the ranker refuses anything
    /// else as a failed call).
    fn order(
        &self,
        question: &str,
        contexts: &[&str],
    ) -> impl Future<Output = Result<Vec<usize>, CallError>> + Send;
}

/// A call that shows several contexts at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ListCall {
    /// [`BatchGrader::grade_batch`].
    GradeBatch,
    /// [`ListOrderer::order`].
    Order,
}

/// Prompt sizes of the calls that show several contexts, so that batches and windows can be
/// kept within the judge's window. The size of a call is at most its fixed part plus the
/// sum of what each context shown adds.
pub trait PromptSize: Sync {
    /// Tokens of the fixed part of a `call` for `question`: templates, output schema,
    /// framing and the question.
    fn fixed_prompt_tokens(&self, call: ListCall, question: &str) -> usize;

    /// Tokens one context adds to either call: its text, its fence and its key in the
    /// output schema.
    fn context_prompt_tokens(&self, context: &str) -> usize;
}

/// Everything a ranking may ask of a judge, whichever [`Algorithm`](crate::Algorithm) runs.
pub trait RankJudge: Grader + BatchGrader + Comparator + ListOrderer + PromptSize {}

impl<J: Grader + BatchGrader + Comparator + ListOrderer + PromptSize> RankJudge for J {}

/// What a judge answers from some contexts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContextAnswer {
    /// An answer to the question drawn from the contexts.
    Answer(String),
    /// The contexts do not answer the question (the seed's "不知道").
    Unknown,
}

/// Reference-answer generation: answer from contexts, merge answers, and count the tokens
/// of the prompt either call would send, so that no prompt over the window is ever sent.
///
/// The counts must be of the whole rendered prompt (template, question and inputs) in the
/// judge's tokenizer; the planner sends a call only after counting exactly its inputs.
pub trait Answerer: Sync {
    /// Prompt tokens of [`Answerer::answer`] for these contexts.
    fn answer_prompt_tokens(&self, question: &str, contexts: &[&str]) -> usize;

    /// Prompt tokens of [`Answerer::merge`] for these answers.
    fn merge_prompt_tokens(&self, question: &str, answers: &[&str]) -> usize;

    /// Answer `question` from `contexts`, or say they do not answer it.
    fn answer(
        &self,
        question: &str,
        contexts: &[&str],
    ) -> impl Future<Output = Result<ContextAnswer, CallError>> + Send;

    /// Merge partial answers to `question` into one.
    fn merge(
        &self,
        question: &str,
        answers: &[&str],
    ) -> impl Future<Output = Result<String, CallError>> + Send;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grades_outside_zero_to_three_are_refused() {
        assert_eq!(Grade::new(3), Some(Grade::ANSWERS));
        assert_eq!(Grade::new(4), None);
        assert!(serde_json::from_str::<Grade>("4").is_err());
        assert_eq!(
            serde_json::from_str::<Grade>("2").ok(),
            Some(Grade::PARTIAL)
        );
        assert!(!Grade::NOT_USEFUL.is_useful() && Grade::RELATED.is_useful());
    }
}
