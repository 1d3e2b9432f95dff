//! The question loop of `rank`, `reference`, `testset` and `pipeline`'s first stages: the
//! questions they read ([`QuestionData`]), and a run directory worked one question (or
//! planned item) at a time ([`QuestionRun`]): a journal with one line per finished question,
//! questions already there skipped, a question spoiled by a stop held back, the session's
//! judge accounts in the manifest, its end by the shell's rule ([`crate::engine::shell`]),
//! `summary.json` and the status written last.

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rageval_core::Sample;
use rageval_core::dataset::{self, FieldMap, Format, ReadOptions};
use rageval_judge::CancelToken;
use rageval_report::{DatasetInfo, JudgeAccount, Manifest, SessionEnd, sha256_file, utc_timestamp};
use rageval_tasks::TaskKind;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::engine::ended::Stopped;
use crate::engine::error::{Result, RunError};
use crate::engine::identity::RunIdentity;
use crate::engine::judges::{JudgeSetup, Stop};
use crate::engine::observe::{Event, Observer, Progress};
use crate::engine::resume::{self, compact_lines};
use crate::engine::session::{self, SessionOpen};
use crate::engine::shell::{self, Books, Tally};
use crate::engine::units;
use crate::engine::words::counted;

/// How often progress is reported while questions are in flight, besides after each one.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// The questions of a per-question command, and where its directory goes.
#[derive(Debug, Clone)]
pub struct QuestionData {
    /// The dataset: a question and its contexts in retriever order per row.
    pub data: PathBuf,
    pub format: Option<Format>,
    pub field_map: Vec<String>,
    pub sheet: Option<String>,
    /// Only the first N questions.
    pub samples: Option<usize>,
    /// The output directory (default: `runs/<dataset stem>-<command>`).
    pub out: Option<PathBuf>,
    /// Start over instead of resuming.
    pub overwrite: bool,
    /// When resuming, do again the questions whose judge calls failed.
    pub retry_failed: bool,
    /// Seed of every random choice.
    pub seed: u64,
}

impl QuestionData {
    /// Every question of the dataset (at most `samples`), or the reader's error naming
    /// file, line and field.
    pub fn read(&self) -> Result<Vec<Sample>> {
        let options = ReadOptions {
            format: self.format,
            field_map: FieldMap::parse(&self.field_map)?,
            sheet: self.sheet.clone(),
        };
        let mut samples = Vec::new();
        for sample in dataset::open(&self.data, &options)?.take(self.samples.unwrap_or(usize::MAX))
        {
            samples.push(sample?);
        }
        if samples.is_empty() {
            return Err(RunError::Usage(format!(
                "{} has no questions",
                self.data.display()
            )));
        }
        let mut ids = HashSet::new();
        if let Some(twice) = samples.iter().find(|s| !ids.insert(s.id.as_str())) {
            return Err(RunError::DuplicateId(twice.id.clone()));
        }
        Ok(samples)
    }

    /// The dataset as a run's manifest describes it, what to do with a run already there,
    /// and `manifest_settings` with the reading options added.
    pub fn described(&self, manifest_settings: Value) -> Result<(DatasetInfo, Restart, Value)> {
        let dataset = DatasetInfo {
            path: self.data.display().to_string(),
            sha256: sha256_file(&self.data)?,
            format: self
                .format
                .map(|f| format!("{f:?}").to_lowercase())
                .unwrap_or_default(),
            samples: None,
        };
        let mut manifest_settings = manifest_settings;
        manifest_settings["samples"] = serde_json::json!(self.samples);
        manifest_settings["field_map"] = serde_json::json!(self.field_map);
        let restart = Restart {
            overwrite: self.overwrite,
            retry_failed: self.retry_failed,
        };
        Ok((dataset, restart, manifest_settings))
    }

    /// `--out`, else `runs/<dataset stem>-<suffix>`.
    pub fn out_or(&self, data: &Path, suffix: &str) -> PathBuf {
        self.out
            .clone()
            .unwrap_or_else(|| default_out(data, suffix))
    }
}

/// `runs/<dataset stem>-<suffix>`.
pub fn default_out(data: &Path, suffix: &str) -> PathBuf {
    let stem = data
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "data".into());
    PathBuf::from("runs").join(format!("{stem}-{suffix}"))
}

/// What a session does with a run directory already there.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Restart {
    /// Start over instead of resuming.
    pub overwrite: bool,
    /// When resuming, do again the units whose judge calls failed.
    pub retry_failed: bool,
}

