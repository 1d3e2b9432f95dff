//! What a batch run keeps in its run directory, so that a killed run resumes its jobs
//! instead of sending them again:
//!
//! - `batches.jsonl`, one event a line, appended and flushed as things happen:
//!   `prepared` (a request file about to be uploaded, with the SHA-256 of its content),
//!   `created` (its batch id), `state` (each change of the job's status or counts),
//!   `loaded` (its answers kept), `imported` (an answer file read with
//!   `--import-responses`), `exported` (request files written by `--export-requests`);
//! - `batches/NAME.ids`: the `custom_id`s of request file NAME, one a line, written before
//!   its upload;
//! - `batches/NAME.answers.jsonl`: the answers of job or import NAME, in the OpenAI batch
//!   output format, written before its `loaded` / `imported` event.
//!
//! [`Jobs`] is what the events say: which files were sent, which jobs still run, which
//! answers to load again.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rageval_report::{JournalWriter, utc_timestamp};
use serde::{Deserialize, Serialize};

use crate::engine::error::{Result, RunError};
use crate::engine::files::write_atomically;
use crate::engine::resume::compact_streaming;

/// The event journal of a batch run.
pub const BATCHES_FILE: &str = "batches.jsonl";
/// The folder of request ids and answers beside it.
pub const BATCHES_DIR: &str = "batches";

/// One line of `batches.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum BatchEvent {
    /// Request file `name` of `stage` is about to be uploaded.
    Prepared {
        name: String,
        stage: u32,
        requests: usize,
        /// SHA-256 of the file's content: the job's metadata carries it, so a job created
        /// just before a crash is found again by listing the account's jobs.
        sha256: String,
        at: String,
    },
    /// The job of request file `name` exists.
    Created {
        name: String,
        batch_id: String,
        input_file_id: String,
        at: String,
    },
    /// The job's status or counts changed.
    State {
        name: String,
        batch_id: String,
        status: String,
        completed: u64,
        failed: u64,
        total: u64,
        at: String,
    },
    /// The job's answers are kept in `batches/NAME.answers.jsonl`.
    Loaded {
        name: String,
        batch_id: String,
        answered: usize,
        failed: usize,
        at: String,
    },
    /// An answer file was read and kept as `batches/NAME.answers.jsonl`.
    Imported {
        name: String,
        from: String,
        answered: usize,
        failed: usize,
        at: String,
    },
    /// The requests of `stage` were written to `files` for someone else to answer.
    Exported {
        stage: u32,
        files: Vec<String>,
        requests: usize,
        at: String,
    },
}

/// A request file sent (or about to be) as a job.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub name: String,
    pub stage: u32,
    pub sha256: String,
    /// Set once the job was created.
    pub batch_id: Option<String>,
    /// Whether its answers are kept.
    pub loaded: bool,
}

/// What `batches.jsonl` says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Jobs {
    /// By name, in the order prepared.
    pub jobs: BTreeMap<String, Job>,
    /// Names whose answers are kept (jobs loaded and imports), in journal order.
    pub answers: Vec<String>,
    /// The last stage sent or exported.
    pub last_stage: u32,
    /// Answer files imported so far.
    pub imports: usize,
}

impl Jobs {
    /// Reads the events of the run in `run` (none when it has no batch journal). A torn
    /// last line is dropped.
    pub fn read(run: &Path) -> Result<Self> {
        let mut jobs = Jobs::default();
        compact_streaming(&run.join(BATCHES_FILE), |event: BatchEvent| {
            jobs.apply(event);
            Ok(true)
        })?;
        Ok(jobs)
    }

    fn apply(&mut self, event: BatchEvent) {
        match event {
            BatchEvent::Prepared {
                name,
                stage,
                sha256,
                ..
            } => {
                self.last_stage = self.last_stage.max(stage);
                let job = Job {
                    name: name.clone(),
                    stage,
                    sha256,
                    batch_id: None,
                    loaded: false,
                };
                self.jobs.insert(name, job);
            }
            BatchEvent::Created { name, batch_id, .. } => {
                if let Some(job) = self.jobs.get_mut(&name) {
                    job.batch_id = Some(batch_id);
                }
            }
            BatchEvent::Loaded { name, .. } => {
                if let Some(job) = self.jobs.get_mut(&name) {
                    job.loaded = true;
                }
                self.answers.push(name);
            }
            BatchEvent::Imported { name, .. } => {
                self.imports += 1;
                self.answers.push(name);
            }
            BatchEvent::Exported { stage, .. } => self.last_stage = self.last_stage.max(stage),
            BatchEvent::State { .. } => {}
        }
    }

    /// Jobs created whose answers are not kept yet: still to wait for.
    pub fn running(&self) -> impl Iterator<Item = &Job> {
        self.jobs
            .values()
            .filter(|job| job.batch_id.is_some() && !job.loaded)
    }

