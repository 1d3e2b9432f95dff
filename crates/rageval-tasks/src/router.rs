//! [`TaskJudge`]: the one entry point for judge tasks. It holds the chat judge (for LLM
//! implementations), the heuristic judge, a [`Policy`] that says which answers which task,
//! and the prompt-pack choice; [`TaskJudge::describe`] says, per task, who answers it and how
//! well that implementation measured, for stderr and the run manifest.
//!
//! Inputs with nothing to judge are answered by a rule without any call (no statements → no
//! verdicts; no contexts → nothing supported, no answer). Everything else goes to the routed
//! implementation. [`ContextsCheck`] has no route of its own: it goes to the chat model when
//! the chat model answers each of its parts (splitting, support verdicts, usefulness), and
//! is unavailable otherwise, so that callers ask the parts separately.
//!
//! With a checker, a chat model and an [`EscalationBand`], support verdicts cascade: the
//! checker scores every statement, the chat judge is asked (once per task) only the
//! statements scored inside the band, and each verdict's reason says which tier gave it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use rageval_judge::{ChatModel, Judge, Models, SupportChecker, TemplateId};
use serde::{Deserialize, Serialize};

use crate::checker::{self, CheckerCache, CheckerInfo, EscalationBand};
use crate::error::TaskError;
use crate::heuristic::Heuristic;
use crate::judged::{HeuristicInfo, Judged};
use crate::llm::{self, LlmTask};
use crate::measured::{Measurement, measurements_for};
use crate::prompt::{Lang, LangChoice, pack};
use crate::rubric::{JudgeRubric, RubricGrade};
use crate::task::{
    Abstention, AbstentionVerdict, AnswerClosedBook, AnswerFromContexts, AnswerRubric,
    ContextAnswer, ContextOrder, ContextRelevance, ContextUsefulness, ContextsCheck,
    ContextsChecked, ExtractEntities, GenerateQuestions, GeneratedQuestions, GradeRelevance,
    GradeRelevanceBatch, MergeAnswers, OrderContexts, PairwisePreference, Preference, Premise,
    QuestionSimilarity, RelevanceGrade, RelevanceVerdict, RubricScore, SimilarityVerdict,
    SplitStatements, SupportVerdict, SupportVerdicts, TaskFamily, TaskKind, TestItemDraft,
    UsefulnessVerdict, WriteTestItem,
};

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

    fn count_claims(&self, by_checker: usize, by_chat: usize) {
        let mut calls = self
            .calls
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let entry = calls.entry(TaskKind::SupportVerdicts).or_default();
        entry.claims_by_checker += by_checker as u64;
        entry.claims_by_chat += by_chat as u64;
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

    /// Routes a task with both implementations (the heuristic one synchronous).
    async fn either<T: LlmTask>(
        &self,
        task: &T,
        heuristic: impl FnOnce(&Heuristic) -> Judged<T::Output>,
    ) -> Result<Judged<T::Output>, TaskError> {
        match self.route(T::KIND)? {
            Route::Llm => self.run_llm(task).await,
            Route::Heuristic => {
                let judged = heuristic(self.heuristic(T::KIND)?);
                self.count(T::KIND, Route::Heuristic);
                Ok(judged)
            }
            Route::Checker => Err(TaskError::Unavailable {
                task: T::KIND,
                why: "a checker model answers support verdicts only".into(),
            }),
        }
    }

    fn heuristic(&self, task: TaskKind) -> Result<&Heuristic, TaskError> {
        self.heuristic.as_ref().ok_or(TaskError::Unavailable {
            task,
            why: "no heuristic judge is configured".into(),
        })
    }

    /// [`SplitStatements`]: a blank text has no statements (no call).
    pub async fn split_statements(
        &self,
        task: &SplitStatements,
    ) -> Result<Judged<Vec<String>>, TaskError> {
        if task.text.trim().is_empty() {
            return Ok(Judged::by_rule(Vec::new(), "a blank text states nothing"));
        }
        self.either(task, |h| h.split_statements(task)).await
    }

    /// [`SupportVerdicts`]: no statements → no verdicts; no contexts → every statement not
    /// supported (no call).
    pub async fn support_verdicts(
        &self,
        task: &SupportVerdicts,
    ) -> Result<Judged<Vec<SupportVerdict>>, TaskError> {
        if task.statements.is_empty() {
            return Ok(Judged::by_rule(Vec::new(), "no statements to check"));
        }
        if task.contexts.iter().all(|c| c.trim().is_empty()) {
            let reason = match task.premise {
                Premise::Contexts => "there is no context to support it".to_string(),
                premise => format!("{} is empty", premise.noun()),
            };
            let verdicts = task
                .statements
                .iter()
                .map(|_| SupportVerdict::unsupported_by_rule(reason.clone()))
                .collect();
            return Ok(Judged::by_rule(verdicts, "no context supports anything"));
        }
        if let (Ok(Route::Checker), Some(checker)) =
            (self.route(TaskKind::SupportVerdicts), &self.checker)
        {
            self.count(TaskKind::SupportVerdicts, Route::Checker);
            return match self.escalation() {
                Some(band) => self.cascade(checker, band, task).await,
                None if self.checker_planned => {
                    self.count_claims(task.statements.len(), 0);
                    Ok(checker::planned(checker, task))
                }
                None => checker::support_verdicts(checker, self.checker_cache.as_ref(), task).await,
            };
        }
        self.either(task, |h| h.support_verdicts(task)).await
    }

    /// Support verdicts by the checker, except those of the statements it scores inside
    /// `band`, which the chat model answers in one call. The answer is the chat model's
    /// (its usage, its template) when it was asked, else the checker's; each reason names
    /// its tier.
    async fn cascade(
        &self,
        checker: &SupportChecker,
        band: EscalationBand,
        task: &SupportVerdicts,
    ) -> Result<Judged<Vec<SupportVerdict>>, TaskError> {
        if band.escalates_every_claim() || self.checker_planned {
            // No score can keep a statement from the chat model, or a dry run plans the
            // most the cascade can send: the checker is not run.
            let answered = self.run_llm(task).await?;
            self.count_claims(0, task.statements.len());
            return Ok(answered.map(|verdicts| {
                verdicts
                    .into_iter()
                    .map(|verdict| SupportVerdict {
                        reason: format!(
                            "escalated to the chat judge (the band {band} escalates every \
                             claim, so the checker was not run): {}",
                            verdict.reason
                        ),
                        ..verdict
                    })
                    .collect()
            }));
        }
        let checked = checker::check_each(checker, self.checker_cache.as_ref(), task).await?;
        let escalated: Vec<usize> = (0..checked.len())
            .filter(|&i| band.escalates(checked[i].support))
            .collect();
        let mut verdicts: Vec<SupportVerdict> = checked
            .iter()
            .map(|checked| SupportVerdict {
                reason: format!(
                    "settled by the checker, outside the escalation band {band}: {}",
                    checked.verdict.reason
                ),
                ..checked.verdict.clone()
            })
            .collect();
        if escalated.is_empty() {
            self.count_claims(verdicts.len(), 0);
            return Ok(checker::checker_judged(checker, verdicts));
        }
        let asked = SupportVerdicts {
            statements: escalated
                .iter()
                .map(|&i| task.statements[i].clone())
                .collect(),
            contexts: task.contexts.clone(),
            premise: task.premise,
        };
        let answered = self.run_llm(&asked).await?;
        self.count_claims(verdicts.len() - escalated.len(), escalated.len());
        let chat_verdicts = answered.value.iter().cloned();
        for (&i, verdict) in escalated.iter().zip(chat_verdicts) {
            verdicts[i] = SupportVerdict {
                reason: format!(
                    "escalated to the chat judge (checker P(supported) {:.3}, inside the band \
                     {band}): {}",
                    checked[i].support, verdict.reason
                ),
                ..verdict
            };
        }
        Ok(answered.map(|_| verdicts))
    }

    /// [`ContextsCheck`], in one chat-model call. Nothing asked → an empty answer (no call);
    /// a part that needs the reference without one, or contexts that are all blank, is an
    /// input error (ask [`TaskJudge::support_verdicts`] then, whose rule covers it).
    pub async fn contexts_check(
        &self,
        task: &ContextsCheck,
    ) -> Result<Judged<ContextsChecked>, TaskError> {
        let input = |why: &str| TaskError::Input {
            task: TaskKind::ContextsCheck,
            why: why.to_owned(),
        };
        let needs_reference = task.split_reference || task.usefulness;
        if !needs_reference && task.statements.is_empty() {
            return Ok(Judged::by_rule(
                ContextsChecked::default(),
                "nothing to check",
            ));
        }
        if needs_reference
            && task
                .reference
                .as_deref()
                .is_none_or(|r| r.trim().is_empty())
        {
            return Err(input(
                "there is no reference to split or to judge usefulness for",
            ));
        }
        if task.contexts.iter().all(|c| c.trim().is_empty()) {
            return Err(input("every context is blank"));
        }
        self.route(TaskKind::ContextsCheck)?;
        self.run_llm(task).await
    }

    /// [`ContextRelevance`].
    pub async fn context_relevance(
        &self,
        task: &ContextRelevance,
    ) -> Result<Judged<RelevanceVerdict>, TaskError> {
        self.either(task, |h| h.context_relevance(task)).await
    }

    /// [`ContextUsefulness`].
    pub async fn context_usefulness(
        &self,
        task: &ContextUsefulness,
    ) -> Result<Judged<UsefulnessVerdict>, TaskError> {
        self.either(task, |h| h.context_usefulness(task)).await
    }

    /// [`JudgeRubric`]: the chat model only; the heuristic judge cannot read a free
    /// criterion, so without a chat model the rubric is unavailable (never guessed).
    pub async fn judge_rubric(&self, task: &JudgeRubric) -> Result<Judged<RubricGrade>, TaskError> {
        match self.route(TaskKind::CustomRubric)? {
            Route::Llm => self.run_llm(task).await,
            Route::Heuristic | Route::Checker => Err(TaskError::Unavailable {
                task: TaskKind::CustomRubric,
                why: "a rubric of one's own needs a chat model; the heuristic judge cannot read \
                      a free criterion"
                    .into(),
            }),
        }
    }

    /// [`AnswerRubric`].
    pub async fn answer_rubric(
        &self,
        task: &AnswerRubric,
    ) -> Result<Judged<RubricScore>, TaskError> {
        self.either(task, |h| h.answer_rubric(task)).await
    }

    /// [`GenerateQuestions`]: `n = 0` → none (no call).
    pub async fn generate_questions(
        &self,
        task: &GenerateQuestions,
    ) -> Result<Judged<GeneratedQuestions>, TaskError> {
        if task.n == 0 {
            let none = GeneratedQuestions {
                questions: Vec::new(),
                noncommittal: false,
            };
            return Ok(Judged::by_rule(none, "no questions were asked for"));
        }
        match self.route(TaskKind::GenerateQuestions)? {
            Route::Llm => self.run_llm(task).await,
            Route::Heuristic | Route::Checker => Err(TaskError::Unavailable {
                task: TaskKind::GenerateQuestions,
                why: "it has no heuristic implementation".into(),
            }),
        }
    }

    /// [`QuestionSimilarity`]: no candidates → no verdicts (no call).
    pub async fn question_similarity(
        &self,
        task: &QuestionSimilarity,
    ) -> Result<Judged<Vec<SimilarityVerdict>>, TaskError> {
        if task.candidates.is_empty() {
            return Ok(Judged::by_rule(Vec::new(), "no candidate questions"));
        }
        match self.route(TaskKind::QuestionSimilarity)? {
            Route::Llm => self.run_llm(task).await,
            Route::Heuristic => {
                let heuristic = self.heuristic(TaskKind::QuestionSimilarity)?;
                self.count(TaskKind::QuestionSimilarity, Route::Heuristic);
                heuristic.question_similarity(task).await
            }
            Route::Checker => Err(TaskError::Unavailable {
                task: TaskKind::QuestionSimilarity,
                why: "a checker model answers support verdicts only".into(),
            }),
        }
    }

    /// [`ExtractEntities`]: a blank text has none (no call).
    pub async fn extract_entities(
        &self,
        task: &ExtractEntities,
    ) -> Result<Judged<Vec<String>>, TaskError> {
        if task.text.trim().is_empty() {
            return Ok(Judged::by_rule(Vec::new(), "a blank text names nothing"));
        }
        self.generation_only(TaskKind::ExtractEntities)?;
        self.run_llm(task).await
    }

    /// [`GradeRelevance`].
    pub async fn grade_relevance(
        &self,
        task: &GradeRelevance,
    ) -> Result<Judged<RelevanceGrade>, TaskError> {
        self.either(task, |h| h.grade_relevance(task)).await
    }

    /// [`PairwisePreference`].
    pub async fn pairwise_preference(
        &self,
        task: &PairwisePreference,
    ) -> Result<Judged<Preference>, TaskError> {
        self.either(task, |h| h.pairwise_preference(task)).await
    }

    /// [`GradeRelevanceBatch`]: no contexts → no grades (no call).
    pub async fn grade_relevance_batch(
        &self,
        task: &GradeRelevanceBatch,
    ) -> Result<Judged<Vec<RelevanceGrade>>, TaskError> {
        if task.contexts.is_empty() {
            return Ok(Judged::by_rule(Vec::new(), "no contexts to grade"));
        }
        self.either(task, |h| h.grade_relevance_batch(task)).await
    }

    /// [`OrderContexts`]: fewer than two contexts are their own order (no call).
    pub async fn order_contexts(
        &self,
        task: &OrderContexts,
    ) -> Result<Judged<ContextOrder>, TaskError> {
        if task.contexts.len() < 2 {
            let order = ContextOrder {
                order: (0..task.contexts.len()).collect(),
                reason: "fewer than two contexts have one order".into(),
            };
            return Ok(Judged::by_rule(order, "fewer than two contexts"));
        }
        self.either(task, |h| h.order_contexts(task)).await
    }

    /// [`AnswerFromContexts`]: no contexts → unknown (no call).
    pub async fn answer_from_contexts(
        &self,
        task: &AnswerFromContexts,
    ) -> Result<Judged<ContextAnswer>, TaskError> {
        if task.contexts.iter().all(|c| c.trim().is_empty()) {
            return Ok(Judged::by_rule(
                ContextAnswer { answer: None },
                "no context, so the answer is unknown",
            ));
        }
        self.generation_only(TaskKind::AnswerFromContexts)?;
        self.run_llm(task).await
    }

    /// [`MergeAnswers`]: one answer is its own merge (no call); none is an input error.
    pub async fn merge_answers(&self, task: &MergeAnswers) -> Result<Judged<String>, TaskError> {
        let answers: Vec<&String> = task
            .answers
            .iter()
            .filter(|a| !a.trim().is_empty())
            .collect();
        match answers.as_slice() {
            [] => Err(TaskError::Input {
                task: TaskKind::MergeAnswers,
                why: "there are no answers to merge".into(),
            }),
            [one] => Ok(Judged::by_rule(
                one.trim().to_owned(),
                "a single answer is its own merge",
            )),
            _ => {
                self.generation_only(TaskKind::MergeAnswers)?;
                self.run_llm(task).await
            }
        }
    }

    /// [`WriteTestItem`]: no passage is an input error (nothing to write from).
    pub async fn write_test_item(
        &self,
        task: &WriteTestItem,
    ) -> Result<Judged<TestItemDraft>, TaskError> {
        if task.passages.iter().all(|p| p.trim().is_empty()) {
            return Err(TaskError::Input {
                task: TaskKind::WriteTestItem,
                why: "there is no passage to write from".into(),
            });
        }
        self.generation_only(TaskKind::WriteTestItem)?;
        self.run_llm(task).await
    }

    /// [`AnswerClosedBook`]: the model's own answer, `None` when it says it does not know.
    pub async fn answer_closed_book(
        &self,
        task: &AnswerClosedBook,
    ) -> Result<Judged<Option<String>>, TaskError> {
        self.generation_only(TaskKind::AnswerClosedBook)?;
        self.run_llm(task).await
    }

    /// [`Abstention`]: both decisions by the routed implementation (the heuristic judge
    /// decides only whether the answer declines, and says it cannot tell the other).
    pub async fn abstention(
        &self,
        task: &Abstention,
    ) -> Result<Judged<AbstentionVerdict>, TaskError> {
        self.either(task, |h| h.abstention(task)).await
    }

    /// Checks that a task with only an LLM implementation can be answered.
    fn generation_only(&self, task: TaskKind) -> Result<(), TaskError> {
        self.route(task).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send<T: Send>(_: &T) {}

    /// Callers spawn task calls on a multi-threaded runtime: every future must be `Send`.
    #[test]
    fn task_futures_are_send() {
        let judge = TaskJudge::new(Policy::offline());
        let support = SupportVerdicts {
            statements: vec![],
            contexts: vec![],
            premise: Default::default(),
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

    #[test]
    fn overrides_beat_the_family_route() {
        let mut policy = Policy::offline();
        assert_eq!(
            policy.preferred(TaskKind::SupportVerdicts),
            Route::Heuristic
        );
        assert_eq!(policy.preferred(TaskKind::SplitStatements), Route::Llm);
        policy
            .overrides
            .insert(TaskKind::SplitStatements, Route::Heuristic);
        assert_eq!(
            policy.preferred(TaskKind::SplitStatements),
            Route::Heuristic
        );
        let json = serde_json::to_value(&policy).unwrap_or_default();
        assert_eq!(json["overrides"]["split_statements"], "heuristic");
    }
}
