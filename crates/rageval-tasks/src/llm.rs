//! The LLM implementation of every task: render the task's template in the chosen pack with
//! the material fenced, ask the judge for the task's schema, and turn the validated answer
//! into the task's typed value.
//!
//! Each task says here what material it fences, which slots it fills, the shape of its
//! schema, and how a raw answer becomes its value. Cache, limits, retries and the parse
//! ladder are the judge's.

mod ranking;
mod rubric;
mod testset;

use std::collections::BTreeMap;

use rageval_judge::{ChatModel, Judge, Models, Sampling, StructuredRequest, TemplateId};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::error::TaskError;
use crate::judged::{Implementation, Judged};
use crate::prompt::pack::{Rendered, render};
use crate::prompt::{Fence, Lang, LangChoice};
use crate::schema::{Shape, item_key, output_schema};
use crate::task::{
    Abstention, AbstentionVerdict, AnswerFromContexts, AnswerRubric, ContextAnswer,
    ContextRelevance, ContextUsefulness, ContextsCheck, ContextsChecked, ExtractEntities,
    GenerateQuestions, GeneratedQuestions, MergeAnswers, QuestionSimilarity, RelevanceVerdict,
    RubricScore, SimilarityVerdict, SplitStatements, Support, SupportVerdict, SupportVerdicts,
    TaskKind, UsefulnessVerdict,
};

/// What the LLM path needs to know about a task.
pub(crate) trait LlmTask {
    /// Which task.
    const KIND: TaskKind;
    /// The answer as the schema shapes it.
    type Raw: DeserializeOwned;
    /// The typed value.
    type Output;
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
        schema: output_schema(T::KIND, task.shape()),
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
    /// Our own text (a count, a key list): not fenced.
    Plain { slot: &'static str, value: String },
}

/// The material's passages in the `contexts` slot, unkeyed.
fn passages(items: &[String]) -> Part<'_> {
    Part::Items {
        slot: "contexts",
        label: "passage",
        key: None,
        items,
    }
}

fn text<'a>(slot: &'static str, text: &'a str) -> Part<'a> {
    Part::Text {
        slot,
        label: slot,
        text,
    }
}

/// Every untrusted text of a call.
fn material<'a>(parts: &[Part<'a>]) -> Vec<&'a str> {
    let mut all = Vec::new();
    for part in parts {
        match part {
            Part::Text { text, .. } => all.push(*text),
            Part::Items { items, .. } => all.extend(items.iter().map(String::as_str)),
            Part::Plain { .. } => {}
        }
    }
    all
}

