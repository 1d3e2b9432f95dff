//! The judge tasks, one file per task, and the table that registers them.
//!
//! A task's file (`src/task/NAME.rs`, NAME being the task's name) holds everything about
//! it: the input (what the judge reads), the typed value it answers with, the raw shape of a
//! chat model's answer and its JSON Schema, its prompt pack entry (`pack_files!("NAME")`:
//! `prompts/en/NAME.txt` and `prompts/zh/NAME.txt`), how the chat model is asked
//! (`LlmTask`), the answers a rule gives when the input leaves nothing to judge, its
//! heuristic rule with the rule's named thresholds (where the heuristic judge has one, as a
//! method of [`Heuristic`]) and its method on [`TaskJudge`], one line over the router's
//! generic function. What tasks share stays in shared modules: the `LlmTask` trait and slot
//! filling (`llm`), the schema pieces ([`schema`](crate::schema)), the pack loader
//! ([`prompt::pack`](crate::prompt::pack)), the heuristic's words, overlap and support
//! measures ([`heuristic`](crate::heuristic)), and the routing ([`router`](crate::router)).
//!
//! **Adding a typed task** touches three Rust files and two prompt files: its own
//! `src/task/NAME.rs` (implementing `LlmTask` and `TypedTask`, the router's method
//! included); this module (its `mod` line, its re-export and its row in the table below);
//! `lib.rs` (its re-export); and `prompts/en/NAME.txt` and `prompts/zh/NAME.txt`. The
//! router, the schema lookup, the pack loader, the manifest's template list and the
//! heuristic judge find it through the table. (A schema that depends on a size
//! [`Shape`] does not carry yet would add a field there.)
//!
//! Inputs own their text, so callers can build them once and send them to concurrent calls.
//! Indices in outputs are 0-based and refer to the input's lists. Nothing here computes a
//! metric.

pub mod abstention;
pub mod answer_closed_book;
pub mod answer_from_contexts;
pub mod answer_rubric;
pub mod compare_answers;
pub mod context_relevance;
pub mod context_usefulness;
pub mod contexts_check;
pub mod custom_rubric;
pub mod extract_entities;
pub mod generate_questions;
pub mod grade_relevance;
pub mod grade_relevance_batch;
pub mod knowledge_retention;
pub mod merge_answers;
pub mod order_contexts;
pub mod pairwise_preference;
pub mod question_similarity;
pub mod resolve_question;
pub mod split_statements;
pub mod support_verdicts;
pub mod tool_argument_meaning;
pub mod write_test_item;

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use abstention::{Abstention, AbstentionVerdict};
pub use answer_closed_book::AnswerClosedBook;
pub use answer_from_contexts::{AnswerFromContexts, ContextAnswer};
pub use answer_rubric::{AnswerRubric, RubricScore};
pub use compare_answers::{CompareAnswers, ShownAnswer};
pub use context_relevance::{ContextRelevance, RelevanceVerdict};
pub use context_usefulness::{ContextUsefulness, UsefulnessVerdict};
pub use contexts_check::{ContextsCheck, ContextsChecked};
pub use custom_rubric::{
    JudgeRubric, Rubric, RubricExample, RubricField, RubricGrade, RubricScale,
};
pub use extract_entities::ExtractEntities;
pub use generate_questions::{GenerateQuestions, GeneratedQuestions};
pub use grade_relevance::{GradeRelevance, RelevanceGrade};
pub use grade_relevance_batch::GradeRelevanceBatch;
pub use knowledge_retention::{KnowledgeRetention, RetentionVerdict};
pub use merge_answers::MergeAnswers;
pub use order_contexts::{ContextOrder, OrderContexts};
pub use pairwise_preference::{PairwisePreference, Preference, Preferred};
pub use question_similarity::{QuestionSimilarity, SimilarityVerdict};
pub use resolve_question::ResolveQuestion;
pub use split_statements::SplitStatements;
pub use support_verdicts::{
    PARTIAL_SUPPORT_CREDIT, Premise, SUPPORT_LABELS, Support, SupportCredit, SupportVerdict,
    SupportVerdicts,
};
pub use tool_argument_meaning::{ArgumentVerdict, ToolArgumentMeaning};
pub use write_test_item::{TestItemDraft, WriteTestItem};

use crate::error::TaskError;
use crate::heuristic::{ByScript, Heuristic};
use crate::judged::{HeuristicInfo, Judged};
use crate::llm::LlmTask;
use crate::prompt::pack::PackFiles;
use crate::router::TaskJudge;
use crate::schema::Shape;

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

/// What the router and the heuristic judge need of a task besides how the chat model is
/// asked (`LlmTask`): its family, the answers a rule gives, and its heuristic rule when it
/// has one. Every row of the table implements it.
pub(crate) trait TypedTask: LlmTask + Sync {
    /// Verdict or generation: which of the policy's routes it takes.
    const FAMILY: TaskFamily;

    /// The threshold of its heuristic rule that the development sweep chose, by script
    /// ([`crate::heuristic::chosen_threshold`]); `None` when the sweep chose none.
    const SWEPT: Option<ByScript> = None;

    /// Its heuristic rule's name and thresholds; `None` when the heuristic judge has no rule
    /// for it (then only a chat model answers it).
    fn heuristic_info(heuristic: &Heuristic) -> Option<HeuristicInfo> {
        let _ = heuristic;
        None
    }

    /// The answer when the input leaves nothing to judge (no call is made), or why the input
    /// cannot be judged; `Ok(None)` sends the task to its route.
    fn by_rule(&self) -> Result<Option<Judged<Self::Output>>, TaskError> {
        Ok(None)
    }

