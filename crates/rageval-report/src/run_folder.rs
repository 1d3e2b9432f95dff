//! What a folder is: a run directory of some kind ([`RunKind`]: a scored run of `eval`,
//! `judge-check` or `merge` — one outcome per sample × metric — or a `rank`, `reference` or
//! `testset` run, which holds figures per question but no scores to report or compare), a
//! `pipeline` folder (its stages one level down: `rank/`, `reference/`, `dataset.jsonl`,
//! `eval/`), or neither ([`FolderKind`]). Every reader asks here: [`locate_run`] for the
//! commands that want a scored run, [`folder_kind`] for `rageval serve`'s listing.
//!
//! The pipeline's layout is named here, in the crate that owns run directories, so that
//! `rageval-run` writes it and every reader (reports, `compare`, `serve`) finds it by the
//! same names. Reads manifests only (a stage run's figures are `stage_run`'s); never writes.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::{MANIFEST_FILE, Manifest, ReportError};

/// A pipeline's `rank` stage, inside its folder.
pub const PIPELINE_RANK_DIR: &str = "rank";
/// A pipeline's `reference` stage, inside its folder.
pub const PIPELINE_REFERENCE_DIR: &str = "reference";
/// A pipeline's `eval` stage, inside its folder: the run its reports and comparisons use.
pub const PIPELINE_EVAL_DIR: &str = "eval";
/// The dataset a pipeline's `eval` stage scores, inside its folder.
pub const PIPELINE_DATASET_FILE: &str = "dataset.jsonl";
/// A pipeline's stages in the order it runs them.
pub const PIPELINE_STAGES: [&str; 3] =
    [PIPELINE_RANK_DIR, PIPELINE_REFERENCE_DIR, PIPELINE_EVAL_DIR];

/// What a run directory holds, by the command its manifest records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunKind {
    /// One outcome per sample × metric, with `summary.json` in [`crate::Summary`]'s shape:
    /// `eval`, `judge-check`, `merge`, and any command not named below.
    Scored,
    /// `rank`: the judge's order of each question's contexts, against the retriever's.
    Rank,
    /// `reference`: a reference answer written per question.
    Reference,
    /// `testset`: questions written from documents, gated item by item.
    Testset,
    /// `pairwise`: versions' answers judged head to head ([`crate::PairwiseSummary`]).
    Pairwise,
}

impl RunKind {
    /// The kind of a run whose manifest records `command`.
    pub fn of_command(command: &str) -> Self {
        match command {
            "rank" => Self::Rank,
            "reference" => Self::Reference,
            "testset" => Self::Testset,
            crate::PAIRWISE_COMMAND => Self::Pairwise,
            _ => Self::Scored,
        }
    }

    /// Whether its runs hold per-sample scores (reports, `compare` and the pages of samples
    /// read those); the others hold per-question figures in a `summary.json` of their own.
    pub fn is_scored(self) -> bool {
        self == Self::Scored
    }
}

/// What a folder is, from the manifests it and its stages hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FolderKind {
    /// A run directory: it holds `manifest.json` (its command says which [`RunKind`]).
    Run,
    /// A pipeline folder: the stages whose runs have started, in the order it runs them
    /// ([`PIPELINE_STAGES`]); once `eval` is among them, that run is the folder's.
    Pipeline { stages: Vec<&'static str> },
    /// Neither.
    NotARun,
}

/// What the folder at `path` is. Looks at which manifests exist; opens none.
pub fn folder_kind(path: &Path) -> FolderKind {
    if path.join(MANIFEST_FILE).is_file() {
        return FolderKind::Run;
    }
    let stages: Vec<&'static str> = PIPELINE_STAGES
        .into_iter()
        .filter(|stage| path.join(stage).join(MANIFEST_FILE).is_file())
        .collect();
    if stages.is_empty() {
        FolderKind::NotARun
    } else {
        FolderKind::Pipeline { stages }
    }
}

/// A folder given where a scored run is wanted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunFolder {
    /// A run directory with scores.
    Run(PathBuf),
    /// A pipeline folder; `eval` is its scored run.
    Pipeline { root: PathBuf, eval: PathBuf },
}

impl RunFolder {
    /// The scored run directory.
    pub fn run_dir(&self) -> &Path {
        match self {
            Self::Run(dir) => dir,
            Self::Pipeline { eval, .. } => eval,
        }
    }
}

/// Where the scored run of `path` is: `path` itself when it holds a scored run, its
/// `eval/` when it is a pipeline folder. A `rank`, `reference` or `testset` run is refused
/// with what it is and, inside a pipeline, where its `eval` run is; a folder that is
/// neither (or a pipeline whose `eval` stage has not started) is not a run.
pub fn locate_run(path: &Path) -> Result<RunFolder, ReportError> {
    match folder_kind(path) {
        FolderKind::Run => {
            check_scored(path)?;
            Ok(RunFolder::Run(path.to_path_buf()))
        }
        FolderKind::Pipeline { stages } if stages.contains(&PIPELINE_EVAL_DIR) => {
            Ok(RunFolder::Pipeline {
                root: path.to_path_buf(),
                eval: path.join(PIPELINE_EVAL_DIR),
            })
        }
        _ => Err(ReportError::NotARun {
            path: path.to_path_buf(),
        }),
    }
}

