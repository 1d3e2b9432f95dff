//! The finished set: the journal's kept items in plan order, duplicates removed (exact, then
//! near by MinHash), written as the JSONL dataset `eval`, `collect` and `reference` read; and
//! the summary — what each gate dropped, and the realised category shares against the plan.

use std::collections::BTreeMap;

use rageval_core::testset::minhash::{Deduplicator, Duplicate};
use rageval_core::testset::plan::Plan;
use rageval_core::testset::{Category, SourceChunk};
use rageval_core::text::{Language, detect_language};
use rageval_report::JudgeAccount;
use serde::{Deserialize, Serialize};

use super::item::{ClosedBookRule, Gate, GateOutcome, SlotLine};
use crate::engine::words::counted;

/// One source chunk of an item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemSource {
    pub chunk_id: String,
    pub document: String,
    pub location: String,
}

/// One turn of a follow-up's conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Turn {
    pub role: String,
    pub content: String,
    /// What the opening answer was written from (the item's chunks), so that `eval` counts
    /// a follow-up's claim the opening answer backs as backed by the conversation only when
    /// those chunks back the opening answer itself. None for the user's turn.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contexts: Vec<String>,
}

/// One row of `testset.jsonl`: the dataset fields `rageval_core`'s readers know
/// (`reference_context_ids` is the gold of `id_context_recall`, `reference_statements` the
/// key points answer correctness checks one by one), then this command's own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestItem {
    pub id: String,
    pub question: String,
    pub reference: Vec<String>,
    /// Gold chunks: none for an unanswerable question.
    pub reference_context_ids: Vec<String>,
    pub reference_contexts: Vec<String>,
    pub reference_statements: Vec<String>,
    pub category: Category,
    pub language: Language,
    /// The chunks it was written from (for an unanswerable question: near).
    pub sources: Vec<ItemSource>,
    /// Each gate's outcome by name: `passed`, `failed: why` (a marked closed-book failure)
    /// or `not_applicable`.
    pub gates: BTreeMap<String, String>,
    /// A follow-up's first turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation: Option<Vec<Turn>>,
    /// A follow-up's conversation: the item's own id, so `eval` counts each follow-up as a
    /// conversation (its per-conversation figures, a turn marked when it lapses).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_id: Option<String>,
}

/// The items to write, and the lines' fate.
#[derive(Debug, Clone)]
pub struct Finished {
    pub items: Vec<TestItem>,
    pub duplicates: BTreeMap<&'static str, usize>,
}

/// The kept items of `lines` in order, each duplicate of an earlier one left out.
pub fn finish_items(
    lines: &[SlotLine],
    chunks: &[SourceChunk],
    rule: ClosedBookRule,
    near_duplicate: f64,
) -> Finished {
    let by_id: BTreeMap<&str, &SourceChunk> = chunks.iter().map(|c| (c.id.as_str(), c)).collect();
    let mut dedup = Deduplicator::new(near_duplicate);
    let mut duplicates = BTreeMap::new();
    let mut items = Vec::new();
    let kept = lines
        .iter()
        .filter(|l| l.kept(rule))
        .filter_map(|l| l.draft.as_ref().map(|draft| (l, draft)));
    for (line, draft) in kept {
        let asked = match &draft.opening {
            Some((opening, _)) => format!("{opening}\n{}", draft.question),
            None => draft.question.clone(),
        };
        match dedup.offer(&line.slot, &asked) {
            Some(Duplicate::Exact { .. }) => *duplicates.entry("exact").or_default() += 1,
            Some(Duplicate::Near { .. }) => *duplicates.entry("near").or_default() += 1,
            None => items.push(item(line, draft.clone(), &by_id)),
        }
    }
    Finished { items, duplicates }
}