    /// The heuristic judge's answer; asked only when [`TypedTask::heuristic_info`] names a
    /// rule.
    async fn by_heuristic(&self, heuristic: &Heuristic) -> Result<Judged<Self::Output>, TaskError> {
        let _ = heuristic;
        Err(TaskError::Unavailable {
            task: Self::KIND,
            why: "it has no heuristic implementation".into(),
        })
    }

    /// A checker model's answer: support verdicts only.
    async fn by_checker(&self, router: &TaskJudge) -> Result<Judged<Self::Output>, TaskError> {
        let _ = router;
        Err(TaskError::Unavailable {
            task: Self::KIND,
            why: "a checker model answers support verdicts only".into(),
        })
    }
}

/// The table of tasks: one row per task, `Kind => module::Type`, in the order of
/// [`TaskKind::ALL`] (reports and the manifest list tasks in it). It writes [`TaskKind`] and
/// every lookup by kind, so a task is registered here once; a compile-time check holds each
/// row's type to its own kind.
macro_rules! tasks {
    ($($kind:ident => $module:ident :: $task:ident,)*) => {
        /// Which task, for routing, reports and the manifest.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum TaskKind {
            $(
                #[doc = concat!("[`", stringify!($task), "`].")]
                $kind,
            )*
        }

        $(const _: () = assert!(
            matches!(<$module::$task as LlmTask>::KIND, TaskKind::$kind),
            concat!(stringify!($task), " does not name its own kind"),
        );)*

        impl TaskKind {
            /// Every task, in a stable order.
            pub const ALL: [TaskKind; COUNT] = [$(TaskKind::$kind,)*];

            /// The snake_case name (also the prompt template's name).
            pub fn name(self) -> &'static str {
                match self {
                    $(TaskKind::$kind => <$module::$task as LlmTask>::PACK.name,)*
                }
            }

            /// Verdict or generation. [`TaskKind::ContextsCheck`] counts as a verdict task,
            /// though it may also split a text: the router answers it in one call only when
            /// the chat model answers all of its parts.
            pub fn family(self) -> TaskFamily {
                match self {
                    $(TaskKind::$kind => <$module::$task as TypedTask>::FAMILY,)*
                }
            }

            /// Its two template files.
            pub(crate) fn pack_files(self) -> PackFiles {
                match self {
                    $(TaskKind::$kind => <$module::$task as LlmTask>::PACK,)*
                }
            }

            /// The JSON Schema of its answer for a call of `shape`.
            pub(crate) fn output_schema(self, shape: Shape) -> Value {
                match self {
                    $(TaskKind::$kind => <$module::$task as LlmTask>::schema(shape),)*
                }
            }

            /// Its heuristic rule as `heuristic` applies it, if it has one.
            pub(crate) fn heuristic_info(self, heuristic: &Heuristic) -> Option<HeuristicInfo> {
                match self {
                    $(TaskKind::$kind => <$module::$task as TypedTask>::heuristic_info(heuristic),)*
                }
            }

            /// The threshold the development sweep chose for its heuristic rule, if any.
            pub(crate) fn swept_threshold(self) -> Option<ByScript> {
                match self {
                    $(TaskKind::$kind => <$module::$task as TypedTask>::SWEPT,)*
                }
            }
        }

        /// How many tasks the table has.
        const COUNT: usize = [$(stringify!($kind),)*].len();
    };
}

tasks! {
    SplitStatements => split_statements::SplitStatements,
    SupportVerdicts => support_verdicts::SupportVerdicts,
    ContextRelevance => context_relevance::ContextRelevance,
    ContextUsefulness => context_usefulness::ContextUsefulness,
    AnswerRubric => answer_rubric::AnswerRubric,
    GenerateQuestions => generate_questions::GenerateQuestions,
    QuestionSimilarity => question_similarity::QuestionSimilarity,
    ExtractEntities => extract_entities::ExtractEntities,
    GradeRelevance => grade_relevance::GradeRelevance,
    PairwisePreference => pairwise_preference::PairwisePreference,
    GradeRelevanceBatch => grade_relevance_batch::GradeRelevanceBatch,
    OrderContexts => order_contexts::OrderContexts,
    AnswerFromContexts => answer_from_contexts::AnswerFromContexts,
    MergeAnswers => merge_answers::MergeAnswers,
    ContextsCheck => contexts_check::ContextsCheck,
    CustomRubric => custom_rubric::JudgeRubric,
    WriteTestItem => write_test_item::WriteTestItem,
    AnswerClosedBook => answer_closed_book::AnswerClosedBook,
    Abstention => abstention::Abstention,
    CompareAnswers => compare_answers::CompareAnswers,
    ResolveQuestion => resolve_question::ResolveQuestion,
    KnowledgeRetention => knowledge_retention::KnowledgeRetention,
    ToolArgumentMeaning => tool_argument_meaning::ToolArgumentMeaning,
}

impl fmt::Display for TaskKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
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

    /// Each task lives in the file named after it, so that its name finds its code.
    #[test]
    fn each_task_lives_in_the_file_named_after_it() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/task");
        for kind in TaskKind::ALL {
            let file = dir.join(format!("{}.rs", kind.name()));
            assert!(file.is_file(), "{kind}: no {}", file.display());
        }
    }

    /// `ALL` lists the kinds in their declared order, which `Ord` (and so every map keyed by
    /// kind) follows.
    #[test]
    fn all_is_in_declared_order() {
        let mut sorted = TaskKind::ALL;
        sorted.sort_unstable();
        assert_eq!(sorted, TaskKind::ALL);
    }
}
