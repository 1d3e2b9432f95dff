//! The baseline RAG of seed S4 (its "V1.0" system): the contexts a retriever found (the
//! local index, by default) and one [`AnswerFromContexts`] task asked of the configured chat
//! model through a [`TaskJudge`] — so the judge pipeline's cache, limits, retries and parse
//! ladder apply, and whichever chat model the judge settings resolve to answers.
//!
//! The prompt is the task's (`rageval-tasks` owns prompt text); this module only turns the
//! task's answer into a [`Generated`]. When the model says the contexts do not contain the
//! answer, the baseline answers so in the question's language, as a RAG system told to
//! answer only from its contexts does, and marks the record (`found: false`).
//!
//! A prompt too long for the chat model's context window (a small local model reading five
//! Chinese passages) is asked again without the lowest-ranked context, until it fits; the
//! record then holds only the contexts the answer was written from, so that faithfulness
//! is judged against what the model read, and says how many were left out.

use rageval_core::Sample;
use rageval_judge::{BoxFuture, ChatModel as _};
use rageval_tasks::{
    AnswerFromContexts, Implementation, Lang, LangChoice, Route, TaskJudge, TaskKind,
};
use serde_json::{Map, Value, json};

use crate::error::SourceError;
use crate::system::{Generated, Generator, Retrieved};

/// The answer when the contexts do not contain one, in English.
pub const UNKNOWN_ANSWER_EN: &str = "I don't know: the retrieved passages do not answer this.";
/// The answer when the contexts do not contain one, in Chinese.
pub const UNKNOWN_ANSWER_ZH: &str = "不知道：检索到的资料中没有这个问题的答案。";

/// Answers each question from its retrieved contexts with the judge's chat model.
#[derive(Debug, Clone)]
pub struct BaselineGenerator {
    tasks: TaskJudge,
    lang: LangChoice,
}

impl BaselineGenerator {
    /// A generator asking `tasks`, whose route for [`TaskKind::AnswerFromContexts`] must be a
    /// chat model; `lang` picks the prompt pack (and the language of the "unknown" answer).
    pub fn new(tasks: TaskJudge, lang: LangChoice) -> Result<Self, SourceError> {
        match tasks.route(TaskKind::AnswerFromContexts) {
            Ok(Route::Llm) => Ok(BaselineGenerator {
                tasks: tasks.with_lang(lang),
                lang,
            }),
            Ok(route @ (Route::Heuristic | Route::Checker)) => Err(SourceError::Config {
                origin: "baseline generator".into(),
                detail: format!(
                    "answers need a chat model, and the judge routes answer_from_contexts \
                     to its {}",
                    if route == Route::Heuristic {
                        "heuristic"
                    } else {
                        "checker"
                    }
                ),
            }),
            Err(error) => Err(SourceError::Answer(error)),
        }
    }

    /// The chat model answering, as `backend:model`.
    fn model(&self) -> String {
        self.tasks
            .llm()
            .map(|judge| format!("{}:{}", judge.model().kind(), judge.model().model()))
            .unwrap_or_default()
    }
}

impl Generator for BaselineGenerator {
    fn describe(&self) -> String {
        format!("baseline rag (answer_from_contexts by {})", self.model())
    }

    fn generate<'a>(
        &'a self,
        sample: &'a Sample,
        contexts: &'a [Retrieved],
    ) -> BoxFuture<'a, Result<Generated, SourceError>> {
        Box::pin(async move {
            let mut kept = contexts.len();
            let judged = loop {
                let task = AnswerFromContexts {
                    question: sample.question.clone(),
                    contexts: contexts[..kept].iter().map(|c| c.text.clone()).collect(),
                };
                match self.tasks.answer_from_contexts(&task).await {
                    Err(error) if error.is_prompt_too_long() && kept > 1 => kept -= 1,
                    other => break other.map_err(SourceError::Answer)?,
                }
            };
            let found = judged.value.answer.is_some();
            let answer = judged.value.answer.clone().unwrap_or_else(|| {
                match self.lang.pick(&sample.question) {
                    Lang::Zh => UNKNOWN_ANSWER_ZH,
                    Lang::En => UNKNOWN_ANSWER_EN,
                }
                .to_owned()
            });
            let mut details = Map::new();
            details.insert("found".into(), Value::Bool(found));
            match &judged.by {
                Implementation::Llm {
                    backend,
                    model,
                    template,
                    lang,
                    ..
                } => {
                    details.insert("backend".into(), json!(backend));
                    details.insert("model".into(), json!(model));
                    details.insert("template".into(), json!(template.to_string()));
                    details.insert("lang".into(), json!(lang.code()));
                }
                other => {
                    details.insert(
                        "by".into(),
                        serde_json::to_value(other).unwrap_or(Value::Null),
                    );
                }
            }
            details.insert(
                "usage".into(),
                json!({
                    "prompt_tokens": judged.usage.prompt_tokens,
                    "completion_tokens": judged.usage.completion_tokens,
                }),
            );
            details.insert("cached".into(), Value::Bool(judged.cached));
            let cut = kept < contexts.len();
            if cut {
                details.insert(
                    "contexts_left_out".into(),
                    json!({
                        "count": contexts.len() - kept,
                        "why": "the prompt did not fit the chat model's context window",
                    }),
                );
            }
            Ok(Generated {
                answer,
                contexts: cut.then(|| contexts[..kept].to_vec()),
                attempts: 1,
                details,
            })
        })
    }
}
