//! The router's vocabulary: which implementation a task takes ([`Route`]), the [`Policy`]
//! that prefers one per family, what [`TaskJudge::describe`]
//! reports ([`TaskRoute`], [`Answerer`]) and the calls it counts ([`TaskCalls`]).

use std::collections::BTreeMap;

use rageval_judge::TemplateId;
use serde::{Deserialize, Serialize};

use crate::checker::CheckerInfo;
use crate::judged::HeuristicInfo;
use crate::measured::Measurement;
use crate::task::{TaskFamily, TaskKind};

#[cfg(doc)]
use super::TaskJudge;
#[cfg(doc)]
use crate::error::TaskError;

/// Which implementation a task should use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Route {
    /// The chat model, through the judge pipeline.
    Llm,
    /// The offline heuristic judge.
    Heuristic,
    /// A checker model (support verdicts only; set with [`TaskJudge::with_checker`], never
    /// by a policy).
    Checker,
}

/// Which implementation answers which task. The preferred one is used when it is available;
/// otherwise the other one, when it is (a generation task with no heuristic goes to the chat
/// model); otherwise the task fails with [`TaskError::Unavailable`]. [`TaskJudge::describe`]
/// reports what was resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    /// For verdict tasks.
    pub verdicts: Route,
    /// For generation tasks.
    pub generation: Route,
    /// Per-task exceptions (e.g. to compare judges task by task).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub overrides: BTreeMap<TaskKind, Route>,
}

impl Policy {
    /// Every task to the chat model.
    pub fn llm() -> Self {
        Policy {
            verdicts: Route::Llm,
            generation: Route::Llm,
            overrides: BTreeMap::new(),
        }
    }

    /// Verdicts by the heuristic judge, generation by the chat model: the default with no
    /// endpoint configured (issue 7; DESIGN.md "Where the embedded defaults live").
    pub fn offline() -> Self {
        Policy {
            verdicts: Route::Heuristic,
            generation: Route::Llm,
            overrides: BTreeMap::new(),
        }
    }

    /// The preferred route of `task`.
    pub fn preferred(&self, task: TaskKind) -> Route {
        self.overrides
            .get(&task)
            .copied()
            .unwrap_or(match task.family() {
                TaskFamily::Verdict => self.verdicts,
                TaskFamily::Generation => self.generation,
            })
    }
}

/// Who answers one task, as [`TaskJudge::describe`] reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRoute {
    /// The task.
    pub task: TaskKind,
    /// The implementation that answers it, or `None` when nothing can.
    pub answered_by: Option<Answerer>,
    /// The policy's preference, for comparison with what was resolved.
    pub preferred: Route,
    /// Agreement figures measured for that implementation (empty when never measured).
    pub measured: Vec<Measurement>,
}

/// An implementation as [`TaskJudge::describe`] names it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Answerer {
    /// A chat model.
    Llm {
        /// Backend kind.
        backend: String,
        /// Model name.
        model: String,
        /// The task's templates in both packs.
        templates: Vec<TemplateId>,
    },
    /// The heuristic judge.
    Heuristic(HeuristicInfo),
    /// A checker model.
    Checker(CheckerInfo),
}

impl TaskRoute {
    /// The implementation in a few words: `llm BACKEND:MODEL`, `heuristic NAME vN
    /// (EMBEDDER)`, or `unavailable`.
    pub fn who(&self) -> String {
        match &self.answered_by {
            None => "unavailable".to_owned(),
            Some(Answerer::Llm { backend, model, .. }) => format!("llm {backend}:{model}"),
            Some(Answerer::Heuristic(info)) => match &info.embedder {
                Some(embedder) => format!("heuristic {} v{} ({embedder})", info.name, info.version),
                None => format!("heuristic {} v{}", info.name, info.version),
            },
            Some(Answerer::Checker(info)) => info.who(),
        }
    }

    /// One line for stderr, e.g. `support_verdicts: heuristic content_word_overlap v1 —
    /// WikiEval faithfulness pairwise accuracy 1.00 (10 pairs); ...`.
    pub fn summary(&self) -> String {
        let who = self.who();
        let figures: Vec<String> = self.measured.iter().map(ToString::to_string).collect();
        if self.answered_by.is_none() {
            format!("{}: {who}", self.task)
        } else if figures.is_empty() {
            format!("{}: {who} — no agreement measured", self.task)
        } else {
            format!("{}: {who} — {}", self.task, figures.join("; "))
        }
    }
}

/// How many times each implementation was asked one task (for the run's accounting: a
/// heuristic answer costs nothing but is a call). Answers given by a rule, without
/// judgement, are not counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskCalls {
    /// Asked of the chat model (answered or not).
    pub llm: u64,
    /// Answered by the heuristic judge.
    pub heuristic: u64,
    /// Answered by a checker model.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub checker: u64,
    /// Statements the checker settled in a cascade (outside the escalation band).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub claims_by_checker: u64,
    /// Statements a cascade escalated to the chat judge (inside the band).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub claims_by_chat: u64,
}

fn is_zero(count: &u64) -> bool {
    *count == 0
}
