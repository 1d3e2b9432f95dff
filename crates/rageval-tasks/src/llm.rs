//! How the chat model answers a task: render the task's template in the chosen pack with
//! the material fenced, ask the judge for the task's schema, and turn the validated answer
//! into the task's typed value.
//!
//! Each task implements [`LlmTask`] in its own file: its template files, what material it
//! fences, which slots it fills, its schema, and how a raw answer becomes its value. This
//! module holds what they share. Cache, limits, retries and the parse ladder are the judge's.

use std::collections::BTreeMap;

use rageval_judge::{ChatModel, Judge, Models, Sampling, StructuredRequest, TemplateId};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::TaskError;
use crate::judged::{Implementation, Judged};
use crate::prompt::pack::{PackFiles, Rendered, render};
use crate::prompt::{Fence, Lang, LangChoice};
use crate::schema::{Shape, item_key};
use crate::task::TaskKind;

/// What the LLM path needs to know about a task.
pub(crate) trait LlmTask {
    /// Which task.
    const KIND: TaskKind;
    /// The task's template files, `pack_files!("NAME")`; NAME is also the task's name.
    const PACK: PackFiles;
    /// The answer as the schema shapes it.
    type Raw: DeserializeOwned;
    /// The typed value.
    type Output: Send;
    /// The JSON Schema of the answer for a call of `shape` (see [`crate::schema`]).
    fn schema(shape: Shape) -> Value;
    /// The text whose script picks the pack (the question when there is one).
    fn deciding_text(&self) -> &str;
    /// What fills the template's slots.
    fn parts(&self) -> Vec<Part<'_>>;
    /// The sizes the schema depends on.
    fn shape(&self) -> Shape {
        Shape::default()
    }
    /// The optional template parts this call asks for.
    fn template_parts(&self) -> Vec<&'static str> {
        Vec::new()
    }
    /// The typed value, or why the (schema-valid) answer cannot be used.
    fn convert(&self, raw: Self::Raw) -> Result<Self::Output, String>;
    /// The id the cache and the manifest know the rendered call by: the template's, unless
    /// the call's instructions come partly from elsewhere (a rubric's text).
    fn template_id(&self, template: TemplateId) -> TemplateId {
        template
    }
    /// Slots whose text depends on the pack chosen for the call (our text, not material).
    fn pack_parts(&self, lang: Lang) -> Vec<Part<'_>> {
        let _ = lang;
        Vec::new()
    }
}

/// Asks `judge` for `task` in the pack `lang` picks.
pub(crate) async fn ask<T: LlmTask>(
    judge: &Judge<Models>,
    lang: LangChoice,
    task: &T,
) -> Result<Judged<T::Output>, TaskError> {
    let lang = lang.pick(task.deciding_text());
    let mut parts = task.parts();
    parts.extend(task.pack_parts(lang));
    let fence = Fence::around(material(&parts));
    let rendered = render(
        T::KIND,
        lang,
        &fence,
        &slots(&fence, &parts),
        &task.template_parts(),
    )?;
    let rendered = Rendered {
        template: task.template_id(rendered.template),
        messages: rendered.messages,
    };
    let request = StructuredRequest {
        template: rendered.template.clone(),
        messages: rendered.messages,
        schema: T::schema(task.shape()),
        sampling: Sampling::default(),
    };
    let answer = judge
        .ask::<T::Raw>(&request)
        .await
        .map_err(|source| TaskError::Judge {
            task: T::KIND,
            source,
        })?;
    let value = task
        .convert(answer.value)
        .map_err(|reason| TaskError::Judge {
            task: T::KIND,
            source: rageval_judge::JudgeError::Unparsed {
                template: rendered.template.to_string(),
                reason,
                raw: answer.raw.clone(),
            },
        })?;
    Ok(Judged {
        value,
        by: Implementation::Llm {
            backend: judge.model().kind().to_owned(),
            model: judge.model().model().to_owned(),
            template: rendered.template,
            lang,
            after_thinking: answer.thinking.map(|t| t.source),
        },
        rung: Some(answer.rung),
        usage: answer.usage,
        cached: answer.cached,
    })
}

