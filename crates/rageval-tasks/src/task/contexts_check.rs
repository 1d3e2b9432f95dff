//! [`ContextsCheck`]: several judgements against one sample's contexts in one chat-model
//! call that reads the question, the contexts, the answer and the reference once. It has no
//! heuristic rule and no route of its own: the router answers it only when the chat model
//! answers each of its parts (splitting, support verdicts, usefulness), so that callers
//! otherwise ask the parts as separate tasks.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::context_usefulness::UsefulnessRaw;
use super::support_verdicts::{SupportItem, keyed_verdicts, support_item};
use super::{SupportVerdict, TaskFamily, TaskKind, TypedTask, UsefulnessVerdict};
use crate::error::TaskError;
use crate::judged::Judged;
use crate::llm::{LlmTask, Part, count_and_keys, passages, text};
use crate::prompt::pack::{PackFiles, pack_files};
use crate::router::TaskJudge;
use crate::schema::{Shape, keyed, keys, object, verdict, with_defs};

/// Everything judged against the retrieved contexts of one sample, in one call that reads
/// the contexts once: any of
/// - the answer split into statements, each judged like a
///   [`SupportVerdicts`](super::SupportVerdicts) statement (`answer`; faithfulness's split
///   and verdicts in one call, as the reference's below);
/// - the reference split into statements, each judged like a
///   [`SupportVerdicts`](super::SupportVerdicts) statement (`split_reference`; ragas's
///   context recall splits and classifies in one call too);
/// - each context judged useful or not for arriving at the reference (`usefulness`; the
///   [`ContextUsefulness`](super::ContextUsefulness) question, asked for all contexts at
///   once);
/// - given statements judged like [`SupportVerdicts`](super::SupportVerdicts) (the answer's
///   statements for faithfulness, or a dataset's reference statements).
///
/// Answered with [`ContextsChecked`]. Callers ask it only when the router answers it with
/// the chat model ([`TaskJudge::route`]); otherwise they ask the parts as separate tasks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextsCheck {
    /// The user's question.
    pub question: String,
    /// The retrieved contexts (at least one not blank).
    pub contexts: Vec<String>,
    /// The reference answer; needed by `split_reference` and `usefulness`.
    pub reference: Option<String>,
    /// Split the reference into statements and judge each.
    pub split_reference: bool,
    /// Judge each context useful or not for arriving at the reference.
    pub usefulness: bool,
    /// The answer, to split into statements and judge each; `None` when not asked (a blank
    /// answer states nothing: ask nothing of it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// Statements judged as given.
    pub statements: Vec<String>,
}

/// The answer to [`ContextsCheck`]; the parts not asked for are empty.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ContextsChecked {
    /// The answer's statements, in its order (`answer`).
    pub answer_statements: Vec<String>,
    /// The verdict on each of `answer_statements`, in order.
    pub answer_verdicts: Vec<SupportVerdict>,
    /// The reference's statements, in its order (`split_reference`).
    pub reference_statements: Vec<String>,
    /// The verdict on each of `reference_statements`, in order.
    pub reference_verdicts: Vec<SupportVerdict>,
    /// One per context, in order (`usefulness`).
    pub usefulness: Vec<UsefulnessVerdict>,
    /// One per given statement, in order.
    pub verdicts: Vec<SupportVerdict>,
}

