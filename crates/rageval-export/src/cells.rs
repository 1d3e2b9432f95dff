//! A run directory read as the cells a writer sends: each sample × metric outcome of its
//! journal (the last line of a cell wins, as resuming with `--retry-failed` replaces it),
//! with where the sample came from — its trace id and the evaluated span (the OpenInference
//! reader keeps them in the sample's metadata; a dataset of our own shape may carry
//! `trace_id`, `span_id` and `response_id` columns) — and who judged each metric.
//!
//! A run still running (a rolling `--watch` run, one that stopped) is read as far as its
//! journal goes. Nothing here talks to a server.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use rageval_core::{Outcome, Sample};
use rageval_report::{
    Manifest, RESULTS_FILE, any_file, read_dataset_of, read_manifest, read_results,
};
use serde_json::{Value, json};

use crate::ExportError;

/// Longest explanation sent, in characters (a cell with many statements gets the first).
pub const MAX_EXPLANATION_CHARS: usize = 4_000;

/// Who gave a score, in Phoenix's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnnotatorKind {
    /// A chat model answered at least one of the metric's judge tasks.
    Llm,
    /// A formula, the heuristic judge or a checker model (no chat model).
    Code,
}

impl AnnotatorKind {
    /// `LLM` or `CODE`.
    pub fn as_str(self) -> &'static str {
        match self {
            AnnotatorKind::Llm => "LLM",
            AnnotatorKind::Code => "CODE",
        }
    }
}

/// One sample × metric, with where its sample came from.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportCell {
    pub sample_id: String,
    pub metric: String,
    pub outcome: Outcome,
    /// The trace the sample was read from (hex, as OpenTelemetry writes it), when known.
    pub trace_id: Option<String>,
    /// The evaluated span: the trace's root span, when known.
    pub span_id: Option<String>,
    /// The model response the sample holds, when the data names it (`response_id`).
    pub response_id: Option<String>,
}

impl ExportCell {
    /// The score's value, for a scored cell.
    pub fn value(&self) -> Option<f64> {
        self.outcome.value()
    }

    /// A label for the cell: the one verdict's label when the score rests on one labelled
    /// verdict, `undefined` for a metric that does not apply, `failed` for a failure.
    pub fn label(&self) -> Option<String> {
        match &self.outcome {
            Outcome::Score { evidence, .. } => match evidence.verdicts.as_slice() {
                [only] => only.label.clone(),
                _ => None,
            },
            Outcome::Undefined { .. } => Some("undefined".into()),
            Outcome::Failed { .. } => Some("failed".into()),
        }
    }

    /// The reasons behind the score (each verdict's, numbered), the reason a metric does not
    /// apply, or the error of a failure; shortened to [`MAX_EXPLANATION_CHARS`].
    pub fn explanation(&self) -> Option<String> {
        let text = match &self.outcome {
            Outcome::Score { evidence, .. } => {
                let reasons: Vec<String> = evidence
                    .verdicts
                    .iter()
                    .enumerate()
                    .filter_map(|(i, verdict)| {
                        let reason = verdict.reason.as_deref()?.trim();
                        (!reason.is_empty()).then(|| match &verdict.label {
                            Some(label) => format!("{}. {label}: {reason}", i + 1),
                            None => format!("{}. {reason}", i + 1),
                        })
                    })
                    .collect();
                if reasons.is_empty() {
                    return None;
                }
                reasons.join("\n")
            }
            Outcome::Undefined { reason } => reason.clone(),
            Outcome::Failed { error } => error.clone(),
        };
        Some(shorten(&text, MAX_EXPLANATION_CHARS))
    }
}

/// A run directory's cells and what writers say about it.
#[derive(Debug, Clone)]
pub struct ExportRun {
    /// The run directory.
    pub path: PathBuf,
    /// What the run is called: its version name, else its directory's name.
    pub name: String,
    pub manifest: Manifest,
    /// The journal's cells in journal order, one per sample × metric.
    pub cells: Vec<ExportCell>,
    /// Why the samples' trace and span ids are unknown, when the dataset could not be read.
    pub ids_unavailable: Option<String>,
    kinds: BTreeMap<String, AnnotatorKind>,
}

impl ExportRun {
    /// Reads the run in `dir`: its manifest, journal and (for the ids) its dataset.
    pub fn open(dir: &Path) -> Result<Self, ExportError> {
        let manifest = read_manifest(dir, &any_file)?;
        let journal = dir.join(RESULTS_FILE);
        let records = if journal.is_file() {
            read_results(&journal)?
        } else {
            Vec::new()
        };
        let (ids, ids_unavailable) = match read_dataset_of(&manifest, dir) {
            Ok(samples) => (sample_ids(&samples), None),
            Err(error) => (HashMap::new(), Some(error.to_string())),
        };
        let mut position: HashMap<(String, String), usize> = HashMap::new();
        let mut cells: Vec<ExportCell> = Vec::new();
        for record in records {
            let key = (record.sample_id.clone(), record.metric.clone());
            let found = ids.get(&record.sample_id).cloned().unwrap_or_default();
            let cell = ExportCell {
                sample_id: record.sample_id,
                metric: record.metric,
                outcome: record.outcome,
                trace_id: found.trace_id,
                span_id: found.span_id,
                response_id: found.response_id,
            };
            match position.get(&key) {
                Some(&at) => cells[at] = cell,
                None => {
                    position.insert(key, cells.len());
                    cells.push(cell);
                }
            }
        }
        let kinds = manifest
            .metrics
            .iter()
            .map(|metric| {
                let llm = metric
                    .judges
                    .iter()
                    .any(|judge| judge.answered_by.starts_with("llm"));
                let kind = if llm {
                    AnnotatorKind::Llm
                } else {
                    AnnotatorKind::Code
                };
                (metric.name.clone(), kind)
            })
            .collect();
        let name = manifest.version_name.clone().unwrap_or_else(|| {
            dir.file_name().map_or_else(
                || dir.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            )
        });
        Ok(ExportRun {
            path: dir.to_path_buf(),
            name,
            manifest,
            cells,
            ids_unavailable,
            kinds,
        })
    }

