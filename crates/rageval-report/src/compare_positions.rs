//! Two runs of conversations or of retrieval hops compared beside the per-question deltas:
//! per metric each run's mean over conversations (of its conversations' turn means), the
//! conversations whose turns moved most, and each run's share of conversations with a
//! turn that lapses; and per metric the first hop's and the later hops' figures side by
//! side. Each run's own figures come from its summary (`conversations`, `hops`); which
//! conversations moved is read from the turns scored in both runs, grouped by the
//! baseline dataset's conversation ids, so it needs that dataset at hand. Nothing here is
//! tested for significance: the per-question deltas above it do that.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::blocks::{Block, Table};
use crate::compare_pairing::RunSamples;
use crate::compare_render::signed;
use crate::page::number;
use crate::{HopFigure, HopMetric, LapseShare, RunData};

/// Two runs' conversations side by side (both runs have conversation figures).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConversationDelta {
    /// Conversations in each run, as its summary counts them.
    pub baseline_conversations: usize,
    pub candidate_conversations: usize,
    /// Per metric either run has a conversation figure for, in the comparison's order.
    pub metrics: Vec<ConversationMetricDelta>,
    /// Each run's conversations with a turn whose claims neither its contexts nor the
    /// conversation back, where its turns were marked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline_lapse: Option<LapseShare>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub candidate_lapse: Option<LapseShare>,
}

/// One metric over conversations in two runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConversationMetricDelta {
    pub metric: String,
    /// Each run's mean over its conversations of their turns' mean.
    pub baseline_mean: Option<f64>,
    pub candidate_mean: Option<f64>,
    /// `candidate_mean − baseline_mean`.
    pub delta: Option<f64>,
    /// The conversations whose mean over the turns scored in both runs moved most, largest
    /// |Δ| first; empty without the baseline's dataset.
    pub moved: Vec<ConversationMove>,
}

/// A conversation whose turns scored differently in the two runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConversationMove {
    /// The baseline dataset's conversation id.
    pub conversation_id: String,
    /// Its turns scored in both runs.
    pub turns: usize,
    /// The mean of those turns in each run.
    pub baseline: f64,
    pub candidate: f64,
    /// `candidate − baseline`.
    pub delta: f64,
}

/// Two runs' retrieval hops side by side (both runs have hop rows).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HopDelta {
    /// Hop rows in each run.
    pub baseline_rows: usize,
    pub candidate_rows: usize,
    /// Per metric either run scored on a hop row, in the comparison's order (one
    /// undefined on every hop row is left out).
    pub metrics: Vec<HopMetricDelta>,
}

/// One metric over hop rows in two runs: the first hop of each trace, and the later ones.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HopMetricDelta {
    pub metric: String,
    pub baseline: HopMetric,
    pub candidate: HopMetric,
    /// Candidate minus baseline mean of the first hops, where both were scored.
    pub first_delta: Option<f64>,
    /// The same for the later hops.
    pub later_delta: Option<f64>,
}

/// The conversation figures of `baseline` and `candidate` side by side, or `None` unless
/// both have them. `compared` pairs (baseline id, candidate id) of the questions compared;
/// `sides` gives the baseline's conversation of each id; `top` conversations moved are kept
/// per metric.
pub(crate) fn conversation_delta(
    runs: [&RunData; 2],
    baseline_samples: &RunSamples<'_>,
    compared: &[(&str, &str)],
    metrics: &[String],
    top: usize,
) -> Option<ConversationDelta> {
    let [a, b] = runs.map(|run| run.summary.conversations.as_ref());
    let (a, b) = (a?, b?);
    let metrics = metrics
        .iter()
        .filter(|m| a.metrics.contains_key(*m) || b.metrics.contains_key(*m))
        .map(|metric| {
            let baseline_mean = a.metrics.get(metric).map(|f| f.mean);
            let candidate_mean = b.metrics.get(metric).map(|f| f.mean);
            ConversationMetricDelta {
                metric: metric.clone(),
                baseline_mean,
                candidate_mean,
                delta: baseline_mean.zip(candidate_mean).map(|(x, y)| y - x),
                moved: moved_conversations(runs, baseline_samples, compared, metric, top),
            }
        })
        .collect();
    Some(ConversationDelta {
        baseline_conversations: a.conversations,
        candidate_conversations: b.conversations,
        metrics,
        baseline_lapse: a.with_lapse,
        candidate_lapse: b.with_lapse,
    })
}

