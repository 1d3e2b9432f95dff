//! The offline heuristic judge: answers the verdict tasks (and statement splitting) without
//! a chat model, by content-word overlap (stop words removed, jieba for Chinese) and — for
//! question similarity, when an embedding model is configured — cosine similarity.
//!
//! Why it exists: measured on human-labelled pairs it beats a tiny local chat model by far
//! (see [`measured`](crate::measured) and `docs/judges.md`). Each task's rule and its named
//! thresholds live in the task's file (`src/task/NAME.rs`, a method of [`Heuristic`]) and
//! are re-exported here; every verdict's reason states the share it measured and the
//! threshold it met or missed. Changing a rule or a threshold bumps [`HEURISTIC_VERSION`].
//!
//! This module holds what the rules share:
//! - `words`: content words, inflection folding, coverage of one text by another.
//! - `stopwords`: the English and Chinese stop-word table.
//! - `sentences`: the sentence splitter that stands in for statement splitting.
//! - [`support`](mod@support): a statement's coverage by the contexts — one measurement
//!   giving the support label and the degree of support graded metrics read.
//! - `overlap`: the question's and the answer's words found in a context, and focus.
//!
//! It writes no text beyond sentence splitting: questions, entities and answers need a
//! model.

pub(crate) mod overlap;
pub(crate) mod sentences;
mod stopwords;
pub mod support;
pub(crate) mod words;

use rageval_judge::{Judge, Models, Usage};

pub use crate::task::abstention::{REFUSAL, UNDECIDED_SUPPORT};
pub use crate::task::answer_rubric::NONCOMMITTAL;
pub use crate::task::context_relevance::RELEVANT_MIN;
pub use crate::task::context_usefulness::USEFUL_MIN;
pub use crate::task::grade_relevance::GRADE_BAND;
pub use crate::task::pairwise_preference::PAIRWISE_MARGIN;
pub use crate::task::question_similarity::{SIMILAR_COSINE, SIMILAR_OVERLAP};
pub use crate::task::support_verdicts::{SUPPORT_DEGREE, SUPPORT_FULL, SUPPORT_PARTIAL};

use crate::judged::{HeuristicInfo, Implementation, Judged, Threshold};
use crate::prompt::Lang;
use crate::task::TaskKind;

/// Version of the heuristic rules and thresholds, reported with every verdict. 4: words are
/// cut at sentences glued without a space (`Hawaii.Aulani`), which changes verdicts on such
/// text (one WikiEval answer-relevance pair).
pub const HEURISTIC_VERSION: u32 = 4;

/// A threshold (or rule) per script: English (and any non-Chinese text) and Chinese. Each
/// value was chosen on the development half of the shared labelled sets
/// ([`validation::choose`](crate::validation::choose)); `docs/judges.md` has the figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ByScript<T = f64> {
    /// For English and other non-Chinese text.
    pub en: T,
    /// For Chinese text.
    pub zh: T,
}

impl<T: Copy> ByScript<T> {
    /// The value for `lang`.
    pub fn get(self, lang: Lang) -> T {
        match lang {
            Lang::En => self.en,
            Lang::Zh => self.zh,
        }
    }

    /// The value for the script of `text` (Chinese when Han characters dominate).
    pub fn for_text(self, text: &str) -> T {
        self.get(Lang::detect(text))
    }
}

/// The threshold the heuristic's rule for `task` uses on `lang` text — the value the
/// development sweep chose (a band width for grades, a margin for preferences); `None` for
/// a task whose rule has no such threshold or was not chosen by the sweep.
pub fn chosen_threshold(task: TaskKind, lang: Lang) -> Option<f64> {
    task.swept_threshold().map(|table| table.get(lang))
}

/// A rule as provenance names it: `name` at [`HEURISTIC_VERSION`] with its `thresholds`.
pub(crate) fn rule(name: &str, thresholds: Vec<Threshold>) -> HeuristicInfo {
    HeuristicInfo {
        name: name.to_owned(),
        version: HEURISTIC_VERSION,
        thresholds,
        embedder: None,
    }
}

/// One named threshold.
pub(crate) fn threshold(name: &str, value: f64) -> Threshold {
    Threshold {
        name: name.to_owned(),
        value,
    }
}

/// A threshold per script, as `NAME.en` and `NAME.zh`.
pub(crate) fn by_script(name: &str, values: ByScript) -> Vec<Threshold> {
    vec![
        threshold(&format!("{name}.en"), values.en),
        threshold(&format!("{name}.zh"), values.zh),
    ]
}

/// The heuristic judge. Cheap to clone.
#[derive(Clone, Default)]
pub struct Heuristic {
    embeddings: Option<Judge<Models>>,
}

impl std::fmt::Debug for Heuristic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Heuristic")
            .field("embedder", &self.embedder_name())
            .finish()
    }
}

impl Heuristic {
    /// Content-word overlap only: no model of any kind.
    pub fn lexical() -> Self {
        Heuristic { embeddings: None }
    }

    /// Overlap, plus cosine similarity from `judge`'s embedding model where a rule uses it
    /// (question similarity). Embeddings go through the judge: cached, limited, retried.
    /// A judge without an embedding model gives the lexical heuristic.
    pub fn with_embeddings(judge: Judge<Models>) -> Self {
        Heuristic {
            embeddings: judge.model().embedder.is_some().then_some(judge),
        }
    }

    /// Whether a heuristic implementation of `task` exists.
    pub fn supports(task: TaskKind) -> bool {
        task.heuristic_info(&Heuristic::lexical()).is_some()
    }

    /// The judge whose embedding model a rule may use.
    pub(crate) fn embeddings(&self) -> Option<&Judge<Models>> {
        self.embeddings.as_ref()
    }

    /// The embedding model's name, when one is configured.
    pub(crate) fn embedder_name(&self) -> Option<String> {
        self.embeddings.as_ref().map(|judge| {
            use rageval_judge::Embedder;
            judge.model().embedding_model().to_owned()
        })
    }

    /// Name, version and thresholds of the implementation of `task`, or `None` when there
    /// is none.
    pub fn info(&self, task: TaskKind) -> Option<HeuristicInfo> {
        task.heuristic_info(self)
    }

    /// `value` as this judge's answer to `task`; `cached` when every embedding it read came
    /// from the cache.
    pub(crate) fn judged<T>(&self, task: TaskKind, value: T, cached: bool) -> Judged<T> {
        let info = self.info(task).unwrap_or_else(|| rule("none", Vec::new()));
        Judged {
            value,
            by: Implementation::Heuristic(info),
            rung: None,
            usage: Usage::default(),
            cached,
        }
    }
}

/// The sentences of `text` as the heuristic splits statements (see `sentences`), for
/// metrics that attach something to each sentence (citation markers).
pub fn sentences(text: &str) -> Vec<String> {
    sentences::sentences(text)
}

/// Cosine similarity; 0 when either vector is zero or they differ in length.
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    if a.len() != b.len() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0.0f64, 0.0f64, 0.0f64);
    for (&x, &y) in a.iter().zip(b) {
        let (x, y) = (f64::from(x), f64::from(y));
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}
