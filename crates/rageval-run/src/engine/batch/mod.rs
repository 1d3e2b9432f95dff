//! Batch mode: a run's judge requests answered by batch jobs instead of one call at a time
//! — a provider's batch API (`--batch`: OpenAI, Azure OpenAI or any server with the same
//! files and batches endpoints), or files written out for another engine to answer and read
//! back (`--export-requests DIR`, `--import-responses FILE…`: `vllm run-batch`, Ray Data,
//! Spark).
//!
//! A run then goes in passes ([`Passes`]). Each pass scores every cell not yet journaled;
//! the chat model ([`rageval_judge::BatchModel`]) answers a call from the answers loaded so
//! far, or records its request as pending — a stop for that cell, which is held back
//! rather than journaled as failed ([`crate::engine::score::Plan::hold_failed`]). After the pass
//! the pending requests form the next *stage*: one job per request file (files are cut at
//! the provider's limits), sent, polled with its status shown, and its answers loaded; then
//! the next pass runs. A stage typically follows the metrics' own steps (statements, then
//! verdicts on them; a re-ask is one more stage). The run ends when a pass leaves nothing
//! pending. Answers go through the same parse ladder and into the same cache as
//! synchronous ones, so results are those of a synchronous run.
//!
//! Everything needed to resume is journaled in the run directory ([`journal`]): a run
//! killed while polling waits for the same jobs when run again, and sends nothing twice.
//!
//! - [`judge`]: the batch judge (batch prices, no per-minute limits) and its books;
//! - [`journal`]: `batches.jsonl` and the `batches/` folder;
//! - [`answers`]: answers kept in the run directory;
//! - [`plan`]: `--dry-run --batch`, the stages and jobs a run would need.

pub mod answers;
pub mod journal;
pub mod judge;
pub mod plan;

use std::collections::BTreeMap;
use std::path::PathBuf;

use rageval_judge::batch::{
    Batch, BatchLimits, FailedItems, ItemOutcome, PollPolicy, RequestFile, read_output_file,
    split_requests, write_request_files,
};
use rageval_judge::{BatchClient, BatchStore, JudgeError};
use rageval_report::{RunDir, sha256_bytes};

use crate::engine::error::{Result, RunError};
use crate::engine::judges::Stop;
use crate::engine::observe::Observer;
use journal::{BatchEvent, BatchJournal, Job, Jobs, now};

/// Pages of the account's jobs searched for a job created just before a crash.
const LIST_PAGES: usize = 10;
/// Jobs per page of that search.
const LIST_PAGE_SIZE: u32 = 100;

/// How a run uses batch jobs.
#[derive(Debug, Clone, Default)]
pub struct BatchMode {
    /// Send each stage's requests as batch jobs to the judge endpoint (`--batch`).
    pub submit: bool,
    /// What becomes of a request a job did not answer: sent again in the next stage (at
    /// most twice), or asked synchronously (`--batch-fallback sync`).
    pub failed_items: FailedItems,
    /// Write the next stage's requests here and stop (`--export-requests DIR`).
    pub export: Option<PathBuf>,
    /// Answer files to load before the first pass (`--import-responses FILE…`).
    pub import: Vec<PathBuf>,
    /// How large one request file may be.
    pub limits: BatchLimits,
    /// How often a job is polled.
    pub poll: PollPolicy,
}

impl BatchMode {
    /// Refuses combinations that cannot work.
    pub fn check(&self) -> Result<()> {
        match (self.submit, &self.export) {
            (true, Some(_)) => Err(RunError::Usage(
                "--batch sends each stage's requests and --export-requests writes them out: \
                 pass one"
                    .into(),
            )),
            (false, None) => Err(RunError::Usage(
                "--import-responses loads answers; the requests they leave unanswered need \
                 --export-requests DIR (to write them out) or --batch (to send them)"
                    .into(),
            )),
            _ => Ok(()),
        }
    }
}

/// What a pass leaves to do.
#[derive(Debug)]
pub enum Next {
    /// Nothing is pending: the run is done.
    Finished,
    /// The pending requests were answered: run another pass.
    Answered,
    /// The pending requests were written out: the session stops here.
    Exported(Stop),
}

/// The passes of a batch run: the store the judge answers from, the jobs journaled, the
/// client that sends them.
pub struct Passes {
    mode: BatchMode,
    store: BatchStore,
    client: Option<BatchClient>,
    journal: BatchJournal,
    /// What the journal said when the session started.
    earlier: Jobs,
    /// The last stage sent or exported.
    stage: u32,
}

