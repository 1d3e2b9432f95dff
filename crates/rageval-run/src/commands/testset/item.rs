//! One planned item, written and gated: the judge writes it from its chunks
//! ([`WriteTestItem`]), then each gate in turn may drop it — a question at all (lexical: not
//! a fragment of the prompt, a bare number or date, or a phrase without a question's form,
//! so no judge call is spent on it), self-contained (lexical), an
//! answer that is not "unknown", the reference supported by its chunks (support verdicts;
//! reversed for an unanswerable question: no nearby chunk may answer it), and the closed-book
//! check (asked without the passage, the model must not give the answer). Every gate's
//! outcome is recorded on the item's journal line.
//!
//! A judge that fails, or answers with something unusable, leaves the line without an item
//! and with the judge's error: it is counted, and redone with `--retry-failed`, never written.
//! Duplicates are removed later, over the whole set (`summary`).

use std::collections::BTreeSet;

use rageval_core::testset::lexical::{not_a_question, not_self_contained, says_unknown};
use rageval_core::testset::plan::{Slot, keywords};
use rageval_core::testset::{Category, SourceChunk};
use rageval_core::text::{Language, detect_language};
use rageval_tasks::{
    AnswerClosedBook, AnswerFromContexts, Premise, SupportVerdicts, TaskError, TaskJudge,
    TestItemDraft, WriteTestItem,
};
use serde::{Deserialize, Serialize};

/// Chunks beside an unanswerable question's own that must not answer it either: those
/// sharing the most keywords with the question.
const NEARBY_CHUNKS: usize = 2;

/// What to do with an item the model answers correctly without its passage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClosedBookRule {
    /// Leave it out of the set.
    Drop,
    /// Keep it, its `closed_book` gate marked failed.
    Mark,
}

/// The gates, in the order they are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Gate {
    /// It is a question: not a fragment of the prompt, a bare number or date, or a phrase
    /// without a question's form (checked before any judge call).
    IsQuestion,
    /// The question makes sense without the passage.
    SelfContained,
    /// The answer is not "unknown" (for an unanswerable question: no nearby chunk answers it).
    KnownAnswer,
    /// Every key point is fully supported by the item's chunks.
    Supported,
    /// The model does not give the answer without the passage.
    ClosedBook,
    /// No earlier item asks the same or nearly the same question.
    NotDuplicate,
}

impl Gate {
    /// Every gate, in order.
    pub const ALL: [Gate; 6] = [
        Gate::IsQuestion,
        Gate::SelfContained,
        Gate::KnownAnswer,
        Gate::Supported,
        Gate::ClosedBook,
        Gate::NotDuplicate,
    ];

    /// The snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            Gate::IsQuestion => "is_question",
            Gate::SelfContained => "self_contained",
            Gate::KnownAnswer => "known_answer",
            Gate::Supported => "supported",
            Gate::ClosedBook => "closed_book",
            Gate::NotDuplicate => "not_duplicate",
        }
    }
}

/// One gate's outcome for one item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "outcome", content = "why")]
pub enum GateOutcome {
    Passed,
    Failed(String),
    /// The gate does not apply to the category (closed book for a follow-up, ...).
    NotApplicable,
}

/// One slot's journal line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlotLine {
    pub slot: String,
    pub category: Category,
    /// The category the shares gave, when the plan fell back from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned: Option<Category>,
    pub chunk_ids: Vec<String>,
    /// The language of the slot's first chunk: the item's language.
    pub language: Language,
    /// What the judge wrote, when it wrote something usable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft: Option<TestItemDraft>,
    /// Each gate checked, in order; the first failure drops the item (unless the rule
    /// marks a closed-book failure).
    #[serde(default)]
    pub gates: Vec<(Gate, GateOutcome)>,
    /// Why the judge wrote nothing usable (its error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl SlotLine {
    /// The gate that dropped the item, if one did.
    pub fn dropped_by(&self, rule: ClosedBookRule) -> Option<Gate> {
        self.gates.iter().find_map(|(gate, outcome)| {
            let marked = *gate == Gate::ClosedBook && rule == ClosedBookRule::Mark;
            matches!(outcome, GateOutcome::Failed(_))
                .then_some(*gate)
                .filter(|_| !marked)
        })
    }

    /// Whether the item passed every gate checked so far (a marked closed-book failure
    /// aside).
    pub fn kept(&self, rule: ClosedBookRule) -> bool {
        self.draft.is_some() && self.error.is_none() && self.dropped_by(rule).is_none()
    }
}

/// What [`write_and_gate`] reads: the corpus and the closed-book rule.
pub struct Material<'a> {
    pub chunks: &'a [SourceChunk],
    pub rule: ClosedBookRule,
}