fn item(
    line: &SlotLine,
    draft: rageval_tasks::TestItemDraft,
    by_id: &BTreeMap<&str, &SourceChunk>,
) -> TestItem {
    let sources: Vec<&SourceChunk> = line
        .chunk_ids
        .iter()
        .filter_map(|id| by_id.get(id.as_str()).copied())
        .collect();
    let gold = line.category != Category::Unanswerable;
    let mut gates: BTreeMap<String, String> = line
        .gates
        .iter()
        .map(|(gate, outcome)| (gate.name().to_owned(), outcome_text(outcome)))
        .collect();
    gates.insert(Gate::NotDuplicate.name().into(), "passed".into());
    TestItem {
        id: line.slot.clone(),
        question: draft.question,
        reference: vec![draft.answer],
        reference_context_ids: if gold {
            line.chunk_ids.clone()
        } else {
            Vec::new()
        },
        reference_contexts: if gold {
            sources.iter().map(|c| c.text.clone()).collect()
        } else {
            Vec::new()
        },
        reference_statements: draft.key_points,
        category: line.category,
        language: line.language,
        sources: sources
            .iter()
            .map(|c| ItemSource {
                chunk_id: c.id.clone(),
                document: c.document.clone(),
                location: c.location.clone(),
            })
            .collect(),
        gates,
        conversation_id: draft.opening.is_some().then(|| line.slot.clone()),
        conversation: draft.opening.map(|(question, answer)| {
            vec![
                Turn {
                    role: "user".into(),
                    content: question,
                    contexts: Vec::new(),
                },
                Turn {
                    role: "assistant".into(),
                    content: answer,
                    contexts: sources.iter().map(|c| c.text.clone()).collect(),
                },
            ]
        }),
    }
}

fn outcome_text(outcome: &GateOutcome) -> String {
    match outcome {
        GateOutcome::Passed => "passed".into(),
        GateOutcome::Failed(why) => format!("failed: {why}"),
        GateOutcome::NotApplicable => "not_applicable".into(),
    }
}

/// One category's row of the shares table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShareRow {
    pub category: Category,
    /// Items the shares asked for.
    pub planned: usize,
    pub planned_share: f64,
    /// Items written.
    pub written: usize,
    pub realised_share: f64,
}

/// Totals for summary.json and stdout.
#[derive(Debug, Clone, Serialize)]
pub struct TestsetSummary {
    pub chunks: usize,
    pub planned: usize,
    pub written: usize,
    /// Slots whose judge failed or answered unusably (`--retry-failed` redoes them).
    pub judge_failed: usize,
    /// Items dropped, by gate (`not_duplicate` split into exact and near).
    pub dropped: BTreeMap<String, usize>,
    /// Items kept with their closed-book gate marked failed.
    pub marked_closed_book: usize,
    /// Written questions in their chunk's language (by script).
    pub in_chunk_language: usize,
    pub shares: Vec<ShareRow>,
    /// Chunks too short to draw, two-chunk items that fell back to fact, items the
    /// per-document cap left out.
    pub short_chunks: usize,
    pub fallbacks: usize,
    pub capped: usize,
    pub judge: JudgeAccount,
}

/// The summary of a finished set.
pub fn summarize(
    lines: &[SlotLine],
    finished: &Finished,
    plan: &Plan,
    chunks: usize,
    rule: ClosedBookRule,
    judge: JudgeAccount,
) -> TestsetSummary {
    let mut dropped: BTreeMap<String, usize> = Gate::ALL
        .iter()
        .filter(|g| **g != Gate::NotDuplicate)
        .map(|g| (g.name().to_owned(), 0))
        .collect();
    for gate in lines.iter().filter_map(|l| l.dropped_by(rule)) {
        *dropped.entry(gate.name().to_owned()).or_default() += 1;
    }
    for kind in ["exact", "near"] {
        let count = finished.duplicates.get(kind).copied().unwrap_or(0);
        dropped.insert(format!("duplicate_{kind}"), count);
    }
    let written = finished.items.len();
    let share = |n: usize, of: usize| if of == 0 { 0.0 } else { n as f64 / of as f64 };
    let shares = Category::ALL
        .iter()
        .map(|&category| {
            let planned = plan.quotas.get(&category).copied().unwrap_or(0);
            let done = finished
                .items
                .iter()
                .filter(|i| i.category == category)
                .count();
            ShareRow {
                category,
                planned,
                planned_share: share(planned, plan.quotas.values().sum()),
                written: done,
                realised_share: share(done, written),
            }
        })
        .filter(|row| row.planned > 0 || row.written > 0)
        .collect();
    TestsetSummary {
        chunks,
        planned: plan.slots.len(),
        written,
        judge_failed: lines.iter().filter(|l| l.error.is_some()).count(),
        dropped,
        marked_closed_book: finished
            .items
            .iter()
            .filter(|i| {
                i.gates
                    .get("closed_book")
                    .is_some_and(|g| g.starts_with("failed"))
            })
            .count(),
        in_chunk_language: finished
            .items
            .iter()
            .filter(|i| detect_language(&i.question) == i.language)
            .count(),
        shares,
        short_chunks: plan.short_chunks,
        fallbacks: plan.fallbacks,
        capped: plan.capped,
        judge,
    }
}

