//! The runs directory the server reads, and the one way a name from a request becomes a
//! path. A run is a directory directly inside the root that holds `manifest.json`; its name
//! is that directory's name. A name that is not one plain path component (`..`, `a/b`,
//! `/etc`, a hidden `.name`) is refused before any file is touched, and a run directory or
//! run file whose real path (symlinks followed) lies outside the root is treated as missing.
//! Nothing here writes.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use rageval_report::{
    HTML_FILE, MANIFEST_FILE, Manifest, RESULTS_FILE, ReportError, RunData, RunStatus,
    SUMMARY_FILE, Summary,
};
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
    Complete(Box<Summary>),
    /// The manifest says `running`: unfinished, or left by a crash.
    Running,
    /// The manifest or summary does not read; the message says why.
    Unreadable(String),
}

/// One run of the listing.
#[derive(Debug, Clone)]
pub struct RunEntry {
    pub name: String,
    pub manifest: Option<Manifest>,
    pub state: RunState,
}

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
            runs.push(self.entry(name, &dir));
        }
        runs.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(runs)
    }

    /// Reads one complete run: manifest, summary and journal.
    pub fn load(&self, name: &str) -> Result<RunData, ServerError> {
        let dir = self.run_dir(name)?;
        for file in [MANIFEST_FILE, SUMMARY_FILE, RESULTS_FILE] {
            self.inside(name, &dir.join(file))?;
        }
        RunData::load(&dir).map_err(|error| match error {
            ReportError::NotARun { .. } => ServerError::NoSuchRun { name: name.into() },
            other => other.relative_to(&self.root).into(),
        })
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

    /// The directory of the run called `name`: the name is checked, and the directory's
    /// real path must lie inside the root. Keeps `root/name` (not the real path) so that a
    /// run reached through a link inside the root keeps the name it was asked by.
    pub fn run_dir(&self, name: &str) -> Result<PathBuf, ServerError> {
        check_name(name)?;
        let dir = self.root.join(name);
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

    fn entry(&self, name: String, dir: &Path) -> RunEntry {
        let read = || -> Result<(Manifest, RunState), ServerError> {
            let manifest_path = dir.join(MANIFEST_FILE);
            self.inside(&name, &manifest_path)?;
            let manifest: Manifest = read_json(&manifest_path)?;
            if manifest.status != RunStatus::Complete {
                return Ok((manifest, RunState::Running));
            }
            let summary_path = dir.join(SUMMARY_FILE);
            self.inside(&name, &summary_path)?;
            let summary: Summary = read_json(&summary_path)?;
            Ok((manifest, RunState::Complete(Box::new(summary))))
        };
        match read() {
            Ok((manifest, state)) => RunEntry {
                name,
                manifest: Some(manifest),
                state,
            },
            Err(error) => {
                let error = match error {
                    ServerError::Report(report) => report.relative_to(&self.root).into(),
                    other => other,
                };
                RunEntry {
                    name,
                    manifest: None,
                    state: RunState::Unreadable(error_chain(&error)),
                }
            }
        }
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