/// Writes `slot`'s item and checks it gate by gate; a gate that fails stops the checks.
pub async fn write_and_gate(judge: &TaskJudge, slot: &Slot, material: &Material<'_>) -> SlotLine {
    let chunks: Vec<&SourceChunk> = slot.chunks.iter().map(|&i| &material.chunks[i]).collect();
    let mut line = SlotLine {
        slot: slot.id.clone(),
        category: slot.category,
        planned: slot.planned,
        chunk_ids: chunks.iter().map(|c| c.id.clone()).collect(),
        language: chunks
            .first()
            .map_or(Language::Other, |c| detect_language(&c.text)),
        draft: None,
        gates: Vec::new(),
        error: None,
    };
    let task = WriteTestItem {
        category: slot.category,
        passages: chunks.iter().map(|c| c.text.clone()).collect(),
    };
    let draft = match judge.write_test_item(&task).await {
        Ok(judged) => judged.value,
        Err(error) => {
            line.error = Some(error_text(&error));
            return line;
        }
    };
    match check_gates(judge, slot, &draft, material).await {
        Ok(gates) => line.gates = gates,
        Err(error) => line.error = Some(error_text(&error)),
    }
    line.draft = Some(draft);
    line
}

/// The gates of `draft`, in order, up to the first that drops it.
async fn check_gates(
    judge: &TaskJudge,
    slot: &Slot,
    draft: &TestItemDraft,
    material: &Material<'_>,
) -> Result<Vec<(Gate, GateOutcome)>, TaskError> {
    let mut gates = Vec::new();
    let standalone = match &draft.opening {
        Some((opening, _)) => opening.as_str(),
        None => draft.question.as_str(),
    };
    let steps = [
        Gate::IsQuestion,
        Gate::SelfContained,
        Gate::KnownAnswer,
        Gate::Supported,
        Gate::ClosedBook,
    ];
    for gate in steps {
        let outcome = match gate {
            Gate::IsQuestion => {
                not_a_question(standalone).map_or(GateOutcome::Passed, GateOutcome::Failed)
            }
            Gate::SelfContained => {
                not_self_contained(standalone).map_or(GateOutcome::Passed, GateOutcome::Failed)
            }
            Gate::KnownAnswer => known_answer(slot.category, draft),
            Gate::Supported if slot.category == Category::Unanswerable => {
                unanswered_nearby(judge, slot, draft, material.chunks).await?
            }
            Gate::Supported => supported(judge, slot, draft, material.chunks).await?,
            Gate::ClosedBook => closed_book(judge, slot.category, draft).await?,
            Gate::NotDuplicate => GateOutcome::NotApplicable,
        };
        let failed = matches!(outcome, GateOutcome::Failed(_));
        let marked = gate == Gate::ClosedBook && material.rule == ClosedBookRule::Mark;
        gates.push((gate, outcome));
        if failed && !marked {
            break;
        }
    }
    Ok(gates)
}

/// The answer is not "unknown" and has key points; an unanswerable item's key points are
/// not asked for.
fn known_answer(category: Category, draft: &TestItemDraft) -> GateOutcome {
    if category == Category::Unanswerable {
        return GateOutcome::NotApplicable;
    }
    if says_unknown(&draft.answer) {
        return GateOutcome::Failed("the answer says it is not known".into());
    }
    GateOutcome::Passed
}

/// The statements the chunks must support: the key points, or the answer when there are none.
fn statements(draft: &TestItemDraft) -> Vec<String> {
    if draft.key_points.is_empty() {
        vec![draft.answer.clone()]
    } else {
        draft.key_points.clone()
    }
}

/// Every key point fully supported by the item's own chunks.
async fn supported(
    judge: &TaskJudge,
    slot: &Slot,
    draft: &TestItemDraft,
    chunks: &[SourceChunk],
) -> Result<GateOutcome, TaskError> {
    let statements = statements(draft);
    let task = SupportVerdicts {
        statements: statements.clone(),
        contexts: slot
            .chunks
            .iter()
            .map(|&i| chunks[i].text.clone())
            .collect(),
        premise: Premise::Contexts,
        history: Vec::new(),
    };
    let verdicts = judge.support_verdicts(&task).await?.value;
    let unsupported: Vec<&str> = statements
        .iter()
        .zip(&verdicts)
        .filter(|(_, v)| !v.support.is_supported())
        .map(|(s, _)| s.as_str())
        .collect();
    Ok(match unsupported.first() {
        None if verdicts.len() == statements.len() => GateOutcome::Passed,
        None => GateOutcome::Failed("the judge gave fewer verdicts than key points".into()),
        Some(first) => GateOutcome::Failed(format!(
            "{} of {} key points not fully supported by the chunks, first: {first}",
            unsupported.len(),
            statements.len()
        )),
    })
}