/// Whether a question's result may be journaled when the run is stopping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spoiled {
    /// Every call it made was answered: journal it.
    No,
    /// Some call failed; if the run is stopping, the failure may be the stop's (a refused
    /// call), so hold it back for the next session.
    IfStopping,
}

/// A per-question command's journal: its file, each line's question, and whether a line's
/// judge calls failed (done again with `--retry-failed`).
pub struct Journal<L> {
    pub file: &'static str,
    pub key: fn(&L) -> String,
    pub failed: fn(&L) -> bool,
}

/// What a per-question run is, for [`QuestionRun::open`].
pub struct QuestionRunOptions<'o, L> {
    /// The command, as the manifest and the identity name it.
    pub command: &'o str,
    /// The data, as [`QuestionData::described`] gives it (or `testset`'s chunks hashed by
    /// their content).
    pub dataset: DatasetInfo,
    pub restart: Restart,
    /// The run directory.
    pub path: &'o Path,
    /// The manifest's settings.
    pub manifest_settings: Value,
    /// The settings in the run's identity, besides the dataset and the judge.
    pub identity_settings: &'o [(&'o str, String)],
    /// The tasks whose routes are in the identity.
    pub tasks: &'o [TaskKind],
    pub journal: Journal<L>,
    /// The command's other files, removed when a new run starts (and with a failed new run).
    pub own_files: &'static [&'static str],
    /// What a unit is called in the lines people read (`questions`, `items`).
    pub unit: &'static str,
}

/// One stage of questions for [`QuestionRun::work`].
pub struct QuestionStage<'s> {
    /// The stage's name in progress events.
    pub name: &'static str,
    /// Every question of the run, journaled or not.
    pub questions: &'s [Sample],
    /// Questions worked at once.
    pub at_once: usize,
}

/// A run directory worked one question at a time, journaling lines of `L`.
pub struct QuestionRun<'a, L> {
    run: rageval_report::RunDir,
    manifest: Manifest,
    journal: Journal<L>,
    /// The journal and the command's own files, which a failed new run removes.
    files: Vec<&'static str>,
    done: HashSet<String>,
    setup: &'a JudgeSetup,
    session: SessionOpen<'a>,
    path: PathBuf,
    resumed: bool,
    unit: &'static str,
}

impl<'a, L: Serialize + DeserializeOwned> QuestionRun<'a, L> {
    /// Opens the run directory of `options` for `setup`'s judge: resumes the run there when
    /// it has the same identity (dataset, settings, the judge's routes for the tasks), else
    /// starts a new one, removing the journal and the command's own files left from before.
    pub fn open(
        options: QuestionRunOptions<'_, L>,
        setup: &'a JudgeSetup,
        observer: &dyn Observer,
    ) -> Result<Self> {
        let session_started = utc_timestamp();
        let (path, journal, restart) = (options.path, options.journal, options.restart);
        let identity = RunIdentity {
            command: options.command.into(),
            dataset_sha256: options.dataset.sha256.clone(),
            metrics: Vec::new(),
            judge: setup.identity()?.for_tasks(options.tasks),
            labels_sha256: None,
            labels_file: None,
            settings: options
                .identity_settings
                .iter()
                .map(|(name, value)| ((*name).to_string(), value.clone()))
                .collect(),
        };
        let fresh = Manifest::start(
            options.command,
            options.dataset,
            Vec::new(),
            options.manifest_settings,
        );
        let mut files = vec![journal.file];
        files.extend_from_slice(options.own_files);
        let opened = resume::open(path, restart.overwrite, fresh, &identity, &files)?;
        let mut retried = 0;
        let done: HashSet<String> = if opened.resumed {
            compact_lines(&path.join(journal.file), |line: &L| {
                let again = restart.retry_failed && (journal.failed)(line);
                retried += usize::from(again);
                (!again).then(|| (journal.key)(line))
            })?
            .into_iter()
            .map(|(id, _)| id)
            .collect()
        } else {
            HashSet::new()
        };
        for note in &opened.notes {
            observer.note(format!("note: {note}"));
        }
        if opened.resumed {
            let again = if retried > 0 {
                format!(", {retried} whose judge calls failed to do again")
            } else {
                String::new()
            };
            observer.note(format!(
                "resuming {}: {} kept{again}",
                path.display(),
                counted(done.len(), &format!("finished {}", options.unit))
            ));
        }
        opened.run.write_manifest(&opened.manifest)?;
        // Rank and reference share `pipeline`'s judge: each stage counts its own calls.
        let session =
            SessionOpen::new(setup, session_started, &opened.manifest).counting_from_now();
        Ok(QuestionRun {
            run: opened.run,
            manifest: opened.manifest,
            journal,
            files,
            done,
            setup,
            session,
            path: path.to_path_buf(),
            resumed: opened.resumed,
            unit: options.unit,
        })
    }