/// Per baseline conversation, the mean of `metric` over its turns scored in both runs; the
/// `top` that moved most (a conversation that did not move is left out).
fn moved_conversations(
    [baseline, candidate]: [&RunData; 2],
    baseline_samples: &RunSamples<'_>,
    compared: &[(&str, &str)],
    metric: &str,
    top: usize,
) -> Vec<ConversationMove> {
    let (x, y) = (baseline.scores(metric), candidate.scores(metric));
    // Per conversation: turns, sum in the baseline, sum in the candidate.
    let mut sums: BTreeMap<&str, (usize, f64, f64)> = BTreeMap::new();
    for (a, b) in compared {
        let (Some(conversation), Some(x), Some(y)) =
            (baseline_samples.conversation_of(a), x.get(a), y.get(b))
        else {
            continue;
        };
        let cell = sums.entry(conversation).or_default();
        *cell = (cell.0 + 1, cell.1 + x, cell.2 + y);
    }
    let mut moved: Vec<ConversationMove> = sums
        .into_iter()
        .map(|(id, (turns, x, y))| {
            let (baseline, candidate) = (x / turns as f64, y / turns as f64);
            ConversationMove {
                conversation_id: id.to_owned(),
                turns,
                baseline,
                candidate,
                delta: candidate - baseline,
            }
        })
        .filter(|m| m.delta != 0.0)
        .collect();
    // Largest move first; ties by id (the map's order, kept by a stable sort).
    moved.sort_by(|p, q| q.delta.abs().total_cmp(&p.delta.abs()));
    moved.truncate(top);
    moved
}

/// The hop figures of `baseline` and `candidate` side by side, or `None` unless both have
/// hop rows.
pub(crate) fn hop_delta(runs: [&RunData; 2], metrics: &[String]) -> Option<HopDelta> {
    let [a, b] = runs.map(|run| run.summary.hops.as_ref());
    let (a, b) = (a?, b?);
    let unscored = || HopMetric {
        first: HopFigure::default(),
        later: HopFigure::default(),
    };
    let difference = |x: &HopFigure, y: &HopFigure| x.mean.zip(y.mean).map(|(x, y)| y - x);
    // A metric no hop row of either run scored (one that needs an answer) is left out:
    // each run's own report counts its undefined cells.
    let scored =
        |figure: Option<&HopMetric>| figure.is_some_and(|f| f.first.scored + f.later.scored > 0);
    let metrics = metrics
        .iter()
        .filter(|m| scored(a.metrics.get(*m)) || scored(b.metrics.get(*m)))
        .map(|metric| {
            let baseline = a.metrics.get(metric).cloned().unwrap_or_else(unscored);
            let candidate = b.metrics.get(metric).cloned().unwrap_or_else(unscored);
            HopMetricDelta {
                metric: metric.clone(),
                first_delta: difference(&baseline.first, &candidate.first),
                later_delta: difference(&baseline.later, &candidate.later),
                baseline,
                candidate,
            }
        })
        .collect();
    Some(HopDelta {
        baseline_rows: a.rows,
        candidate_rows: b.rows,
        metrics,
    })
}

/// `1 of 3 (33.3%)`, or `not marked`.
fn lapse_words(lapse: Option<LapseShare>) -> String {
    lapse.map_or_else(
        || "not marked".into(),
        |l| format!("{} of {} ({:.1}%)", l.conversations, l.of, l.share * 100.0),
    )
}

/// A pair's sections on conversations and hops, the runs named `a` and `b`; nothing when
/// the pair has neither.
pub(crate) fn position_delta_blocks(
    conversations: Option<&ConversationDelta>,
    hops: Option<&HopDelta>,
    [a, b]: [&str; 2],
) -> Vec<Block> {
    let mut blocks = Vec::new();
    if let Some(c) = conversations {
        blocks.extend(conversation_delta_blocks(c, [a, b]));
    }
    if let Some(h) = hops {
        blocks.extend(hop_delta_blocks(h, [a, b]));
    }
    blocks
}

