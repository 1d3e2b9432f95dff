//! The two halves of a RAG system under test, as `rageval collect` sees them: a
//! [`Retriever`] turns a question into ranked contexts, a [`Generator`] turns the question
//! and those contexts into an answer.
//!
//! Both are object-safe (`Arc<dyn Retriever>`), so `collect` can pair any retriever with any
//! generator chosen at run time. Implementations here: [`EsRetriever`](crate::EsRetriever),
//! [`LocalRetriever`](crate::LocalRetriever) and [`RagService`](crate::RagService) (a
//! generator, and the source of contexts when the service returns them). A generator that
//! answers with a configured chat model through the judge pipeline implements [`Generator`]
//! the same way ([`BaselineGenerator`](crate::BaselineGenerator)); prompt text belongs to the
//! crate that owns judge tasks, not here.

use rageval_core::{Context, Sample};
use rageval_judge::BoxFuture;
use serde_json::{Map, Value};

use crate::error::SourceError;

/// One retrieved chunk, in retriever order.
#[derive(Debug, Clone, PartialEq)]
pub struct Retrieved {
    /// The retriever's id for the chunk.
    pub id: String,
    /// The chunk's text.
    pub text: String,
    /// The retriever's score, when it gave one.
    pub score: Option<f64>,
    /// Everything else the retriever returned about the chunk (Elasticsearch's filtered
    /// `_source`, the local index's source file and lines).
    pub fields: Map<String, Value>,
}

impl Retrieved {
    /// The dataset's view: id, text and score.
    pub fn to_context(&self) -> Context {
        Context {
            id: Some(self.id.clone()),
            text: self.text.clone(),
            score: self.score.filter(|s| s.is_finite()),
            hop: None,
        }
    }
}

/// What a generator answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Generated {
    /// The answer text (never empty: an empty answer is an error or a retry).
    pub answer: String,
    /// The contexts the system says it used, when it says so.
    pub contexts: Option<Vec<Retrieved>>,
    /// Requests it took (1 unless empty answers or retryable errors were retried).
    pub attempts: u32,
    /// What the generator says about how it answered (the baseline: model, template,
    /// tokens, whether the contexts held the answer); kept in the record's `collected`.
    pub details: Map<String, Value>,
}

/// Turns a question into ranked contexts.
pub trait Retriever: Send + Sync {
    /// What it is, for the collected records and messages (`elasticsearch my-index`, …).
    fn describe(&self) -> String;

    /// The contexts for one question, best first.
    fn retrieve<'a>(
        &'a self,
        sample: &'a Sample,
    ) -> BoxFuture<'a, Result<Vec<Retrieved>, SourceError>>;
}

/// Turns a question and its retrieved contexts into an answer.
pub trait Generator: Send + Sync {
    /// What it is, for the collected records and messages.
    fn describe(&self) -> String;

    /// Answers one question. `contexts` is what the retriever found (empty when contexts come
    /// from the generator itself).
    fn generate<'a>(
        &'a self,
        sample: &'a Sample,
        contexts: &'a [Retrieved],
    ) -> BoxFuture<'a, Result<Generated, SourceError>>;
}