    /// Whether an earlier run in the directory is being continued.
    pub fn resumed(&self) -> bool {
        self.resumed
    }

    /// Whether the question `id` is already journaled.
    pub fn is_done(&self, id: &str) -> bool {
        self.done.contains(id)
    }

    /// Works every question of `stage` not yet journaled, `stage.at_once` at a time,
    /// journaling each result in input order; `Err` results and results [`Spoiled`] by a
    /// stop are not journaled. Returns the stop, if the run stopped before every question
    /// was done. An `Err` result when the run is not stopping ends the session by the
    /// shell's rule and the command with that error.
    pub fn work<'s, Fut>(
        &mut self,
        stage: QuestionStage<'s>,
        observer: &dyn Observer,
        cancel: &CancelToken,
        work: impl Fn(&'s Sample) -> Fut,
        spoiled: impl Fn(&Result<L>) -> Spoiled,
    ) -> Result<Option<Stopped>>
    where
        Fut: Future<Output = Result<L>>,
    {
        let (setup, samples) = (self.setup, stage.questions);
        let todo: Vec<&'s Sample> = samples.iter().filter(|s| !self.is_done(&s.id)).collect();
        let total = todo.len() as u64;
        let stop_of = || {
            if cancel.is_cancelled() {
                Some(Stop::Cancelled)
            } else {
                setup.stop()
            }
        };
        let stopped = || stop_of().is_some();
        let mut journal = self.run.side_journal(self.journal.file)?;
        // Shared with the progress ticker, which reads them between questions' results.
        let (written, failed) = (Cell::new(0usize), Cell::new(0u64));
        // Failed in this session: dropped again if the judge is then halted (no finding).
        let failed_keys = RefCell::new(Vec::new());
        let cut_off_warned = Cell::new(false);
        let progress_now = || {
            let mut progress = Progress::of(stage.name, setup.chat.as_ref());
            progress.done = written.get() as u64;
            progress.total = Some(total);
            progress.failed = failed.get();
            progress
        };
        observer.event(&Event::Stage {
            name: stage.name,
            total: Some(total),
        });
        let (run, manifest, session, done) = (
            &self.run,
            &mut self.manifest,
            &mut self.session,
            &mut self.done,
        );
        let key = self.journal.key;
        let working = async {
            let working = units::in_order(
                todo.into_iter().map(Ok::<_, RunError>),
                stage.at_once,
                &stopped,
                &work,
                |result, stopping| {
                    let spoil = spoiled(&result);
                    if stopping && spoil == Spoiled::IfStopping {
                        return Ok(());
                    }
                    failed.set(failed.get() + u64::from(spoil == Spoiled::IfStopping));
                    let line = result?;
                    journal.append(&line)?;
                    journal.flush()?;
                    if spoil == Spoiled::IfStopping {
                        failed_keys.borrow_mut().push(key(&line));
                    }
                    done.insert(key(&line));
                    written.set(written.get() + 1);
                    session.checkpoint(run, manifest, written.get())?;
                    observer.event(&Event::Progress(progress_now()));
                    setup.warn_cut_off_once(&cut_off_warned, observer);
                    Ok(())
                },
            );
            // A question of a slow judge takes minutes: the judge's calls are counted as
            // they are answered, not only when the question is done.
            let ticking = async {
                let mut every = tokio::time::interval(PROGRESS_EVERY);
                every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                every.tick().await;
                loop {
                    every.tick().await;
                    observer.event(&Event::Progress(progress_now()));
                }
            };
            tokio::select! {
                result = working => result,
                () = ticking => unreachable!("the progress ticker never ends"),
            }
        };
        let ended = shell::until_cancelled(cancel, [setup.chat.clone()], working)?;
        observer.event(&Event::StageEnd);
        journal.flush()?;
        drop(journal);
        let stop_now = stop_of();
        let written = written.get() - self.forget_if_halted(stop_now.as_ref(), failed_keys)?;
        let ended = ended.map(|worked| worked.map(|()| None));
        let left = samples.len() - self.done.len().min(samples.len());
        self.end(ended, stop_now, written, left, observer)
    }

