//! What a folder given as a run is: a scored run (`eval`, `judge-check`, `merge`: one
//! outcome per sample × metric), a `pipeline` folder (its stages one level down: `rank/`,
//! `reference/`, `dataset.jsonl`, `eval/`), or a `rank` / `reference` stage run, which holds
//! figures per question but no scores to report or compare.
//!
//! The pipeline's layout is named here, in the crate that owns run directories, so that
//! `rageval-run` writes it and every reader (reports, `compare`, `serve`) finds it by the
//! same names. Reads manifests only; never writes.

use std::fs;
use std::path::{Path, PathBuf};

use crate::{MANIFEST_FILE, Manifest, ReportError};

/// A pipeline's `rank` stage, inside its folder.
pub const PIPELINE_RANK_DIR: &str = "rank";
/// A pipeline's `reference` stage, inside its folder.
pub const PIPELINE_REFERENCE_DIR: &str = "reference";
/// A pipeline's `eval` stage, inside its folder: the run its reports and comparisons use.
pub const PIPELINE_EVAL_DIR: &str = "eval";
/// The dataset a pipeline's `eval` stage scores, inside its folder.
pub const PIPELINE_DATASET_FILE: &str = "dataset.jsonl";

/// Manifest commands of runs that hold per-question figures, not per-sample scores.
const STAGE_COMMANDS: [&str; 2] = ["rank", "reference"];

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
/// `eval/` when it is a pipeline folder. A `rank` or `reference` run is refused with what
/// it is and, inside a pipeline, where its `eval` run is; a folder that is neither is not
/// a run.
pub fn locate_run(path: &Path) -> Result<RunFolder, ReportError> {
    if path.join(MANIFEST_FILE).is_file() {
        check_scored(path)?;
        return Ok(RunFolder::Run(path.to_path_buf()));
    }
    let eval = path.join(PIPELINE_EVAL_DIR);
    if eval.join(MANIFEST_FILE).is_file() {
        return Ok(RunFolder::Pipeline {
            root: path.to_path_buf(),
            eval,
        });
    }
    Err(ReportError::NotARun {
        path: path.to_path_buf(),
    })
}

/// Refuses a `rank` or `reference` run (its `summary.json` has another shape, and it has no
/// per-sample scores); a manifest that does not read passes, for the reader to name.
pub(crate) fn check_scored(dir: &Path) -> Result<(), ReportError> {
    let Some(command) = manifest_command(dir) else {
        return Ok(());
    };
    if !STAGE_COMMANDS.contains(&command.as_str()) {
        return Ok(());
    }
    Err(ReportError::StageRun {
        path: dir.to_path_buf(),
        command,
        eval: pipeline_of_stage(dir).map(|root| root.join(PIPELINE_EVAL_DIR)),
    })
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
    use crate::testing::write_run;
    use crate::{DatasetInfo, RunDir};
    use rageval_core::Outcome;

    fn stage(dir: &Path, command: &str) {
        let run = RunDir::create(dir, true).unwrap();
        let info = DatasetInfo {
            path: "data.jsonl".into(),
            sha256: "d".into(),
            format: "jsonl".into(),
            samples: None,
        };
        run.write_manifest(&Manifest::start(
            command,
            info,
            Vec::new(),
            serde_json::json!({}),
        ))
        .unwrap();
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
