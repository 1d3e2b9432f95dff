//! The judges of a run ([`Judges`]): the task router, the embedding models and the
//! prompt-pack choice, and which per-context judgements a planned run asks in one
//! `contexts_check` call per sample ([`ContextsPlan`]). They compute nothing themselves:
//! [`ScoringContext`](super::ScoringContext) does, per sample.

use std::fmt;

use rageval_core::Sample;
use rageval_judge::{Judge, Models};
use rageval_tasks::{Implementation, LangChoice, Route, TaskJudge, TaskKind};

use super::DEFAULT_GENERATED_QUESTIONS;
use crate::metric::Requirements;

/// Who answered a task, in a few words for evidence.
pub fn describe(by: &Implementation) -> String {
    match by {
        Implementation::Llm {
            backend,
            model,
            template,
            after_thinking,
            ..
        } => match after_thinking {
            Some(source) => format!(
                "llm {backend}:{model} {template}, after thinking ({})",
                source.describe()
            ),
            None => format!("llm {backend}:{model} {template}"),
        },
        Implementation::Heuristic(info) => format!("heuristic {} v{}", info.name, info.version),
        Implementation::Checker(info) => info.who(),
        Implementation::Rule { rule } => format!("rule: {rule}"),
    }
}

/// The judges of a run: the task router, the embedding model and the prompt-pack choice.
/// Cheap to clone.
#[derive(Clone)]
pub struct Judges {
    pub(super) tasks: Option<TaskJudge>,
    pub(super) embedder: Option<Judge<Models>>,
    /// Embeds every call that holds Chinese text, in place of `embedder`.
    pub(super) chinese_embedder: Option<Judge<Models>>,
    pub(super) lang: LangChoice,
    pub(super) questions: usize,
    pub(super) plan: ContextsPlan,
}

/// Which per-context judgements a run needs from each sample.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct ContextsPlan {
    /// Each context's usefulness for the reference (context precision).
    pub(super) usefulness: bool,
    /// The reference's statements against the contexts (context recall).
    pub(super) reference: bool,
    /// The answer's statements against the contexts (faithfulness).
    pub(super) answer: bool,
}

impl ContextsPlan {
    /// The parts one `contexts_check` call answers for `sample`, when that call is worth
    /// making: two parts or more, every context non-blank, the chat model answering it.
    pub(super) fn for_sample(self, tasks: &TaskJudge, sample: &Sample) -> Option<ContextsPlan> {
        let has_reference = sample
            .reference_text()
            .is_some_and(|r| !r.trim().is_empty());
        let parts = ContextsPlan {
            usefulness: self.usefulness && has_reference,
            reference: self.reference && (has_reference || sample.reference_statements.is_some()),
            answer: self.answer,
        };
        let count = [parts.usefulness, parts.reference, parts.answer]
            .into_iter()
            .filter(|on| *on)
            .count();
        let contexts = !sample.contexts.is_empty()
            && sample.contexts.iter().all(|c| !c.text.trim().is_empty());
        let chat = matches!(tasks.route(TaskKind::ContextsCheck), Ok(Route::Llm));
        // A turn of a conversation is judged with its resolved question, which the shared
        // call does not carry.
        let alone = sample.history.is_empty();
        (count >= 2 && contexts && chat && alone).then_some(parts)
    }
}

impl fmt::Debug for Judges {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use rageval_judge::Embedder;
        f.debug_struct("Judges")
            .field("tasks", &self.tasks)
            .field(
                "embedder",
                &self.embedder.as_ref().map(|j| j.model().embedding_model()),
            )
            .field(
                "chinese_embedder",
                &self
                    .chinese_embedder
                    .as_ref()
                    .map(|j| j.model().embedding_model()),
            )
            .field("lang", &self.lang)
            .field("questions", &self.questions)
            .field("plan", &self.plan)
            .finish()
    }
}

impl Judges {
    /// No judge at all: enough for model-free metrics; judged ones fail saying so.
    pub fn none() -> Self {
        Judges {
            tasks: None,
            embedder: None,
            chinese_embedder: None,
            lang: LangChoice::Auto,
            questions: DEFAULT_GENERATED_QUESTIONS,
            plan: ContextsPlan::default(),
        }
    }

    /// Judge tasks answered by `tasks`.
    pub fn new(tasks: TaskJudge) -> Self {
        Judges {
            tasks: Some(tasks),
            ..Judges::none()
        }
    }

    /// The embedding models by the text they embed: `("text", MODEL)` and, when Chinese
    /// text has its own, `("Chinese text", MODEL)`.
    pub fn embedders(&self) -> Vec<(&'static str, String)> {
        use rageval_judge::Embedder;
        let name = |judge: &Judge<Models>| judge.model().embedding_model().to_owned();
        let mut embedders: Vec<(&'static str, String)> =
            self.embedder.iter().map(|j| ("text", name(j))).collect();
        embedders.extend(
            self.chinese_embedder
                .iter()
                .map(|j| ("Chinese text", name(j))),
        );
        embedders
    }

    /// Embeddings from `judge`'s embedding model (ignored when it has none).
    pub fn with_embedder(mut self, judge: Judge<Models>) -> Self {
        self.embedder = judge.model().embedder.is_some().then_some(judge);
        self
    }

    /// Embeddings of Chinese text from `judge`'s embedding model (ignored when it has none):
    /// a call with any text in Chinese script goes to it whole, so the texts a metric
    /// compares (one call) are always embedded by one model, whatever their languages.
    pub fn with_chinese_embedder(mut self, judge: Judge<Models>) -> Self {
        self.chinese_embedder = judge.model().embedder.is_some().then_some(judge);
        self
    }

    /// The prompt pack: per sample from the question's script (`Auto`), or forced.
    pub fn with_lang(mut self, lang: LangChoice) -> Self {
        self.lang = lang;
        self
    }

    /// Prepares for a run of `metrics`: the per-context judgements they need (usefulness
    /// for the reference, the answer's and the reference's statements against the contexts)
    /// go to the judge together, in one `contexts_check` call per sample when the chat model
    /// answers it, else the two statement lists in one support call; either way the
    /// contexts are sent once.
    pub fn plan_for(mut self, metrics: &[Box<dyn crate::Metric>]) -> Self {
        let needs =
            |side: fn(&Requirements) -> bool| metrics.iter().any(|m| side(&m.requirements()));
        self.plan = ContextsPlan {
            usefulness: needs(|r| r.reference_usefulness),
            reference: needs(|r| r.reference_by_contexts),
            answer: needs(|r| r.answer_by_contexts),
        };
        self
    }

    /// The task router, if any.
    pub fn tasks(&self) -> Option<&TaskJudge> {
        self.tasks.as_ref()
    }

    /// The embedding judge, if any.
    pub fn embedder(&self) -> Option<&Judge<Models>> {
        self.embedder.as_ref()
    }

    /// Why these judges cannot meet `requirements`, or `None` when they can.
    pub fn unmet(&self, requirements: &Requirements) -> Option<String> {
        if requirements.embeddings && self.embedder.is_none() {
            return Some("it needs an embedding model and none is configured".into());
        }
        for task in &requirements.tasks {
            match &self.tasks {
                None => return Some("it needs a judge and none is configured".into()),
                Some(tasks) => {
                    if let Err(error) = tasks.route(*task) {
                        return Some(error.to_string());
                    }
                }
            }
        }
        None
    }
}
