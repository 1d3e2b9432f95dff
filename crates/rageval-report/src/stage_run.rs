//! A finished run without per-sample scores — `rank`, `reference`, `testset`, `pairwise` —
//! read back: its manifest, its `summary.json` as the command wrote it (`{"command", …,
//! "summary": {…}}`; a `pairwise` run's is a [`crate::PairwiseSummary`]), and the figures a listing shows of it ([`StageFigures`]). [`read_run`] reads any
//! finished run as what it is ([`AnyRun`]), for the readers that show every kind
//! (`rageval serve`).
//!
//! The figures' shapes are the writers' (`rageval-run`'s `RankSummary`, `ReferenceSummary`
//! and `TestsetSummary`), read field by field: a field a later writer adds is ignored, one
//! it drops fails the read naming the file. A test of the binary runs each command and
//! reads its folder back here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::pairwise_render::pairwise_line;
use crate::reader::{OpenCheck, checked_file, read_json, read_manifest, run_name};
use crate::{
    Manifest, PAIRWISE_FILE, PairwiseQuestion, PairwiseSummary, RANK_AGREEMENT_FILE,
    RankAgreementRow, ReportError, RunData, RunInfo, RunKind, RunStatus, SUMMARY_FILE,
    read_pairwise_questions, read_rank_agreement,
};

/// A `rank` run's counts (its retriever-versus-judge figures are `rank_agreement.jsonl`'s).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankFigures {
    pub questions: usize,
    /// Questions left out of the figures because some grades did not come back.
    pub left_out: usize,
}

/// A `reference` run's counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReferenceFigures {
    pub questions: usize,
    /// References written.
    pub written: usize,
    /// Questions without one because the judge failed.
    pub judge_failed: usize,
    /// Questions without one because no context answers them.
    pub unanswered: usize,
}

/// A `testset` run's counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestsetFigures {
    /// Items the plan asked for.
    pub planned: usize,
    /// Items in the finished set.
    pub written: usize,
    /// Slots whose judge failed or answered unusably.
    pub judge_failed: usize,
    /// Items dropped, by gate.
    pub dropped: BTreeMap<String, usize>,
}

/// A `pairwise` run's figures: one line per pair of versions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairwiseFigures {
    /// Questions every version answered.
    pub questions: usize,
    /// Each pair's wins, ties, losses, win rate with its interval, p and flip rate.
    pub head_to_head: Vec<String>,
}

/// What a finished run without per-sample scores says of itself.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum StageFigures {
    Rank(RankFigures),
    Reference(ReferenceFigures),
    Testset(TestsetFigures),
    Pairwise(PairwiseFigures),
}

impl StageFigures {
    /// The figures of a `kind` run from its `summary.json` (the path names it in an error);
    /// `None` for a scored run.
    pub fn of_summary(
        kind: RunKind,
        summary: &Value,
        path: &Path,
    ) -> Result<Option<Self>, ReportError> {
        fn figures<T: DeserializeOwned>(summary: &Value, path: &Path) -> Result<T, ReportError> {
            T::deserialize(&summary["summary"]).map_err(|source| ReportError::Decode {
                path: path.to_path_buf(),
                source,
            })
        }
        Ok(Some(match kind {
            RunKind::Scored => return Ok(None),
            RunKind::Rank => Self::Rank(figures(summary, path)?),
            RunKind::Reference => Self::Reference(figures(summary, path)?),
            RunKind::Testset => Self::Testset(figures(summary, path)?),
            RunKind::Pairwise => {
                let pairwise = PairwiseSummary::deserialize(summary).map_err(|source| {
                    ReportError::Decode {
                        path: path.to_path_buf(),
                        source,
                    }
                })?;
                Self::Pairwise(PairwiseFigures {
                    questions: pairwise.questions,
                    head_to_head: pairwise.pairs.iter().map(pairwise_line).collect(),
                })
            }
        }))
    }

    /// The figures in words, for a listing.
    pub fn describe(&self) -> String {
        match self {
            Self::Rank(f) => format!("{} questions ranked, {} left out", f.questions, f.left_out),
            Self::Reference(f) => format!(
                "references written {} of {} ({} judge failed, {} unanswered)",
                f.written, f.questions, f.judge_failed, f.unanswered
            ),
            Self::Testset(f) => {
                let dropped: usize = f.dropped.values().sum();
                format!(
                    "{} of {} planned questions written ({dropped} dropped by the gates, {} \
                     judge failed)",
                    f.written, f.planned, f.judge_failed
                )
            }
            Self::Pairwise(f) => format!(
                "{} questions judged head to head; {}",
                f.questions,
                f.head_to_head.join("; ")
            ),
        }
    }
}