impl Passes {
    /// Opens the batch state of the run in `run` (`resumed`: an earlier session's), loads
    /// the answers earlier sessions kept, and imports `mode.import`.
    pub fn open(
        mode: &BatchMode,
        store: BatchStore,
        client: Option<BatchClient>,
        run: &RunDir,
        resumed: bool,
        observer: &dyn Observer,
    ) -> Result<Self> {
        mode.check()?;
        let earlier = match resumed {
            true => Jobs::read(run.path())?,
            false => Jobs::default(),
        };
        let journal = BatchJournal::open(run, !resumed)?;
        let mut kept = 0;
        for name in &earlier.answers {
            kept += store.load(answers::read(&journal.answers_path(name))?);
        }
        if kept > 0 {
            observer.note(format!(
                "batch: {kept} answers kept by earlier sessions loaded"
            ));
        }
        let mut imports = earlier.imports;
        for path in &mode.import {
            let items = read_output_file(path).map_err(batch_error(format!(
                "cannot read the answers in {}",
                path.display()
            )))?;
            imports += 1;
            let name = format!("imported-{imports:04}");
            journal.dir()?;
            answers::keep(&journal.answers_path(&name), &items)?;
            let (answered, failed) = tally(&items);
            journal.record(BatchEvent::Imported {
                name,
                from: path.display().to_string(),
                answered,
                failed,
                at: now(),
            })?;
            observer.note(format!(
                "batch: {answered} answers and {failed} failures read from {}",
                path.display()
            ));
            store.load(items);
        }
        let stage = earlier.last_stage;
        Ok(Passes {
            mode: mode.clone(),
            store,
            client,
            journal,
            earlier,
            stage,
        })
    }

    /// Calls that found their request pending so far (a pass whose count moved has cells
    /// waiting for an answer).
    pub fn pending_calls(&self) -> u64 {
        self.store.counts().pending_calls
    }

    /// Before the first pass: waits for the jobs an earlier session left running (and finds
    /// a job created just before a crash by its metadata), and loads their answers.
    pub async fn resume(&mut self, observer: &dyn Observer) -> Result<()> {
        let mut waiting = Vec::new();
        let unconfirmed: Vec<Job> = self.earlier.unconfirmed().cloned().collect();
        for job in unconfirmed {
            let found = match &self.client {
                Some(client) => find_job(client, &job).await?,
                None => None,
            };
            match found {
                Some(batch) => {
                    self.journal.record(BatchEvent::Created {
                        name: job.name.clone(),
                        batch_id: batch.id.clone(),
                        input_file_id: batch.input_file_id.clone(),
                        at: now(),
                    })?;
                    waiting.push((job.name, batch.id));
                }
                None => observer.note(format!(
                    "batch: request file {} was not sent before the last session ended; its \
                     requests go into the next stage",
                    job.name
                )),
            }
        }
        waiting.extend(
            self.earlier
                .running()
                .filter_map(|job| Some((job.name.clone(), job.batch_id.clone()?))),
        );
        if waiting.is_empty() {
            return Ok(());
        }
        let Some(client) = &self.client else {
            let names: Vec<&str> = waiting.iter().map(|(name, _)| name.as_str()).collect();
            return Err(RunError::Usage(format!(
                "this run has batch jobs still running ({}): run the same command with --batch \
                 to wait for them",
                names.join(", ")
            )));
        };
        observer.note(format!(
            "batch: waiting for {} job(s) an earlier session started",
            waiting.len()
        ));
        self.wait_and_load(client, &waiting, observer).await
    }

    /// After a pass: sends (or writes out) the requests it left pending and loads their
    /// answers, or says the run is done.
    pub async fn next(&mut self, observer: &dyn Observer) -> Result<Next> {
        let pending = self.store.take_pending();
        if pending.is_empty() {
            return Ok(Next::Finished);
        }
        self.stage += 1;
        let requests = pending.len();
        let files = split_requests(&pending, &self.mode.limits).map_err(batch_error(
            "cannot cut the requests into batch files".into(),
        ))?;
        drop(pending);
        if let Some(dir) = &self.mode.export {
            let stem = format!("stage-{:04}", self.stage);
            let paths = write_request_files(dir, &stem, &files).map_err(batch_error(format!(
                "cannot write the requests to {}",
                dir.display()
            )))?;
            self.journal.record(BatchEvent::Exported {
                stage: self.stage,
                files: paths.iter().map(|p| p.display().to_string()).collect(),
                requests,
                at: now(),
            })?;
            return Ok(Next::Exported(Stop::RequestsExported {
                files: paths,
                requests,
            }));
        }
        let Some(client) = &self.client else {
            return Err(RunError::Usage(format!(
                "{requests} judge requests need answers: pass --batch to send them, or \
                 --export-requests DIR to write them out"
            )));
        };
        observer.note(format!(
            "batch stage {}: {requests} requests in {} job(s)",
            self.stage,
            files.len()
        ));
        let mut waiting = Vec::new();
        for (index, file) in files.iter().enumerate() {
            let name = format!("stage-{:04}-{:04}", self.stage, index + 1);
            let batch_id = self.submit(client, &name, file, observer).await?;
            waiting.push((name, batch_id));
        }
        drop(files);
        self.wait_and_load(client, &waiting, observer).await?;
        Ok(Next::Answered)
    }