    /// When `stop` halted the judge as unavailable, takes the questions `keys` (those that
    /// failed in this session) out of the journal (rewritten atomically) and out of those
    /// done, so the next session asks them again; returns how many there were.
    fn forget_if_halted(
        &mut self,
        stop: Option<&Stop>,
        keys: RefCell<Vec<String>>,
    ) -> Result<usize> {
        let keys = keys.into_inner();
        if keys.is_empty() || !matches!(stop, Some(Stop::JudgeUnavailable(_))) {
            return Ok(0);
        }
        let key = self.journal.key;
        let path = self.path.join(self.journal.file);
        let kept: Vec<L> = compact_lines(&path, |line: &L| Some(key(line)))?
            .into_iter()
            .filter(|(id, _)| !keys.contains(id))
            .map(|(_, line)| line)
            .collect();
        write_jsonl(&path, &kept)?;
        for id in &keys {
            self.done.remove(id);
        }
        Ok(keys.len())
    }

    /// Ends this session after its work ([`shell::end`]): `written` questions journaled,
    /// `left` for the next session.
    fn end(
        &mut self,
        ended: Option<Result<Option<Stop>>>,
        stop_now: Option<Stop>,
        written: usize,
        left: usize,
        observer: &dyn Observer,
    ) -> Result<Option<Stopped>> {
        let tally = Tally {
            done: written,
            left,
            unit: self.unit,
        };
        let books = Books {
            run: &self.run,
            manifest: &mut self.manifest,
            session: &self.session,
            resumed: self.resumed,
            own_files: &self.files,
            paid_elsewhere: false,
        };
        shell::end(ended, stop_now, books, tally, observer)
    }

    /// Every journaled line, in the order of `samples` (the journal is rewritten in that
    /// order, atomically).
    pub fn lines_in_order(&self, samples: &[Sample]) -> Result<Vec<L>> {
        let key = self.journal.key;
        let path = self.path.join(self.journal.file);
        let mut lines: std::collections::HashMap<String, L> =
            compact_lines(&path, |line: &L| Some(key(line)))?
                .into_iter()
                .collect();
        let ordered: Vec<L> = samples
            .iter()
            .filter_map(|sample| lines.remove(&sample.id))
            .collect();
        write_jsonl(&path, &ordered)?;
        Ok(ordered)
    }

    /// Writes `rows` to `file` in the run directory, whole or not at all.
    pub fn write_lines<R: Serialize>(&self, file: &str, rows: &[R]) -> Result<()> {
        write_jsonl(&self.path.join(file), rows)
    }

    /// Writes `bytes` to `file` in the run directory, whole or not at all.
    pub fn write_file(&self, file: &str, bytes: &[u8]) -> Result<()> {
        crate::engine::files::write_atomically(&self.path.join(file), bytes)
    }

    /// The judge's accounts over every session, this one included as it stands.
    pub fn account(&mut self) -> JudgeAccount {
        self.session.close(
            &mut self.manifest,
            SessionEnd::Complete,
            None,
            self.done.len(),
        )
    }

    /// The footer line for this session and the run.
    pub fn footer(&mut self) -> String {
        let account = self.session.close(
            &mut self.manifest,
            SessionEnd::Complete,
            None,
            self.done.len(),
        );
        let footer = session::footer(&account, &session::this_session(&self.manifest));
        match self.setup.cut_off_warning() {
            Some(warning) => format!("{footer}\n{warning}"),
            None => footer,
        }
    }

    /// Writes `summary` as `summary.json` and marks the run complete.
    pub fn finish(mut self, summary: &impl Serialize) -> Result<PathBuf> {
        self.session.close(
            &mut self.manifest,
            SessionEnd::Complete,
            None,
            self.done.len(),
        );
        self.run.finish_with(&mut self.manifest, summary)?;
        Ok(self.path)
    }

    /// The run directory.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// `rows` as JSON lines at `path`, whole or not at all.
fn write_jsonl<R: Serialize>(path: &Path, rows: &[R]) -> Result<()> {
    let mut text = String::new();
    for row in rows {
        text.push_str(&serde_json::to_string(row).map_err(RunError::encode("a journal line"))?);
        text.push('\n');
    }
    crate::engine::files::write_atomically(path, text)
}
