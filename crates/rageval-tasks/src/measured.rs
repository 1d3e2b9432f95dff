//! The agreement figures measured for the heuristic judge on human-labelled data (a table).
//! Each says what kind it is ([`FigureKind`]): **held out by set** — the thresholds chosen
//! without any part of the figure's set (leave one set out,
//! [`validation::choose`](crate::validation::choose)) — or **in-set** — the set's other
//! half took part in the choice, or it is its task's only set (WikiEval whole too: the
//! heuristic's rules were written with its faithfulness pairs as a gate). [`published`]
//! keeps one figure per set, the held-out-by-set one where there is one: those are what
//! every printer shows beside a score. The crate's integration tests recompute every row
//! (and the choice) and fail when one drifts, and fail when WikiEval faithfulness falls
//! below 0.9. `docs/judges.md` carries the same table.

use std::fmt;

pub use rageval_core::agreement::FigureKind;
use serde::{Deserialize, Serialize};

use crate::heuristic::HEURISTIC_VERSION;
use crate::judged::HeuristicInfo;
use crate::task::TaskKind;

/// The name of the lexical heuristic every row of the table measured.
pub const IMPLEMENTATION: &str = "content_word_overlap";

/// One measured figure of one implementation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// The task measured.
    pub task: TaskKind,
    /// The heuristic's name.
    pub implementation: String,
    /// The heuristic's version it was measured at.
    pub version: u32,
    /// The data set and the script its items were judged by (e.g. `RGB en fact (en
    /// script)`; `WikiEval`).
    pub dataset: String,
    /// What was measured (e.g. `faithfulness pairwise accuracy`).
    pub measure: String,
    /// The figure.
    pub value: f64,
    /// Over how many items.
    pub count: usize,
    /// What an item is (`pairs`, `items`).
    pub unit: String,
    /// The one metric whose setting the figure was measured in (e.g. `context_recall`: a
    /// reference's statements against passages), when the task serves several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    /// Whether the set took part in choosing the settings measured.
    #[serde(default)]
    pub kind: FigureKind,
}

impl Measurement {
    /// Whether `other` is a figure of the same set, task, measure and metric (of another
    /// kind, perhaps).
    fn same_set(&self, other: &Measurement) -> bool {
        (self.task, &self.dataset, &self.measure, &self.metric)
            == (other.task, &other.dataset, &other.measure, &other.metric)
    }
}

impl fmt::Display for Measurement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {:.2} ({} {}), {}",
            self.dataset,
            self.measure,
            self.value,
            self.count,
            self.unit,
            self.kind.label()
        )
    }
}

/// A row of the table (all of the lexical heuristic, version [`HEURISTIC_VERSION`]).
struct Row {
    task: TaskKind,
    dataset: &'static str,
    measure: &'static str,
    value: f64,
    count: usize,
    unit: &'static str,
    metric: Option<&'static str>,
    kind: FigureKind,
}

