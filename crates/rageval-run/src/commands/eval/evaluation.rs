//! One `eval` under way, in the three steps [`super::run`] takes: prepare (judges,
//! metrics, the run directory), score (one pass, or batch passes, each sample's cells
//! journaled as it finishes), finish (summary, the session closed, calibration, reports and
//! the gate).

use std::cell::{Cell, RefCell};
use std::num::NonZeroUsize;
use std::path::Path;

use rageval_judge::{BatchStore, CancelToken};
use rageval_metrics::Metric;
use rageval_report::{
    JournalWriter, Manifest, RESULTS_FILE, ResultRecord, RunDir, RunInfo, SessionEnd,
};

use super::failures::judged_cells_failed;
use super::manifest::{fresh_manifest, identity};
use super::metrics::metrics_of;
use super::{EvalOptions, Evaluated, STAGE, dry_run, run_samples};
use crate::engine::batch::{self, Next, Passes};
use crate::engine::cells::Cells;
use crate::engine::error::{Result, RunError};
use crate::engine::judges::{self, Env, JudgeSetup};
use crate::engine::observe::{Event, Observer, Progress};
use crate::engine::reports::{finish_reports, finish_without_reports, texts_of};
use crate::engine::results::{Positions, SamplesRead, noting_positions};
use crate::engine::resume;
use crate::engine::score::{self, Scored};
use crate::engine::session::{self, SessionOpen};
use crate::engine::shell;

/// The judge line of a run whose metrics are all model-free: no judge was asked anything,
/// so no calls or cost are printed for it.
pub(super) const NO_JUDGE_NEEDED: &str = "judge: none needed (every metric is model-free)";

/// Whether `metric` asks the judge anything: a task or an embedding.
fn needs_judge(metric: &dyn Metric) -> bool {
    let needs = metric.requirements();
    !needs.tasks.is_empty() || needs.embeddings
}

/// One `eval` under way: its metrics, run directory and batch passes (its judges are
/// apart, for the session to borrow while these change).
pub(super) struct Evaluation {
    metrics: Vec<Box<dyn Metric>>,
    names: Vec<String>,
    pub(super) prepared: resume::Prepared,
    pub(super) passes: Option<Passes>,
    /// The samples the last scoring pass read from the data: the summary refuses journal
    /// lines of any other, and groups turns by their conversations.
    samples_read: SamplesRead,
}

impl Evaluation {
    /// Resolves the judges, chooses the metrics (reading the first sample), says who
    /// answers, and opens the run directory — new, or the earlier run resumed.
    pub(super) fn prepare(
        options: &EvalOptions,
        env: Env<'_>,
        observer: &dyn Observer,
    ) -> Result<(JudgeSetup, Self)> {
        let store = options.batch.as_ref().map(|_| BatchStore::new());
        let (setup, batch_client) = match (&options.batch, &store) {
            (Some(mode), Some(store)) => {
                mode.check()?;
                batch::judge::resolve(&options.judge, env, mode, store)?
            }
            _ => (judges::resolve(&options.judge, env)?, None),
        };
        let (metrics, names) = metrics_of(options, env, &setup, observer)?;
        crate::engine::forecast::announce(
            &setup,
            || dry_run(options, env, &crate::engine::observe::Silent),
            observer,
        )?;
        let run_path = options.run_path();
        let fresh = fresh_manifest(options, &metrics, &names, &setup)?;
        let identity = identity(options, &fresh, &names, &metrics, &setup)?;
        let prepared = resume::prepare(
            &run_path,
            options.overwrite,
            options.retry_failed,
            fresh,
            &identity,
        )?;
        say_resumed(&prepared, &run_path, observer);
        prepared.run.write_manifest(&prepared.manifest)?;
        let passes = match (&options.batch, store) {
            (Some(mode), Some(store)) => Some(Passes::open(
                mode,
                store,
                batch_client,
                &prepared.run,
                prepared.resumed,
                observer,
            )?),
            _ => None,
        };
        Ok((
            setup,
            Evaluation {
                metrics,
                names,
                prepared,
                passes,
                samples_read: SamplesRead::default(),
            },
        ))
    }

