//! Starting a run directory, or resuming the one already there.
//!
//! A run with the same [`RunIdentity`] (same data, metrics, settings and judge) is
//! resumed: the journal's finished units are kept and skipped. A line cut short by a crash
//! (no newline at the end) is dropped, a unit written twice keeps its first line, and with
//! `--retry-failed` failed cells are dropped so they are scored again; when anything is
//! dropped the journal is rewritten atomically (temporary file, then rename) before new
//! lines are appended, so the journal always holds exactly one line per finished unit.

use std::collections::HashSet;
use std::fmt;
use std::fs;
use std::hash::Hash;
use std::path::{Path, PathBuf};

use rageval_core::Outcome;
use rageval_report::{MANIFEST_FILE, Manifest, RESULTS_FILE, ResultRecord, RunDir, RunStatus};
use serde::de::DeserializeOwned;

use crate::error::{Result, RunError};
use crate::identity::RunIdentity;

/// Where a run's identity is kept in its manifest.
const IDENTITY_KEY: &str = "identity";

/// A run directory that holds another run: other data, metrics, settings or judge.
#[derive(Debug)]
pub struct ResumeRefused {
    pub path: PathBuf,
    pub why: Vec<String>,
}

impl fmt::Display for ResumeRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot resume the run in {}: {}",
            self.path.display(),
            self.why.join("; ")
        )
    }
}

impl std::error::Error for ResumeRefused {}

/// The run directory to write, and the cells already done in it.
pub struct Prepared {
    pub run: RunDir,
    pub manifest: Manifest,
    /// `(sample id, metric)` of every finished cell kept from an earlier run.
    pub done: HashSet<(String, String)>,
    /// Whether an earlier run is being continued (its files must survive bad input).
    pub resumed: bool,
    /// Failed cells dropped for `--retry-failed`.
    pub retried: usize,
    /// What to tell the person about the resumed run (the same judge at another endpoint).
    pub notes: Vec<String>,
}

/// Opens `path` for a run: a new one, or the earlier one resumed when its identity equals
/// `identity`. `fresh` is the manifest a new run starts with (the identity is stored in its
/// settings here).
pub fn prepare(
    path: &Path,
    overwrite: bool,
    retry_failed: bool,
    fresh: Manifest,
    identity: &RunIdentity,
) -> Result<Prepared> {
    let opened = open(path, overwrite, fresh, identity, &[])?;
    let (done, retried) = if opened.resumed {
        compact_journal(&path.join(RESULTS_FILE), retry_failed)?
    } else {
        (HashSet::new(), 0)
    };
    Ok(Prepared {
        run: opened.run,
        manifest: opened.manifest,
        done,
        resumed: opened.resumed,
        retried,
        notes: opened.notes,
    })
}

/// A run directory opened: new, or an earlier run with the same identity reopened.
pub struct Opened {
    pub run: RunDir,
    pub manifest: Manifest,
    /// Whether an earlier run is being continued.
    pub resumed: bool,
    /// What to tell the person about the resumed run.
    pub notes: Vec<String>,
}

/// Opens `path` for a run of `identity`: the earlier run there is resumed when its identity
/// is the same (refused otherwise, unless `overwrite`); a new run removes the files a run
/// writes, including the command's `own_files` (a run that stopped long ago may have left
/// some).
pub fn open(
    path: &Path,
    overwrite: bool,
    mut fresh: Manifest,
    identity: &RunIdentity,
    own_files: &[&str],
) -> Result<Opened> {
    fresh.settings[IDENTITY_KEY] =
        serde_json::to_value(identity).map_err(RunError::encode("the run identity"))?;
    let Some(earlier) = read_manifest(path, overwrite)? else {
        let run = RunDir::create(path, overwrite)?;
        for file in own_files {
            remove_if_present(&path.join(file))?;
        }
        return Ok(Opened {
            run,
            manifest: fresh,
            resumed: false,
            notes: Vec::new(),
        });
    };
    check_same_run(path, &earlier, &fresh, identity)?;
    let notes = stored_identity(&earlier)
        .and_then(|stored| stored.endpoint_change(identity))
        .into_iter()
        .collect();
    let run = RunDir::reopen(path)?;
    // Earlier sessions keep their own judge accounts; this one is appended when it ends.
    let manifest = Manifest {
        status: RunStatus::Running,
        finished_at: None,
        started_at: earlier.started_at,
        sessions: earlier.sessions,
        ..fresh
    };
    Ok(Opened {
        run,
        manifest,
        resumed: true,
        notes,
    })
}

/// Removes `path` if it exists.
pub fn remove_if_present(path: &Path) -> Result<()> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(RunError::write(path)(error)),
    }
}

/// The manifest of the run in `path`, unless there is none or it is to be overwritten.
pub fn read_manifest(path: &Path, overwrite: bool) -> Result<Option<Manifest>> {
    let manifest_path = path.join(MANIFEST_FILE);
    if overwrite || !manifest_path.is_file() {
        return Ok(None);
    }
    let bytes = fs::read(&manifest_path).map_err(RunError::read(&manifest_path))?;
    let manifest = serde_json::from_slice(&bytes).map_err(|source| RunError::Manifest {
        path: manifest_path,
        source,
    })?;
    Ok(Some(manifest))
}

/// The identity an earlier run stored, when it stored one that this version reads.
pub fn stored_identity(manifest: &Manifest) -> Option<RunIdentity> {
    serde_json::from_value(manifest.settings.get(IDENTITY_KEY)?.clone()).ok()
}