/// The measured figures of the lexical heuristic (no embedder), statements split by
/// sentences, as `cargo run -p rageval-tasks --example choose_heuristic -- --no-embeddings
/// --rows` prints them: WikiEval's 10 rows whole (in-set), then per set of the sweep
/// ([`validation::choose`](crate::validation::choose)) the figure of the rule chosen
/// without it and, where its development half helped choose the default, the default's
/// figure — both on the set's held-out half. Keep in step with `docs/judges.md`.
const TABLE: &[Row] = &[
    Row {
        task: TaskKind::SupportVerdicts,
        dataset: "WikiEval",
        measure: "faithfulness pairwise accuracy",
        value: 1.0,
        count: 10,
        unit: "pairs",
        metric: None,
        kind: FigureKind::InSet,
    },
    Row {
        task: TaskKind::SupportVerdicts,
        dataset: "RGB en fact (en script)",
        measure: "pairwise accuracy",
        value: 0.9519230769230769,
        count: 52,
        unit: "pairs",
        metric: None,
        kind: FigureKind::HeldOutBySet,
    },
    Row {
        task: TaskKind::SupportVerdicts,
        dataset: "RGB en fact (en script)",
        measure: "pairwise accuracy",
        value: 0.9519230769230769,
        count: 52,
        unit: "pairs",
        metric: None,
        kind: FigureKind::InSet,
    },
    Row {
        task: TaskKind::SupportVerdicts,
        dataset: "UHGEval zh (en script)",
        measure: "balanced accuracy",
        value: 0.7862903225806452,
        count: 66,
        unit: "items",
        metric: None,
        kind: FigureKind::HeldOutBySet,
    },
    Row {
        task: TaskKind::SupportVerdicts,
        dataset: "UHGEval zh (en script)",
        measure: "balanced accuracy",
        value: 0.7862903225806452,
        count: 66,
        unit: "items",
        metric: None,
        kind: FigureKind::InSet,
    },
    Row {
        task: TaskKind::SupportVerdicts,
        dataset: "RGB zh fact (zh script)",
        measure: "pairwise accuracy",
        value: 0.8673469387755102,
        count: 49,
        unit: "pairs",
        metric: None,
        kind: FigureKind::HeldOutBySet,
    },
    Row {
        task: TaskKind::SupportVerdicts,
        dataset: "RGB zh fact (zh script)",
        measure: "pairwise accuracy",
        value: 0.9693877551020408,
        count: 49,
        unit: "pairs",
        metric: None,
        kind: FigureKind::InSet,
    },
    Row {
        task: TaskKind::SupportVerdicts,
        dataset: "UHGEval zh (zh script)",
        measure: "balanced accuracy",
        value: 0.709964274619447,
        count: 3967,
        unit: "items",
        metric: None,
        kind: FigureKind::HeldOutBySet,
    },
    Row {
        task: TaskKind::SupportVerdicts,
        dataset: "UHGEval zh (zh script)",
        measure: "balanced accuracy",
        value: 0.7345576698479361,
        count: 3967,
        unit: "items",
        metric: None,
        kind: FigureKind::InSet,
    },
    Row {
        task: TaskKind::SupportVerdicts,
        dataset: "S4 kids-coding zh (zh script)",
        measure: "pairwise accuracy",
        value: 0.9409772617319787,
        count: 2067,
        unit: "pairs",
        metric: Some("context_recall"),
        kind: FigureKind::HeldOutBySet,
    },
    Row {
        task: TaskKind::SupportVerdicts,
        dataset: "S4 kids-coding zh (zh script)",
        measure: "pairwise accuracy",
        value: 0.9409772617319787,
        count: 2067,
        unit: "pairs",
        metric: Some("context_recall"),
        kind: FigureKind::InSet,
    },
    Row {
        task: TaskKind::ContextRelevance,
        dataset: "RGB en fact (en script)",
        measure: "balanced accuracy",
        value: 0.5293903346902571,
        count: 514,
        unit: "items",
        metric: None,
        kind: FigureKind::HeldOutBySet,
    },
    Row {
        task: TaskKind::ContextRelevance,
        dataset: "RGB en fact (en script)",
        measure: "balanced accuracy",
        value: 0.49711719702849544,
        count: 514,
        unit: "items",
        metric: None,
        kind: FigureKind::InSet,
    },
    Row {
        task: TaskKind::ContextRelevance,
        dataset: "Cranfield (en script)",
        measure: "pairwise accuracy",
        value: 0.5044224765868887,
        count: 3844,
        unit: "pairs",
        metric: None,
        kind: FigureKind::HeldOutBySet,
    },
    Row {
        task: TaskKind::ContextRelevance,
        dataset: "Cranfield (en script)",
        measure: "pairwise accuracy",
        value: 0.5227627471383975,
        count: 3844,
        unit: "pairs",
        metric: None,
        kind: FigureKind::InSet,
    },
    Row {
        task: TaskKind::ContextRelevance,
        dataset: "RGB zh refine (zh script)",
        measure: "balanced accuracy",
        value: 0.666574426217101,
        count: 4019,
        unit: "items",
        metric: None,
        kind: FigureKind::HeldOutBySet,
    },
    Row {
        task: TaskKind::ContextRelevance,
        dataset: "RGB zh refine (zh script)",
        measure: "balanced accuracy",
        value: 0.7245926951128978,
        count: 4019,
        unit: "items",
        metric: None,
        kind: FigureKind::InSet,
    },
    Row {
        task: TaskKind::ContextRelevance,
        dataset: "DuReader zh (zh script)",
        measure: "balanced accuracy",
        value: 0.5315721051165382,
        count: 210,
        unit: "items",
        metric: None,
        kind: FigureKind::HeldOutBySet,
    },
    Row {
        task: TaskKind::ContextRelevance,
        dataset: "DuReader zh (zh script)",
        measure: "balanced accuracy",
        value: 0.5315721051165382,
        count: 210,
        unit: "items",
        metric: None,
        kind: FigureKind::InSet,
    },
    Row {
        task: TaskKind::ContextRelevance,
        dataset: "S4 kids-coding zh (zh script)",
        measure: "balanced accuracy",
        value: 0.7397194000967586,
        count: 2120,
        unit: "items",
        metric: None,
        kind: FigureKind::HeldOutBySet,
    },
    Row {
        task: TaskKind::ContextRelevance,
        dataset: "S4 kids-coding zh (zh script)",
        measure: "balanced accuracy",
        value: 0.8488147073052733,
        count: 2120,
        unit: "items",
        metric: None,
        kind: FigureKind::InSet,
    },
    Row {
        task: TaskKind::ContextUsefulness,
        dataset: "RGB en fact (en script)",
        measure: "balanced accuracy",
        value: 0.9402055977064293,
        count: 514,
        unit: "items",
        metric: None,
        kind: FigureKind::InSet,
    },
    Row {
        task: TaskKind::ContextUsefulness,
        dataset: "RGB zh refine (zh script)",
        measure: "balanced accuracy",
        value: 0.9445109002333976,
        count: 4019,
        unit: "items",
        metric: None,
        kind: FigureKind::HeldOutBySet,
    },
    Row {
        task: TaskKind::ContextUsefulness,
        dataset: "RGB zh refine (zh script)",
        measure: "balanced accuracy",
        value: 0.9445109002333976,
        count: 4019,
        unit: "items",
        metric: None,
        kind: FigureKind::InSet,
    },
    Row {
        task: TaskKind::ContextUsefulness,
        dataset: "S4 kids-coding zh (zh script)",
        measure: "balanced accuracy",
        value: 0.6664247701983551,
        count: 2120,
        unit: "items",
        metric: None,
        kind: FigureKind::HeldOutBySet,
    },
    Row {
        task: TaskKind::ContextUsefulness,
        dataset: "S4 kids-coding zh (zh script)",
        measure: "balanced accuracy",
        value: 0.9066279632317369,
        count: 2120,
        unit: "items",
        metric: None,
        kind: FigureKind::InSet,
    },
    Row {
        task: TaskKind::AnswerRubric,
        dataset: "WikiEval",
        measure: "answer relevance pairwise accuracy",
        value: 0.75,
        count: 10,
        unit: "pairs",
        metric: None,
        kind: FigureKind::InSet,
    },
    Row {
        task: TaskKind::GradeRelevance,
        dataset: "RGB en fact (en script)",
        measure: "pairwise accuracy",
        value: 0.5117899249732047,
        count: 933,
        unit: "pairs",
        metric: None,
        kind: FigureKind::HeldOutBySet,
    },
    Row {
        task: TaskKind::GradeRelevance,
        dataset: "RGB en fact (en script)",
        measure: "pairwise accuracy",
        value: 0.5171489817792069,
        count: 933,
        unit: "pairs",
        metric: None,
        kind: FigureKind::InSet,
    },
    Row {
        task: TaskKind::GradeRelevance,
        dataset: "Cranfield (en script)",
        measure: "pairwise accuracy",
        value: 0.5218522372528616,
        count: 3844,
        unit: "pairs",
        metric: None,
        kind: FigureKind::HeldOutBySet,
    },
    Row {
        task: TaskKind::GradeRelevance,
        dataset: "Cranfield (en script)",
        measure: "pairwise accuracy",
        value: 0.5218522372528616,
        count: 3844,
        unit: "pairs",
        metric: None,
        kind: FigureKind::InSet,
    },
    Row {
        task: TaskKind::GradeRelevance,
        dataset: "RGB zh refine (zh script)",
        measure: "pairwise accuracy",
        value: 0.788200928985299,
        count: 20883,
        unit: "pairs",
        metric: None,
        kind: FigureKind::HeldOutBySet,
    },
    Row {
        task: TaskKind::GradeRelevance,
        dataset: "RGB zh refine (zh script)",
        measure: "pairwise accuracy",
        value: 0.788200928985299,
        count: 20883,
        unit: "pairs",
        metric: None,
        kind: FigureKind::InSet,
    },
    Row {
        task: TaskKind::GradeRelevance,
        dataset: "DuReader zh (zh script)",
        measure: "pairwise accuracy",
        value: 0.5205479452054794,
        count: 219,
        unit: "pairs",
        metric: None,
        kind: FigureKind::HeldOutBySet,
    },
    Row {
        task: TaskKind::GradeRelevance,
        dataset: "DuReader zh (zh script)",
        measure: "pairwise accuracy",
        value: 0.5205479452054794,
        count: 219,
        unit: "pairs",
        metric: None,
        kind: FigureKind::InSet,
    },
    Row {
        task: TaskKind::GradeRelevance,
        dataset: "S4 kids-coding zh (zh script)",
        measure: "pairwise accuracy",
        value: 0.949685534591195,
        count: 2067,
        unit: "pairs",
        metric: None,
        kind: FigureKind::HeldOutBySet,
    },
    Row {
        task: TaskKind::GradeRelevance,
        dataset: "S4 kids-coding zh (zh script)",
        measure: "pairwise accuracy",
        value: 0.9550072568940493,
        count: 2067,
        unit: "pairs",
        metric: None,
        kind: FigureKind::InSet,
    },
    Row {
        task: TaskKind::PairwisePreference,
        dataset: "WikiEval",
        measure: "context relevance pairwise accuracy",
        value: 0.75,
        count: 10,
        unit: "pairs",
        metric: None,
        kind: FigureKind::InSet,
    },
    Row {
        task: TaskKind::PairwisePreference,
        dataset: "RGB en fact (en script)",
        measure: "pairwise accuracy",
        value: 0.5852090032154341,
        count: 933,
        unit: "pairs",
        metric: None,
        kind: FigureKind::HeldOutBySet,
    },
    Row {
        task: TaskKind::PairwisePreference,
        dataset: "RGB en fact (en script)",
        measure: "pairwise accuracy",
        value: 0.5852090032154341,
        count: 933,
        unit: "pairs",
        metric: None,
        kind: FigureKind::InSet,
    },
    Row {
        task: TaskKind::PairwisePreference,
        dataset: "Cranfield (en script)",
        measure: "pairwise accuracy",
        value: 0.5100156087408949,
        count: 3844,
        unit: "pairs",
        metric: None,
        kind: FigureKind::HeldOutBySet,
    },
    Row {
        task: TaskKind::PairwisePreference,
        dataset: "Cranfield (en script)",
        measure: "pairwise accuracy",
        value: 0.5100156087408949,
        count: 3844,
        unit: "pairs",
        metric: None,
        kind: FigureKind::InSet,
    },
    Row {
        task: TaskKind::PairwisePreference,
        dataset: "RGB zh refine (zh script)",
        measure: "pairwise accuracy",
        value: 0.8360628262222861,
        count: 20883,
        unit: "pairs",
        metric: None,
        kind: FigureKind::HeldOutBySet,
    },
    Row {
        task: TaskKind::PairwisePreference,
        dataset: "RGB zh refine (zh script)",
        measure: "pairwise accuracy",
        value: 0.8360628262222861,
        count: 20883,
        unit: "pairs",
        metric: None,
        kind: FigureKind::InSet,
    },
    Row {
        task: TaskKind::PairwisePreference,
        dataset: "DuReader zh (zh script)",
        measure: "pairwise accuracy",
        value: 0.5342465753424658,
        count: 219,
        unit: "pairs",
        metric: None,
        kind: FigureKind::HeldOutBySet,
    },
    Row {
        task: TaskKind::PairwisePreference,
        dataset: "DuReader zh (zh script)",
        measure: "pairwise accuracy",
        value: 0.5228310502283106,
        count: 219,
        unit: "pairs",
        metric: None,
        kind: FigureKind::InSet,
    },
    Row {
        task: TaskKind::PairwisePreference,
        dataset: "S4 kids-coding zh (zh script)",
        measure: "pairwise accuracy",
        value: 0.9714562167392357,
        count: 2067,
        unit: "pairs",
        metric: None,
        kind: FigureKind::HeldOutBySet,
    },
    Row {
        task: TaskKind::PairwisePreference,
        dataset: "S4 kids-coding zh (zh script)",
        measure: "pairwise accuracy",
        value: 0.9714562167392357,
        count: 2067,
        unit: "pairs",
        metric: None,
        kind: FigureKind::InSet,
    },
];
/// Every measured figure, both kinds.
pub fn measurements() -> Vec<Measurement> {
    TABLE
        .iter()
        .map(|row| Measurement {
            task: row.task,
            implementation: IMPLEMENTATION.to_owned(),
            version: HEURISTIC_VERSION,
            dataset: row.dataset.to_owned(),
            measure: row.measure.to_owned(),
            value: row.value,
            count: row.count,
            unit: row.unit.to_owned(),
            metric: row.metric.map(str::to_owned),
            kind: row.kind,
        })
        .collect()
}