/// A finished `rank`, `reference`, `testset` or `pairwise` run.
#[derive(Debug, Clone)]
pub struct StageData {
    pub path: PathBuf,
    /// Its directory's name.
    pub name: String,
    pub kind: RunKind,
    pub manifest: Manifest,
    /// `summary.json` as the command wrote it.
    pub summary: Value,
    pub figures: StageFigures,
    /// A `rank` run's retriever-versus-judge figures per question.
    pub rank_agreement: Option<Vec<RankAgreementRow>>,
    /// A `pairwise` run's journal: every question's verdicts with their reasons.
    pub pairwise_questions: Option<Vec<PairwiseQuestion>>,
}

/// A finished run read as what it is: a scored run (`S`: [`RunData`] with its journal, or
/// [`RunInfo`] without it) or a stage run.
#[derive(Debug, Clone)]
pub enum AnyRun<S = RunData> {
    /// Per-sample scores.
    Scored(Box<S>),
    /// Per-question figures.
    Stage(Box<StageData>),
}

/// Reads the finished run in `dir`, whatever its kind, its journal held whole, asking
/// `check` before each file it opens; refuses what [`RunInfo::load`] refuses but a stage
/// run.
pub fn read_run(dir: &Path, check: OpenCheck<'_>) -> Result<AnyRun, ReportError> {
    read_any(dir, check, |info| RunData::of_info(info, check))
}

/// [`read_run`] without a scored run's journal (a listing's view).
pub fn read_run_info(dir: &Path, check: OpenCheck<'_>) -> Result<AnyRun<RunInfo>, ReportError> {
    read_any(dir, check, Ok)
}

fn read_any<S>(
    dir: &Path,
    check: OpenCheck<'_>,
    scored: impl FnOnce(RunInfo) -> Result<S, ReportError>,
) -> Result<AnyRun<S>, ReportError> {
    let manifest = read_manifest(dir, check)?;
    let kind = RunKind::of_command(&manifest.command);
    if kind.is_scored() {
        let info = RunInfo::of_manifest(dir, manifest, check)?;
        return Ok(AnyRun::Scored(Box::new(scored(info)?)));
    }
    if manifest.status != RunStatus::Complete {
        return Err(ReportError::Incomplete {
            path: dir.to_path_buf(),
        });
    }
    let summary_path = checked_file(dir, SUMMARY_FILE, check)?;
    let summary: Value = read_json(&summary_path)?;
    let figures = StageFigures::of_summary(kind, &summary, &summary_path)?.ok_or_else(|| {
        ReportError::NotARun {
            path: dir.to_path_buf(),
        }
    })?;
    checked_file(dir, RANK_AGREEMENT_FILE, check)?;
    let rank_agreement = read_rank_agreement(dir)?;
    let pairwise_questions = if kind == RunKind::Pairwise {
        checked_file(dir, PAIRWISE_FILE, check)?;
        Some(read_pairwise_questions(dir)?)
    } else {
        None
    };
    Ok(AnyRun::Stage(Box::new(StageData {
        path: dir.to_path_buf(),
        name: run_name(dir),
        kind,
        manifest,
        summary,
        figures,
        rank_agreement,
        pairwise_questions,
    })))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::reader::any_file;
    use crate::testing::write_stage_run as stage;

    #[test]
    fn each_stage_run_reads_with_its_figures() {
        let dir = tempfile::tempdir().unwrap();
        let reference = json!({"command": "reference", "settings": {}, "judge": {},
            "summary": {"questions": 3, "written": 2, "judge_failed": 1, "unanswered": 0,
                        "calls": 5, "judge": {}}});
        stage(&dir.path().join("refs"), "reference", &reference);
        let testset = json!({"command": "testset", "plan": {}, "generator": {},
            "summary": {"chunks": 9, "planned": 24, "written": 20, "judge_failed": 1,
                        "dropped": {"self_contained": 2, "duplicate_exact": 1}}});
        stage(&dir.path().join("ts"), "testset", &testset);
        let AnyRun::Stage(refs) = read_run(&dir.path().join("refs"), &any_file).unwrap() else {
            panic!("a reference run is a stage run");
        };
        assert_eq!(refs.kind, RunKind::Reference);
        assert_eq!(
            refs.figures.describe(),
            "references written 2 of 3 (1 judge failed, 0 unanswered)"
        );
        assert_eq!(refs.summary, reference);
        let AnyRun::Stage(ts) = read_run(&dir.path().join("ts"), &any_file).unwrap() else {
            panic!("a testset run is a stage run");
        };
        assert_eq!(
            ts.figures.describe(),
            "20 of 24 planned questions written (3 dropped by the gates, 1 judge failed)"
        );
        // A summary without the writer's fields is named.
        stage(
            &dir.path().join("odd"),
            "reference",
            &json!({"questions": 3}),
        );
        let error = read_run(&dir.path().join("odd"), &any_file).unwrap_err();
        assert!(
            error
                .to_string()
                .ends_with("summary.json is not valid JSON of the expected shape"),
            "{error}"
        );
    }
}
