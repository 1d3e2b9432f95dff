//! `agreement.json`: what `rageval judge-check` measured — how well a judge's scores agree
//! with human labels — as one set of types that the command writes and every report reads.
//!
//! This module holds the file's shape and the readings every view needs (which figures sit
//! at chance, which items the judge got wrong, how two judges differ on the same labels); it
//! computes no statistic itself (`rageval_core::agreement` does: in the command, and for two
//! judges' paired difference here, over the items read from the two files).

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::Path;

use rageval_core::agreement::{
    CrossValidated, PairResult, PairedAgreementDifference, paired_agreement_difference,
};
use rageval_core::stats::Interval;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{CompareSettings, ReportError};

/// The file of a judge-check run directory holding the agreement.
pub const AGREEMENT_FILE: &str = "agreement.json";

/// `notes` key: the warning that a figure's interval includes chance.
pub const NOTE_WARNING: &str = "warning";
/// `notes` key: the score at or above which a binary verdict is "good".
pub const NOTE_THRESHOLD: &str = "threshold";
/// `notes` key: the cross-validated best threshold ([`CrossValidated`]), or why there is none.
pub const NOTE_CROSS_VALIDATED: &str = "cross_validated_threshold";

/// The three shapes of human labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LabelShape {
    /// Which of two samples is better.
    Pairwise,
    /// Good or bad.
    Binary,
    /// A grade, higher is better.
    Graded,
}

impl LabelShape {
    pub fn name(self) -> &'static str {
        match self {
            LabelShape::Pairwise => "pairwise",
            LabelShape::Binary => "binary",
            LabelShape::Graded => "graded",
        }
    }
}

/// A figure with its 95% bootstrap interval (none where the figure has no resampling, e.g.
/// a held-out figure).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AgreementFigure {
    pub value: f64,
    pub ci95: Option<Interval>,
}

/// The human label of one item as written to the file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ItemLabel {
    /// Good (true) or bad.
    Binary(bool),
    /// `"a"` or `"b"`.
    Preferred { preferred: String },
    /// A grade within an optional group.
    Graded { grade: f64, group: Option<String> },
}

impl ItemLabel {
    /// The label in words, for tables.
    pub fn describe(&self) -> String {
        match self {
            ItemLabel::Binary(true) => "good".into(),
            ItemLabel::Binary(false) => "bad".into(),
            ItemLabel::Preferred { preferred } => format!("{preferred} is better"),
            ItemLabel::Graded { grade, group } => match group {
                Some(group) => format!("grade {grade} in {group}"),
                None => format!("grade {grade}"),
            },
        }
    }
}

/// How one item's scores compare with its label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ItemResult {
    /// Pairwise: the preferred sample scored higher, the same, or lower.
    Pair(PairResult),
    /// Binary: whether the verdict at the threshold matches the label.
    Matches(bool),
}

impl ItemResult {
    /// Whether the judge went against the label (a tie is not a disagreement: it counts
    /// half).
    pub fn disagrees(self) -> bool {
        matches!(
            self,
            ItemResult::Pair(PairResult::Disagree) | ItemResult::Matches(false)
        )
    }

    /// The item's points toward agreement: 1 agree or match, ½ tie, 0 otherwise.
    pub fn points(self) -> f64 {
        match self {
            ItemResult::Pair(result) => result.points(),
            ItemResult::Matches(matches) => f64::from(u8::from(matches)),
        }
    }

    /// The result in words.
    pub fn describe(self) -> &'static str {
        match self {
            ItemResult::Pair(PairResult::Agree) => "agree",
            ItemResult::Pair(PairResult::Tie) => "tie",
            ItemResult::Pair(PairResult::Disagree) => "disagree",
            ItemResult::Matches(true) => "match",
            ItemResult::Matches(false) => "mismatch",
        }
    }
}

/// One item as judged: its samples' scores and how they compare with the label.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ItemVerdict {
    pub id: String,
    pub label: ItemLabel,
    /// The item's sample ids in the run (`ID/a`, `ID/b` for a pair; the item's id
    /// otherwise), in the order of `scores`. Empty in files written before it was recorded.
    #[serde(default)]
    pub samples: Vec<String>,
    /// Each sample's score (`null`: undefined or failed).
    pub scores: Vec<Option<f64>>,
    /// Pairwise and binary items whose samples all scored; graded items have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<ItemResult>,
}

impl ItemVerdict {
    /// The item's sample ids in the run (derived from the item's id for files written
    /// before they were recorded).
    pub fn sample_ids(&self) -> Vec<String> {
        if !self.samples.is_empty() {
            return self.samples.clone();
        }
        match self.label {
            ItemLabel::Preferred { .. } => vec![format!("{}/a", self.id), format!("{}/b", self.id)],
            _ => vec![self.id.clone()],
        }
    }
}