    /// Scores every cell not done yet — in one pass, or in batch passes until the batch
    /// answers run out — journaling each sample's cells and checkpointing the session.
    /// `None` when cancelled; else the passes' result, with the stop of an export. The
    /// outer error is one that leaves the run as it is (no runtime, a journal that cannot
    /// be opened or flushed).
    pub(super) fn score(
        &mut self,
        options: &EvalOptions,
        setup: &JudgeSetup,
        session: &mut SessionOpen<'_>,
        scored: &mut Scored,
        observer: &dyn Observer,
        cancel: &CancelToken,
    ) -> Result<Option<Result<Option<judges::Stop>>>> {
        let mut journal = self.prepared.run.journal()?;
        let judges = setup.judges.clone().plan_for(&self.metrics);
        let stopped = || cancel.is_cancelled() || setup.stop().is_some();
        let top_k = options.top_k.map(NonZeroUsize::get);
        let total = options
            .samples
            .filter(|_| options.shard.is_none())
            .map(|n| n as u64);
        observer.event(&Event::Stage { name: STAGE, total });
        let cut_off_warned = Cell::new(false);
        let mut done = std::mem::take(&mut self.prepared.done);
        // Cells journaled in this pass, for the next pass to skip (batch mode only: a
        // synchronous run makes one pass and keeps no set).
        let journaled = RefCell::new(Cells::new());
        let mut sink = SampleSink {
            journal: &mut journal,
            journaled: &journaled,
            session,
            run_dir: &self.prepared.run,
            manifest: &mut self.prepared.manifest,
            setup,
            observer,
            total,
            cut_off_warned: &cut_off_warned,
        };
        let mut after_sample =
            |records: &[ResultRecord], scored: &Scored| sink.record(records, scored);
        let passes = &mut self.passes;
        let samples_read = &mut self.samples_read;
        let (metrics, names) = (&self.metrics, &self.names);
        let work = async {
            if let Some(passes) = passes.as_mut() {
                passes.resume(observer).await?;
            }
            for pass in 1.. {
                {
                    let mark = passes.as_ref().map(Passes::pending_calls);
                    let holding = || {
                        passes
                            .as_ref()
                            .zip(mark)
                            .is_some_and(|(passes, mark)| passes.pending_calls() != mark)
                    };
                    let plan = score::Plan {
                        metrics,
                        names,
                        judges: &judges,
                        top_k,
                        window: setup.window(),
                        in_flight: setup.concurrency.saturating_mul(2),
                        done: &done,
                        stopped: &stopped,
                        hold_failed: &holding,
                    };
                    if pass > 1 {
                        observer.note(format!(
                            "batch pass {pass}: scoring the cells still waiting"
                        ));
                    }
                    scored.samples = 0;
                    let mut positions = Positions::default();
                    let samples = noting_positions(run_samples(options)?, &mut positions);
                    let keys = score::score_all(&plan, samples, scored, &mut after_sample).await?;
                    *samples_read = SamplesRead { keys, positions };
                }
                let Some(passes) = passes.as_mut().filter(|_| !stopped()) else {
                    return Ok(None);
                };
                done.absorb(journaled.take());
                match passes.next(observer).await? {
                    Next::Finished => return Ok(None),
                    Next::Answered => {}
                    Next::Exported(stop) => return Ok(Some(stop)),
                }
            }
            Ok::<Option<judges::Stop>, RunError>(None)
        };
        let ended = shell::until_cancelled(cancel, [setup.chat.clone()], work)?;
        observer.event(&Event::StageEnd);
        if !matches!(ended, Some(Err(_))) {
            journal.flush()?;
        }
        Ok(ended)
    }

