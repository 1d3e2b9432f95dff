//! Starting a run directory, or resuming the one already there.
//!
//! A run with the same [`RunIdentity`] (same data, metrics, settings and judge) is
//! resumed: the journal's finished units are kept and skipped. A line cut short by a crash
//! (no newline at the end) is dropped, a unit written twice keeps its first line, and with
//! `--retry-failed` failed cells are dropped so they are scored again; when anything is
//! dropped the journal is rewritten atomically (temporary file, then rename) before new
//! lines are appended, so the journal always holds exactly one line per finished unit.
//! The journal is read one line at a time, never whole.
//!
//! [`open`] is the one way a command of this crate writes a run directory: the
//! [`RunDir`] it returns holds the directory's lock ([`rageval_report::RunLock`]) from
//! before the directory's files are touched, so a second process on the same `--out` is
//! refused (exit 2, naming the first) before it reads, removes or appends anything.

use std::collections::HashSet;
use std::fmt;
use std::fs;
use std::hash::Hash;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use rageval_core::Outcome;
use rageval_report::{MANIFEST_FILE, Manifest, RESULTS_FILE, ResultRecord, RunDir, RunStatus};
use serde::de::DeserializeOwned;

use crate::engine::cells::Cells;
use crate::engine::error::{Result, RunError};
use crate::engine::files::remove_if_present;
use crate::engine::identity::RunIdentity;

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
    /// Every finished cell kept from an earlier run.
    pub done: Cells,
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
        compact_journal(&path.join(RESULTS_FILE), retry_failed, &identity.metrics)?
    } else {
        (Cells::new(), 0)
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
    // A version name is no part of the identity: one given now renames the run, none keeps
    // the earlier one.
    let manifest = Manifest {
        version_name: fresh.version_name.clone().or(earlier.version_name),
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

/// The identity an earlier run stored, when it stored one that this version reads, as this
/// version writes it ([`RunIdentity::upgraded`]).
pub fn stored_identity(manifest: &Manifest) -> Option<RunIdentity> {
    serde_json::from_value(manifest.settings.get(IDENTITY_KEY)?.clone())
        .ok()
        .map(RunIdentity::upgraded)
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
/// Returns the cells kept and how many failed cells were dropped. Streams: memory holds the
/// compact set of cells, never the journal.
///
/// Each line is checked first ([`record_fault`]): a line the run's `metrics` could not have
/// written stops the resume, naming the file and line, before anything is scored.
fn compact_journal(path: &Path, retry_failed: bool, metrics: &[String]) -> Result<(Cells, usize)> {
    let mut retried = 0;
    let mut kept = Cells::new();
    compact_streaming(path, |record: ResultRecord| {
        if let Some(why) = record_fault(&record, metrics) {
            return Err(why);
        }
        if retry_failed && matches!(record.outcome, Outcome::Failed { .. }) {
            retried += 1;
            return Ok(false);
        }
        Ok(kept.insert(&record.sample_id, &record.metric))
    })?;
    Ok((kept, retried))
}

/// Why `record` cannot be a line of a run of `metrics`, if it cannot: what every journal
/// reader refuses ([`ResultRecord::fault`]), a metric the run does not have, or a score
/// outside its metric's range ([`rageval_metrics::score_range`]). The words end with what
/// to do.
pub fn record_fault(record: &ResultRecord, metrics: &[String]) -> Option<String> {
    let fault = record.fault().or_else(|| {
        if !metrics.contains(&record.metric) {
            return Some(format!(
                "metric `{}` is not one of the run's ({})",
                record.metric,
                metrics.join(", ")
            ));
        }
        let range = rageval_metrics::score_range(&record.metric);
        match record.outcome {
            Outcome::Score { value, .. } if !rageval_report::in_score_range(value, &range) => {
                Some(format!(
                    "metric `{}` of sample `{}` has the score {}, outside its range [{}, {}]",
                    record.metric,
                    record.sample_id,
                    rageval_report::shown_score(value),
                    range.start(),
                    range.end()
                ))
            }
            _ => None,
        }
    })?;
    Some(format!("{fault}; {REMOVE_THE_LINE}"))
}

/// What to do about a journal line no run wrote.
pub const REMOVE_THE_LINE: &str = "this line was not written by the run (an edit or a damaged \
     disk): delete it, and running the same command again scores its cell anew (or pass \
     --overwrite to start over)";

/// Reads a JSONL journal of `R` and keeps the first line of each key that `key` gives
/// (`None`: drop the line), dropping a torn last line (no newline) and blank lines. When
/// anything is dropped the journal is rewritten atomically (temporary file, then rename),
/// so it then holds exactly the lines returned. A missing journal is an empty one.
pub fn compact_lines<R: DeserializeOwned, K: Eq + Hash + Clone>(
    path: &Path,
    mut key: impl FnMut(&R) -> Option<K>,
) -> Result<Vec<(K, R)>> {
    let mut seen = HashSet::new();
    let mut records = Vec::new();
    compact_streaming(path, |record: R| match key(&record) {
        Some(k) if seen.insert(k.clone()) => {
            records.push((k, record));
            Ok(true)
        }
        _ => Ok(false),
    })?;
    Ok(records)
}

/// Streams a JSONL journal of `R` line by line: `keep` sees each complete line in file
/// order and says whether it stays (dropping repeats is its business), or why the line
/// cannot be (an error naming the file and line); blank lines and a torn last line (no
/// newline) are dropped. When anything is dropped the journal is
/// rewritten without those lines, atomically (temporary file, then rename). Memory holds
/// one line at a time and the numbers of the dropped lines. A missing journal is an empty
/// one.
pub fn compact_streaming<R: DeserializeOwned>(
    path: &Path,
    mut keep: impl FnMut(R) -> std::result::Result<bool, String>,
) -> Result<()> {
    let file = match fs::File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err(RunError::read(path)(error)),
    };
    let mut reader = BufReader::new(file);
    let mut line = String::new();
    let mut dropped: Vec<usize> = Vec::new();
    let mut index = 0;
    loop {
        line.clear();
        let read = reader.read_line(&mut line).map_err(RunError::read(path))?;
        if read == 0 {
            break;
        }
        let complete = line.ends_with('\n');
        let text = line.trim_end_matches(['\n', '\r']);
        if !complete || text.trim().is_empty() {
            dropped.push(index);
        } else {
            let record: R = serde_json::from_str(text).map_err(|source| RunError::Journal {
                path: path.to_path_buf(),
                line: index + 1,
                source,
            })?;
            let kept = keep(record).map_err(|why| RunError::JournalValue {
                path: path.to_path_buf(),
                line: index + 1,
                why,
            })?;
            if !kept {
                dropped.push(index);
            }
        }
        index += 1;
    }
    if dropped.is_empty() {
        return Ok(());
    }
    rewrite_without(path, &dropped)
}

/// Rewrites `path` without the lines numbered (from 0, ascending) in `dropped`, through a
/// temporary file renamed over it.
fn rewrite_without(path: &Path, dropped: &[usize]) -> Result<()> {
    let copy = |out: &mut BufWriter<fs::File>| -> std::io::Result<()> {
        let mut reader = BufReader::new(fs::File::open(path)?);
        let mut drop = dropped.iter().peekable();
        let mut line = Vec::new();
        let mut index = 0;
        loop {
            line.clear();
            if reader.read_until(b'\n', &mut line)? == 0 {
                break;
            }
            if drop.peek() == Some(&&index) {
                drop.next();
            } else {
                out.write_all(&line)?;
            }
            index += 1;
        }
        Ok(())
    };
    rageval_core::files::write_atomically_with(path, copy).map_err(RunError::write(path))
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
        let (done, retried) = compact_journal(&path, false, &["m".into()]).expect("compacts");
        assert_eq!(done.len(), 2);
        assert_eq!(retried, 0);
        let text = fs::read_to_string(&path).expect("reads");
        assert_eq!(text.lines().count(), 2);
        assert!(text.contains("0.5") && !text.contains("0.9"));

        let (done, retried) = compact_journal(&path, true, &["m".into()]).expect("compacts");
        assert_eq!((done.len(), retried), (1, 1));
        assert_eq!(fs::read_to_string(&path).expect("reads").lines().count(), 1);
    }
}