    /// Who gave `metric`'s scores.
    pub fn annotator_kind(&self, metric: &str) -> AnnotatorKind {
        self.kinds
            .get(metric)
            .copied()
            .unwrap_or(AnnotatorKind::Code)
    }

    /// The judge in a few words (`endpoint gpt-4o-mini`, `heuristic`), from the run's
    /// identity.
    pub fn judge(&self) -> String {
        let judge = &self.manifest.settings["identity"]["judge"];
        let kind = judge["kind"].as_str().unwrap_or("unknown");
        match judge["model"].as_str() {
            Some(model) => format!("{kind} {model}"),
            None => kind.to_owned(),
        }
    }

    /// What a writer records of the judge beside each score: the tool, the run, the judge
    /// and who answered each of the metric's tasks.
    pub fn judge_metadata(&self, metric: &str) -> Value {
        let tasks: BTreeMap<&str, &str> = self
            .manifest
            .metrics
            .iter()
            .filter(|m| m.name == metric)
            .flat_map(|m| m.judges.iter())
            .map(|judge| (judge.task.as_str(), judge.answered_by.as_str()))
            .collect();
        json!({
            "tool": format!("{} {}", self.manifest.tool.name, self.manifest.tool.version),
            "run": self.name,
            "judge": self.judge(),
            "tasks": tasks,
        })
    }
}

/// Where one sample came from.
#[derive(Debug, Clone, Default)]
struct SampleIds {
    trace_id: Option<String>,
    span_id: Option<String>,
    response_id: Option<String>,
}

fn sample_ids(samples: &[Sample]) -> HashMap<String, SampleIds> {
    let text = |sample: &Sample, key: &str| match sample.metadata.get(key) {
        Some(Value::String(text)) if !text.trim().is_empty() => Some(text.clone()),
        _ => None,
    };
    samples
        .iter()
        .map(|sample| {
            let ids = SampleIds {
                trace_id: text(sample, "trace_id"),
                span_id: text(sample, "span_id"),
                response_id: text(sample, "response_id"),
            };
            (sample.id.clone(), ids)
        })
        .collect()
}

/// `text` cut to `max` characters, with an ellipsis when cut.
fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rageval_core::{Evidence, Verdict, VerdictTarget};

    fn cell(outcome: Outcome) -> ExportCell {
        ExportCell {
            sample_id: "s".into(),
            metric: "m".into(),
            outcome,
            trace_id: None,
            span_id: None,
            response_id: None,
        }
    }

    fn verdict(value: f64, label: Option<&str>, reason: Option<&str>) -> Verdict {
        Verdict {
            target: VerdictTarget::Statement(0),
            value,
            label: label.map(str::to_owned),
            text: None,
            reason: reason.map(str::to_owned),
            supporting_contexts: Vec::new(),
        }
    }

    #[test]
    fn explanations_come_from_the_verdicts_reasons() {
        let evidence = Evidence {
            verdicts: vec![
                verdict(1.0, Some("supported"), Some("context 1 says so")),
                verdict(0.0, None, Some("nothing says this")),
                verdict(1.0, None, None),
            ],
            details: Default::default(),
        };
        let scored = cell(Outcome::score(0.67, evidence));
        assert_eq!(
            scored.explanation().as_deref(),
            Some("1. supported: context 1 says so\n2. nothing says this")
        );
        assert_eq!(scored.label(), None);
        assert_eq!(cell(Outcome::bare(1.0)).explanation(), None);
        let undefined = cell(Outcome::undefined("no reference"));
        assert_eq!(undefined.label().as_deref(), Some("undefined"));
        assert_eq!(undefined.explanation().as_deref(), Some("no reference"));
    }

    #[test]
    fn one_labelled_verdict_labels_the_score() {
        let evidence = Evidence {
            verdicts: vec![verdict(1.0, Some("relevant"), Some("on topic"))],
            details: Default::default(),
        };
        assert_eq!(
            cell(Outcome::score(1.0, evidence)).label().as_deref(),
            Some("relevant")
        );
    }

    #[test]
    fn long_explanations_are_shortened() {
        let long = "x".repeat(MAX_EXPLANATION_CHARS + 10);
        let text = cell(Outcome::undefined(long)).explanation().unwrap();
        assert_eq!(text.chars().count(), MAX_EXPLANATION_CHARS);
        assert!(text.ends_with('…'));
    }
}