/// The filled slots.
fn slots(fence: &Fence, parts: &[Part<'_>]) -> Vec<(&'static str, String)> {
    parts
        .iter()
        .map(|part| match part {
            Part::Text { slot, label, text } => (*slot, fence.wrap(label, text)),
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

fn key_list(prefix: char, count: usize) -> String {
    (0..count)
        .map(|i| item_key(prefix, i))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Trimmed, non-empty, each once, in order.
fn clean_list(items: Vec<String>) -> Vec<String> {
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
fn take_item<V>(items: &mut BTreeMap<String, V>, prefix: char, i: usize) -> Result<V, String> {
    let key = item_key(prefix, i);
    items
        .remove(&key)
        .ok_or_else(|| format!("the answer has no verdict for `{key}`"))
}

#[derive(Deserialize)]
pub(crate) struct StatementsRaw {
    statements: Vec<String>,
}

impl LlmTask for SplitStatements {
    const KIND: TaskKind = TaskKind::SplitStatements;
    type Raw = StatementsRaw;
    type Output = Vec<String>;
    fn deciding_text(&self) -> &str {
        &self.question
    }
    fn parts(&self) -> Vec<Part<'_>> {
        vec![text("question", &self.question), text("text", &self.text)]
    }
    fn convert(&self, raw: StatementsRaw) -> Result<Vec<String>, String> {
        Ok(clean_list(raw.statements))
    }
}

#[derive(Deserialize)]
pub(crate) struct SupportRaw {
    verdicts: BTreeMap<String, SupportItem>,
}

#[derive(Deserialize)]
struct SupportItem {
    reason: String,
    supporting_context: usize,
    verdict: Support,
}

impl LlmTask for SupportVerdicts {
    const KIND: TaskKind = TaskKind::SupportVerdicts;
    type Raw = SupportRaw;
    type Output = Vec<SupportVerdict>;
    fn deciding_text(&self) -> &str {
        self.statements.first().map_or("", String::as_str)
    }
    fn parts(&self) -> Vec<Part<'_>> {
        vec![
            Part::Items {
                slot: "contexts",
                label: "context",
                key: None,
                items: &self.contexts,
            },
            Part::Items {
                slot: "statements",
                label: "statement",
                key: Some('s'),
                items: &self.statements,
            },
            Part::Plain {
                slot: "count",
                value: self.contexts.len().to_string(),
            },
            Part::Plain {
                slot: "keys",
                value: key_list('s', self.statements.len()),
            },
        ]
    }
    fn shape(&self) -> Shape {
        Shape {
            items: self.statements.len(),
            contexts: self.contexts.len(),
            ..Shape::default()
        }
    }
    fn convert(&self, mut raw: SupportRaw) -> Result<Vec<SupportVerdict>, String> {
        keyed_verdicts(
            &mut raw.verdicts,
            self.statements.len(),
            self.contexts.len(),
        )
    }
}

/// The verdicts on `count` statements keyed `s1..`, in order.
fn keyed_verdicts(
    items: &mut BTreeMap<String, SupportItem>,
    count: usize,
    contexts: usize,
) -> Result<Vec<SupportVerdict>, String> {
    (0..count)
        .map(|i| take_item(items, 's', i)?.into_verdict(contexts))
        .collect()
}

impl SupportItem {
    fn into_verdict(self, contexts: usize) -> Result<SupportVerdict, String> {
        let context = match self.supporting_context {
            0 => None,
            n if n <= contexts => Some(n - 1),
            n => return Err(format!("supporting context {n} does not exist")),
        };
        Ok(SupportVerdict {
            support: self.verdict,
            context,
            reason: self.reason,
            score: None,
        })
    }
}

#[derive(Deserialize)]
pub(crate) struct ContextsRaw {
    #[serde(default)]
    reference_claims: Vec<ClaimItem>,
    #[serde(default)]
    useful_passages: BTreeMap<String, UsefulnessRaw>,
    #[serde(default)]
    verdicts: BTreeMap<String, SupportItem>,
}

#[derive(Deserialize)]
struct ClaimItem {
    claim: String,
    #[serde(flatten)]
    support: SupportItem,
}

impl LlmTask for ContextsCheck {
    const KIND: TaskKind = TaskKind::ContextsCheck;
    type Raw = ContextsRaw;
    type Output = ContextsChecked;
    fn deciding_text(&self) -> &str {
        &self.question
    }
    fn parts(&self) -> Vec<Part<'_>> {
        let mut parts = vec![
            text("question", &self.question),
            passages(&self.contexts),
            Part::Plain {
                slot: "count",
                value: self.contexts.len().to_string(),
            },
            Part::Plain {
                slot: "keys",
                value: key_list('s', self.statements.len()),
            },
            Part::Items {
                slot: "statements",
                label: "statement",
                key: Some('s'),
                items: &self.statements,
            },
        ];
        if let Some(reference) = &self.reference {
            parts.push(text("reference", reference));
        }
        parts
    }
    fn shape(&self) -> Shape {
        Shape {
            items: self.statements.len(),
            contexts: self.contexts.len(),
            split: self.split_reference,
            usefulness: self.usefulness,
            ..Shape::default()
        }
    }
    fn template_parts(&self) -> Vec<&'static str> {
        let mut on = Vec::new();
        if self.split_reference {
            on.push("split");
        }
        if self.usefulness {
            on.push("useful");
        }
        if self.split_reference || self.usefulness {
            on.push("reference_input");
        }
        if !self.statements.is_empty() {
            on.extend(["given", "given_input"]);
        }
        on
    }
    fn convert(&self, mut raw: ContextsRaw) -> Result<ContextsChecked, String> {
        let contexts = self.contexts.len();
        let mut checked = ContextsChecked {
            verdicts: keyed_verdicts(&mut raw.verdicts, self.statements.len(), contexts)?,
            ..ContextsChecked::default()
        };
        for item in raw.reference_claims {
            let claim = item.claim.trim();
            if claim.is_empty() || checked.reference_statements.iter().any(|s| s == claim) {
                continue;
            }
            checked.reference_statements.push(claim.to_owned());
            checked
                .reference_verdicts
                .push(item.support.into_verdict(contexts)?);
        }
        if self.usefulness {
            checked.usefulness = (1..=contexts)
                .map(|n| {
                    let raw = raw
                        .useful_passages
                        .remove(&n.to_string())
                        .ok_or_else(|| format!("the answer has no usefulness for passage {n}"))?;
                    Ok(UsefulnessVerdict {
                        useful: raw.useful,
                        reason: raw.reason,
                    })
                })
                .collect::<Result<_, String>>()?;
        }
        Ok(checked)
    }
}

#[derive(Deserialize)]
pub(crate) struct RelevanceRaw {
    reason: String,
    relevant: bool,
}

impl LlmTask for ContextRelevance {
    const KIND: TaskKind = TaskKind::ContextRelevance;
    type Raw = RelevanceRaw;
    type Output = RelevanceVerdict;
    fn deciding_text(&self) -> &str {
        &self.question
    }
    fn parts(&self) -> Vec<Part<'_>> {
        vec![
            text("question", &self.question),
            text("context", &self.context),
        ]
    }
    fn convert(&self, raw: RelevanceRaw) -> Result<RelevanceVerdict, String> {
        Ok(RelevanceVerdict {
            relevant: raw.relevant,
            reason: raw.reason,
        })
    }
}

#[derive(Deserialize)]
pub(crate) struct UsefulnessRaw {
    reason: String,
    useful: bool,
}

impl LlmTask for ContextUsefulness {
    const KIND: TaskKind = TaskKind::ContextUsefulness;
    type Raw = UsefulnessRaw;
    type Output = UsefulnessVerdict;
    fn deciding_text(&self) -> &str {
        &self.question
    }
    fn parts(&self) -> Vec<Part<'_>> {
        vec![
            text("question", &self.question),
            text("answer", &self.answer),
            text("context", &self.context),
        ]
    }
    fn convert(&self, raw: UsefulnessRaw) -> Result<UsefulnessVerdict, String> {
        Ok(UsefulnessVerdict {
            useful: raw.useful,
            reason: raw.reason,
        })
    }
}