fn conversation_delta_blocks(c: &ConversationDelta, [a, b]: [&str; 2]) -> Vec<Block> {
    let mut means = Table::new(&["metric", a, b, "Δ"], " ###");
    let mut moved = Table::new(&["metric", "conversation", "turns", a, b, "Δ"], "  ####");
    for m in &c.metrics {
        means.rows.push(vec![
            m.metric.clone(),
            number(m.baseline_mean),
            number(m.candidate_mean),
            signed(m.delta),
        ]);
        for conversation in &m.moved {
            moved.rows.push(vec![
                m.metric.clone(),
                conversation.conversation_id.clone(),
                conversation.turns.to_string(),
                number(Some(conversation.baseline)),
                number(Some(conversation.candidate)),
                signed(Some(conversation.delta)),
            ]);
        }
    }
    let mut blocks = vec![
        Block::Heading(format!("{a} → {b}: conversations")),
        Block::text(format!(
            "{} conversations in {a}, {} in {b}. Each metric's mean over conversations of \
             the mean of their turns, each run over all its conversations.",
            c.baseline_conversations, c.candidate_conversations
        )),
        Block::Table(means),
    ];
    if c.baseline_lapse.is_some() || c.candidate_lapse.is_some() {
        blocks.push(Block::text(format!(
            "Conversations with a turn whose claims neither its contexts nor the \
             conversation back: {a} {}; {b} {}.",
            lapse_words(c.baseline_lapse),
            lapse_words(c.candidate_lapse)
        )));
    }
    if !moved.rows.is_empty() {
        blocks.push(Block::text(
            "Conversations that moved most, over their turns scored in both runs:",
        ));
        blocks.push(Block::Table(moved));
    }
    blocks
}