/// The figures printed beside a score: per set, its held-out-by-set figure, or its in-set
/// one where it has none (the task's only set).
pub fn published() -> Vec<Measurement> {
    let all = measurements();
    all.iter()
        .filter(|m| {
            m.kind == FigureKind::HeldOutBySet
                || !all
                    .iter()
                    .any(|other| other.kind == FigureKind::HeldOutBySet && other.same_set(m))
        })
        .cloned()
        .collect()
}

/// The published figures for `task` answered by the heuristic `info` (same name and
/// version; figures of a lexical rule are not claimed for an embedding rule).
pub fn measurements_for(task: TaskKind, info: &HeuristicInfo) -> Vec<Measurement> {
    published()
        .into_iter()
        .filter(|m| m.task == task && m.implementation == info.name && m.version == info.version)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every set whose in-set figure is published has no held-out-by-set figure; every
    /// held-out-by-set figure is published.
    #[test]
    fn one_figure_per_set_is_published_held_out_by_set_where_there_is_one() {
        let all = measurements();
        let published = published();
        for m in &all {
            let shown = published.contains(m);
            let has_held_out = all
                .iter()
                .any(|o| o.kind == FigureKind::HeldOutBySet && o.same_set(m));
            assert_eq!(
                shown,
                m.kind == FigureKind::HeldOutBySet || !has_held_out,
                "{m}"
            );
        }
        assert!(published.iter().any(|m| m.kind == FigureKind::InSet));
        assert!(published.iter().any(|m| m.kind == FigureKind::HeldOutBySet));
    }
}
