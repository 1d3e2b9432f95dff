//! The runs directory the server reads, and the one way a name from a request becomes a
//! path. A run is a directory directly inside the root that holds `manifest.json`, or a
//! `pipeline` folder (whose scored run is its `eval/`); its name is that directory's name.
//! `rank` and `reference` runs are listed with their own figures (they have no per-sample
//! scores to page through or compare). A name that is not one plain path component (`..`, `a/b`,
//! `/etc`, a hidden `.name`) is refused before any file is touched, and a run directory or
//! run file whose real path (symlinks followed) lies outside the root is treated as missing.
//! Nothing here writes.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use rageval_report::{
    HTML_FILE, MANIFEST_FILE, Manifest, PIPELINE_EVAL_DIR, RANK_AGREEMENT_FILE, RESULTS_FILE,
    RankAgreementSummary, ReportError, RunData, RunStatus, SUMMARY_FILE, Summary,
    read_rank_agreement,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

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
    /// A finished scored run (`eval`, `judge-check`, a pipeline's `eval/`) and its summary.
    Complete(Box<Summary>),
    /// A finished `rank` or `reference` run: its figures are the entry's.
    Finished,
    /// The manifest says `running`: unfinished, or left by a crash.
    Running,
    /// The manifest or summary does not read; the message says why.
    Unreadable(String),
}

/// One run of the listing.
#[derive(Debug, Clone)]
pub struct RunEntry {
    pub name: String,
    /// `pipeline` for a pipeline folder, else the command its manifest records (`eval`,
    /// `judge-check`, `rank`, `reference`, …); empty when the manifest does not read.
    pub kind: String,
    /// The manifest (a pipeline's: its `eval/` run's).
    pub manifest: Option<Manifest>,
    pub state: RunState,
    /// The retriever-versus-judge figures of a `rank` run, or of a run that holds
    /// `rank_agreement.jsonl` (a pipeline's `eval/`).
    pub rank_agreement: Option<RankAgreementSummary>,
    /// A finished `reference` run's counts.
    pub references: Option<ReferenceCounts>,
}

/// What a `reference` run's `summary.json` says of its answers.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct ReferenceCounts {
    pub questions: usize,
    /// References written; the rest failed or had no context that answers them.
    pub written: usize,
}