fn hop_delta_blocks(h: &HopDelta, [a, b]: [&str; 2]) -> Vec<Block> {
    let first = [format!("first hop: {a}"), format!("first hop: {b}")];
    let later = [format!("later hops: {a}"), format!("later hops: {b}")];
    let mut table = Table::new(
        &[
            "metric",
            first[0].as_str(),
            first[1].as_str(),
            "first hop: Δ",
            later[0].as_str(),
            later[1].as_str(),
            "later hops: Δ",
        ],
        " ######",
    );
    // `0.7500 (2)`: a group's mean and how many cells were scored.
    let shown = |f: &HopFigure| format!("{} ({})", number(f.mean), f.scored);
    for m in &h.metrics {
        table.rows.push(vec![
            m.metric.clone(),
            shown(&m.baseline.first),
            shown(&m.candidate.first),
            signed(m.first_delta),
            shown(&m.baseline.later),
            shown(&m.candidate.later),
            signed(m.later_delta),
        ]);
    }
    vec![
        Block::Heading(format!("{a} → {b}: retrieval hops")),
        Block::text(format!(
            "{} hop rows in {a}, {} in {b}. Per metric the mean over the first hop of each \
             trace and over the later hops (scored cells in brackets), each run over all \
             its hop rows.",
            h.baseline_rows, h.candidate_rows
        )),
        Block::Table(table),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::to_markdown;
    use crate::testing::write_run;
    use crate::{CompareSettings, Comparison, ConversationTally, HopTally};
    use rageval_core::{Evidence, Outcome, Sample};
    use serde_json::json;

    /// A faithfulness score, marked as lapsing below 1.
    fn turn(value: f64) -> Outcome {
        let mut evidence = Evidence::default();
        evidence.details.insert(
            rageval_core::conversation::TURN_LAPSE.into(),
            json!(value < 1.0),
        );
        Outcome::score(value, evidence)
    }

    /// A run at `dir/name` of turns `t1`, `t2` (conversation `c1`), `t3` (`c2`) and hop rows
    /// `h:1`, `h:2` scored `scores` (faithfulness on turns, context_relevance on hops), with
    /// its summary's conversation and hop figures tallied as `eval` does.
    fn run(dir: &std::path::Path, name: &str, scores: [f64; 5]) -> RunData {
        let [t1, t2, t3, h1, h2] = scores;
        let results = [
            ("t1", "faithfulness", turn(t1)),
            ("t2", "faithfulness", turn(t2)),
            ("t3", "faithfulness", turn(t3)),
            ("h:1", "context_relevance", Outcome::bare(h1)),
            ("h:2", "context_relevance", Outcome::bare(h2)),
        ];
        let path = dir.join(name);
        write_run(&path, name, &results);
        let mut data = RunData::load(&path).unwrap_or_else(|e| panic!("{e}"));
        let (mut conversations, mut hops) = (ConversationTally::default(), HopTally::default());
        for (id, metric, outcome) in &results[..3] {
            conversations.add(if *id == "t3" { "c2" } else { "c1" }, metric, outcome);
        }
        hops.add("h:1", 1, "context_relevance", &results[3].2);
        hops.add("h:2", 2, "context_relevance", &results[4].2);
        data.summary.conversations = conversations.finish();
        data.summary.hops = hops.finish();
        data
    }

    fn samples() -> Vec<Sample> {
        let turn = |id: &str, conversation: &str| Sample {
            id: id.into(),
            question: format!("{id}?"),
            conversation_id: Some(conversation.into()),
            ..Sample::default()
        };
        let hop = |id: &str| Sample {
            id: id.into(),
            question: format!("{id}?"),
            ..Sample::default()
        };
        vec![
            turn("t1", "c1"),
            turn("t2", "c1"),
            turn("t3", "c2"),
            hop("h:1"),
            hop("h:2"),
        ]
    }

    /// Baseline: c1 turns 0.5 and 1.0 (mean 0.75), c2 0.0 — mean of means 0.375, both
    /// conversations lapse. Candidate: c1 1.0 and 1.0, c2 0.0 — mean 0.5, one lapses. Only
    /// c1 moved (+0.25). Hops: first 0.2 → 0.6 (+0.4), later 0.8 → 0.7 (−0.1).
    #[test]
    fn conversations_and_hops_side_by_side() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let runs = [
            run(dir.path(), "old", [0.5, 1.0, 0.0, 0.2, 0.8]),
            run(dir.path(), "new", [1.0, 1.0, 0.0, 0.6, 0.7]),
        ];
        let samples = [samples(), samples()];
        let comparison =
            Comparison::build_with_samples(&runs, &samples, CompareSettings::default())
                .unwrap_or_else(|e| panic!("{e}"));
        let pair = &comparison.pairs[0];
        let c = pair
            .conversations
            .as_ref()
            .unwrap_or_else(|| panic!("conversations"));
        assert_eq!(
            (c.baseline_conversations, c.candidate_conversations),
            (2, 2)
        );
        let faithfulness = &c.metrics[0];
        assert_eq!(faithfulness.metric, "faithfulness");
        assert_eq!(
            (
                faithfulness.baseline_mean,
                faithfulness.candidate_mean,
                faithfulness.delta
            ),
            (Some(0.375), Some(0.5), Some(0.125))
        );
        assert_eq!(
            faithfulness.moved,
            vec![ConversationMove {
                conversation_id: "c1".into(),
                turns: 2,
                baseline: 0.75,
                candidate: 1.0,
                delta: 0.25,
            }]
        );
        let lapses =
            [c.baseline_lapse, c.candidate_lapse].map(|l| l.map(|l| (l.conversations, l.of)));
        assert_eq!(lapses, [Some((2, 2)), Some((1, 2))]);
        let h = pair.hops.as_ref().unwrap_or_else(|| panic!("hops"));
        assert_eq!(h.metrics.len(), 1);
        let relevance = &h.metrics[0];
        assert!((relevance.first_delta.unwrap_or(0.0) - 0.4).abs() < 1e-12);
        assert!((relevance.later_delta.unwrap_or(0.0) + 0.1).abs() < 1e-12);

        let md = to_markdown(&position_delta_blocks(Some(c), Some(h), ["old", "new"]));
        assert!(md.contains("## old → new: conversations"), "{md}");
        assert!(
            md.contains("| faithfulness | 0.3750 | 0.5000 | +0.1250 |"),
            "{md}"
        );
        assert!(
            md.contains("old 2 of 2 (100.0%); new 1 of 2 (50.0%)"),
            "{md}"
        );
        assert!(
            md.contains("| faithfulness | c1 | 2 | 0.7500 | 1.0000 | +0.2500 |"),
            "{md}"
        );
        assert!(
            md.contains("| context_relevance | 0.2000 (1) | 0.6000 (1) | +0.4000 | 0.8000 (1) | 0.7000 (1) | -0.1000 |"),
            "{md}"
        );
        let whole = crate::render_compare_markdown(&comparison);
        assert!(whole.contains("## old → new: retrieval hops"), "{whole}");
        let json = serde_json::to_value(&comparison).unwrap_or_default();
        assert_eq!(
            json["pairs"][0]["conversations"]["metrics"][0]["moved"][0]["conversation_id"],
            "c1"
        );
        assert_eq!(json["pairs"][0]["hops"]["baseline_rows"], 2);
    }

    /// Runs without conversations or hops compare as before: no section, no JSON field.
    #[test]
    fn runs_without_positions_have_no_such_sections() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let mut runs = [
            run(dir.path(), "old", [0.5, 1.0, 0.0, 0.2, 0.8]),
            run(dir.path(), "new", [1.0, 1.0, 0.0, 0.6, 0.7]),
        ];
        runs[1].summary.conversations = None;
        runs[1].summary.hops = None;
        let comparison =
            Comparison::build(&runs, CompareSettings::default()).unwrap_or_else(|e| panic!("{e}"));
        assert!(comparison.pairs[0].conversations.is_none());
        assert!(comparison.pairs[0].hops.is_none());
        let json = serde_json::to_value(&comparison).unwrap_or_default();
        assert!(json["pairs"][0].get("conversations").is_none());
        assert!(!crate::render_compare_markdown(&comparison).contains("conversations"));
    }
}
