//! The structured-output ladder as the judge climbs it ([`Judge::ask`]): the schema in
//! `response_format` (or in the prompt, when the server takes no schema or refuses one) →
//! tolerant parse → validation → one re-ask quoting the error; a climb that still does not
//! parse is asked once more afresh ([`FRESH_ROUNDS`]; not of a model whose answers repeat,
//! [`ChatModel::answers_repeat`]) before the call fails with the raw text. Only a climb
//! that ends in a parsed answer is cached. The parsing itself is [`crate::structured`]'s.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use serde::de::DeserializeOwned;
use tokio::task::JoinSet;

use super::Judge;
use super::pipeline::Completion;
use super::stats::bump;
use crate::chat::{ChatModel, ChatRequest, Message, OutputSchema, Role, Usage};
use crate::error::JudgeError;
use crate::structured::{
    Rung, StructuredRequest, TemplateId, interpret, reask_instruction, schema_instruction,
};

/// Climbs of the ladder after a first one that ended with no parsable answer. Each climb is
/// a fresh ask and one re-ask; the answers of a failed climb are never cached, so a new
/// climb (or a later run, `--retry-failed`) gets a fresh answer instead of the same garbage.
/// A model whose answers repeat ([`ChatModel::answers_repeat`]) gets none: it would give
/// the same garbage again.
pub const FRESH_ROUNDS: u32 = 1;

/// A structured answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer<T> {
    /// The typed value.
    pub value: T,
    /// The text it was parsed from (the re-ask's text when there was one).
    pub raw: String,
    /// Where on the ladder it was obtained.
    pub rung: Rung,
    /// Tokens of every call it took (first ask and re-ask), cached ones included.
    pub usage: Usage,
    /// Whether every call it took was answered from the cache.
    pub cached: bool,
    /// Where the model's thinking was, when the answer came after thinking.
    pub thinking: Option<crate::reasoning::Thinking>,
}

impl<M: ChatModel> Judge<M> {
    /// Asks for a value of type `T` matching `request.schema`, climbing the ladder: schema
    /// (in `response_format`, or in the prompt when the backend has no such option or the
    /// server rejects it with a 400 naming `response_format`, which is then remembered) →
    /// tolerant parse → validation → one re-ask; when that still does not parse, the whole
    /// climb once more afresh ([`FRESH_ROUNDS`]) → [`JudgeError::Unparsed`] with the raw text.
    /// Only answers that parsed are cached.
    pub async fn ask<T: DeserializeOwned>(
        &self,
        request: &StructuredRequest,
    ) -> Result<Answer<T>, JudgeError> {
        let result = self.ask_inner(request).await;
        let rung = match &result {
            Ok(answer) => answer.rung,
            // A call refused by a cap or abandoned on cancel never reached an end: it is not
            // on the ladder (JudgeStats and the usage report count what did happen).
            Err(error) if error.is_stop() => return result,
            Err(JudgeError::Unparsed { .. }) => Rung::Failed,
            Err(_) => Rung::Errored,
        };
        self.inner
            .rungs
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .entry(request.template.to_string())
            .or_default()
            .add(rung);
        result
    }

    async fn ask_inner<T: DeserializeOwned>(
        &self,
        request: &StructuredRequest,
    ) -> Result<Answer<T>, JudgeError> {
        let mut round = 0;
        loop {
            round += 1;
            // Usage is that of the climb that answered, as a replay from the cache reports it.
            let mut usage = Usage::default();
            match self.ladder::<T>(request, &mut usage).await? {
                Ok(answer) => return Ok(answer),
                Err(failure) if round > FRESH_ROUNDS || self.inner.model.answers_repeat() => {
                    return Err(failure);
                }
                // Nothing of a failed climb was cached, so this round asks afresh.
                Err(_) => {}
            }
        }
    }

