//! Backends chosen at run time behind one type: [`Models`] pairs an optional chat model with
//! an optional embedding model, each type-erased ([`AnyChatModel`], [`AnyEmbedder`]), so a
//! single `Judge<Models>` serves an OpenAI-compatible endpoint, a local model or a pool of
//! endpoints, and callers (metrics, rankers) hold it without a type parameter.
//!
//! Erasure costs one boxed future per attempt, nothing beside an HTTP call or a local
//! decode. This module only forwards calls; it must not cache, retry or limit — the
//! [`Judge`](crate::Judge) does that once for every backend.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::chat::{ChatModel, ChatRequest, ChatResponse, Embedder};
use crate::error::JudgeError;
use crate::forms::LearnedForm;

/// A boxed, sendable future: what the erased backends return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// [`ChatModel`] with its future boxed, so it can live behind `dyn`.
trait ErasedChat: Send + Sync + 'static {
    fn erased_kind(&self) -> &str;
    fn erased_model(&self) -> &str;
    fn erased_endpoint(&self) -> String;
    fn erased_supports_response_schema(&self) -> bool;
    fn erased_limits_itself(&self) -> bool;
    fn erased_answers_repeat(&self) -> bool;
    fn erased_learned_forms(&self) -> Vec<LearnedForm>;
    fn erased_adopt_forms(&self, forms: &[LearnedForm]);
    fn erased_learn_from_refusal(&self, body: &str, sent: &serde_json::Value) -> bool;
    fn erased_chat<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, JudgeError>>;
}

impl<T: ChatModel> ErasedChat for T {
    fn erased_kind(&self) -> &str {
        self.kind()
    }
    fn erased_model(&self) -> &str {
        self.model()
    }
    fn erased_endpoint(&self) -> String {
        self.endpoint()
    }
    fn erased_supports_response_schema(&self) -> bool {
        self.supports_response_schema()
    }
    fn erased_limits_itself(&self) -> bool {
        self.limits_itself()
    }
    fn erased_answers_repeat(&self) -> bool {
        self.answers_repeat()
    }
    fn erased_learned_forms(&self) -> Vec<LearnedForm> {
        self.learned_forms()
    }
    fn erased_adopt_forms(&self, forms: &[LearnedForm]) {
        self.adopt_forms(forms);
    }
    fn erased_learn_from_refusal(&self, body: &str, sent: &serde_json::Value) -> bool {
        self.learn_from_refusal(body, sent)
    }
    fn erased_chat<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, JudgeError>> {
        Box::pin(self.chat(request))
    }
}

/// [`Embedder`] with its future boxed.
trait ErasedEmbedder: Send + Sync + 'static {
    fn erased_kind(&self) -> &str;
    fn erased_model(&self) -> &str;
    fn erased_limits_itself(&self) -> bool;
    fn erased_embed<'a>(
        &'a self,
        inputs: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, JudgeError>>;
}

impl<T: Embedder> ErasedEmbedder for T {
    fn erased_kind(&self) -> &str {
        self.embedding_kind()
    }
    fn erased_model(&self) -> &str {
        self.embedding_model()
    }
    fn erased_limits_itself(&self) -> bool {
        self.embedding_limits_itself()
    }
    fn erased_embed<'a>(
        &'a self,
        inputs: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, JudgeError>> {
        Box::pin(self.embed(inputs))
    }
}

/// Any chat backend, shared. Cheap to clone.
#[derive(Clone)]
pub struct AnyChatModel(Arc<dyn ErasedChat>);

impl AnyChatModel {
    /// Wraps `model`.
    pub fn new(model: impl ChatModel) -> Self {
        AnyChatModel(Arc::new(model))
    }
}

impl fmt::Debug for AnyChatModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnyChatModel")
            .field("kind", &self.0.erased_kind())
            .field("model", &self.0.erased_model())
            .field("endpoint", &self.0.erased_endpoint())
            .finish()
    }
}

impl ChatModel for AnyChatModel {
    fn kind(&self) -> &str {
        self.0.erased_kind()
    }
    fn model(&self) -> &str {
        self.0.erased_model()
    }
    fn endpoint(&self) -> String {
        self.0.erased_endpoint()
    }
    fn supports_response_schema(&self) -> bool {
        self.0.erased_supports_response_schema()
    }
    fn limits_itself(&self) -> bool {
        self.0.erased_limits_itself()
    }
    fn answers_repeat(&self) -> bool {
        self.0.erased_answers_repeat()
    }
    fn learned_forms(&self) -> Vec<LearnedForm> {
        self.0.erased_learned_forms()
    }
    fn adopt_forms(&self, forms: &[LearnedForm]) {
        self.0.erased_adopt_forms(forms);
    }
    fn learn_from_refusal(&self, body: &str, sent: &serde_json::Value) -> bool {
        self.0.erased_learn_from_refusal(body, sent)
    }
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, JudgeError> {
        self.0.erased_chat(request).await
    }
}

/// Any embedding backend, shared. Cheap to clone.
#[derive(Clone)]
pub struct AnyEmbedder(Arc<dyn ErasedEmbedder>);

impl AnyEmbedder {
    /// Wraps `embedder`.
    pub fn new(embedder: impl Embedder) -> Self {
        AnyEmbedder(Arc::new(embedder))
    }
}

impl fmt::Debug for AnyEmbedder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnyEmbedder")
            .field("kind", &self.0.erased_kind())
            .field("model", &self.0.erased_model())
            .finish()
    }
}

