//! `manifest.json`: what a run was — tool version, command, dataset and its hash, metrics
//! with their formulas, settings — and whether it finished.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::Session;

/// Version of the run-directory layout; bumped when a file changes shape.
pub const RUN_FORMAT_VERSION: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Started and not finished: results may be partial.
    Running,
    /// Every sample × metric has a result and `summary.json` is written.
    Complete,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolInfo {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DatasetInfo {
    pub path: String,
    /// SHA-256 of the dataset's bytes: `compare` refuses runs over different data.
    pub sha256: String,
    pub format: String,
    /// Samples read; known once the run is complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<usize>,
}

/// One metric as it was run, so a reader of old results knows what the numbers meant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricRecord {
    pub name: String,
    pub formula: String,
    pub source: String,
    /// Who answered each judge task the metric asks, with the agreement measured for that
    /// implementation on that task in this metric's setting (empty for a model-free metric,
    /// and in runs written before it was recorded).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judges: Vec<TaskJudgeRecord>,
}

/// One judge task of a metric and the implementation that answered it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskJudgeRecord {
    /// The task (`support_verdicts`).
    pub task: String,
    /// The implementation, e.g. `llm openai:gpt-4o`, `llm gguf:qwen.gguf`, `heuristic
    /// content_word_overlap v3`, or `unavailable`.
    pub answered_by: String,
    /// Agreement with human labels measured for it; empty: unmeasured.
    #[serde(default)]
    pub measured: Vec<MeasuredFigure>,
}

/// One agreement figure measured on human-labelled data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasuredFigure {
    pub dataset: String,
    /// `pairwise accuracy`, `balanced accuracy`, … (each at chance 0.5).
    pub measure: String,
    pub value: f64,
    /// Over how many items.
    pub count: usize,
    pub unit: String,
    /// Held out by set (the judge's settings chosen without the set) or in-set; runs
    /// written before it was recorded read as in-set.
    #[serde(default)]
    pub kind: rageval_core::agreement::FigureKind,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`RUN_FORMAT_VERSION`] of the rageval that wrote it. Reading a newer one fails, so an
    /// older binary never resumes a newer run and rewrites its manifest without the fields
    /// it does not know.
    #[serde(deserialize_with = "known_format_version")]
    pub format_version: u32,
    pub tool: ToolInfo,
    pub command: String,
    /// The version of the system this run measured, as tables name it (`V1.1 (rerank)`;
    /// `eval --name`). Not part of the run's identity: a resumed run may be renamed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version_name: Option<String>,
    pub status: RunStatus,
    pub dataset: DatasetInfo,
    pub metrics: Vec<MetricRecord>,
    /// Resolved settings (no secrets: the caller masks them).
    pub settings: Value,
    pub started_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    /// Every `eval` invocation on this run so far (more than one when it was resumed), with
    /// what each asked of the judge.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sessions: Vec<Session>,
}

/// A format version this build reads: [`RUN_FORMAT_VERSION`] or an older one.
fn known_format_version<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u32, D::Error> {
    let version = u32::deserialize(deserializer)?;
    if version > RUN_FORMAT_VERSION {
        return Err(serde::de::Error::custom(format!(
            "the run was written in run format {version}, newer than format \
             {RUN_FORMAT_VERSION}, the newest this rageval ({}) reads: read or resume it with \
             a rageval at least as new as the one that wrote it (its manifest's `tool.version`)",
            env!("CARGO_PKG_VERSION")
        )));
    }
    Ok(version)
}

impl Manifest {
    /// A manifest for a run that starts now.
    pub fn start(
        command: &str,
        dataset: DatasetInfo,
        metrics: Vec<MetricRecord>,
        settings: Value,
    ) -> Self {
        Self {
            format_version: RUN_FORMAT_VERSION,
            tool: ToolInfo {
                name: "rageval".into(),
                version: env!("CARGO_PKG_VERSION").into(),
            },
            command: command.into(),
            version_name: None,
            status: RunStatus::Running,
            dataset,
            metrics,
            settings,
            started_at: crate::utc_timestamp(),
            finished_at: None,
            sessions: Vec::new(),
        }
    }
}
