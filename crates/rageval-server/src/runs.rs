//! The runs directory the server reads, and the root rule: the one way a name from a
//! request becomes a path, and the one check every file the server opens passes.
//!
//! A run is a directory directly inside the root: a run directory of any kind (its
//! manifest's command says which: a scored `eval` / `judge-check` / `merge` run, or a
//! `rank`, `reference` or `testset` run with figures of its own), or a `pipeline` folder
//! (whose scored run is its `eval/`); its name is that directory's name. What a folder is
//! is `rageval-report`'s to say (`folder_kind`, `RunKind`). A name that is not one plain
//! path component (`..`, `a/b`, `/etc`, a hidden `.name`) is refused before any file is
//! touched, and a run directory or any run file whose real path (symlinks followed) lies
//! outside the root is treated as missing (404). The one file read from elsewhere is a
//! run's dataset, where its manifest records it, and only while its bytes hash to the
//! manifest's sha256 ([`RunsRoot::run_samples`]). Nothing here writes.

use std::collections::BTreeMap;
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use rageval_core::Sample;
use rageval_report::{
    AgreementFigure, AnyRun, FolderKind, HTML_FILE, Manifest, OpenCheck, PIPELINE_EVAL_DIR,
    RankAgreementSummary, ReportError, RunData, RunInfo, RunStatus, StageFigures, Summary,
    folder_kind, read_manifest, read_run, read_run_info, read_run_samples,
};

/// An error and its causes on one line, for the listing and error pages.
pub(crate) use rageval_report::error_chain;

use crate::ServerError;

/// The longest run name accepted (a common file-name limit).
const NAME_LIMIT: usize = 255;

/// A directory of run directories.
#[derive(Debug, Clone)]
pub struct RunsRoot {
    /// Canonical: every path served must lie under it.
    root: PathBuf,
}

/// What the listing knows about one run without reading its journal.
#[derive(Debug, Clone)]
pub enum RunState {
    /// A finished scored run (`eval`, `judge-check`, `merge`, a pipeline's `eval/`) and its
    /// summary.
    Complete(Box<Summary>),
    /// A finished `rank`, `reference` or `testset` run and its figures.
    Finished(StageFigures),
    /// The manifest says `running` (unfinished, or left by a crash), or a pipeline's `eval`
    /// stage has not started.
    Running,
    /// The manifest or summary does not read; the message says why.
    Unreadable(String),
}

/// One run of the listing.
#[derive(Debug, Clone)]
pub struct RunEntry {
    pub name: String,
    /// `pipeline` for a pipeline folder, else the command its manifest records (`eval`,
    /// `judge-check`, `rank`, `reference`, `testset`, …); empty when the manifest does not
    /// read.
    pub kind: String,
    /// A pipeline folder's stages that have started (`rank`, `reference`, `eval`).
    pub stages: Vec<&'static str>,
    /// The manifest (a pipeline's: its `eval/` run's, or its first stage's before that).
    pub manifest: Option<Manifest>,
    pub state: RunState,
    /// The retriever-versus-judge figures of a `rank` run, or of a run that holds
    /// `rank_agreement.jsonl` (a pipeline's `eval/`).
    pub rank_agreement: Option<RankAgreementSummary>,
    /// A `judge-check` run's agreement with its labels, figure by figure.
    pub agreement: Option<BTreeMap<String, AgreementFigure>>,
}

/// The kind of a pipeline folder's entry.
pub const PIPELINE_KIND: &str = "pipeline";

impl RunsRoot {
    /// The runs directory at `dir`, which must exist.
    pub fn open(dir: &Path) -> Result<Self, ServerError> {
        let not_a_directory = |source| ServerError::NotADirectory {
            path: dir.to_path_buf(),
            source,
        };
        let root = fs::canonicalize(dir).map_err(not_a_directory)?;
        if !root.is_dir() {
            return Err(not_a_directory(std::io::Error::from(
                ErrorKind::NotADirectory,
            )));
        }
        Ok(Self { root })
    }