#[derive(Deserialize)]
pub(crate) struct RubricRaw {
    reason: String,
    score: u8,
}

impl LlmTask for AnswerRubric {
    const KIND: TaskKind = TaskKind::AnswerRubric;
    type Raw = RubricRaw;
    type Output = RubricScore;
    fn deciding_text(&self) -> &str {
        &self.question
    }
    fn parts(&self) -> Vec<Part<'_>> {
        vec![
            text("question", &self.question),
            text("answer", &self.answer),
        ]
    }
    fn convert(&self, raw: RubricRaw) -> Result<RubricScore, String> {
        Ok(RubricScore {
            score: raw.score,
            reason: raw.reason,
        })
    }
}

#[derive(Deserialize)]
pub(crate) struct QuestionsRaw {
    /// 1 when noncommittal (the schema allows 0 or 1).
    noncommittal: u8,
    questions: Vec<String>,
}

impl LlmTask for GenerateQuestions {
    const KIND: TaskKind = TaskKind::GenerateQuestions;
    type Raw = QuestionsRaw;
    type Output = GeneratedQuestions;
    fn deciding_text(&self) -> &str {
        &self.answer
    }
    fn parts(&self) -> Vec<Part<'_>> {
        vec![
            text("answer", &self.answer),
            Part::Plain {
                slot: "n",
                value: self.n.to_string(),
            },
        ]
    }
    fn shape(&self) -> Shape {
        Shape {
            items: self.n,
            ..Shape::default()
        }
    }
    fn convert(&self, raw: QuestionsRaw) -> Result<GeneratedQuestions, String> {
        Ok(GeneratedQuestions {
            questions: raw
                .questions
                .into_iter()
                .map(|q| q.trim().to_owned())
                .collect(),
            noncommittal: raw.noncommittal == 1,
        })
    }
}

#[derive(Deserialize)]
pub(crate) struct SimilarityRaw {
    verdicts: BTreeMap<String, SimilarityItem>,
}

#[derive(Deserialize)]
struct SimilarityItem {
    reason: String,
    similar: bool,
}