impl TestsetSummary {
    /// The lines for stdout: the count, the drops by gate, the shares against the plan.
    pub fn render(&self) -> String {
        let mut text = format!(
            "{} of {} planned from {} ({} in their chunk's language)\n",
            counted(self.written, "items"),
            self.planned,
            counted(self.chunks, "chunks"),
            self.in_chunk_language
        );
        let order = Gate::ALL
            .iter()
            .map(|g| g.name().to_owned())
            .filter(|name| name != Gate::NotDuplicate.name())
            .chain(["duplicate_exact".to_owned(), "duplicate_near".to_owned()]);
        let drops: Vec<String> = order
            .map(|gate| format!("{gate} {}", self.dropped.get(&gate).copied().unwrap_or(0)))
            .collect();
        text.push_str(&format!("dropped by gate: {}\n", drops.join(", ")));
        if self.judge_failed > 0 {
            text.push_str(&format!(
                "{} no item because the judge failed (items.jsonl says how; \
                 --retry-failed redoes them)\n",
                crate::engine::words::counted_have(self.judge_failed, "slots")
            ));
        }
        if self.marked_closed_book > 0 {
            text.push_str(&format!(
                "{} kept though the model answered without the passage (marked)\n",
                counted(self.marked_closed_book, "items")
            ));
        }
        text.push_str("category       planned  share  written  share\n");
        for row in &self.shares {
            text.push_str(&format!(
                "{:<13} {:>8} {:>6.2} {:>8} {:>6.2}\n",
                row.category.name(),
                row.planned,
                row.planned_share,
                row.written,
                row.realised_share
            ));
        }
        if self.fallbacks + self.capped + self.short_chunks > 0 {
            text.push_str(&format!(
                "plan: {} too short to ask about, {} two-chunk items fell back to fact \
                 (no chunk shares enough keywords), {} left out by the cap per document\n",
                counted(self.short_chunks, "chunks"),
                self.fallbacks,
                self.capped
            ));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use rageval_core::testset::plan::{Plan, Slot};
    use rageval_tasks::TestItemDraft;

    use super::*;

    fn chunk(id: &str) -> SourceChunk {
        SourceChunk {
            id: id.into(),
            document: "report.pdf".into(),
            location: "lines 1-9".into(),
            text: format!("text of {id}"),
        }
    }

    fn line(
        slot: &str,
        category: Category,
        question: &str,
        gates: Vec<(Gate, GateOutcome)>,
    ) -> SlotLine {
        SlotLine {
            slot: slot.into(),
            category,
            planned: None,
            chunk_ids: vec!["c1".into()],
            language: Language::Chinese,
            draft: Some(TestItemDraft {
                question: question.into(),
                answer: "约五百亿元".into(),
                key_points: vec!["约五百亿元".into()],
                opening: None,
            }),
            gates,
            error: None,
        }
    }

    fn plan_of(lines: &[SlotLine]) -> Plan {
        Plan {
            slots: lines
                .iter()
                .map(|l| Slot {
                    id: l.slot.clone(),
                    category: l.category,
                    planned: None,
                    chunks: vec![0],
                })
                .collect(),
            quotas: BTreeMap::from([(Category::Fact, 3), (Category::Unanswerable, 1)]),
            short_chunks: 0,
            fallbacks: 0,
            capped: 0,
        }
    }

    #[test]
    fn duplicates_and_dropped_items_are_left_out_and_every_slot_is_counted() {
        let passed = || vec![(Gate::SelfContained, GateOutcome::Passed)];
        let lines = vec![
            line(
                "t1",
                Category::Fact,
                "2023年少儿编程市场规模是多少？",
                passed(),
            ),
            line(
                "t2",
                Category::Fact,
                "2023年少儿编程市场规模是多少",
                passed(),
            ),
            line(
                "t3",
                Category::Fact,
                "根据上文，规模是多少？",
                vec![(Gate::SelfContained, GateOutcome::Failed("passage".into()))],
            ),
            line(
                "t4",
                Category::Unanswerable,
                "少儿编程的退费率是多少？",
                passed(),
            ),
        ];
        let chunks = [chunk("c1")];
        let finished = finish_items(&lines, &chunks, ClosedBookRule::Drop, 0.7);
        let ids: Vec<&str> = finished.items.iter().map(|i| i.id.as_str()).collect();
        assert_eq!(ids, ["t1", "t4"]);
        assert_eq!(finished.items[0].reference_context_ids, ["c1"]);
        assert!(finished.items[1].reference_context_ids.is_empty());
        assert_eq!(finished.items[1].sources[0].chunk_id, "c1");
        let summary = summarize(
            &lines,
            &finished,
            &plan_of(&lines),
            1,
            ClosedBookRule::Drop,
            JudgeAccount::over_sessions("endpoint", Vec::new(), Vec::new(), &[]),
        );
        assert_eq!(summary.dropped["duplicate_exact"], 1);
        assert_eq!(summary.dropped["self_contained"], 1);
        let dropped: usize = summary.dropped.values().sum();
        assert_eq!(
            summary.written + dropped + summary.judge_failed,
            summary.planned
        );
        let fact = summary.shares.iter().find(|r| r.category == Category::Fact);
        assert_eq!(fact.map(|r| (r.planned, r.written)), Some((3, 1)));
        assert!(
            summary
                .render()
                .contains("dropped by gate: is_question 0, self_contained 1")
        );
    }

    /// A follow-up is its own conversation: `eval` reads its id as the conversation's, its
    /// opening turn as the history, and the opening answer with the chunks it was written
    /// from (so a claim that answer backs counts only when those chunks back it).
    #[test]
    fn a_follow_up_is_written_as_a_conversation_eval_reads() {
        let mut follow_up = line("t1", Category::FollowUp, "那2022年呢？", Vec::new());
        if let Some(draft) = &mut follow_up.draft {
            draft.opening = Some(("2023年市场规模是多少？".into(), "约五百亿元".into()));
        }
        let fact = line("t2", Category::Fact, "少儿编程的退费率是多少？", Vec::new());
        let finished = finish_items(
            &[follow_up, fact],
            &[chunk("c1")],
            ClosedBookRule::Drop,
            0.7,
        );
        let rows: Vec<String> = finished
            .items
            .iter()
            .map(|item| serde_json::to_string(item).unwrap_or_default())
            .collect();
        assert!(!rows[1].contains("conversation"), "{}", rows[1]);
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("testset.jsonl");
        std::fs::write(&path, rows.join("\n")).unwrap_or_else(|e| panic!("{e}"));
        let options = rageval_core::dataset::ReadOptions::default();
        let samples =
            rageval_core::dataset::read_all(&path, &options).unwrap_or_else(|e| panic!("{e}"));
        let sample = &samples[0];
        assert_eq!(sample.conversation_id.as_deref(), Some("t1"));
        assert_eq!(sample.turn, Some(2));
        assert_eq!(sample.history.len(), 2);
        assert_eq!(sample.history[1].contexts[0].text, "text of c1");
        assert!(sample.history[0].contexts.is_empty());
        assert_eq!(samples[1].conversation_id, None);
    }
}