    /// The canonical root.
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// Every run in the root, sorted by name; directories that hold no run (nor a
    /// pipeline's stage) are not listed.
    pub fn list(&self) -> Result<Vec<RunEntry>, ServerError> {
        let entries = fs::read_dir(&self.root).map_err(|source| {
            self.shown(ReportError::Read {
                path: self.root.clone(),
                source,
            })
        })?;
        let mut runs = Vec::new();
        for entry in entries.flatten() {
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            if check_name(&name).is_err() || !self.lies_inside(&self.root.join(&name)) {
                continue;
            }
            if let Some(entry) = self.entry(name) {
                runs.push(entry);
            }
        }
        runs.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(runs)
    }

    /// Reads one complete scored run: manifest, summary and journal (a pipeline folder's:
    /// its `eval/` run). A stage run is refused naming what it is.
    pub fn load(&self, name: &str) -> Result<RunData, ServerError> {
        let mut run = self.open_with(name, RunData::load_checked)?;
        // Pages link a run by the name it was asked by (a pipeline's, not `eval`).
        name.clone_into(&mut run.name);
        Ok(run)
    }

    /// Reads one complete run as what it is: a scored run with its journal, or a stage run
    /// with its figures.
    pub fn open_run(&self, name: &str) -> Result<AnyRun, ServerError> {
        let mut run = self.open_with(name, read_run)?;
        match &mut run {
            AnyRun::Scored(data) => name.clone_into(&mut data.name),
            AnyRun::Stage(data) => name.clone_into(&mut data.name),
        }
        Ok(run)
    }

    /// [`RunsRoot::open_run`] without a scored run's journal.
    pub fn open_run_info(&self, name: &str) -> Result<AnyRun<RunInfo>, ServerError> {
        let mut run = self.open_with(name, read_run_info)?;
        match &mut run {
            AnyRun::Scored(info) => name.clone_into(&mut info.name),
            AnyRun::Stage(data) => name.clone_into(&mut data.name),
        }
        Ok(run)
    }