impl LlmTask for QuestionSimilarity {
    const KIND: TaskKind = TaskKind::QuestionSimilarity;
    type Raw = SimilarityRaw;
    type Output = Vec<SimilarityVerdict>;
    fn deciding_text(&self) -> &str {
        &self.question
    }
    fn parts(&self) -> Vec<Part<'_>> {
        vec![
            Part::Text {
                slot: "question",
                label: "real question",
                text: &self.question,
            },
            Part::Items {
                slot: "candidates",
                label: "candidate",
                key: Some('q'),
                items: &self.candidates,
            },
            Part::Plain {
                slot: "keys",
                value: key_list('q', self.candidates.len()),
            },
        ]
    }
    fn shape(&self) -> Shape {
        Shape {
            items: self.candidates.len(),
            ..Shape::default()
        }
    }
    fn convert(&self, mut raw: SimilarityRaw) -> Result<Vec<SimilarityVerdict>, String> {
        (0..self.candidates.len())
            .map(|i| {
                let item = take_item(&mut raw.verdicts, 'q', i)?;
                Ok(SimilarityVerdict {
                    similar: item.similar,
                    reason: item.reason,
                })
            })
            .collect()
    }
}

#[derive(Deserialize)]
pub(crate) struct EntitiesRaw {
    entities: Vec<String>,
}

impl LlmTask for ExtractEntities {
    const KIND: TaskKind = TaskKind::ExtractEntities;
    type Raw = EntitiesRaw;
    type Output = Vec<String>;
    fn deciding_text(&self) -> &str {
        &self.text
    }
    fn parts(&self) -> Vec<Part<'_>> {
        vec![text("text", &self.text)]
    }
    fn convert(&self, raw: EntitiesRaw) -> Result<Vec<String>, String> {
        Ok(clean_list(raw.entities))
    }
}

#[derive(Deserialize)]
pub(crate) struct ContextAnswerRaw {
    answer: String,
    found: bool,
}

impl LlmTask for AnswerFromContexts {
    const KIND: TaskKind = TaskKind::AnswerFromContexts;
    type Raw = ContextAnswerRaw;
    type Output = ContextAnswer;
    fn deciding_text(&self) -> &str {
        &self.question
    }
    fn parts(&self) -> Vec<Part<'_>> {
        vec![text("question", &self.question), passages(&self.contexts)]
    }
    fn convert(&self, raw: ContextAnswerRaw) -> Result<ContextAnswer, String> {
        let answer = raw.answer.trim();
        Ok(ContextAnswer {
            answer: (raw.found && !answer.is_empty()).then(|| answer.to_owned()),
        })
    }
}

#[derive(Deserialize)]
pub(crate) struct AbstentionRaw {
    reason: String,
    refused: bool,
    supported: bool,
}

impl LlmTask for Abstention {
    const KIND: TaskKind = TaskKind::Abstention;
    type Raw = AbstentionRaw;
    type Output = AbstentionVerdict;
    fn deciding_text(&self) -> &str {
        &self.question
    }
    fn parts(&self) -> Vec<Part<'_>> {
        vec![
            text("question", &self.question),
            passages(&self.contexts),
            text("answer", &self.answer),
        ]
    }
    fn convert(&self, raw: AbstentionRaw) -> Result<AbstentionVerdict, String> {
        Ok(AbstentionVerdict {
            supported: Some(raw.supported),
            refused: raw.refused,
            reason: raw.reason,
        })
    }
}

#[derive(Deserialize)]
pub(crate) struct MergedRaw {
    answer: String,
}

impl LlmTask for MergeAnswers {
    const KIND: TaskKind = TaskKind::MergeAnswers;
    type Raw = MergedRaw;
    type Output = String;
    fn deciding_text(&self) -> &str {
        &self.question
    }
    fn parts(&self) -> Vec<Part<'_>> {
        vec![
            text("question", &self.question),
            Part::Items {
                slot: "answers",
                label: "partial answer",
                key: None,
                items: &self.answers,
            },
        ]
    }
    fn convert(&self, raw: MergedRaw) -> Result<String, String> {
        let answer = raw.answer.trim();
        if answer.is_empty() {
            return Err("the merged answer is blank".into());
        }
        Ok(answer.to_owned())
    }
}