/// Refuses a run without per-sample scores (its `summary.json` has another shape); a
/// manifest that does not read passes, for the reader to name.
pub(crate) fn check_scored(dir: &Path) -> Result<(), ReportError> {
    match manifest_command(dir) {
        Some(command) if !RunKind::of_command(&command).is_scored() => {
            Err(stage_run_error(dir, command))
        }
        _ => Ok(()),
    }
}

/// The refusal of the `command` run in `dir` where a scored run is wanted, naming its
/// pipeline's `eval` run when it lies in a pipeline folder.
pub(crate) fn stage_run_error(dir: &Path, command: String) -> ReportError {
    ReportError::StageRun {
        path: dir.to_path_buf(),
        command,
        eval: pipeline_of_stage(dir).map(|root| root.join(PIPELINE_EVAL_DIR)),
    }
}

/// The pipeline folder that `dir` is the `eval` stage of, if it is one: a folder named
/// `eval` beside the pipeline's `rank/` run.
pub fn pipeline_of_eval(dir: &Path) -> Option<&Path> {
    let root = dir.parent()?;
    (dir.file_name()? == PIPELINE_EVAL_DIR
        && root.join(PIPELINE_RANK_DIR).join(MANIFEST_FILE).is_file())
    .then_some(root)
}

/// The pipeline folder that the stage run `dir` lies in, when its `eval/` run is there.
fn pipeline_of_stage(dir: &Path) -> Option<&Path> {
    let root = dir.parent()?;
    root.join(PIPELINE_EVAL_DIR)
        .join(MANIFEST_FILE)
        .is_file()
        .then_some(root)
}

/// The `command` a run directory's manifest records, if it reads.
pub fn manifest_command(dir: &Path) -> Option<String> {
    let bytes = fs::read(dir.join(MANIFEST_FILE)).ok()?;
    let manifest: Manifest = serde_json::from_slice(&bytes).ok()?;
    Some(manifest.command)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{write_run, write_stage_run};
    use rageval_core::Outcome;

    fn stage(dir: &Path, command: &str) {
        write_stage_run(dir, command, &serde_json::json!({}));
    }

    #[test]
    fn a_pipeline_folder_is_read_as_its_eval_run() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("pipeA");
        stage(&root.join(PIPELINE_RANK_DIR), "rank");
        stage(&root.join(PIPELINE_REFERENCE_DIR), "reference");
        write_run(
            &root.join(PIPELINE_EVAL_DIR),
            "d",
            &[("1", "m", Outcome::bare(0.5))],
        );
        let eval = root.join(PIPELINE_EVAL_DIR);
        assert_eq!(
            locate_run(&root).unwrap(),
            RunFolder::Pipeline {
                root: root.clone(),
                eval: eval.clone()
            }
        );
        assert_eq!(locate_run(&eval).unwrap(), RunFolder::Run(eval.clone()));
        assert_eq!(pipeline_of_eval(&eval), Some(root.as_path()));
        let refused = locate_run(&root.join(PIPELINE_RANK_DIR)).unwrap_err();
        assert_eq!(
            refused.relative_to(dir.path()).to_string(),
            "pipeA/rank is a `rank` run: it has per-question figures, not per-sample scores to \
             report or compare; its pipeline's eval run is pipeA/eval"
        );
        assert!(matches!(
            locate_run(dir.path()),
            Err(ReportError::NotARun { .. })
        ));
    }

    #[test]
    fn every_kind_of_folder_is_told_apart() {
        let dir = tempfile::tempdir().unwrap();
        let stopped = dir.path().join("stopped");
        stage(&stopped.join(PIPELINE_RANK_DIR), "rank");
        stage(&stopped.join(PIPELINE_REFERENCE_DIR), "reference");
        assert_eq!(
            folder_kind(&stopped),
            FolderKind::Pipeline {
                stages: vec![PIPELINE_RANK_DIR, PIPELINE_REFERENCE_DIR]
            }
        );
        // A pipeline whose eval has not started has no scored run yet.
        assert!(matches!(
            locate_run(&stopped),
            Err(ReportError::NotARun { .. })
        ));
        assert_eq!(
            folder_kind(&stopped.join(PIPELINE_RANK_DIR)),
            FolderKind::Run
        );
        assert_eq!(folder_kind(dir.path()), FolderKind::NotARun);
        for (command, kind) in [
            ("eval", RunKind::Scored),
            ("judge-check", RunKind::Scored),
            ("merge", RunKind::Scored),
            ("rank", RunKind::Rank),
            ("reference", RunKind::Reference),
            ("testset", RunKind::Testset),
            ("pairwise", RunKind::Pairwise),
        ] {
            assert_eq!(RunKind::of_command(command), kind, "{command}");
        }
        // A testset run has no scores: refused by name, not as a summary that does not read.
        stage(&dir.path().join("ts"), "testset");
        let refused = locate_run(&dir.path().join("ts")).unwrap_err();
        assert!(
            refused.to_string().ends_with(
                "ts is a `testset` run: it has per-question figures, not per-sample scores \
                 to report or compare"
            ),
            "{refused}"
        );
    }

    #[test]
    fn a_lone_stage_run_is_refused_without_a_pipeline() {
        let dir = tempfile::tempdir().unwrap();
        stage(&dir.path().join("refs"), "reference");
        let refused = locate_run(&dir.path().join("refs")).unwrap_err();
        assert_eq!(
            refused.relative_to(dir.path()).to_string(),
            "refs is a `reference` run: it has per-question figures, not per-sample scores to \
             report or compare"
        );
        assert_eq!(pipeline_of_eval(&dir.path().join("refs")), None);
    }
}
