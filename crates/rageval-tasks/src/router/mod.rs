//! [`TaskJudge`]: the one entry point for judge tasks. It holds the chat judge (for LLM
//! implementations), the heuristic judge, a checker model when one is set, a [`Policy`] that
//! says which answers which task, and the prompt-pack choice; [`TaskJudge::describe`] says,
//! per task, who answers it and how well that implementation measured, for stderr and the
//! run manifest.
//!
//! Every task is routed by one generic function: the task's rule first (inputs with nothing
//! to judge are answered without any call: no statements → no verdicts; no contexts →
//! nothing supported, no answer), then the route, then the routed implementation. Each task
//! has its method here (`TaskJudge::abstention`, ...) written in the task's own file, one
//! line over that function. [`ContextsCheck`](crate::ContextsCheck) has no route of its own:
//! it goes to the chat model when the chat model answers each of its parts (splitting,
//! support verdicts, usefulness), and is unavailable otherwise, so that callers ask the
//! parts separately.
//!
//! - `policy`: [`Route`], [`Policy`], what [`TaskJudge::describe`] reports, [`TaskCalls`].
//! - `cascade`: support verdicts by a checker model, and the cascade that sends the
//!   statements it scores inside an [`EscalationBand`] to the chat judge.

mod cascade;
mod policy;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use rageval_judge::{ChatModel, Judge, Models, SupportChecker};

pub use policy::{Answerer, Policy, Route, TaskCalls, TaskRoute};

use crate::checker::{CheckerCache, CheckerInfo, EscalationBand};
use crate::error::TaskError;
use crate::heuristic::Heuristic;
use crate::judged::Judged;
use crate::llm::{self, LlmTask};
use crate::measured::measurements_for;
use crate::prompt::{Lang, LangChoice, pack};
use crate::task::{TaskKind, TypedTask};

/// The router. Cheap to clone (the judge, the heuristic and the call counts are shared).
#[derive(Clone)]
pub struct TaskJudge {
    llm: Option<Judge<Models>>,
    heuristic: Option<Heuristic>,
    checker: Option<SupportChecker>,
    escalation: Option<EscalationBand>,
    /// A dry run's router: the checker's work is counted, never done.
    checker_planned: bool,
    /// Where the checker's checks are kept between runs.
    checker_cache: Option<CheckerCache>,
    policy: Policy,
    lang: LangChoice,
    calls: Arc<Mutex<BTreeMap<TaskKind, TaskCalls>>>,
}

impl std::fmt::Debug for TaskJudge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskJudge")
            .field(
                "llm",
                &self
                    .llm
                    .as_ref()
                    .map(|judge| judge.model().model().to_owned()),
            )
            .field("heuristic", &self.heuristic)
            .field("checker", &self.checker)
            .field("escalation", &self.escalation)
            .field("policy", &self.policy)
            .field("lang", &self.lang)
            .finish()
    }
}

impl TaskJudge {
    /// A router with no implementation yet; add them with [`TaskJudge::with_llm`] and
    /// [`TaskJudge::with_heuristic`].
    pub fn new(policy: Policy) -> Self {
        TaskJudge {
            llm: None,
            heuristic: None,
            checker: None,
            escalation: None,
            checker_planned: false,
            checker_cache: None,
            policy,
            lang: LangChoice::Auto,
            calls: Arc::default(),
        }
    }

    /// Uses `judge`'s chat model for LLM implementations (ignored if it has none).
    pub fn with_llm(mut self, judge: Judge<Models>) -> Self {
        self.llm = judge.model().chat.is_some().then_some(judge);
        self
    }

    /// Uses `heuristic` for heuristic implementations.
    pub fn with_heuristic(mut self, heuristic: Heuristic) -> Self {
        self.heuristic = Some(heuristic);
        self
    }

    /// Uses `checker` for support verdicts, whatever the policy prefers: a team names a
    /// checker to have it answer them.
    pub fn with_checker(mut self, checker: SupportChecker) -> Self {
        self.checker = Some(checker);
        self
    }

    /// Sends the support-verdict statements the checker scores inside `band` to the chat
    /// model (when one is set) and lets the checker settle the others.
    pub fn with_escalation(mut self, band: EscalationBand) -> Self {
        self.escalation = Some(band);
        self
    }

    /// Plans the checker's work instead of doing it (a dry run): each statement it would
    /// score is counted as settled by it (`claims_by_checker`) and given a placeholder
    /// verdict, and the model is not run — on CPU it takes seconds per sample.
    pub fn with_checker_planned(mut self) -> Self {
        self.checker_planned = true;
        self
    }

