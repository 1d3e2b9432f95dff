//! The [`Metric`] trait and the description every metric carries.
//!
//! Every metric is scored through [`Metric::score`], which returns a future: judged metrics
//! ask a model, model-free ones answer at once. Model-free metrics implement the simpler
//! [`ModelFree`] (a plain function of the sample) and get [`Metric`] for free.

use rageval_core::{Outcome, Sample};
use rageval_judge::BoxFuture;
use rageval_tasks::TaskKind;

use crate::scoring::ScoringContext;

/// A sample field a metric reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    Question,
    Contexts,
    ContextIds,
    Answer,
    Reference,
    ReferenceContexts,
    ReferenceContextIds,
    /// The expected tool calls.
    ReferenceToolCalls,
    /// The conversation the sample is a turn of.
    Conversation,
}

impl Input {
    /// The field's name in rageval's own dataset format.
    pub fn field_name(self) -> &'static str {
        match self {
            Input::Question => "question",
            Input::Contexts => "retrieved_contexts",
            Input::ContextIds => "retrieved_context_ids",
            Input::Answer => "response",
            Input::Reference => "reference",
            Input::ReferenceContexts => "reference_contexts",
            Input::ReferenceContextIds => "reference_context_ids",
            Input::ReferenceToolCalls => "reference_tool_calls",
            Input::Conversation => "conversation_id",
        }
    }

    /// Whether `sample` has this input (non-empty).
    pub fn present_in(self, sample: &Sample) -> bool {
        match self {
            Input::Question => !sample.question.trim().is_empty(),
            // ID-only data gives contexts without text: a metric that reads the text has
            // nothing to read, as when the sample has no contexts at all.
            Input::Contexts => sample.contexts.iter().any(|c| !c.text.trim().is_empty()),
            Input::ContextIds => !sample.contexts.is_empty() && sample.context_ids().is_some(),
            Input::Answer => sample
                .answer
                .as_deref()
                .is_some_and(|a| !a.trim().is_empty()),
            Input::Reference => sample.references.iter().any(|r| !r.trim().is_empty()),
            Input::ReferenceContexts => !sample.reference_contexts.is_empty(),
            Input::ReferenceContextIds => !sample.reference_context_ids.is_empty(),
            Input::ReferenceToolCalls => !sample.reference_tool_calls.is_empty(),
            Input::Conversation => sample.conversation_id.is_some(),
        }
    }
}

/// What a metric is, for people: shown by `rageval metrics` and written to run manifests.
#[derive(Debug, Clone, Copy)]
pub struct MetricInfo {
    /// The name used in `--metrics`, in results and in summaries.
    pub name: &'static str,
    /// Other names accepted in `--metrics` (e.g. ragas's).
    pub aliases: &'static [&'static str],
    /// One line: what the score says.
    pub summary: &'static str,
    pub inputs: &'static [Input],
    /// The formula, in plain text.
    pub formula: &'static str,
    /// Where the definition comes from.
    pub source: &'static str,
    /// Whether the name takes a rank cut-off, `NAME@k`.
    pub takes_cutoff: bool,
    /// Whether it asks a model (a judge task or an embedding).
    pub needs_model: bool,
    /// The definitions it can compute, selected in `--metrics` as `NAME:MODE`; the first is
    /// the default, filed under the bare name. Empty for metrics with one definition.
    pub modes: &'static [ModeInfo],
}

/// One definition of a metric that has several (`answer_relevance:embedding`).
#[derive(Debug, Clone, Copy)]
pub struct ModeInfo {
    /// The name after the colon.
    pub name: &'static str,
    /// One line: what this mode measures.
    pub summary: &'static str,
    /// The formula, in plain text.
    pub formula: &'static str,
    /// Where the definition comes from.
    pub source: &'static str,
}

impl MetricInfo {
    /// The name results of mode `mode` (an index into `modes`) are filed under: the bare
    /// name for the default mode, `NAME:MODE` for the others.
    pub fn mode_name(&self, mode: usize) -> String {
        match self.modes.get(mode) {
            Some(info) if mode > 0 => format!("{}:{}", self.name, info.name),
            _ => self.name.to_owned(),
        }
    }

    /// The formula and source of mode `mode` (the metric's own when it has no modes).
    pub fn mode_formula(&self, mode: usize) -> (&'static str, &'static str) {
        match self.modes.get(mode) {
            Some(info) => (info.formula, info.source),
            None => (self.formula, self.source),
        }
    }

    /// The first input `sample` lacks, if any.
    pub fn missing_input(&self, sample: &Sample) -> Option<Input> {
        self.inputs
            .iter()
            .copied()
            .find(|input| !input.present_in(sample))
    }
}

/// What a metric needs from the judge besides the sample.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Requirements {
    /// Judge tasks it asks (in the order it asks them).
    pub tasks: Vec<TaskKind>,
    /// Whether it embeds text.
    pub embeddings: bool,
    /// Whether it judges the answer's statements against the retrieved contexts.
    pub answer_by_contexts: bool,
    /// Whether it judges the reference's statements against the retrieved contexts.
    pub reference_by_contexts: bool,
    /// Whether it judges each context's usefulness for the reference.
    pub reference_usefulness: bool,
    /// Whether, on a turn with a history, it judges the question made standalone
    /// ([`TaskKind::ResolveQuestion`], asked only of such turns, so not in `tasks`).
    pub resolves_question: bool,
}