/// What fills one slot of a template.
pub(crate) enum Part<'a> {
    /// One untrusted text, fenced under `label`.
    Text {
        slot: &'static str,
        label: &'static str,
        text: &'a str,
    },
    /// Untrusted items, each fenced as `label 1`, `label 2`, ... or, with a key prefix,
    /// `label s1`, `label s2`, ...
    Items {
        slot: &'static str,
        label: &'static str,
        key: Option<char>,
        items: &'a [String],
    },
    /// Untrusted text laid out by us (a conversation turn by turn), fenced under `label`.
    Owned {
        slot: &'static str,
        label: &'static str,
        text: String,
    },
    /// Our own text (a count, a key list): not fenced.
    Plain { slot: &'static str, value: String },
}

/// The material's passages in the `contexts` slot, unkeyed.
pub(crate) fn passages(items: &[String]) -> Part<'_> {
    Part::Items {
        slot: "contexts",
        label: "passage",
        key: None,
        items,
    }
}

/// One untrusted text in `slot`, fenced under the slot's name.
pub(crate) fn text<'a>(slot: &'static str, text: &'a str) -> Part<'a> {
    Part::Text {
        slot,
        label: slot,
        text,
    }
}

/// Every untrusted text of a call.
pub(crate) fn material<'p>(parts: &'p [Part<'_>]) -> Vec<&'p str> {
    let mut all = Vec::new();
    for part in parts {
        match part {
            Part::Text { text, .. } => all.push(*text),
            Part::Owned { text, .. } => all.push(text.as_str()),
            Part::Items { items, .. } => all.extend(items.iter().map(String::as_str)),
            Part::Plain { .. } => {}
        }
    }
    all
}

/// The filled slots.
pub(crate) fn slots(fence: &Fence, parts: &[Part<'_>]) -> Vec<(&'static str, String)> {
    parts
        .iter()
        .map(|part| match part {
            Part::Text { slot, label, text } => (*slot, fence.wrap(label, text)),
            Part::Owned { slot, label, text } => (*slot, fence.wrap(label, text)),
            Part::Items {
                slot,
                label,
                key,
                items,
            } => {
                let wrapped: Vec<String> = items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| {
                        let name = match key {
                            Some(prefix) => item_key(*prefix, i),
                            None => (i + 1).to_string(),
                        };
                        fence.wrap(&format!("{label} {name}"), item)
                    })
                    .collect();
                (*slot, wrapped.join("\n\n"))
            }
            Part::Plain { slot, value } => (*slot, value.clone()),
        })
        .collect()
}

/// The keys `PREFIX1, PREFIX2, ...` of `count` items, as instructions list them.
pub(crate) fn key_list(prefix: char, count: usize) -> String {
    (0..count)
        .map(|i| item_key(prefix, i))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Trimmed, non-empty, each once, in order.
pub(crate) fn clean_list(items: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(items.len());
    for item in items {
        let item = item.trim();
        if !item.is_empty() && !out.iter().any(|seen| seen == item) {
            out.push(item.to_owned());
        }
    }
    out
}

/// The `i`-th keyed item of a per-item answer.
pub(crate) fn take_item<V>(
    items: &mut BTreeMap<String, V>,
    prefix: char,
    i: usize,
) -> Result<V, String> {
    let key = item_key(prefix, i);
    items
        .remove(&key)
        .ok_or_else(|| format!("the answer has no verdict for `{key}`"))
}

/// The `count` of the contexts shown and the `keys` of `items` items keyed by `prefix`, as
/// the instructions of a per-item call name them.
pub(crate) fn count_and_keys(contexts: usize, prefix: char, items: usize) -> [Part<'static>; 2] {
    [
        Part::Plain {
            slot: "count",
            value: contexts.to_string(),
        },
        Part::Plain {
            slot: "keys",
            value: key_list(prefix, items),
        },
    ]
}

/// The key prefix of the passages of a list call (`p1`, `p2`, ...).
pub(crate) const PASSAGE: char = 'p';

/// The slots of a call over `contexts` shown as keyed passages `p1`, `p2`, ... (the list
/// tasks of ranking).
pub(crate) fn keyed_passages<'a>(question: &'a str, contexts: &'a [String]) -> Vec<Part<'a>> {
    let mut parts = vec![
        text("question", question),
        Part::Items {
            slot: "contexts",
            label: "passage",
            key: Some(PASSAGE),
            items: contexts,
        },
    ];
    parts.extend(count_and_keys(contexts.len(), PASSAGE, contexts.len()));
    parts
}