    /// Keeps the checker's checks in `cache`: a rerun reads them instead of running the
    /// model.
    pub fn with_checker_cache(mut self, cache: CheckerCache) -> Self {
        self.checker_cache = Some(cache);
        self
    }

    /// The escalation band, when the checker and the chat model cascade.
    pub fn escalation(&self) -> Option<EscalationBand> {
        self.escalation
            .filter(|_| self.checker.is_some() && self.llm.is_some())
    }

    /// The checker model, when one answers support verdicts.
    pub fn checker(&self) -> Option<&SupportChecker> {
        self.checker.as_ref()
    }

    /// The same router with another prompt-pack choice (e.g. forced per sample to the
    /// question's language).
    pub fn with_lang(mut self, lang: LangChoice) -> Self {
        self.lang = lang;
        self
    }

    /// The chat judge, for its counters and rung counts.
    pub fn llm(&self) -> Option<&Judge<Models>> {
        self.llm.as_ref()
    }

    /// Per task, how many times each implementation was asked so far (by this router and
    /// its clones).
    pub fn calls(&self) -> BTreeMap<TaskKind, TaskCalls> {
        self.calls
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    fn count(&self, task: TaskKind, route: Route) {
        let mut calls = self
            .calls
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let entry = calls.entry(task).or_default();
        match route {
            Route::Llm => entry.llm += 1,
            Route::Heuristic => entry.heuristic += 1,
            Route::Checker => entry.checker += 1,
        }
    }

    /// The policy.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The route `task` takes now, or why none can answer it.
    pub fn route(&self, task: TaskKind) -> Result<Route, TaskError> {
        if task == TaskKind::ContextsCheck {
            return self.contexts_check_route();
        }
        if task == TaskKind::SupportVerdicts && self.checker.is_some() {
            return Ok(Route::Checker);
        }
        let llm = self.llm.is_some();
        let heuristic = self.heuristic.is_some() && Heuristic::supports(task);
        // A policy that prefers a checker where none is set falls back as one preferring
        // the chat model does.
        match (self.policy.preferred(task), llm, heuristic) {
            (Route::Llm | Route::Checker, true, _) | (Route::Heuristic, true, false) => {
                Ok(Route::Llm)
            }
            (Route::Heuristic, _, true) | (Route::Llm | Route::Checker, false, true) => {
                Ok(Route::Heuristic)
            }
            (_, false, false) => Err(TaskError::Unavailable {
                task,
                why: if Heuristic::supports(task) {
                    "no chat model and no heuristic judge are configured".into()
                } else {
                    "it needs a chat model (it has no heuristic implementation) and none is configured".into()
                },
            }),
        }
    }

    /// [`TaskKind::ContextsCheck`]: the chat model when it answers every part.
    fn contexts_check_route(&self) -> Result<Route, TaskError> {
        let parts = [
            TaskKind::SplitStatements,
            TaskKind::SupportVerdicts,
            TaskKind::ContextUsefulness,
        ];
        for part in parts {
            if self.route(part)? != Route::Llm {
                return Err(TaskError::Unavailable {
                    task: TaskKind::ContextsCheck,
                    why: format!(
                        "{part} is not answered by the chat model; ask the parts separately"
                    ),
                });
            }
        }
        Ok(Route::Llm)
    }

    /// Per task: who answers it and its measured agreement.
    pub fn describe(&self) -> Vec<TaskRoute> {
        TaskKind::ALL
            .into_iter()
            .map(|task| {
                let answered_by = match self.route(task) {
                    Err(_) => None,
                    Ok(Route::Llm) => self.llm.as_ref().map(|judge| Answerer::Llm {
                        backend: judge.model().kind().to_owned(),
                        model: judge.model().model().to_owned(),
                        templates: Lang::ALL
                            .into_iter()
                            .filter_map(|lang| pack::template(task, lang).ok())
                            .map(|t| t.id.clone())
                            .collect(),
                    }),
                    Ok(Route::Heuristic) => self
                        .heuristic
                        .as_ref()
                        .and_then(|h| h.info(task))
                        .map(Answerer::Heuristic),
                    Ok(Route::Checker) => self
                        .checker
                        .as_ref()
                        .map(|checker| Answerer::Checker(CheckerInfo::of(checker))),
                };
                let measured = match &answered_by {
                    Some(Answerer::Heuristic(info)) => measurements_for(task, info),
                    _ => Vec::new(),
                };
                TaskRoute {
                    task,
                    answered_by,
                    preferred: self.policy.preferred(task),
                    measured,
                }
            })
            .collect()
    }

    /// Answers `task`: by its rule when the input leaves nothing to judge, else by the
    /// implementation its route names. Every task's method is this function.
    pub(crate) async fn ask<T: TypedTask>(&self, task: &T) -> Result<Judged<T::Output>, TaskError> {
        if let Some(answer) = task.by_rule()? {
            return Ok(answer);
        }
        match self.route(T::KIND)? {
            Route::Llm => self.run_llm(task).await,
            Route::Heuristic => {
                let heuristic = self.heuristic(T::KIND)?;
                self.count(T::KIND, Route::Heuristic);
                task.by_heuristic(heuristic).await
            }
            Route::Checker => {
                self.count(T::KIND, Route::Checker);
                task.by_checker(self).await
            }
        }
    }

    async fn run_llm<T: LlmTask>(&self, task: &T) -> Result<Judged<T::Output>, TaskError> {
        match &self.llm {
            Some(judge) => {
                self.count(T::KIND, Route::Llm);
                llm::ask(judge, self.lang, task).await
            }
            None => Err(TaskError::Unavailable {
                task: T::KIND,
                why: "no chat model is configured".into(),
            }),
        }
    }

    fn heuristic(&self, task: TaskKind) -> Result<&Heuristic, TaskError> {
        self.heuristic.as_ref().ok_or(TaskError::Unavailable {
            task,
            why: "no heuristic judge is configured".into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::{
        ContextRelevance, MergeAnswers, QuestionSimilarity, SplitStatements, SupportVerdicts,
    };

    fn assert_send<T: Send>(_: &T) {}

    /// Callers spawn task calls on a multi-threaded runtime: every future must be `Send`.
    #[test]
    fn task_futures_are_send() {
        let judge = TaskJudge::new(Policy::offline());
        let support = SupportVerdicts {
            statements: vec![],
            contexts: vec![],
            premise: Default::default(),
            history: Vec::new(),
        };
        assert_send(&judge.support_verdicts(&support));
        let similarity = QuestionSimilarity {
            question: String::new(),
            candidates: vec![],
        };
        assert_send(&judge.question_similarity(&similarity));
        let merge = MergeAnswers {
            question: String::new(),
            answers: vec![],
        };
        assert_send(&judge.merge_answers(&merge));
        let split = SplitStatements {
            question: String::new(),
            text: String::new(),
        };
        assert_send(&judge.split_statements(&split));
    }

    #[tokio::test]
    async fn heuristic_answers_are_counted_and_rules_are_not() {
        let judge = TaskJudge::new(Policy::offline()).with_heuristic(Heuristic::lexical());
        let task = ContextRelevance {
            question: "What is rust?".into(),
            context: "Rust is a programming language.".into(),
        };
        let clone = judge.clone().with_lang(LangChoice::Force(Lang::En));
        assert!(judge.context_relevance(&task).await.is_ok());
        assert!(clone.context_relevance(&task).await.is_ok());
        let nothing = SupportVerdicts {
            statements: vec![],
            contexts: vec![],
            premise: Default::default(),
            history: Vec::new(),
        };
        assert!(judge.support_verdicts(&nothing).await.is_ok());
        let calls = judge.calls();
        assert_eq!(calls.len(), 1);
        assert_eq!(
            calls[&TaskKind::ContextRelevance],
            TaskCalls {
                llm: 0,
                heuristic: 2,
                ..TaskCalls::default()
            }
        );
    }

    /// A checker answers support verdicts whatever the policy prefers, and nothing else;
    /// the one-call contexts check then needs its parts asked separately.
    #[test]
    fn a_checker_answers_support_verdicts_only() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../rageval-judge/tests/fixtures/checkers/deberta-v2-nli"
        );
        let checker = SupportChecker::open(dir).unwrap_or_else(|e| panic!("{e}"));
        let judge = TaskJudge::new(Policy::llm())
            .with_heuristic(Heuristic::lexical())
            .with_checker(checker);
        assert_eq!(
            judge.route(TaskKind::SupportVerdicts).ok(),
            Some(Route::Checker)
        );
        assert_eq!(
            judge.route(TaskKind::ContextRelevance).ok(),
            Some(Route::Heuristic)
        );
        assert!(judge.route(TaskKind::ContextsCheck).is_err());
        let routes = judge.describe();
        let support = routes
            .iter()
            .find(|r| r.task == TaskKind::SupportVerdicts)
            .map(TaskRoute::who)
            .unwrap_or_default();
        assert!(
            support.starts_with("checker deberta-v2 deberta-v2-nli (sha256 "),
            "{support}"
        );
    }
}
