//! The agreement figures measured for the heuristic judge on human-labelled data (a table):
//! held-out figures of the defaults chosen on the development half of the shared sets, and
//! WikiEval whole. The crate's integration tests recompute every row (and the choice) and
//! fail when one drifts, and fail when WikiEval faithfulness falls below 0.9.
//! `docs/judges.md` carries the same table.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::heuristic::HEURISTIC_VERSION;
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
    /// The one metric whose setting the figure was measured in (e.g. `context_recall`: a
    /// reference's statements against passages), when the task serves several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
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

/// A row of the table (all of the lexical heuristic, version [`HEURISTIC_VERSION`]).
struct Row {
    task: TaskKind,
    dataset: &'static str,
    measure: &'static str,
    value: f64,
    count: usize,
    unit: &'static str,
    metric: Option<&'static str>,
}

/// The measured figures of the lexical heuristic (no embedder), statements split by
/// sentences: the held-out figures of the defaults chosen on the development half
/// ([`validation::choose`](crate::validation::choose); printed by `cargo run -p
/// rageval-tasks --example choose_heuristic -- --no-embeddings --rows`), and WikiEval's
/// 10 rows whole (too few to choose on, so none of them played a role in the choice).
/// Keep in step with `docs/judges.md`.
const TABLE: &[Row] = &[
    Row {
        task: TaskKind::SupportVerdicts,
        dataset: "WikiEval",
        measure: "faithfulness pairwise accuracy",
        value: 1.0,
        count: 10,
        unit: "pairs",
        metric: None,
    },
    Row {
        task: TaskKind::SupportVerdicts,
        dataset: "RGB en fact (en script, held-out)",
        measure: "pairwise accuracy",
        value: 0.9519230769230769,
        count: 52,
        unit: "pairs",
        metric: None,
    },
    Row {
        task: TaskKind::SupportVerdicts,
        dataset: "UHGEval zh (en script, held-out)",
        measure: "balanced accuracy",
        value: 0.7862903225806452,
        count: 66,
        unit: "items",
        metric: None,
    },
    Row {
        task: TaskKind::SupportVerdicts,
        dataset: "RGB zh fact (zh script, held-out)",
        measure: "pairwise accuracy",
        value: 0.9693877551020408,
        count: 49,
        unit: "pairs",
        metric: None,
    },
    Row {
        task: TaskKind::SupportVerdicts,
        dataset: "UHGEval zh (zh script, held-out)",
        measure: "balanced accuracy",
        value: 0.7345576698479361,
        count: 3967,
        unit: "items",
        metric: None,
    },
    Row {
        task: TaskKind::SupportVerdicts,
        dataset: "S4 kids-coding zh (zh script, held-out)",
        measure: "pairwise accuracy",
        value: 0.9409772617319787,
        count: 2067,
        unit: "pairs",
        metric: Some("context_recall"),
    },
    Row {
        task: TaskKind::AnswerRubric,
        dataset: "WikiEval",
        measure: "answer relevance pairwise accuracy",
        value: 0.8,
        count: 10,
        unit: "pairs",
        metric: None,
    },
    Row {
        task: TaskKind::ContextRelevance,
        dataset: "RGB en fact (en script, held-out)",
        measure: "balanced accuracy",
        value: 0.49711719702849544,
        count: 514,
        unit: "items",
        metric: None,
    },
    Row {
        task: TaskKind::ContextRelevance,
        dataset: "Cranfield (en script, held-out)",
        measure: "pairwise accuracy",
        value: 0.5227627471383975,
        count: 3844,
        unit: "pairs",
        metric: None,
    },
    Row {
        task: TaskKind::ContextRelevance,
        dataset: "RGB zh refine (zh script, held-out)",
        measure: "balanced accuracy",
        value: 0.7245926951128978,
        count: 4019,
        unit: "items",
        metric: None,
    },
    Row {
        task: TaskKind::ContextRelevance,
        dataset: "DuReader zh (zh script, held-out)",
        measure: "balanced accuracy",
        value: 0.5315721051165382,
        count: 210,
        unit: "items",
        metric: None,
    },
    Row {
        task: TaskKind::ContextRelevance,
        dataset: "S4 kids-coding zh (zh script, held-out)",
        measure: "balanced accuracy",
        value: 0.8488147073052733,
        count: 2120,
        unit: "items",
        metric: None,
    },
    Row {
        task: TaskKind::ContextUsefulness,
        dataset: "RGB en fact (en script, held-out)",
        measure: "balanced accuracy",
        value: 0.9402055977064293,
        count: 514,
        unit: "items",
        metric: None,
    },
    Row {
        task: TaskKind::ContextUsefulness,
        dataset: "RGB zh refine (zh script, held-out)",
        measure: "balanced accuracy",
        value: 0.9445109002333976,
        count: 4019,
        unit: "items",
        metric: None,
    },
    Row {
        task: TaskKind::ContextUsefulness,
        dataset: "S4 kids-coding zh (zh script, held-out)",
        measure: "balanced accuracy",
        value: 0.9066279632317369,
        count: 2120,
        unit: "items",
        metric: None,
    },
    Row {
        task: TaskKind::GradeRelevance,
        dataset: "RGB en fact (en script, held-out)",
        measure: "pairwise accuracy",
        value: 0.5171489817792069,
        count: 933,
        unit: "pairs",
        metric: None,
    },
    Row {
        task: TaskKind::GradeRelevance,
        dataset: "Cranfield (en script, held-out)",
        measure: "pairwise accuracy",
        value: 0.5218522372528616,
        count: 3844,
        unit: "pairs",
        metric: None,
    },
    Row {
        task: TaskKind::GradeRelevance,
        dataset: "RGB zh refine (zh script, held-out)",
        measure: "pairwise accuracy",
        value: 0.788200928985299,
        count: 20883,
        unit: "pairs",
        metric: None,
    },
    Row {
        task: TaskKind::GradeRelevance,
        dataset: "DuReader zh (zh script, held-out)",
        measure: "pairwise accuracy",
        value: 0.5205479452054794,
        count: 219,
        unit: "pairs",
        metric: None,
    },
    Row {
        task: TaskKind::GradeRelevance,
        dataset: "S4 kids-coding zh (zh script, held-out)",
        measure: "pairwise accuracy",
        value: 0.9550072568940493,
        count: 2067,
        unit: "pairs",
        metric: None,
    },
    Row {
        task: TaskKind::PairwisePreference,
        dataset: "WikiEval",
        measure: "context relevance pairwise accuracy",
        value: 0.75,
        count: 10,
        unit: "pairs",
        metric: None,
    },
    Row {
        task: TaskKind::PairwisePreference,
        dataset: "RGB en fact (en script, held-out)",
        measure: "pairwise accuracy",
        value: 0.5852090032154341,
        count: 933,
        unit: "pairs",
        metric: None,
    },
    Row {
        task: TaskKind::PairwisePreference,
        dataset: "Cranfield (en script, held-out)",
        measure: "pairwise accuracy",
        value: 0.5100156087408949,
        count: 3844,
        unit: "pairs",
        metric: None,
    },
    Row {
        task: TaskKind::PairwisePreference,
        dataset: "RGB zh refine (zh script, held-out)",
        measure: "pairwise accuracy",
        value: 0.8360628262222861,
        count: 20883,
        unit: "pairs",
        metric: None,
    },
    Row {
        task: TaskKind::PairwisePreference,
        dataset: "DuReader zh (zh script, held-out)",
        measure: "pairwise accuracy",
        value: 0.5228310502283106,
        count: 219,
        unit: "pairs",
        metric: None,
    },
    Row {
        task: TaskKind::PairwisePreference,
        dataset: "S4 kids-coding zh (zh script, held-out)",
        measure: "pairwise accuracy",
        value: 0.9714562167392357,
        count: 2067,
        unit: "pairs",
        metric: None,
    },
];

/// Every measured figure.
pub fn measurements() -> Vec<Measurement> {
    TABLE
        .iter()
        .map(|row| Measurement {
            task: row.task,
            implementation: "content_word_overlap".to_owned(),
            version: HEURISTIC_VERSION,
            dataset: row.dataset.to_owned(),
            measure: row.measure.to_owned(),
            value: row.value,
            count: row.count,
            unit: row.unit.to_owned(),
            metric: row.metric.map(str::to_owned),
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