fn check_same_run(
    path: &Path,
    earlier: &Manifest,
    fresh: &Manifest,
    identity: &RunIdentity,
) -> Result<(), ResumeRefused> {
    let why = match stored_identity(earlier) {
        Some(stored) => stored.differences(identity),
        None => legacy_differences(earlier, fresh),
    };
    if why.is_empty() {
        Ok(())
    } else {
        Err(ResumeRefused {
            path: path.to_path_buf(),
            why,
        })
    }
}

/// Runs written before identities were stored: command, data, judge kind and models, and
/// metrics, as their manifests say them.
fn legacy_differences(earlier: &Manifest, fresh: &Manifest) -> Vec<String> {
    if earlier.command != fresh.command {
        return vec![format!("it holds a `{}` run", earlier.command)];
    }
    let mut why = Vec::new();
    if earlier.dataset.sha256 != fresh.dataset.sha256 {
        why.push(format!(
            "it was run over other data ({} with SHA-256 {}…)",
            earlier.dataset.path,
            &earlier.dataset.sha256[..earlier.dataset.sha256.len().min(12)],
        ));
    }
    let judge = |m: &Manifest| {
        let judge = &m.settings["judge"];
        format!(
            "{} {} {}",
            judge["kind"].as_str().unwrap_or("?"),
            judge["model"].as_str().unwrap_or("-"),
            judge["embedding_model"].as_str().unwrap_or("-")
        )
    };
    if judge(earlier) != judge(fresh) {
        why.push(format!(
            "it was judged by {}, now the judge is {}",
            judge(earlier),
            judge(fresh)
        ));
    }
    let names = |m: &Manifest| m.metrics.iter().map(|r| r.name.clone()).collect::<Vec<_>>();
    if names(earlier) != names(fresh) {
        why.push(format!(
            "it was run with the metrics {}, now {} are asked for",
            names(earlier).join(","),
            names(fresh).join(",")
        ));
    }
    why
}

/// Reads the journal, keeps one line per cell (dropping a torn last line, repeated cells
/// and, when `retry_failed`, failed cells) and rewrites it if anything was dropped.
/// Returns the cells kept and how many failed cells were dropped.
fn compact_journal(path: &Path, retry_failed: bool) -> Result<(HashSet<(String, String)>, usize)> {
    let mut retried = 0;
    let kept = compact_lines(path, |record: &ResultRecord| {
        let failed = matches!(record.outcome, Outcome::Failed { .. });
        retried += usize::from(retry_failed && failed);
        (!(retry_failed && failed)).then(|| (record.sample_id.clone(), record.metric.clone()))
    })?;
    Ok((kept.into_iter().map(|(key, _)| key).collect(), retried))
}

/// Reads a JSONL journal of `R` and keeps the first line of each key that `key` gives
/// (`None`: drop the line), dropping a torn last line (no newline) and blank lines. When
/// anything is dropped the journal is rewritten atomically (temporary file, then rename),
/// so it then holds exactly the lines returned. A missing journal is an empty one.
pub fn compact_lines<R: DeserializeOwned, K: Eq + Hash + Clone>(
    path: &Path,
    mut key: impl FnMut(&R) -> Option<K>,
) -> Result<Vec<(K, R)>> {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(error) => return Err(RunError::read(path)(error)),
    };
    let complete = match text.rfind('\n') {
        Some(end) => &text[..=end],
        None => "",
    };
    let mut dropped = complete.len() != text.len();
    let mut seen = HashSet::new();
    let mut records = Vec::new();
    let mut kept = String::with_capacity(complete.len());
    for (index, line) in complete.lines().enumerate() {
        if line.trim().is_empty() {
            dropped = true;
            continue;
        }
        let record: R = serde_json::from_str(line).map_err(|source| RunError::Journal {
            path: path.to_path_buf(),
            line: index + 1,
            source,
        })?;
        match key(&record) {
            Some(k) if seen.insert(k.clone()) => {
                kept.push_str(line);
                kept.push('\n');
                records.push((k, record));
            }
            _ => dropped = true,
        }
    }
    if dropped {
        let temporary = path.with_extension("jsonl.tmp");
        fs::write(&temporary, kept.as_bytes())
            .and_then(|()| fs::rename(&temporary, path))
            .map_err(RunError::write(path))?;
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_torn_line_duplicates_and_retried_failures_are_dropped() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join(RESULTS_FILE);
        fs::write(
            &path,
            "{\"sample_id\":\"1\",\"metric\":\"m\",\"status\":\"score\",\"value\":0.5}\n\
             {\"sample_id\":\"2\",\"metric\":\"m\",\"status\":\"failed\",\"error\":\"x\"}\n\
             {\"sample_id\":\"1\",\"metric\":\"m\",\"status\":\"score\",\"value\":0.9}\n\
             {\"sample_id\":\"3\",\"metric\":\"m\",\"sta",
        )
        .expect("writes");
        let (done, retried) = compact_journal(&path, false).expect("compacts");
        assert_eq!(done.len(), 2);
        assert_eq!(retried, 0);
        let text = fs::read_to_string(&path).expect("reads");
        assert_eq!(text.lines().count(), 2);
        assert!(text.contains("0.5") && !text.contains("0.9"));

        let (done, retried) = compact_journal(&path, true).expect("compacts");
        assert_eq!((done.len(), retried), (1, 1));
        assert_eq!(fs::read_to_string(&path).expect("reads").lines().count(), 1);
    }
}