/// One metric, configured and ready to score samples.
pub trait Metric: Send + Sync {
    fn info(&self) -> &'static MetricInfo;

    /// The name results are filed under: the catalogue name plus any mode other than the
    /// default (`answer_relevance:embedding`) or cut-off (`id_ndcg@10`).
    fn name(&self) -> String {
        self.info().name.to_string()
    }

    /// The mode's formula and source when the metric has modes (else the metric's own).
    fn formula(&self) -> (&'static str, &'static str) {
        (self.info().formula, self.info().source)
    }

    /// The judge tasks and embeddings it needs (none for model-free metrics).
    fn requirements(&self) -> Requirements {
        Requirements::default()
    }

    /// What defines it beyond its name when that can differ between runs (a rubric's
    /// hash): a run records it in its identity, so an edited definition is not resumed
    /// into an old run. `None` for the catalogue's metrics, whose name says it all.
    fn definition(&self) -> Option<String> {
        None
    }

    /// Scores one sample. Never panics; a sample lacking an input gets `Undefined`, a judge
    /// that gives no usable answer `Failed`. `scoring` holds the judges and the results
    /// shared with the sample's other metrics.
    fn score<'a>(
        &'a self,
        sample: &'a Sample,
        scoring: &'a ScoringContext,
    ) -> BoxFuture<'a, Outcome>;

    /// The score at once, for model-free metrics; `None` for judged ones.
    fn score_now(&self, sample: &Sample) -> Option<Outcome> {
        let _ = sample;
        None
    }
}

/// A metric computed from the sample alone, synchronously.
pub trait ModelFree: Send + Sync {
    fn info(&self) -> &'static MetricInfo;

    /// Its mode, an index into the info's `modes` (0, the default, when it has none).
    fn mode(&self) -> usize {
        0
    }

    /// See [`Metric::name`].
    fn name(&self) -> String {
        self.info().mode_name(self.mode())
    }

    /// See [`Metric::formula`].
    fn formula(&self) -> (&'static str, &'static str) {
        self.info().mode_formula(self.mode())
    }

    /// Scores one sample. Never panics; a sample lacking an input gets `Undefined`.
    fn score(&self, sample: &Sample) -> Outcome;
}

impl<T: ModelFree> Metric for T {
    fn info(&self) -> &'static MetricInfo {
        ModelFree::info(self)
    }

    fn name(&self) -> String {
        ModelFree::name(self)
    }

    fn formula(&self) -> (&'static str, &'static str) {
        ModelFree::formula(self)
    }

    fn score<'a>(&'a self, sample: &'a Sample, _: &'a ScoringContext) -> BoxFuture<'a, Outcome> {
        let outcome = ModelFree::score(self, sample);
        Box::pin(std::future::ready(outcome))
    }

    fn score_now(&self, sample: &Sample) -> Option<Outcome> {
        Some(ModelFree::score(self, sample))
    }
}

/// A metric spec that names nothing in the catalogue, or misuses a cut-off.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum MetricError {
    #[error("unknown metric `{name}`{}", suggestion(.closest))]
    Unknown {
        name: String,
        closest: Option<&'static str>,
    },
    #[error("metric `{name}` takes no cut-off, but `{spec}` gives one")]
    UnexpectedCutoff { name: &'static str, spec: String },
    #[error("cut-off in `{spec}` must be a whole number of at least 1")]
    BadCutoff { spec: String },
    #[error("metric `{name}` has no mode `{mode}` ({})", mode_list(.modes))]
    UnknownMode {
        name: &'static str,
        mode: String,
        modes: Vec<&'static str>,
    },
}

fn mode_list(modes: &[&str]) -> String {
    if modes.is_empty() {
        "it has no modes".into()
    } else {
        format!("modes: {}", modes.join(", "))
    }
}

fn suggestion(closest: &Option<&'static str>) -> String {
    closest
        .map(|name| format!(" (did you mean `{name}`?)"))
        .unwrap_or_default()
}

/// `Undefined` naming the first input `sample` lacks, or `None` when it has them all.
pub(crate) fn lacking_input(info: &MetricInfo, sample: &Sample) -> Option<Outcome> {
    info.missing_input(sample)
        .map(|input| Outcome::undefined(format!("sample has no {}", input.field_name())))
}

/// Evaluates `score` only when `sample` has every input the metric needs.
pub(crate) fn with_inputs(
    info: &MetricInfo,
    sample: &Sample,
    score: impl FnOnce() -> Outcome,
) -> Outcome {
    lacking_input(info, sample).unwrap_or_else(score)
}

#[cfg(test)]
mod tests {
    use rageval_core::Context;

    use super::*;

    /// Regression (found by the Ray/Spark tests, 2026-11-28): a row with
    /// `retrieved_context_ids` but an empty `retrieved_contexts` list scored faithfulness 0
    /// ("no context supports it") instead of being undefined like the same row without ids.
    #[test]
    fn contexts_known_by_id_alone_have_no_text_to_read() {
        let id_only = |id: &str| Context {
            id: Some(id.into()),
            text: String::new(),
            score: None,
            hop: None,
        };
        let mut sample = Sample {
            contexts: vec![id_only("c1"), id_only("c2")],
            ..Sample::default()
        };
        assert!(!Input::Contexts.present_in(&sample));
        assert!(Input::ContextIds.present_in(&sample));
        sample.contexts[1].text = "Paris is the capital of France.".into();
        assert!(Input::Contexts.present_in(&sample));
    }
}