/// An unanswerable question is answered neither by its chunk nor by the chunks sharing the
/// most keywords with it.
async fn unanswered_nearby(
    judge: &TaskJudge,
    slot: &Slot,
    draft: &TestItemDraft,
    chunks: &[SourceChunk],
) -> Result<GateOutcome, TaskError> {
    let mut nearby = slot.chunks.clone();
    nearby.extend(nearest(&draft.question, chunks, &slot.chunks));
    let task = AnswerFromContexts {
        question: draft.question.clone(),
        contexts: nearby.iter().map(|&i| chunks[i].text.clone()).collect(),
    };
    let answer = judge.answer_from_contexts(&task).await?.value;
    Ok(match answer.answer {
        None => GateOutcome::Passed,
        Some(found) => GateOutcome::Failed(format!("the documents answer it: {found}")),
    })
}

/// The [`NEARBY_CHUNKS`] chunks, other than `own`, sharing the most keywords with `text`.
fn nearest(text: &str, chunks: &[SourceChunk], own: &[usize]) -> Vec<usize> {
    let wanted: BTreeSet<String> = keywords(text);
    let mut scored: Vec<(usize, usize)> = (0..chunks.len())
        .filter(|i| !own.contains(i))
        .map(|i| (i, keywords(&chunks[i].text).intersection(&wanted).count()))
        .filter(|(_, shared)| *shared > 0)
        .collect();
    scored.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    scored
        .into_iter()
        .take(NEARBY_CHUNKS)
        .map(|(i, _)| i)
        .collect()
}

/// Asked without the passage, the model gives no answer, or one that does not hold every key
/// point. Not asked of unanswerable questions and follow-ups (which lean on their first turn).
async fn closed_book(
    judge: &TaskJudge,
    category: Category,
    draft: &TestItemDraft,
) -> Result<GateOutcome, TaskError> {
    if matches!(category, Category::Unanswerable | Category::FollowUp) {
        return Ok(GateOutcome::NotApplicable);
    }
    let task = AnswerClosedBook {
        question: draft.question.clone(),
    };
    let Some(answer) = judge.answer_closed_book(&task).await?.value else {
        return Ok(GateOutcome::Passed);
    };
    let statements = statements(draft);
    let task = SupportVerdicts {
        statements: statements.clone(),
        contexts: vec![answer.clone()],
        premise: Premise::Answer,
        history: Vec::new(),
    };
    let verdicts = judge.support_verdicts(&task).await?.value;
    let held = verdicts.iter().filter(|v| v.support.is_supported()).count();
    Ok(
        if held == statements.len() && verdicts.len() == statements.len() {
            GateOutcome::Failed(format!("answered without the passage: {answer}"))
        } else {
            GateOutcome::Passed
        },
    )
}

fn error_text(error: &TaskError) -> String {
    crate::engine::error::chain_text(error)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draft(question: &str, answer: &str) -> TestItemDraft {
        TestItemDraft {
            question: question.into(),
            answer: answer.into(),
            key_points: vec![answer.into()],
            opening: None,
        }
    }

    #[test]
    fn an_unknown_answer_fails_except_for_unanswerable_items() {
        let unknown = draft("少儿编程的市场规模是多少？", "文中未提及。");
        assert!(matches!(
            known_answer(Category::Fact, &unknown),
            GateOutcome::Failed(_)
        ));
        assert_eq!(
            known_answer(Category::Unanswerable, &unknown),
            GateOutcome::NotApplicable
        );
        assert_eq!(
            known_answer(Category::Fact, &draft("q", "约500亿元。")),
            GateOutcome::Passed
        );
    }

    #[test]
    fn the_first_failed_gate_drops_unless_a_closed_book_failure_is_marked() {
        let mut line = SlotLine {
            slot: "t0001".into(),
            category: Category::Fact,
            planned: None,
            chunk_ids: vec!["c1".into()],
            language: Language::Chinese,
            draft: Some(draft("q", "a")),
            gates: vec![
                (Gate::SelfContained, GateOutcome::Passed),
                (Gate::ClosedBook, GateOutcome::Failed("known".into())),
            ],
            error: None,
        };
        assert_eq!(
            line.dropped_by(ClosedBookRule::Drop),
            Some(Gate::ClosedBook)
        );
        assert!(line.kept(ClosedBookRule::Mark));
        line.error = Some("judge failed".into());
        assert!(!line.kept(ClosedBookRule::Mark));
    }

    #[test]
    fn nearby_chunks_share_keywords_and_exclude_the_own_chunk() {
        let chunk = |id: &str, text: &str| SourceChunk {
            id: id.into(),
            document: "d".into(),
            location: String::new(),
            text: text.into(),
        };
        let chunks = [
            chunk("a", "少儿编程 市场规模 持续增长"),
            chunk("b", "少儿编程 市场规模 城市分布"),
            chunk("c", "天气 晴朗"),
        ];
        assert_eq!(nearest("少儿编程的市场规模", &chunks, &[0]), vec![1]);
    }
}
