//! Starting a run directory, or resuming the one already there.
//!
//! A run over the same dataset (same SHA-256), with the same metrics and judge models, is
//! resumed: the journal's finished cells are kept and skipped. A line cut short by a crash
//! (no newline at the end) is dropped, a cell written twice keeps its first line, and with `--retry-failed` failed
//! cells are dropped so they are scored again; when anything is dropped the journal is
//! rewritten atomically (temporary file, then rename) before new lines are appended, so the
//! journal always holds exactly one line per finished cell.

use std::collections::HashSet;
use std::fmt;
use std::fs;
use std::hash::Hash;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use rageval_core::Outcome;
use rageval_report::{MANIFEST_FILE, Manifest, RESULTS_FILE, ResultRecord, RunDir, RunStatus};
use serde::de::DeserializeOwned;

/// A run directory that holds another run: other data or other metrics.
#[derive(Debug)]
pub struct ResumeRefused {
    pub path: PathBuf,
    pub why: String,
}

impl fmt::Display for ResumeRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot resume the run in {}: {}",
            self.path.display(),
            self.why
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
}

/// A command's own test that an earlier run may be resumed by this one: given the earlier
/// manifest and the fresh one, `Err(why not)`. Runs after the command is found the same and
/// before the data is compared.
pub type SameRunCheck<'a> = &'a dyn Fn(&Manifest, &Manifest) -> Result<(), String>;

/// Opens `path` for a run of `metrics` over `dataset`: a new run, or the earlier one
/// resumed. `fresh` is the manifest a new run starts with; `also` is the command's own test
/// that the earlier run is the same one.
pub fn prepare(
    path: &Path,
    overwrite: bool,
    retry_failed: bool,
    fresh: Manifest,
    also: SameRunCheck<'_>,
) -> anyhow::Result<Prepared> {
    let manifest_path = path.join(MANIFEST_FILE);
    if overwrite || !manifest_path.is_file() {
        let run = RunDir::create(path, overwrite)?;
        return Ok(Prepared {
            run,
            manifest: fresh,
            done: HashSet::new(),
            resumed: false,
            retried: 0,
        });
    }
    let bytes = fs::read(&manifest_path)
        .with_context(|| format!("cannot read {}", manifest_path.display()))?;
    let earlier: Manifest = serde_json::from_slice(&bytes)
        .with_context(|| format!("{} is not a run manifest", manifest_path.display()))?;
    check_same_run(path, &earlier, &fresh, also)?;
    let (done, retried) = compact_journal(&path.join(RESULTS_FILE), retry_failed)?;
    let run = RunDir::reopen(path)?;
    // Earlier sessions keep their own judge accounts; this one is appended when it ends.
    let manifest = Manifest {
        status: RunStatus::Running,
        finished_at: None,
        started_at: earlier.started_at,
        sessions: earlier.sessions,
        ..fresh
    };
    Ok(Prepared {
        run,
        manifest,
        done,
        resumed: true,
        retried,
    })
}

fn check_same_run(
    path: &Path,
    earlier: &Manifest,
    fresh: &Manifest,
    also: SameRunCheck<'_>,
) -> Result<(), ResumeRefused> {
    let refuse = |why: String| ResumeRefused {
        path: path.to_path_buf(),
        why,
    };
    if earlier.command != fresh.command {
        return Err(refuse(format!("it holds a `{}` run", earlier.command)));
    }
    also(earlier, fresh).map_err(refuse)?;
    if earlier.dataset.sha256 != fresh.dataset.sha256 {
        return Err(refuse(format!(
            "it was run over other data ({} with SHA-256 {}…, now {}…)",
            earlier.dataset.path,
            &earlier.dataset.sha256[..earlier.dataset.sha256.len().min(12)],
            &fresh.dataset.sha256[..fresh.dataset.sha256.len().min(12)],
        )));
    }
    // Verdicts of two judges are not mixed in one run (another endpoint serving the same
    // model is fine).
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
        return Err(refuse(format!(
            "it was judged by {}, now the judge is {}",
            judge(earlier),
            judge(fresh)
        )));
    }
    let names = |m: &Manifest| m.metrics.iter().map(|r| r.name.clone()).collect::<Vec<_>>();
    if names(earlier) != names(fresh) {
        return Err(refuse(format!(
            "it was run with the metrics {}, now {} are asked for",
            names(earlier).join(","),
            names(fresh).join(",")
        )));
    }
    Ok(())
}

/// Reads the journal, keeps one line per cell (dropping a torn last line, repeated cells
/// and, when `retry_failed`, failed cells) and rewrites it if anything was dropped.
/// Returns the cells kept and how many failed cells were dropped.
fn compact_journal(
    path: &Path,
    retry_failed: bool,
) -> anyhow::Result<(HashSet<(String, String)>, usize)> {
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
) -> anyhow::Result<Vec<(K, R)>> {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(error) => {
            return Err(error).with_context(|| format!("cannot read {}", path.display()));
        }
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
        let record: R = serde_json::from_str(line).with_context(|| {
            format!(
                "{}:{}: not a journal line; the run directory is damaged (pass --overwrite \
                 to start over)",
                path.display(),
                index + 1
            )
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
            .with_context(|| format!("cannot rewrite {}", path.display()))?;
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