    /// The complete run: its summary, the session closed in the manifest, the judge line,
    /// calibration with labels, the reports and the gate.
    pub(super) fn finish(
        mut self,
        options: &EvalOptions,
        setup: &JudgeSetup,
        session: &SessionOpen<'_>,
        scored: Scored,
        observer: &dyn Observer,
    ) -> Result<Evaluated> {
        let run_path = options.run_path();
        // Taken, so that the key of every sample read is not held through the reports (16
        // bytes a sample, the largest part of a 100,000-sample run's memory left then).
        let samples_read = std::mem::take(&mut self.samples_read);
        let mut summary = crate::engine::results::summarise(
            &run_path.join(RESULTS_FILE),
            &self.names,
            &samples_read,
            options.bootstrap_resamples,
            options.seed,
        )?;
        drop(samples_read);
        let manifest = &mut self.prepared.manifest;
        manifest.dataset.samples = Some(summary.samples);
        manifest.settings["judge"]["stats"] = setup.stats();
        let account = session.close(manifest, SessionEnd::Complete, None, scored.cells);
        // The judge line, then which judge answered each judged metric and how well it was
        // measured to agree with people.
        let judge_line = match self.metrics.iter().any(|m| needs_judge(m.as_ref())) {
            true => session::footer(&account, &session::this_session(manifest)),
            false => NO_JUDGE_NEEDED.to_string(),
        };
        let judge_line = match setup.cut_off_warning() {
            Some(warning) => format!("{judge_line}\n{warning}"),
            None => judge_line,
        };
        let footer = format!(
            "{judge_line}\n{}",
            rageval_report::render_judge_lines(manifest, &summary.metric_order)
        )
        .trim_end()
        .to_string();
        summary.judge = Some(account);
        self.prepared.run.finish(manifest, &summary)?;
        if let Some(labels) = &options.labels {
            summary = crate::commands::calibrate::calibrate(&run_path, labels, observer)?.0;
        }
        let (gate, junit) = (&options.gate, options.junit.as_deref());
        let finished = match options.reports {
            true => {
                let finished_run = RunInfo::load(&run_path)?;
                let texts = texts_of(&finished_run.manifest, &finished_run.path, observer);
                finish_reports(&finished_run, &texts, gate, junit)?
            }
            false => finish_without_reports(&run_path, gate, junit)?,
        };
        let too_many_failed =
            judged_cells_failed(&summary, &self.metrics, setup, options.max_failed.share());
        Ok(Evaluated {
            path: run_path,
            summary,
            footer,
            scored,
            finished,
            too_many_failed,
        })
    }
}

/// Where each scored sample's cells go: the journal (flushed), the pass's set of journaled
/// cells (batch mode), the session's checkpoint in the manifest, and a progress event.
struct SampleSink<'s, 'j> {
    journal: &'s mut JournalWriter,
    journaled: &'s RefCell<Cells>,
    session: &'s mut SessionOpen<'j>,
    run_dir: &'s RunDir,
    manifest: &'s mut Manifest,
    setup: &'s JudgeSetup,
    observer: &'s dyn Observer,
    total: Option<u64>,
    /// Whether the person was warned of calls re-sent without the token cap.
    cut_off_warned: &'s Cell<bool>,
}

impl SampleSink<'_, '_> {
    fn record(&mut self, records: &[ResultRecord], scored: &Scored) -> Result<()> {
        for record in records {
            self.journal.append(record)?;
        }
        self.journal.flush()?;
        let batch_store = &self.setup.batch;
        if batch_store.is_some() {
            let mut journaled = self.journaled.borrow_mut();
            for record in records {
                journaled.insert(&record.sample_id, &record.metric);
            }
        }
        self.session
            .checkpoint(self.run_dir, self.manifest, scored.cells)?;
        let mut progress = Progress::of(STAGE, self.setup.chat.as_ref());
        if let Some(store) = batch_store {
            // A call waiting for a batch answer is no failed call.
            progress.failed_calls = progress
                .failed_calls
                .saturating_sub(store.counts().pending_calls);
        }
        progress.done = scored.samples as u64;
        progress.total = self.total;
        progress.failed = scored.failed as u64;
        self.observer.event(&Event::Progress(progress));
        self.setup
            .warn_cut_off_once(self.cut_off_warned, self.observer);
        Ok(())
    }
}

/// Tells what a resumed run keeps.
fn say_resumed(prepared: &resume::Prepared, run_path: &Path, observer: &dyn Observer) {
    for note in &prepared.notes {
        observer.note(format!("note: {note}"));
    }
    if prepared.resumed {
        let retried = if prepared.retried > 0 {
            format!(", {} failed cells to score again", prepared.retried)
        } else {
            String::new()
        };
        observer.note(format!(
            "resuming {}: {} finished cells kept{retried}",
            run_path.display(),
            prepared.done.len()
        ));
    }
}