/// What `--repeat K` showed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stability {
    pub repeats: usize,
    /// Samples with the same outcome in every repeat ÷ samples.
    pub stable_sample_share: f64,
    /// Mean over samples scored in every repeat of (highest − lowest score).
    pub mean_score_range: f64,
    /// Each repeat's figures, without intervals (repeat 1 first).
    pub figures_by_repeat: Vec<BTreeMap<String, f64>>,
    /// Items with a sample whose outcome changed, and their samples' scores per repeat.
    pub unstable_items: Vec<UnstableItem>,
}

/// An item whose verdict moved between repeats.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnstableItem {
    pub id: String,
    /// Per sample of the item, the score of each repeat (`null`: no score).
    pub scores: Vec<Vec<Option<f64>>>,
}

/// The whole file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Agreement {
    pub shape: LabelShape,
    pub items: usize,
    /// Items left out because a sample got no score.
    pub unscored: usize,
    pub figures: BTreeMap<String, AgreementFigure>,
    /// Counts (pairs agreeing / tied / disagreeing, positives / negatives, groups).
    pub counts: BTreeMap<String, usize>,
    /// Notes: the chance warning, the threshold, why a figure is absent.
    pub notes: BTreeMap<String, Value>,
    pub verdicts: Vec<ItemVerdict>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stability: Option<Stability>,
}

/// The level a figure shows when the judge knows nothing: 0.5 for accuracies and AUROC, 0
/// for correlations and κ; `None` for plain accuracy (it moves with the class balance) and
/// for figures without an interval. Head to head: the accuracy over the three outcomes
/// moves with the share of tie labels and the flip rate is no agreement, so neither has
/// one; on the labels with a preference a judge naming a side at random scores ½.
pub fn chance_level(figure: &str) -> Option<f64> {
    match figure {
        "accuracy" | "balanced_accuracy_cv" | "head_to_head_accuracy" | "position_flip_rate" => {
            None
        }
        "pairwise_accuracy" | "balanced_accuracy" | "auroc" | "head_to_head_accuracy_non_tie" => {
            Some(0.5)
        }
        _ => Some(0.0),
    }
}

impl AgreementFigure {
    /// Whether the figure's 95% interval includes the chance level of `name`.
    pub fn includes_chance(&self, name: &str) -> bool {
        match (chance_level(name), self.ci95) {
            (Some(chance), Some(ci)) => ci.low <= chance && chance <= ci.high,
            _ => false,
        }
    }
}

impl Agreement {
    /// Reads `agreement.json` from a run directory; `None` when the run has none (an `eval`
    /// run).
    pub fn read(dir: &Path) -> Result<Option<Self>, ReportError> {
        let path = dir.join(AGREEMENT_FILE);
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(ReportError::Read { path, source }),
        };
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|source| ReportError::Decode { path, source })
    }

    /// The chance warning, if a figure's interval includes chance.
    pub fn warning(&self) -> Option<&str> {
        self.notes.get(NOTE_WARNING).and_then(Value::as_str)
    }

    /// Binary labels: the verdict threshold.
    pub fn threshold(&self) -> Option<f64> {
        self.notes.get(NOTE_THRESHOLD).and_then(Value::as_f64)
    }

    /// Binary labels: the cross-validated best threshold, or why there is none.
    pub fn cross_validated(&self) -> Option<Result<CrossValidated, String>> {
        let note = self.notes.get(NOTE_CROSS_VALIDATED)?;
        Some(match note {
            Value::String(why) => Err(why.clone()),
            other => serde_json::from_value(other.clone()).map_err(|_| other.to_string()),
        })
    }

    /// Notes other than the warning and the thresholds, as text (why a figure is absent).
    pub fn other_notes(&self) -> Vec<(&str, String)> {
        self.notes
            .iter()
            .filter(|(key, _)| {
                ![NOTE_WARNING, NOTE_THRESHOLD, NOTE_CROSS_VALIDATED].contains(&key.as_str())
            })
            .map(|(key, value)| {
                let text = match value {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                };
                (key.as_str(), text)
            })
            .collect()
    }

    /// The items where the judge went against the label, in file order.
    pub fn disagreements(&self) -> impl Iterator<Item = &ItemVerdict> {
        self.verdicts
            .iter()
            .filter(|v| v.result.is_some_and(ItemResult::disagrees))
    }
}

/// One figure of two judges checked on the same labels.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FigureDelta {
    pub figure: String,
    pub baseline: Option<AgreementFigure>,
    pub candidate: Option<AgreementFigure>,
    /// `candidate − baseline`.
    pub delta: Option<f64>,
}

