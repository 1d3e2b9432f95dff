//! The [`Metric`] trait and the description every metric carries.

use rageval_core::{Outcome, Sample};

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
        }
    }

    /// Whether `sample` has this input (non-empty).
    pub fn present_in(self, sample: &Sample) -> bool {
        match self {
            Input::Question => !sample.question.trim().is_empty(),
            Input::Contexts => !sample.contexts.is_empty(),
            Input::ContextIds => !sample.contexts.is_empty() && sample.context_ids().is_some(),
            Input::Answer => sample
                .answer
                .as_deref()
                .is_some_and(|a| !a.trim().is_empty()),
            Input::Reference => sample.references.iter().any(|r| !r.trim().is_empty()),
            Input::ReferenceContexts => !sample.reference_contexts.is_empty(),
            Input::ReferenceContextIds => !sample.reference_context_ids.is_empty(),
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
    /// Whether it asks a model (none do yet; the judged metrics set this).
    pub needs_model: bool,
}

impl MetricInfo {
    /// The first input `sample` lacks, if any.
    pub fn missing_input(&self, sample: &Sample) -> Option<Input> {
        self.inputs
            .iter()
            .copied()
            .find(|input| !input.present_in(sample))
    }
}

/// One metric, configured and ready to score samples.
pub trait Metric: Send + Sync {
    fn info(&self) -> &'static MetricInfo;

    /// The name results are filed under: the catalogue name plus any cut-off (`id_ndcg@10`).
    fn name(&self) -> String {
        self.info().name.to_string()
    }

    /// Scores one sample. Never panics; a sample lacking an input gets `Undefined`.
    fn score(&self, sample: &Sample) -> Outcome;
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
}

fn suggestion(closest: &Option<&'static str>) -> String {
    closest
        .map(|name| format!(" (did you mean `{name}`?)"))
        .unwrap_or_default()
}

/// Evaluates `score` only when `sample` has every input the metric needs.
pub(crate) fn with_inputs(
    info: &MetricInfo,
    sample: &Sample,
    score: impl FnOnce() -> Outcome,
) -> Outcome {
    match info.missing_input(sample) {
        Some(input) => Outcome::undefined(format!("sample has no {}", input.field_name())),
        None => score(),
    }
}