impl Embedder for AnyEmbedder {
    fn embedding_kind(&self) -> &str {
        self.0.erased_kind()
    }
    fn embedding_model(&self) -> &str {
        self.0.erased_model()
    }
    fn embedding_limits_itself(&self) -> bool {
        self.0.erased_limits_itself()
    }
    async fn embed(&self, inputs: &[String]) -> Result<Vec<Vec<f32>>, JudgeError> {
        self.0.erased_embed(inputs).await
    }
}

/// The models one judge uses: a chat model and an embedding model, either of which may be
/// absent (a run of embedding-only metrics needs no chat model, and the reverse). Asking an
/// absent model fails with [`JudgeError::Settings`] naming what is missing.
#[derive(Debug, Clone, Default)]
pub struct Models {
    /// Answers chat calls.
    pub chat: Option<AnyChatModel>,
    /// Answers embedding calls.
    pub embedder: Option<AnyEmbedder>,
}

impl Models {
    /// A chat model alone.
    pub fn chat(model: impl ChatModel) -> Self {
        Models {
            chat: Some(AnyChatModel::new(model)),
            embedder: None,
        }
    }

    /// An embedding model alone.
    pub fn embedder(embedder: impl Embedder) -> Self {
        Models {
            chat: None,
            embedder: Some(AnyEmbedder::new(embedder)),
        }
    }

    /// One backend that does both (e.g. an OpenAI-compatible endpoint).
    pub fn both<B: ChatModel + Embedder + Clone>(backend: B) -> Self {
        Models {
            chat: Some(AnyChatModel::new(backend.clone())),
            embedder: Some(AnyEmbedder::new(backend)),
        }
    }

    /// Adds or replaces the embedding model.
    pub fn with_embedder(mut self, embedder: impl Embedder) -> Self {
        self.embedder = Some(AnyEmbedder::new(embedder));
        self
    }
}

/// Name reported for a model that is not configured (also part of cache keys, where it
/// can never match a real answer because such a call always fails).
const ABSENT: &str = "none";

impl ChatModel for Models {
    fn kind(&self) -> &str {
        self.chat.as_ref().map_or(ABSENT, |m| m.kind())
    }
    fn model(&self) -> &str {
        self.chat.as_ref().map_or(ABSENT, |m| m.model())
    }
    fn endpoint(&self) -> String {
        self.chat
            .as_ref()
            .map_or_else(|| ABSENT.to_owned(), |m| m.endpoint())
    }
    fn supports_response_schema(&self) -> bool {
        self.chat
            .as_ref()
            .is_some_and(|m| m.supports_response_schema())
    }
    fn limits_itself(&self) -> bool {
        self.chat.as_ref().is_some_and(|m| m.limits_itself())
    }
    fn answers_repeat(&self) -> bool {
        self.chat.as_ref().is_some_and(|m| m.answers_repeat())
    }
    fn learned_forms(&self) -> Vec<LearnedForm> {
        self.chat
            .as_ref()
            .map_or_else(Vec::new, |m| m.learned_forms())
    }
    fn adopt_forms(&self, forms: &[LearnedForm]) {
        if let Some(model) = &self.chat {
            model.adopt_forms(forms);
        }
    }
    fn learn_from_refusal(&self, body: &str, sent: &serde_json::Value) -> bool {
        self.chat
            .as_ref()
            .is_some_and(|model| model.learn_from_refusal(body, sent))
    }
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, JudgeError> {
        match &self.chat {
            Some(model) => model.chat(request).await,
            None => Err(JudgeError::Settings("no chat model is configured".into())),
        }
    }
}

impl Embedder for Models {
    fn embedding_kind(&self) -> &str {
        self.embedder
            .as_ref()
            .map_or(ABSENT, |e| e.embedding_kind())
    }
    fn embedding_model(&self) -> &str {
        self.embedder
            .as_ref()
            .map_or(ABSENT, |e| e.embedding_model())
    }
    fn embedding_limits_itself(&self) -> bool {
        self.embedder
            .as_ref()
            .is_some_and(|e| e.embedding_limits_itself())
    }
    async fn embed(&self, inputs: &[String]) -> Result<Vec<Vec<f32>>, JudgeError> {
        match &self.embedder {
            Some(embedder) => embedder.embed(inputs).await,
            None => Err(JudgeError::Settings(
                "no embedding model is configured".into(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::{Message, Sampling, Usage};

    struct Echo;

    impl ChatModel for Echo {
        fn kind(&self) -> &str {
            "echo"
        }
        fn model(&self) -> &str {
            "echo-1"
        }
        fn endpoint(&self) -> String {
            "memory".into()
        }
        fn supports_response_schema(&self) -> bool {
            false
        }
        async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, JudgeError> {
            Ok(ChatResponse {
                text: request.messages[0].content.clone(),
                usage: Usage::default(),
                finish_reason: None,
                thinking: None,
                thinking_text: String::new(),
            })
        }
    }

    fn request(text: &str) -> ChatRequest {
        ChatRequest {
            messages: vec![Message::user(text)],
            sampling: Sampling::default(),
            response_schema: None,
        }
    }

    #[tokio::test]
    async fn erased_chat_forwards_and_absent_models_fail_clearly() {
        let models = Models::chat(Echo);
        assert_eq!(ChatModel::kind(&models), "echo");
        let answer = models.chat(&request("hello")).await.expect("echo answers");
        assert_eq!(answer.text, "hello");
        let error = models
            .embed(&["x".to_owned()])
            .await
            .expect_err("no embedder");
        assert!(error.to_string().contains("no embedding model"), "{error}");
        let error = Models::default()
            .chat(&request("x"))
            .await
            .expect_err("no chat model");
        assert!(error.to_string().contains("no chat model"), "{error}");
    }
}