    /// The run called `name` read by `read`, every file it opens past the root rule.
    fn open_with<T>(
        &self,
        name: &str,
        read: impl FnOnce(&Path, OpenCheck<'_>) -> Result<T, ReportError>,
    ) -> Result<T, ServerError> {
        let dir = self.run_dir(name)?;
        read(&dir, &|path| self.rule(path)).map_err(|error| self.run_error(name, error))
    }

    /// The samples of a loaded run's dataset, to pair questions in a comparison: the one
    /// file read from outside the root, where the run's manifest records it (or beside the
    /// run), and only while its bytes hash to the manifest's sha256. A dataset that cannot
    /// be read so leaves the run's samples paired by id alone.
    pub fn run_samples(&self, run: &RunData) -> Vec<Sample> {
        read_run_samples(run).unwrap_or_default()
    }

    /// The manifest of the run called `name`, whatever its status.
    pub fn manifest(&self, name: &str) -> Result<Manifest, ServerError> {
        self.read_manifest(&self.run_dir(name)?)
            .map_err(|error| self.run_error(name, error))
    }

    /// The run's stored `report.html`, if it has one.
    pub fn stored_report(&self, name: &str) -> Result<Option<String>, ServerError> {
        let path = self.run_dir(name)?.join(HTML_FILE);
        if !path.is_file() {
            return Ok(None);
        }
        self.rule(&path)
            .map_err(|error| self.run_error(name, error))?;
        fs::read_to_string(&path)
            .map(Some)
            .map_err(|source| self.shown(ReportError::Read { path, source }))
    }

    /// The directory of the run called `name` (a pipeline folder's: its `eval/`): the name
    /// is checked, and the directory's real path must lie inside the root. Keeps
    /// `root/name` (not the real path) so that a run reached through a link inside the root
    /// keeps the name it was asked by.
    pub fn run_dir(&self, name: &str) -> Result<PathBuf, ServerError> {
        check_name(name)?;
        let dir = self.root.join(name);
        let dir = match folder_kind(&dir) {
            FolderKind::Pipeline { stages } if stages.contains(&PIPELINE_EVAL_DIR) => {
                dir.join(PIPELINE_EVAL_DIR)
            }
            _ => dir,
        };
        if dir.is_dir() && self.lies_inside(&dir) {
            Ok(dir)
        } else {
            Err(ServerError::NoSuchRun { name: name.into() })
        }
    }

    /// The root rule, asked before every file the server opens: a file whose real path
    /// leaves the root is refused; a missing file passes (its reader then says which file
    /// is missing).
    fn rule(&self, path: &Path) -> Result<(), ReportError> {
        match fs::canonicalize(path) {
            Ok(real) if !real.starts_with(&self.root) => Err(ReportError::OutsideRoot {
                path: path.to_path_buf(),
            }),
            _ => Ok(()),
        }
    }

    /// Whether `path` exists and its real path lies inside the root.
    fn lies_inside(&self, path: &Path) -> bool {
        fs::canonicalize(path).is_ok_and(|real| real.starts_with(&self.root))
    }

    /// `error` naming files relative to the root.
    fn shown(&self, error: ReportError) -> ServerError {
        error.relative_to(&self.root).into()
    }

    /// A reader's error about the run `name`: a folder that is no run is no run of that name.
    fn run_error(&self, name: &str, error: ReportError) -> ServerError {
        match error {
            ReportError::NotARun { .. } => ServerError::NoSuchRun { name: name.into() },
            other => self.shown(other),
        }
    }

    /// The listing's entry for the directory `name`, `None` when it holds no run.
    fn entry(&self, name: String) -> Option<RunEntry> {
        let dir = self.root.join(&name);
        let mut entry = RunEntry {
            name,
            kind: String::new(),
            stages: Vec::new(),
            manifest: None,
            state: RunState::Running,
            rank_agreement: None,
            agreement: None,
        };
        let run_dir = match folder_kind(&dir) {
            FolderKind::NotARun => return None,
            FolderKind::Run => dir,
            FolderKind::Pipeline { stages } => {
                entry.kind = PIPELINE_KIND.into();
                entry.stages = stages;
                if !entry.stages.contains(&PIPELINE_EVAL_DIR) {
                    // Stopped (or running) before its `eval` stage: the data is its first
                    // stage's.
                    let first = dir.join(entry.stages[0]);
                    entry.manifest = self.read_manifest(&first).ok();
                    return Some(entry);
                }
                dir.join(PIPELINE_EVAL_DIR)
            }
        };
        if let Err(error) = self.read_entry(&mut entry, &run_dir) {
            let error = match error {
                ServerError::Report(report) => self.shown(report),
                other => other,
            };
            entry.state = RunState::Unreadable(error_chain(&error));
        }
        Some(entry)
    }

    fn read_manifest(&self, dir: &Path) -> Result<Manifest, ReportError> {
        read_manifest(dir, &|path| self.rule(path))
    }

    /// Fills `entry` from the run in `dir`: its manifest, and once complete what it is
    /// with its figures (a scored run's summary, a stage run's counts).
    fn read_entry(&self, entry: &mut RunEntry, dir: &Path) -> Result<(), ServerError> {
        let manifest = self.read_manifest(dir)?;
        if entry.kind.is_empty() {
            entry.kind.clone_from(&manifest.command);
        }
        let complete = manifest.status == RunStatus::Complete;
        entry.manifest = Some(manifest);
        if !complete {
            return Ok(());
        }
        let (state, rows) = match read_run_info(dir, &|path| self.rule(path))? {
            AnyRun::Scored(info) => {
                let RunInfo {
                    summary,
                    agreement,
                    rank_agreement,
                    ..
                } = *info;
                entry.agreement = agreement.map(|a| a.figures);
                (RunState::Complete(Box::new(summary)), rank_agreement)
            }
            AnyRun::Stage(stage) => (RunState::Finished(stage.figures), stage.rank_agreement),
        };
        entry.state = state;
        entry.rank_agreement = rows.map(|rows| RankAgreementSummary::of(&rows));
        Ok(())
    }
}

/// A run name is one plain path component: not empty, not hidden (which also refuses `.`
/// and `..`), no separator, no NUL.
pub fn check_name(name: &str) -> Result<(), ServerError> {
    let plain = !name.is_empty()
        && name.len() <= NAME_LIMIT
        && !name.starts_with('.')
        && !name.contains(['/', '\\', '\0']);
    if plain {
        Ok(())
    } else {
        Err(ServerError::BadRunName { name: name.into() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_names_are_run_names() {
        for good in ["fiqa", "run-2026-01-01", "v1.2", "问题", "a b"] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in [
            "", ".", "..", ".hidden", "a/b", "../etc", "/etc", "a\\b", "a\0b", "..%2f",
        ] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        assert!(check_name(&"x".repeat(256)).is_err());
    }
}
