//! The agreement figures measured for the heuristic judge on human-labelled data (a table).
//! Each row is reproduced by `cargo run -p rageval-tasks --example measure_heuristic`, and
//! the crate's integration tests recompute the WikiEval rows and fail when they drift (and
//! when faithfulness falls below 0.9). `docs/judges.md` carries the same table.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::judged::HeuristicInfo;
use crate::task::TaskKind;

/// One measured figure of one implementation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// The task measured.
    pub task: TaskKind,
    /// The heuristic's name.
    pub implementation: String,
    /// The heuristic's version it was measured at.
    pub version: u32,
    /// The data set (e.g. `WikiEval`).
    pub dataset: String,
    /// What was measured (e.g. `faithfulness pairwise accuracy`).
    pub measure: String,
    /// The figure.
    pub value: f64,
    /// Over how many items.
    pub count: usize,
    /// What an item is (`pairs`, `passages`).
    pub unit: String,
}

impl fmt::Display for Measurement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {:.2} ({} {})",
            self.dataset, self.measure, self.value, self.count, self.unit
        )
    }
}

/// A row of the table.
struct Row {
    task: TaskKind,
    implementation: &'static str,
    version: u32,
    dataset: &'static str,
    measure: &'static str,
    value: f64,
    count: usize,
    unit: &'static str,
}

/// The measured figures, for the lexical heuristic (no embedder); statements split by
/// sentences. Printed by `cargo run -p rageval-tasks --example measure_heuristic`; keep in
/// step with `docs/judges.md`.
const TABLE: &[Row] = &[
    Row {
        task: TaskKind::SupportVerdicts,
        implementation: "content_word_overlap",
        version: 1,
        dataset: "WikiEval",
        measure: "faithfulness pairwise accuracy",
        value: 1.0,
        count: 10,
        unit: "pairs",
    },
    Row {
        task: TaskKind::SupportVerdicts,
        implementation: "content_word_overlap",
        version: 1,
        dataset: "RGB en fact",
        measure: "counterfactual support pairwise accuracy",
        value: 0.85,
        count: 100,
        unit: "pairs",
    },
    Row {
        task: TaskKind::SupportVerdicts,
        implementation: "content_word_overlap",
        version: 1,
        dataset: "RGB zh fact",
        measure: "counterfactual support pairwise accuracy",
        value: 0.85,
        count: 100,
        unit: "pairs",
    },
    Row {
        task: TaskKind::AnswerRubric,
        implementation: "content_word_overlap",
        version: 1,
        dataset: "WikiEval",
        measure: "answer relevance pairwise accuracy",
        value: 0.8,
        count: 10,
        unit: "pairs",
    },
    Row {
        task: TaskKind::PairwisePreference,
        implementation: "content_word_overlap",
        version: 1,
        dataset: "WikiEval",
        measure: "context relevance pairwise accuracy",
        value: 0.7,
        count: 10,
        unit: "pairs",
    },
    Row {
        task: TaskKind::PairwisePreference,
        implementation: "content_word_overlap",
        version: 1,
        dataset: "RGB zh refine",
        measure: "answer-passage preference pairwise accuracy",
        value: 0.85,
        count: 300,
        unit: "pairs",
    },
    Row {
        task: TaskKind::GradeRelevance,
        implementation: "content_word_overlap",
        version: 1,
        dataset: "RGB zh refine",
        measure: "answer-passage grade pairwise accuracy",
        value: 0.8033333333333333,
        count: 300,
        unit: "pairs",
    },
    Row {
        task: TaskKind::GradeRelevance,
        implementation: "content_word_overlap",
        version: 1,
        dataset: "DuReader zh",
        measure: "selected-document grade pairwise accuracy",
        value: 0.5140997830802603,
        count: 461,
        unit: "pairs",
    },
    Row {
        task: TaskKind::ContextUsefulness,
        implementation: "content_word_overlap",
        version: 1,
        dataset: "RGB zh refine",
        measure: "usefulness for the reference balanced accuracy",
        value: 0.9516666666666667,
        count: 600,
        unit: "passages",
    },
    Row {
        task: TaskKind::ContextRelevance,
        implementation: "content_word_overlap",
        version: 1,
        dataset: "DuReader zh",
        measure: "selected-document relevance balanced accuracy",
        value: 0.5114775884982482,
        count: 453,
        unit: "documents",
    },
];

/// Every measured figure.
pub fn measurements() -> Vec<Measurement> {
    TABLE
        .iter()
        .map(|row| Measurement {
            task: row.task,
            implementation: row.implementation.to_owned(),
            version: row.version,
            dataset: row.dataset.to_owned(),
            measure: row.measure.to_owned(),
            value: row.value,
            count: row.count,
            unit: row.unit.to_owned(),
        })
        .collect()
}

/// The figures measured for `task` answered by the heuristic `info` (same name and
/// version; figures of a lexical rule are not claimed for an embedding rule).
pub fn measurements_for(task: TaskKind, info: &HeuristicInfo) -> Vec<Measurement> {
    measurements()
        .into_iter()
        .filter(|m| m.task == task && m.implementation == info.name && m.version == info.version)
        .collect()
}