/// Manifest commands of runs without per-sample scores: listed with their own figures.
const RANK_COMMAND: &str = "rank";
const REFERENCE_COMMAND: &str = "reference";
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

    /// Every run in the root, sorted by name; directories without a manifest are not runs.
    pub fn list(&self) -> Result<Vec<RunEntry>, ServerError> {
        let entries = fs::read_dir(&self.root).map_err(|source| {
            ReportError::Read {
                path: self.root.clone(),
                source,
            }
            .relative_to(&self.root)
        })?;
        let mut runs = Vec::new();
        for entry in entries.flatten() {
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            let Ok(dir) = self.run_dir(&name) else {
                continue;
            };
            if !dir.join(MANIFEST_FILE).is_file() {
                continue;
            }
            // `run_dir` gives a pipeline folder's `eval/`.
            let pipeline = (dir != self.root.join(&name)).then_some(PIPELINE_KIND);
            runs.push(self.entry(name, &dir, pipeline));
        }
        runs.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(runs)
    }

    /// Reads one complete run: manifest, summary and journal.
    pub fn load(&self, name: &str) -> Result<RunData, ServerError> {
        let dir = self.run_dir(name)?;
        for file in [
            MANIFEST_FILE,
            SUMMARY_FILE,
            RESULTS_FILE,
            RANK_AGREEMENT_FILE,
        ] {
            self.inside(name, &dir.join(file))?;
        }
        let mut run = RunData::load(&dir).map_err(|error| match error {
            ReportError::NotARun { .. } => ServerError::NoSuchRun { name: name.into() },
            other => other.relative_to(&self.root).into(),
        })?;
        // Pages link a run by the name it was asked by (a pipeline's, not `eval`).
        name.clone_into(&mut run.name);
        Ok(run)
    }

    /// The manifest of the run called `name`, whatever its status.
    pub fn manifest(&self, name: &str) -> Result<Manifest, ServerError> {
        let path = self.run_dir(name)?.join(MANIFEST_FILE);
        self.inside(name, &path)?;
        read_json(&path).map_err(|error| match error {
            ServerError::Report(report) => report.relative_to(&self.root).into(),
            other => other,
        })
    }

    /// The run's stored `report.html`, if it has one.
    pub fn stored_report(&self, name: &str) -> Result<Option<String>, ServerError> {
        let path = self.run_dir(name)?.join(HTML_FILE);
        if !path.is_file() {
            return Ok(None);
        }
        self.inside(name, &path)?;
        fs::read_to_string(&path).map(Some).map_err(|source| {
            ReportError::Read { path, source }
                .relative_to(&self.root)
                .into()
        })
    }

    /// The directory of the run called `name` (a pipeline folder's: its `eval/`): the name
    /// is checked, and the directory's real path must lie inside the root. Keeps
    /// `root/name` (not the real path) so that a run reached through a link inside the root
    /// keeps the name it was asked by.
    pub fn run_dir(&self, name: &str) -> Result<PathBuf, ServerError> {
        check_name(name)?;
        let dir = self.root.join(name);
        let eval = dir.join(PIPELINE_EVAL_DIR);
        let dir = if !dir.join(MANIFEST_FILE).is_file() && eval.join(MANIFEST_FILE).is_file() {
            eval
        } else {
            dir
        };
        match fs::canonicalize(&dir) {
            Ok(real) if real.starts_with(&self.root) && real.is_dir() => Ok(dir),
            _ => Err(ServerError::NoSuchRun { name: name.into() }),
        }
    }

    /// Refuses a file whose real path leaves the root; a missing file passes (the reader
    /// then says which file is missing).
    fn inside(&self, name: &str, path: &Path) -> Result<(), ServerError> {
        match fs::canonicalize(path) {
            Ok(real) if !real.starts_with(&self.root) => {
                Err(ServerError::NoSuchRun { name: name.into() })
            }
            _ => Ok(()),
        }
    }

    fn entry(&self, name: String, dir: &Path, pipeline: Option<&str>) -> RunEntry {
        let mut entry = RunEntry {
            name,
            kind: pipeline.unwrap_or_default().to_string(),
            manifest: None,
            state: RunState::Running,
            rank_agreement: None,
            references: None,
        };
        if let Err(error) = self.read_entry(&mut entry, dir) {
            let error = match error {
                ServerError::Report(report) => report.relative_to(&self.root).into(),
                other => other,
            };
            entry.state = RunState::Unreadable(error_chain(&error));
        }
        entry
    }

    /// Fills `entry` from the run in `dir`: its manifest, and once complete its summary
    /// (a scored run's) or figures (a `rank` or `reference` run's).
    fn read_entry(&self, entry: &mut RunEntry, dir: &Path) -> Result<(), ServerError> {
        let name = entry.name.clone();
        let file = |file: &str| -> Result<PathBuf, ServerError> {
            let path = dir.join(file);
            self.inside(&name, &path)?;
            Ok(path)
        };
        let manifest: Manifest = read_json(&file(MANIFEST_FILE)?)?;
        if entry.kind.is_empty() {
            entry.kind.clone_from(&manifest.command);
        }
        let complete = manifest.status == RunStatus::Complete;
        entry.manifest = Some(manifest);
        if !complete {
            return Ok(());
        }
        file(RANK_AGREEMENT_FILE)?;
        entry.rank_agreement =
            read_rank_agreement(dir)?.map(|rows| RankAgreementSummary::of(&rows));
        entry.state = match entry.kind.as_str() {
            RANK_COMMAND => RunState::Finished,
            REFERENCE_COMMAND => {
                entry.references = Some(read_json(&file(SUMMARY_FILE)?)?);
                RunState::Finished
            }
            _ => RunState::Complete(Box::new(read_json(&file(SUMMARY_FILE)?)?)),
        };
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

fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T, ServerError> {
    let bytes = fs::read(path).map_err(|source| ReportError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_slice(&bytes).map_err(|source| {
        ReportError::Decode {
            path: path.to_path_buf(),
            source,
        }
        .into()
    })
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