    /// Files prepared whose job may or may not exist (a crash between upload and journal).
    pub fn unconfirmed(&self) -> impl Iterator<Item = &Job> {
        self.jobs.values().filter(|job| job.batch_id.is_none())
    }
}

/// Appends events to `batches.jsonl` and keeps the files beside it.
pub struct BatchJournal {
    run: PathBuf,
    writer: Mutex<JournalWriter>,
}

impl BatchJournal {
    /// Opens the journal of the run in `run` for appending; `fresh`: a new run, whose
    /// leftover batch files (from a run that was overwritten) are removed first.
    pub fn open(run: &rageval_report::RunDir, fresh: bool) -> Result<Self> {
        let path = run.path().to_path_buf();
        if fresh {
            crate::engine::files::remove_if_present(&path.join(BATCHES_FILE))?;
            let dir = path.join(BATCHES_DIR);
            if dir.is_dir() {
                fs::remove_dir_all(&dir).map_err(RunError::write(&dir))?;
            }
        }
        Ok(BatchJournal {
            writer: Mutex::new(run.side_journal(BATCHES_FILE)?),
            run: path,
        })
    }

    /// Appends `event` (its `at` is now) and flushes.
    pub fn record(&self, event: BatchEvent) -> Result<()> {
        let mut writer = self
            .writer
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        writer.append(&event)?;
        writer.flush()?;
        Ok(())
    }

    /// The folder of ids and answers (created on first use).
    pub fn dir(&self) -> Result<PathBuf> {
        let dir = self.run.join(BATCHES_DIR);
        fs::create_dir_all(&dir).map_err(RunError::write(&dir))?;
        Ok(dir)
    }

    /// Keeps the `custom_id`s of request file `name`.
    pub fn keep_ids(&self, name: &str, ids: &[String]) -> Result<()> {
        let mut text = ids.join("\n");
        text.push('\n');
        write_atomically(&self.dir()?.join(format!("{name}.ids")), text.as_bytes())
    }

    /// The `custom_id`s of request file `name`.
    pub fn ids(&self, name: &str) -> Result<Vec<String>> {
        let path = self.run.join(BATCHES_DIR).join(format!("{name}.ids"));
        let text = fs::read_to_string(&path).map_err(RunError::read(&path))?;
        Ok(text
            .lines()
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect())
    }

    /// Where the answers of `name` are kept.
    pub fn answers_path(&self, name: &str) -> PathBuf {
        self.run
            .join(BATCHES_DIR)
            .join(format!("{name}.answers.jsonl"))
    }
}

/// The current time for an event.
pub fn now() -> String {
    utc_timestamp()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_say_which_jobs_run_and_which_answers_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let run = rageval_report::RunDir::create(&dir.path().join("run"), false).unwrap();
        let journal = BatchJournal::open(&run, true).unwrap();
        let prepared = |name: &str, stage| BatchEvent::Prepared {
            name: name.into(),
            stage,
            requests: 2,
            sha256: "ab".into(),
            at: now(),
        };
        let created = |name: &str| BatchEvent::Created {
            name: name.into(),
            batch_id: format!("batch_{name}"),
            input_file_id: "file-1".into(),
            at: now(),
        };
        for event in [
            prepared("stage-0001-0001", 1),
            created("stage-0001-0001"),
            BatchEvent::Loaded {
                name: "stage-0001-0001".into(),
                batch_id: "batch_stage-0001-0001".into(),
                answered: 2,
                failed: 0,
                at: now(),
            },
            prepared("stage-0002-0001", 2),
            created("stage-0002-0001"),
            prepared("stage-0002-0002", 2),
        ] {
            journal.record(event).unwrap();
        }
        journal
            .keep_ids("stage-0002-0001", &["a".into(), "b".into()])
            .unwrap();
        // A torn last line (a crash while writing) is dropped.
        let path = run.path().join(BATCHES_FILE);
        let mut text = fs::read_to_string(&path).unwrap();
        text.push_str("{\"event\":\"created\",\"na");
        fs::write(&path, text).unwrap();

        let jobs = Jobs::read(run.path()).unwrap();
        assert_eq!(jobs.last_stage, 2);
        assert_eq!(jobs.answers, vec!["stage-0001-0001".to_string()]);
        let running: Vec<&str> = jobs.running().map(|j| j.name.as_str()).collect();
        assert_eq!(running, vec!["stage-0002-0001"]);
        let unconfirmed: Vec<&str> = jobs.unconfirmed().map(|j| j.name.as_str()).collect();
        assert_eq!(unconfirmed, vec!["stage-0002-0002"]);
        assert_eq!(journal.ids("stage-0002-0001").unwrap(), vec!["a", "b"]);
    }
}