/// An item whose result differs between the two judges.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VerdictChange {
    pub id: String,
    pub baseline: Option<ItemResult>,
    pub candidate: Option<ItemResult>,
}

/// Two judges' agreement with the same labels, side by side.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgreementDelta {
    pub shape: LabelShape,
    pub figures: Vec<FigureDelta>,
    pub baseline_unscored: usize,
    pub candidate_unscored: usize,
    /// Items whose result differs.
    pub changed: usize,
    /// The first `top` of them, in file order.
    pub changes: Vec<VerdictChange>,
    /// Agreement item by item over the label items both judges scored (paired by item id):
    /// the difference with its interval and p-value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paired: Option<PairedAgreementDifference>,
    /// Why there is no paired difference (graded labels, or no item scored by both).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paired_undefined: Option<String>,
}

impl AgreementDelta {
    /// `candidate` against `baseline`, listing at most `settings.top_flips` changed items;
    /// the paired difference is drawn with `settings`' level, resamples, permutations and
    /// seed.
    pub fn between(
        baseline: &Agreement,
        candidate: &Agreement,
        settings: &CompareSettings,
    ) -> Self {
        let top = settings.top_flips;
        let mut names: Vec<&String> = baseline.figures.keys().collect();
        for name in candidate.figures.keys() {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        let figures = names
            .into_iter()
            .map(|name| {
                let (a, b) = (
                    baseline.figures.get(name).copied(),
                    candidate.figures.get(name).copied(),
                );
                FigureDelta {
                    figure: name.clone(),
                    baseline: a,
                    candidate: b,
                    delta: a.zip(b).map(|(a, b)| b.value - a.value),
                }
            })
            .collect();
        let before: HashMap<&str, Option<ItemResult>> = baseline
            .verdicts
            .iter()
            .map(|v| (v.id.as_str(), v.result))
            .collect();
        let changed: Vec<VerdictChange> = candidate
            .verdicts
            .iter()
            .filter_map(|v| {
                let was = *before.get(v.id.as_str())?;
                (was != v.result).then(|| VerdictChange {
                    id: v.id.clone(),
                    baseline: was,
                    candidate: v.result,
                })
            })
            .collect();
        let (paired, paired_undefined) = match paired_points(baseline, candidate, &before) {
            Ok((a, b)) => (
                paired_agreement_difference(
                    &a,
                    &b,
                    settings.level,
                    settings.resamples,
                    settings.permutations,
                    settings.seed,
                ),
                None,
            ),
            Err(why) => (None, Some(why)),
        };
        Self {
            shape: candidate.shape,
            figures,
            baseline_unscored: baseline.unscored,
            candidate_unscored: candidate.unscored,
            changed: changed.len(),
            changes: changed.into_iter().take(top).collect(),
            paired,
            paired_undefined,
        }
    }
}

/// Both judges' points on each label item both scored, in the candidate's file order (so
/// the bootstrap draws the same resamples every time), or why there are none.
fn paired_points(
    baseline: &Agreement,
    candidate: &Agreement,
    before: &HashMap<&str, Option<ItemResult>>,
) -> Result<(Vec<f64>, Vec<f64>), String> {
    if baseline.shape != candidate.shape {
        return Err(format!(
            "the labels differ in shape ({} and {})",
            baseline.shape.name(),
            candidate.shape.name()
        ));
    }
    if candidate.shape == LabelShape::Graded {
        return Err("graded labels have no per-item right or wrong to pair".into());
    }
    let (a, b): (Vec<f64>, Vec<f64>) = candidate
        .verdicts
        .iter()
        .filter_map(|v| {
            let was = (*before.get(v.id.as_str())?)?;
            Some((was.points(), v.result?.points()))
        })
        .unzip();
    if a.is_empty() {
        return Err("no label item was scored by both judges".into());
    }
    Ok((a, b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rageval_core::agreement::PairedAgreementTest;
    use serde_json::json;

    /// An agreement.json as `judge-check` wrote it before sample ids were recorded.
    fn written() -> Value {
        json!({
            "shape": "pairwise", "items": 3, "unscored": 1,
            "figures": {"pairwise_accuracy": {"value": 0.75, "ci95": {"low": 0.5, "high": 1.0}}},
            "counts": {"agree": 1, "tie": 1, "disagree": 0},
            "notes": {"warning": "the 95% interval of pairwise_accuracy includes chance"},
            "verdicts": [
                {"id": "x", "label": {"preferred": "a"}, "scores": [0.9, 0.1], "result": "agree"},
                {"id": "y", "label": {"preferred": "b"}, "scores": [0.4, 0.4], "result": "tie"},
                {"id": "z", "label": {"preferred": "a"}, "scores": [null, 1.0]}
            ]
        })
    }

    #[test]
    fn reads_what_judge_check_writes_and_writes_it_back_the_same() {
        let agreement: Agreement = serde_json::from_value(written()).unwrap();
        assert_eq!(agreement.shape, LabelShape::Pairwise);
        assert_eq!(
            agreement.verdicts[1].result,
            Some(ItemResult::Pair(PairResult::Tie))
        );
        assert!(agreement.verdicts[2].samples.is_empty());
        assert!(agreement.warning().unwrap().contains("chance"));
        let mut again = serde_json::to_value(&agreement).unwrap();
        for verdict in again["verdicts"].as_array_mut().unwrap() {
            verdict.as_object_mut().unwrap().remove("samples");
        }
        assert_eq!(again, written());
    }

    #[test]
    fn binary_labels_and_their_thresholds_read_back() {
        let agreement: Agreement = serde_json::from_value(json!({
            "shape": "binary", "items": 2, "unscored": 0,
            "figures": {"auroc": {"value": 0.5, "ci95": {"low": 0.2, "high": 0.8}},
                        "accuracy": {"value": 0.5, "ci95": {"low": 0.0, "high": 1.0}}},
            "counts": {},
            "notes": {"threshold": 0.5, "auroc": "ignored text",
                      "cross_validated_threshold": {"threshold": 0.4, "in_sample": 0.9,
                                                    "held_out": 0.7, "folds": 5}},
            "verdicts": [{"id": "1", "label": true, "samples": ["1"], "scores": [0.7],
                          "result": true},
                         {"id": "2", "label": {"grade": 2.0, "group": null}, "scores": [0.1],
                          "result": false}]
        }))
        .unwrap();
        assert_eq!(agreement.threshold(), Some(0.5));
        assert_eq!(agreement.cross_validated().unwrap().unwrap().held_out, 0.7);
        assert_eq!(
            agreement.other_notes(),
            vec![("auroc", "ignored text".into())]
        );
        let wrong: Vec<&str> = agreement.disagreements().map(|v| v.id.as_str()).collect();
        assert_eq!(wrong, ["2"]);
        assert_eq!(agreement.verdicts[1].label.describe(), "grade 2");
        assert!(agreement.figures["auroc"].includes_chance("auroc"));
        // Plain accuracy has no fixed chance level.
        assert!(!agreement.figures["accuracy"].includes_chance("accuracy"));
    }

    #[test]
    fn two_judges_differ_figure_by_figure_and_item_by_item() {
        let a: Agreement = serde_json::from_value(written()).unwrap();
        let mut b = a.clone();
        b.figures.get_mut("pairwise_accuracy").unwrap().value = 0.5;
        b.verdicts[0].result = Some(ItemResult::Pair(PairResult::Disagree));
        b.verdicts[2].result = Some(ItemResult::Pair(PairResult::Agree));
        let settings = CompareSettings {
            top_flips: 1,
            ..CompareSettings::default()
        };
        let delta = AgreementDelta::between(&a, &b, &settings);
        assert_eq!(delta.figures[0].delta, Some(-0.25));
        assert_eq!(delta.changed, 2);
        assert_eq!(delta.changes.len(), 1);
        assert_eq!(delta.changes[0].id, "x");
        // Paired by id over the items both judges scored (z has no baseline score): x went
        // from agree (1) to disagree (0), y tied in both (½ each), so the difference is
        // (−1 + 0) / 2 = −0.5; a tie among the points means the sign-flip test.
        let paired = delta.paired.unwrap();
        assert_eq!((paired.items, paired.difference), (2, -0.5));
        assert_eq!((paired.baseline_better, paired.candidate_better), (1, 0));
        assert_eq!(paired.test, PairedAgreementTest::SignFlip);
        assert_eq!(delta.paired_undefined, None);
    }

    #[test]
    fn graded_labels_and_unshared_items_have_no_paired_difference() {
        let a: Agreement = serde_json::from_value(written()).unwrap();
        let mut graded = a.clone();
        graded.shape = LabelShape::Graded;
        let settings = CompareSettings::default();
        let delta = AgreementDelta::between(&graded, &graded, &settings);
        assert_eq!(delta.paired, None);
        assert!(delta.paired_undefined.unwrap().contains("graded"));
        let mut renamed = a.clone();
        for verdict in &mut renamed.verdicts {
            verdict.id.push('2');
        }
        let delta = AgreementDelta::between(&a, &renamed, &settings);
        assert!(delta.paired_undefined.unwrap().contains("scored by both"));
    }
}