    /// Uploads request file `name` and starts its job, journaling each step first.
    async fn submit(
        &self,
        client: &BatchClient,
        name: &str,
        file: &RequestFile,
        observer: &dyn Observer,
    ) -> Result<String> {
        let sha256 = sha256_bytes(&file.jsonl);
        self.journal.keep_ids(name, &file.custom_ids)?;
        self.journal.record(BatchEvent::Prepared {
            name: name.to_owned(),
            stage: self.stage,
            requests: file.len(),
            sha256: sha256.clone(),
            at: now(),
        })?;
        let uploaded = client
            .upload(&format!("{name}.jsonl"), &file.jsonl)
            .await
            .map_err(batch_error(format!("cannot upload batch file {name}")))?;
        let metadata = BTreeMap::from([
            ("rageval_file".to_owned(), name.to_owned()),
            ("rageval_sha256".to_owned(), sha256),
        ]);
        let batch = client
            .create(&uploaded.id, &metadata)
            .await
            .map_err(batch_error(format!("cannot start the batch job of {name}")))?;
        self.journal.record(BatchEvent::Created {
            name: name.to_owned(),
            batch_id: batch.id.clone(),
            input_file_id: uploaded.id,
            at: now(),
        })?;
        observer.note(format!(
            "batch {name}: job {} started with {} requests",
            batch.id,
            file.len()
        ));
        Ok(batch.id)
    }

    /// Polls every job of `waiting` (name, batch id) until it is over, showing each change
    /// of state, then keeps and loads its answers.
    async fn wait_and_load(
        &self,
        client: &BatchClient,
        waiting: &[(String, String)],
        observer: &dyn Observer,
    ) -> Result<()> {
        let waits = waiting.iter().map(|(name, batch_id)| async move {
            let mut journal_error = None;
            let batch = client
                .wait(batch_id, &self.mode.poll, |batch| {
                    observer.note(status_line(name, batch));
                    let state = BatchEvent::State {
                        name: name.clone(),
                        batch_id: batch.id.clone(),
                        status: batch.status.to_string(),
                        completed: batch.request_counts.completed,
                        failed: batch.request_counts.failed,
                        total: batch.request_counts.total,
                        at: now(),
                    };
                    if let Err(error) = self.journal.record(state) {
                        journal_error.get_or_insert(error);
                    }
                })
                .await
                .map_err(batch_error(format!(
                    "cannot poll batch job {batch_id} ({name}); run the same command again to \
                     go on waiting"
                )))?;
            if let Some(error) = journal_error {
                return Err(error);
            }
            let ids = self.journal.ids(name)?;
            let items = client
                .results(&batch, &ids)
                .await
                .map_err(batch_error(format!(
                    "cannot download the answers of batch job {batch_id} ({name})"
                )))?;
            answers::keep(&self.journal.answers_path(name), &items)?;
            let (answered, failed) = tally(&items);
            self.journal.record(BatchEvent::Loaded {
                name: name.clone(),
                batch_id: batch_id.clone(),
                answered,
                failed,
                at: now(),
            })?;
            observer.note(format!(
                "batch {name}: {answered} answers loaded, {failed} failed"
            ));
            self.store.load(items);
            Ok::<(), RunError>(())
        });
        futures_util::future::try_join_all(waits).await?;
        Ok(())
    }
}

/// A job created for `job`'s request file before the session that made it ended: the
/// account's recent jobs searched for its metadata.
async fn find_job(client: &BatchClient, job: &Job) -> Result<Option<Batch>> {
    let mut after: Option<String> = None;
    for _ in 0..LIST_PAGES {
        let page = client
            .list(after.as_deref(), LIST_PAGE_SIZE)
            .await
            .map_err(batch_error("cannot list the batch jobs".into()))?;
        let found = page.data.iter().find(|batch| {
            batch.metadata.as_ref().is_some_and(|m| {
                m.get("rageval_file") == Some(&job.name)
                    && m.get("rageval_sha256") == Some(&job.sha256)
            })
        });
        if let Some(batch) = found {
            return Ok(Some(batch.clone()));
        }
        match page.data.last() {
            Some(last) if page.has_more => after = Some(last.id.clone()),
            _ => break,
        }
    }
    Ok(None)
}

/// `batch stage-0001-0001 (batch_abc): in_progress, 120 of 400 answered, 2 failed`.
fn status_line(name: &str, batch: &Batch) -> String {
    let counts = batch.request_counts;
    format!(
        "batch {name} ({}): {}, {} of {} answered, {} failed",
        batch.id, batch.status, counts.completed, counts.total, counts.failed
    )
}

/// Answers and failures among `items`.
fn tally(items: &[rageval_judge::batch::BatchItem]) -> (usize, usize) {
    let answered = items
        .iter()
        .filter(|item| matches!(item.outcome, ItemOutcome::Answered(_)))
        .count();
    (answered, items.len() - answered)
}

pub(crate) fn batch_error(what: String) -> impl FnOnce(JudgeError) -> RunError {
    move |source| RunError::Batch {
        what,
        source: Box::new(source),
    }
}