#[derive(Deserialize)]
pub(crate) struct ContextsRaw {
    #[serde(default)]
    answer_claims: Vec<ClaimItem>,
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
    const PACK: PackFiles = pack_files!("contexts_check");
    type Raw = ContextsRaw;
    type Output = ContextsChecked;
    /// `answer_claims` and `reference_claims` (the splits, sharing one item schema),
    /// `useful_passages` (usefulness, keyed by passage number) and `verdicts` (given
    /// statements), each only when asked.
    fn schema(shape: Shape) -> Value {
        let mut fields = Vec::new();
        let mut defs = Vec::new();
        let claims = json!({"type": "array", "items": {"$ref": "#/$defs/claim"}});
        if shape.split_answer {
            fields.push(("answer_claims", claims.clone()));
        }
        if shape.split {
            fields.push(("reference_claims", claims));
        }
        if shape.split || shape.split_answer {
            let mut claim = support_item(shape.contexts);
            claim["properties"]["claim"] = json!({"type": "string", "minLength": 1});
            claim["required"] = json!(["claim", "reason", "supporting_context", "verdict"]);
            defs.push(("claim", claim));
        }
        if shape.usefulness {
            let passages: Vec<String> = (1..=shape.contexts).map(|n| n.to_string()).collect();
            fields.push(("useful_passages", keyed(&passages, "useful")));
            defs.push(("useful", verdict("useful")));
        }
        if shape.items > 0 {
            fields.push(("verdicts", keyed(&keys('s', shape.items), "support")));
            defs.push(("support", support_item(shape.contexts)));
        }
        with_defs(object(fields), defs)
    }
    fn deciding_text(&self) -> &str {
        &self.question
    }
    fn parts(&self) -> Vec<Part<'_>> {
        let mut parts = vec![text("question", &self.question), passages(&self.contexts)];
        parts.extend(count_and_keys(
            self.contexts.len(),
            's',
            self.statements.len(),
        ));
        parts.push(Part::Items {
            slot: "statements",
            label: "statement",
            key: Some('s'),
            items: &self.statements,
        });
        if let Some(answer) = &self.answer {
            parts.push(text("answer", answer));
        }
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
            split_answer: self.answer.is_some(),
            usefulness: self.usefulness,
            ..Shape::default()
        }
    }
    fn template_parts(&self) -> Vec<&'static str> {
        let mut on = Vec::new();
        if self.split_reference || self.answer.is_some() {
            on.push("claims");
        }
        if self.answer.is_some() {
            on.extend(["split_answer", "answer_input"]);
        }
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
        let (answer_statements, answer_verdicts) = claims(raw.answer_claims, contexts)?;
        let (reference_statements, reference_verdicts) = claims(raw.reference_claims, contexts)?;
        let mut checked = ContextsChecked {
            answer_statements,
            answer_verdicts,
            reference_statements,
            reference_verdicts,
            verdicts: keyed_verdicts(&mut raw.verdicts, self.statements.len(), contexts)?,
            ..ContextsChecked::default()
        };
        if self.usefulness {
            checked.usefulness = (1..=contexts)
                .map(|n| {
                    let raw = raw
                        .useful_passages
                        .remove(&n.to_string())
                        .ok_or_else(|| format!("the answer has no usefulness for passage {n}"))?;
                    Ok(raw.into_verdict())
                })
                .collect::<Result<_, String>>()?;
        }
        Ok(checked)
    }
}

/// A split's claims (trimmed, blank and repeated ones dropped) and their verdicts, in order.
fn claims(
    items: Vec<ClaimItem>,
    contexts: usize,
) -> Result<(Vec<String>, Vec<SupportVerdict>), String> {
    let mut statements: Vec<String> = Vec::with_capacity(items.len());
    let mut verdicts = Vec::with_capacity(items.len());
    for item in items {
        let claim = item.claim.trim();
        if claim.is_empty() || statements.iter().any(|s| s == claim) {
            continue;
        }
        statements.push(claim.to_owned());
        verdicts.push(item.support.into_verdict(contexts)?);
    }
    Ok((statements, verdicts))
}

impl TypedTask for ContextsCheck {
    const FAMILY: TaskFamily = TaskFamily::Verdict;

    /// Nothing asked → an empty answer; a part that needs the reference without one, an
    /// answer to split that is blank, or contexts that are all blank, is an input error.
    fn by_rule(&self) -> Result<Option<Judged<ContextsChecked>>, TaskError> {
        let input = |why: &str| TaskError::Input {
            task: TaskKind::ContextsCheck,
            why: why.to_owned(),
        };
        let needs_reference = self.split_reference || self.usefulness;
        if !needs_reference && self.answer.is_none() && self.statements.is_empty() {
            return Ok(Some(Judged::by_rule(
                ContextsChecked::default(),
                "nothing to check",
            )));
        }
        if needs_reference
            && self
                .reference
                .as_deref()
                .is_none_or(|r| r.trim().is_empty())
        {
            return Err(input(
                "there is no reference to split or to judge usefulness for",
            ));
        }
        if self.answer.as_deref().is_some_and(|a| a.trim().is_empty()) {
            return Err(input("the answer to split is blank"));
        }
        if self.contexts.iter().all(|c| c.trim().is_empty()) {
            return Err(input("every context is blank"));
        }
        Ok(None)
    }
}

impl TaskJudge {
    /// [`ContextsCheck`], in one chat-model call. Nothing asked → an empty answer (no call);
    /// a part that needs the reference without one, or contexts that are all blank, is an
    /// input error (ask [`TaskJudge::support_verdicts`] then, whose rule covers it).
    pub async fn contexts_check(
        &self,
        task: &ContextsCheck,
    ) -> Result<Judged<ContextsChecked>, TaskError> {
        self.ask(task).await
    }
}