    /// One climb of the ladder: ask, parse, re-ask once. The outer `Err` is an error with no
    /// answer (transport, offline miss); the inner one an answer that never parsed. Only a
    /// climb that ends in a parsed answer is stored in the cache (both of its calls when it
    /// took a re-ask), so a replay follows the same path and a failed climb is asked afresh
    /// next time rather than replayed.
    async fn ladder<T: DeserializeOwned>(
        &self,
        request: &StructuredRequest,
        usage: &mut Usage,
    ) -> Result<Result<Answer<T>, JudgeError>, JudgeError> {
        let template = &request.template;
        let mut first_request = self.render(request);
        let mut first_key = self.cache_key(template, &first_request);
        // The holds keep each fresh answer in flight until it is stored or dropped here.
        let (first, _first_hold) = match self.fetch(template, &first_request, first_key).await {
            Err(error) if first_request.response_schema.is_some() && rejects_schema(&error) => {
                // The server does not take `response_format: json_schema` (DeepSeek, older
                // Ollama): write the schema into the prompt from now on.
                self.inner.schema_in_prompt.store(true, Ordering::Relaxed);
                bump(&self.inner.counters.schema_fallbacks);
                first_request = self.render(request);
                first_key = self.cache_key(template, &first_request);
                self.fetch(template, &first_request, first_key).await?
            }
            other => other?,
        };
        *usage += first.response.usage;
        self.note_thinking(&first);
        let reason = match interpret::<T>(&first.response.text, &request.schema) {
            Ok((value, rung)) => {
                self.inner.health.usable_answer();
                if first.fresh() {
                    self.store(template, first_key, &first.response).await;
                }
                return Ok(Ok(Answer {
                    value,
                    raw: first.response.text,
                    rung,
                    usage: *usage,
                    cached: first.cached,
                    thinking: first.response.thinking,
                }));
            }
            Err(reason) => {
                self.unusable(&first, &reason);
                reason
            }
        };
        // The answer alone goes back, never the thinking: it doubles the prompt, and some
        // servers refuse a conversation that carries it.
        let mut again = first_request;
        again
            .messages
            .push(Message::assistant(first.response.text.clone()));
        again
            .messages
            .push(Message::user(reask_instruction(&reason)));
        let again_key = self.cache_key(template, &again);
        let (second, _second_hold) = match self.fetch(template, &again, again_key).await {
            Ok(second) => second,
            Err(error) if error.is_stop() => return Err(error),
            Err(error) => {
                return Ok(Err(JudgeError::Unparsed {
                    template: template.to_string(),
                    reason: format!("{reason}; the re-ask failed: {error}"),
                    raw: first.response.text,
                }));
            }
        };
        *usage += second.response.usage;
        self.note_thinking(&second);
        match interpret::<T>(&second.response.text, &request.schema) {
            Ok((value, _)) => {
                self.inner.health.usable_answer();
                if first.fresh() {
                    self.store(template, first_key, &first.response).await;
                }
                if second.fresh() {
                    self.store(template, again_key, &second.response).await;
                }
                Ok(Ok(Answer {
                    value,
                    raw: second.response.text,
                    rung: Rung::Reasked,
                    usage: *usage,
                    cached: first.cached && second.cached,
                    thinking: second.response.thinking,
                }))
            }
            Err(reason) => {
                self.unusable(&second, &reason);
                Ok(Err(JudgeError::Unparsed {
                    template: template.to_string(),
                    reason,
                    raw: second.response.text,
                }))
            }
        }
    }

    /// Counts an answer that came after thinking.
    fn note_thinking(&self, completion: &Completion) {
        if completion.response.thinking.is_some() {
            bump(&self.inner.counters.thinking_answers);
        }
    }

    /// An answer that does not parse: one more in a row for [`crate::health`], which halts
    /// a judge whose answers are never usable. Cached answers parsed once, so only fresh
    /// ones count.
    fn unusable(&self, completion: &Completion, reason: &str) {
        if completion.cached {
            return;
        }
        let model = &self.inner.model;
        let what = if completion.response.text.trim().is_empty() {
            "an empty answer".to_owned()
        } else {
            format!("an answer that does not parse ({reason})")
        };
        self.inner
            .health
            .unusable_answer(&what, &model.endpoint(), model.model());
    }

    /// Runs [`Judge::ask`] on every request concurrently (bounded by the limiter) and returns
    /// the results in the order of `requests`, one per request.
    pub async fn ask_all<T: DeserializeOwned + Send + 'static>(
        &self,
        requests: Vec<StructuredRequest>,
    ) -> Vec<Result<Answer<T>, JudgeError>> {
        let count = requests.len();
        let mut tasks = JoinSet::new();
        let mut index_of = HashMap::new();
        for (index, request) in requests.into_iter().enumerate() {
            let judge = self.clone();
            let handle = tasks.spawn(async move { (index, judge.ask::<T>(&request).await) });
            index_of.insert(handle.id(), index);
        }
        let mut results: Vec<Option<Result<Answer<T>, JudgeError>>> =
            (0..count).map(|_| None).collect();
        while let Some(joined) = tasks.join_next().await {
            match joined {
                Ok((index, result)) => results[index] = Some(result),
                Err(error) => {
                    if let Some(&index) = index_of.get(&error.id()) {
                        results[index] = Some(Err(JudgeError::Task(error.to_string())));
                    }
                }
            }
        }
        results
            .into_iter()
            .map(|slot| slot.unwrap_or_else(|| Err(JudgeError::Task("task vanished".into()))))
            .collect()
    }

    /// The chat request for a structured call: the schema in `response_format` when the
    /// backend takes it, else written at the end of the last user message.
    fn render(&self, request: &StructuredRequest) -> ChatRequest {
        let mut messages = request.messages.clone();
        let in_prompt = self.inner.schema_in_prompt.load(Ordering::Relaxed);
        let response_schema = if self.inner.model.supports_response_schema() && !in_prompt {
            Some(OutputSchema {
                name: schema_name(&request.template),
                schema: request.schema.clone(),
            })
        } else {
            let instruction = schema_instruction(&request.schema);
            match messages.iter_mut().rev().find(|m| m.role == Role::User) {
                Some(last_user) => last_user.content.push_str(&instruction),
                None => messages.push(Message::user(instruction.trim_start())),
            }
            None
        };
        let mut sampling = request.sampling.clone();
        self.inner.config.request.apply(&mut sampling);
        ChatRequest {
            messages,
            sampling,
            response_schema,
        }
    }
}

/// A 400 (or 422) that blames the structured-output request itself.
fn rejects_schema(error: &JudgeError) -> bool {
    match error {
        JudgeError::Status {
            status: 400 | 422,
            first_line,
            ..
        } => {
            let line = first_line.to_lowercase();
            line.contains("response_format") || line.contains("json_schema")
        }
        _ => false,
    }
}

/// The API's schema name: letters, digits, `_` and `-`, at most 64 characters.
fn schema_name(template: &TemplateId) -> String {
    let name: String = template
        .id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if name.is_empty() {
        "answer".into()
    } else {
        name
    }
}
