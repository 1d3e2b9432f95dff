//! `eval`: read a dataset, score every sample with every metric (model-judged ones through
//! the configured judge), and keep the results in a run directory that resumes.
//!
//! - this module: [`EvalOptions`], [`run`] and [`dry_run`];
//! - the scoring loop is [`crate::score`], shared with `judge-check`.
//!
//! The dataset is streamed: samples are scored as they are read, a bounded number at once.
//! Bad data halfway stops the run with an error: a new run directory is removed again (or
//! emptied of this run's files), a resumed one keeps its finished cells. A stop — the
//! caller's cancel (Ctrl-C), a judge cap, a judge halted as unavailable — ends the session
//! after the samples in flight, leaving the run incomplete and resumable. Every session's
//! judge usage is recorded in the manifest either way.

pub mod plan;

use std::cell::RefCell;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

use rageval_core::Sample;
use rageval_core::dataset::{self, FieldMap, ReadOptions};
use rageval_judge::{BatchStore, CancelToken};
use rageval_metrics::{Metric, MetricCatalogue};
use rageval_report::{
    DatasetInfo, Gate, JournalWriter, Manifest, MetricRecord, RESULTS_FILE, ResultRecord, RunDir,
    RunInfo, SessionEnd, Summary, sha256_file, utc_timestamp,
};
use serde_json::json;

use crate::batch::plan::BatchPlanning;
use crate::batch::{self, BatchMode, Next, Passes};
use crate::cells::Cells;
use crate::ended::{Ended, Stopped, stop_or_cancelled};
use crate::error::{Result, RunError};
use crate::identity::RunIdentity;
use crate::judges::{self, Env, JudgeOptions, JudgeSetup};
use crate::observe::{Event, Observer, Progress};
use crate::reports::{Finished, finish_reports, finish_without_reports, texts_of};
use crate::resume;
use crate::score::{self, Scored, tasks_of};
use crate::session::{self, SessionOpen};
use crate::shard::Shard;
use crate::shell::{self, session_end};
use plan::EvalPlan;

/// Stage name of `eval`'s progress.
pub const STAGE: &str = "scoring";
/// The identity setting (and manifest setting) naming a sharded run's shard.
pub const SHARD_SETTING: &str = "shard";

/// What `eval` is asked to do.
#[derive(Debug, Clone)]
pub struct EvalOptions {
    /// The dataset file (or folder of seed-S3 files).
    pub data: PathBuf,
    /// Its format, when its extension does not say it.
    pub format: Option<dataset::Format>,
    /// `FIELD=COLUMN` mappings.
    pub field_map: Vec<String>,
    /// The XLSX sheet.
    pub sheet: Option<String>,
    /// Metric specs; empty: every metric the first sample's fields and the judge allow.
    pub metrics: Vec<String>,
    /// Files of `[[metric]]` rubric tables (`--metric-file`); empty: the judge's
    /// configuration file ([`crate::rubrics`]).
    pub rubric_files: Vec<PathBuf>,
    /// The run directory (default: `runs/<dataset stem>`).
    pub out: Option<PathBuf>,
    /// The version of the system this run measures, as version tables name it (`--name`);
    /// kept in the manifest, outside the run's identity.
    pub version_name: Option<String>,
    /// Replace a run already there instead of resuming it.
    pub overwrite: bool,
    /// Only the first N samples.
    pub samples: Option<usize>,
    /// Seed of the bootstrap.
    pub seed: u64,
    /// Bootstrap resamples.
    pub bootstrap_resamples: usize,
    /// Score only the first K contexts of each sample.
    pub top_k: Option<u64>,
    /// Score failed cells again when resuming.
    pub retry_failed: bool,
    /// `--fail-under` thresholds.
    pub gate: Gate,
    /// Where to write the JUnit file of the gate.
    pub junit: Option<PathBuf>,
    /// Human labels on some samples: the summary gets calibrated means.
    pub labels: Option<crate::calibrate::CalibrateOptions>,
    /// Who judges.
    pub judge: JudgeOptions,
    /// Score only the samples of this shard (`--shard i/n`).
    pub shard: Option<Shard>,
    /// Answer the judge's requests with batch jobs (`--batch`, `--export-requests`,
    /// `--import-responses`).
    pub batch: Option<BatchMode>,
    /// Write report.html, report.md and results.xlsx when the run completes (false:
    /// `--no-reports`; `rageval report` writes them later).
    pub reports: bool,
    /// The largest share of judged cells that may fail (`--max-failed`, 0 to 1) before the
    /// run is not a success ([`DEFAULT_MAX_FAILED`]).
    pub max_failed: f64,
    /// A rolling run (`eval --watch`): its dataset grows between sessions by design, so its
    /// identity names it rolling instead of holding the data's hash ([`ROLLING_DATA`]).
    pub rolling: bool,
}

/// What a rolling run's identity holds in place of the data's hash.
pub const ROLLING_DATA: &str = "rolling";

/// The share of judged cells that may fail before a run is not a success: a judge that
/// fails one cell in ten is broken, not unlucky, and its means are means of what remained.
pub const DEFAULT_MAX_FAILED: f64 = 0.10;

/// Judged cells that failed beyond the share a run tolerates: the run is not a success.
#[derive(Debug, Clone, PartialEq)]
pub struct TooManyFailed {
    /// Failed judged cells.
    pub failed: usize,
    /// Judged cells.
    pub cells: usize,
    /// The share tolerated.
    pub limit: f64,
    /// The most frequent error.
    pub commonest: String,
}

impl TooManyFailed {
    /// What went wrong and what to do, said the same way by every front.
    pub fn message(&self) -> String {
        let what = if self.failed == self.cells {
            "every judged cell failed".to_owned()
        } else {
            format!(
                "{} of {} judged cells failed ({:.1}%, over the {}% that --max-failed allows)",
                self.failed,
                self.cells,
                100.0 * self.failed as f64 / self.cells as f64,
                trim_percent(self.limit)
            )
        };
        format!(
            "{what}, most often with: {}; the judge's answers are not usable enough to trust \
             the means (see summary.json's failed_errors). Fix the judge, then run the same \
             command with --retry-failed to score those cells again.",
            self.commonest
        )
    }
}

/// `10` for 0.1, `2.5` for 0.025.
fn trim_percent(share: f64) -> String {
    let percent = format!("{:.2}", share * 100.0);
    percent
        .trim_end_matches('0')
        .trim_end_matches('.')
        .to_owned()
}

impl EvalOptions {
    /// How the dataset is read.
    pub fn read_options(&self) -> Result<ReadOptions> {
        Ok(ReadOptions {
            format: self.format,
            field_map: FieldMap::parse(&self.field_map)?,
            sheet: self.sheet.clone(),
        })
    }

    /// The run directory.
    pub fn run_path(&self) -> PathBuf {
        self.out
            .clone()
            .unwrap_or_else(|| default_run_path(&self.data))
    }
}

/// A complete `eval` run.
#[derive(Debug)]
pub struct Evaluated {
    /// The run directory.
    pub path: PathBuf,
    /// Its summary.
    pub summary: Summary,
    /// The judge line under the summary table.
    pub footer: String,
    /// What this session did.
    pub scored: Scored,
    /// The reports and the gate.
    pub finished: Finished,
    /// When more judged cells failed than `--max-failed` allows (every one, at worst): the
    /// run is not a success.
    pub too_many_failed: Option<TooManyFailed>,
}

/// Scores the dataset into the run directory, resuming what is there: prepare (judges,
/// metrics, the run directory), score (one pass, or batch passes), finish (summary,
/// reports) — or stop resumably.
pub fn run(
    options: &EvalOptions,
    env: Env<'_>,
    observer: &dyn Observer,
    cancel: &CancelToken,
) -> Result<Ended<Evaluated>> {
    let session_started = utc_timestamp();
    let (setup, mut eval) = Evaluation::prepare(options, env, observer)?;
    let mut session = SessionOpen::new(&setup, session_started, &eval.prepared.manifest);
    let mut scored = Scored::default();
    let ended = eval.score(options, &setup, &mut session, &mut scored, observer, cancel)?;
    let stop = match ended {
        None => Some(stop_or_cancelled(None)),
        Some(Err(error)) => {
            if eval.prepared.resumed || eval.passes.is_some() {
                session.stop(
                    &mut eval.prepared,
                    SessionEnd::Failed,
                    error.to_string(),
                    scored.cells,
                )?;
                observer.note("the run stays incomplete: its finished cells are kept".into());
            } else if let Err(cleanup) = eval.prepared.run.abandon() {
                observer.note(format!("could not remove the partial run: {cleanup}"));
            }
            return Err(error);
        }
        Some(Ok(exported)) => setup.stop().or(exported),
    };
    if let Some(stop) = stop {
        let (end, reason) = session_end(&stop);
        let footer = session.stop(&mut eval.prepared, end, reason, scored.cells)?;
        return Ok(Ended::Stopped(Stopped::new(
            stop,
            footer,
            &options.run_path(),
            scored.cells,
            scored.held_back + scored.waiting,
            "cells",
        )));
    }
    eval.finish(options, &setup, &session, scored, observer)
        .map(Ended::Complete)
}

/// One `eval` under way: its metrics, run directory and batch passes (its judges are
/// apart, for the session to borrow while these change).
struct Evaluation {
    metrics: Vec<Box<dyn Metric>>,
    names: Vec<String>,
    prepared: resume::Prepared,
    passes: Option<Passes>,
}

impl Evaluation {
    /// Resolves the judges, chooses the metrics (reading the first sample), says who
    /// answers, and opens the run directory — new, or the earlier run resumed.
    fn prepare(
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
        crate::forecast_gguf(
            &setup,
            || dry_run(options, env, &crate::observe::Silent),
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
            },
        ))
    }

    /// Scores every cell not done yet — in one pass, or in batch passes until the batch
    /// answers run out — journaling each sample's cells and checkpointing the session.
    /// `None` when cancelled; else the passes' result, with the stop of an export. The
    /// outer error is one that leaves the run as it is (no runtime, a journal that cannot
    /// be opened or flushed).
    fn score(
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
        let top_k = options
            .top_k
            .map(|k| usize::try_from(k).unwrap_or(usize::MAX));
        let total = options
            .samples
            .filter(|_| options.shard.is_none())
            .map(|n| n as u64);
        observer.event(&Event::Stage { name: STAGE, total });
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
        };
        let mut after_sample =
            |records: &[ResultRecord], scored: &Scored| sink.record(records, scored);
        let passes = &mut self.passes;
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
                    score::score_all(&plan, run_samples(options)?, scored, &mut after_sample)
                        .await?;
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
    fn finish(
        mut self,
        options: &EvalOptions,
        setup: &JudgeSetup,
        session: &SessionOpen<'_>,
        scored: Scored,
        observer: &dyn Observer,
    ) -> Result<Evaluated> {
        let run_path = options.run_path();
        let mut summary = crate::results::summarise(
            &run_path.join(RESULTS_FILE),
            &self.names,
            options.bootstrap_resamples,
            options.seed,
        )?;
        let manifest = &mut self.prepared.manifest;
        manifest.dataset.samples = Some(summary.samples);
        manifest.settings["judge"]["stats"] = setup.stats();
        let account = session.close(manifest, SessionEnd::Complete, None, scored.cells);
        // The judge line, then which judge answered each judged metric and how well it was
        // measured to agree with people.
        let footer = format!(
            "{}\n{}",
            session::footer(&account, &session::this_session(manifest)),
            rageval_report::render_judge_lines(manifest, &summary.metric_order)
        )
        .trim_end()
        .to_string();
        summary.judge = Some(account);
        self.prepared.run.finish(manifest, &summary)?;
        if let Some(labels) = &options.labels {
            summary = crate::calibrate::calibrate(&run_path, labels, observer)?.0;
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
            judged_cells_failed(&summary, &self.metrics, setup, options.max_failed);
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
        Ok(())
    }
}

/// A run's metrics, built.
type Metrics = Vec<Box<dyn Metric>>;

/// The run's metrics and their names — chosen with the first sample, which the reader
/// peeks — with the gate checked against them and who answers each task said: what a run
/// and its dry run both start from.
fn metrics_of(
    options: &EvalOptions,
    env: Env<'_>,
    setup: &JudgeSetup,
    observer: &dyn Observer,
) -> Result<(Metrics, Vec<String>)> {
    let reader = dataset::open(&options.data, &options.read_options()?)?;
    note_skipped_traces(reader.skipped_traces(), observer);
    let mut samples = reader.peekable();
    let metrics = choose_metrics(options, env, setup, &mut samples, observer)?;
    drop(samples);
    let names: Vec<String> = metrics.iter().map(|m| m.name()).collect();
    check_gate(&options.gate, &names)?;
    announce_judges(&metrics, setup, observer);
    Ok((metrics, names))
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

/// What the run of `options` is: data, metrics, the settings that change results (top-k,
/// the sample limit, the shard) and the judge.
fn identity(
    options: &EvalOptions,
    fresh: &Manifest,
    names: &[String],
    metrics: &[Box<dyn Metric>],
    setup: &JudgeSetup,
) -> Result<RunIdentity> {
    let mut settings: std::collections::BTreeMap<String, String> = [
        ("top_k".to_string(), format!("{:?}", options.top_k)),
        ("samples".to_string(), format!("{:?}", options.samples)),
    ]
    .into();
    // Only a sharded run names its shard, so unsharded runs keep the identity they had.
    if let Some(shard) = options.shard {
        settings.insert(SHARD_SETTING.into(), shard.to_string());
    }
    if options.rolling {
        settings.insert(ROLLING_DATA.into(), "true".into());
    }
    settings.extend(metric_definitions(metrics));
    Ok(RunIdentity {
        command: "eval".into(),
        dataset_sha256: if options.rolling {
            ROLLING_DATA.into()
        } else {
            fresh.dataset.sha256.clone()
        },
        metrics: names.to_vec(),
        judge: setup.identity()?.for_tasks(&tasks_of(metrics)),
        labels_sha256: None,
        labels_file: None,
        settings,
    })
}

/// The samples `options` scores, streamed: the first `--samples`, of them those in the
/// shard.
fn run_samples(
    options: &EvalOptions,
) -> Result<impl Iterator<Item = std::result::Result<Sample, dataset::DatasetError>> + use<>> {
    let shard = options.shard;
    Ok(dataset::open(&options.data, &options.read_options()?)?
        .take(options.samples.unwrap_or(usize::MAX))
        .filter(move |sample| match (shard, sample) {
            (Some(shard), Ok(sample)) => shard.holds(&sample.id),
            _ => true,
        }))
}

/// The settings a run of `options` would record (run directory, dataset, metrics, judge),
/// resolved without writing anything or calling a model.
pub fn resolved_settings(
    options: &EvalOptions,
    env: Env<'_>,
    observer: &dyn Observer,
) -> Result<serde_json::Value> {
    let setup = judges::resolve(&options.judge, env)?;
    let mut samples = dataset::open(&options.data, &options.read_options()?)?.peekable();
    let metrics = choose_metrics(options, env, &setup, &mut samples, observer)?;
    let names: Vec<String> = metrics.iter().map(|m| m.name()).collect();
    let manifest = fresh_manifest(options, &metrics, &names, &setup)?;
    Ok(json!({
        "out": options.run_path(),
        "dataset": manifest.dataset,
        "settings": manifest.settings,
    }))
}

/// Estimates, without any model call or file written, what `options` would ask of the
/// judge.
pub fn dry_run(
    options: &EvalOptions,
    env: Env<'_>,
    observer: &dyn Observer,
) -> Result<crate::plan::Estimate> {
    dry_run_over(options, env, observer, &|_| {})
}

/// [`dry_run`] with each sample changed by `stand_in` before it is planned (`pipeline`
/// plans its eval stage with the system's answer standing in for the reference it would
/// generate).
pub fn dry_run_over(
    options: &EvalOptions,
    env: Env<'_>,
    observer: &dyn Observer,
    stand_in: &dyn Fn(&mut Sample),
) -> Result<crate::plan::Estimate> {
    let judge = JudgeOptions {
        batch: options.batch.is_some(),
        ..options.judge.clone()
    };
    let (setup, planner) = crate::plan::planning_setup(&judge, env)?;
    if let Some(mode) = &options.batch {
        mode.check()?;
        if setup.kind() != "endpoint" {
            return Err(RunError::Usage(
                "batch mode needs a judge endpoint (--judge-model and --judge-base-url)".into(),
            ));
        }
    }
    let (metrics, names) = metrics_of(options, env, &setup, observer)?;
    let top_k = options
        .top_k
        .map(|k| usize::try_from(k).unwrap_or(usize::MAX));
    let plan = EvalPlan {
        metrics: &metrics,
        names: &names,
        setup: &setup,
        planner: planner.as_ref(),
        top_k,
        window: setup.window(),
    };
    let stood_in = || -> Result<_> {
        Ok(run_samples(options)?.map(|sample| {
            sample.map(|mut sample| {
                stand_in(&mut sample);
                sample
            })
        }))
    };
    let total = options
        .samples
        .filter(|_| options.shard.is_none())
        .map(|n| n as u64);
    let stage = plan.run(stood_in()?, total, observer)?;
    let mut estimate = crate::plan::Estimate::new(setup.models(), vec![stage]);
    if let Some(band) = options.judge.escalate {
        estimate.notes.push(crate::plan::cascade_note(band));
        estimate.upper_bound = true;
    }
    if let (Some(mode), Some(planner)) = (&options.batch, &planner) {
        let planning = BatchPlanning {
            metrics: &metrics,
            names: &names,
            setup: &setup,
            planner,
            top_k,
            window: setup.window(),
            limits: mode.limits,
        };
        estimate.batch = Some(planning.run(stood_in()?, total, observer)?);
    }
    Ok(estimate)
}

/// The metrics asked for, or every metric whose inputs the first sample has and that the
/// judges can answer.
fn choose_metrics(
    options: &EvalOptions,
    env: Env<'_>,
    setup: &JudgeSetup,
    samples: &mut std::iter::Peekable<
        impl Iterator<Item = std::result::Result<Sample, dataset::DatasetError>>,
    >,
    observer: &dyn Observer,
) -> Result<Vec<Box<dyn Metric>>> {
    let catalogue = crate::rubrics::catalogue(&options.rubric_files, &options.judge.flags, env)?;
    if !options.metrics.is_empty() {
        let metrics = build_metrics(&catalogue, options.metrics.iter().map(String::as_str))?;
        require_models(&metrics, setup)?;
        return Ok(metrics);
    }
    let first = match samples.peek() {
        Some(Ok(sample)) => sample.clone(),
        // The reader reports an empty file itself; a bad first record surfaces later.
        _ => Sample::default(),
    };
    default_metrics(&catalogue, &first, setup, &options.data, observer)
}

/// A gate on a metric that will not run is a typo: say so before any work is done.
fn check_gate(gate: &Gate, names: &[String]) -> Result<()> {
    for threshold in &gate.thresholds {
        if !names.contains(&threshold.metric) {
            return Err(RunError::Usage(format!(
                "--fail-under names metric `{}`, which this run does not compute",
                threshold.metric
            )));
        }
    }
    Ok(())
}

fn fresh_manifest(
    options: &EvalOptions,
    metrics: &[Box<dyn Metric>],
    names: &[String],
    setup: &JudgeSetup,
) -> Result<Manifest> {
    let dataset_info = DatasetInfo {
        path: options.data.display().to_string(),
        sha256: sha256_file(&options.data)?,
        format: describe_format(&options.data, options.format),
        samples: None,
    };
    let records = metrics
        .iter()
        .map(|metric| MetricRecord {
            name: metric.name(),
            formula: metric.formula().0.to_string(),
            source: metric.formula().1.to_string(),
            judges: setup.metric_judges(metric.as_ref()),
        })
        .collect();
    let settings = json!({
        "metrics": names,
        "field_map": options.field_map,
        "sheet": options.sheet,
        "samples": options.samples,
        "seed": options.seed,
        "bootstrap_resamples": options.bootstrap_resamples,
        "top_k": options.top_k,
        "shard": options.shard.map(|shard| shard.to_string()),
        "judge": setup.description,
    });
    let mut manifest = Manifest::start("eval", dataset_info, records, settings);
    manifest.version_name.clone_from(&options.version_name);
    Ok(manifest)
}

/// When more cells of the judged metrics failed than the share `limit` allows (and always
/// when every one did): how many, and the most frequent error. Metrics whose tasks no
/// configured judge answers (asked for without the model they need, and announced as such)
/// fail by the run's configuration, not by the judge's answers, and are left out.
fn judged_cells_failed(
    summary: &Summary,
    metrics: &[Box<dyn Metric>],
    setup: &JudgeSetup,
    limit: f64,
) -> Option<TooManyFailed> {
    let judged: Vec<String> = metrics
        .iter()
        .filter(|m| {
            let requirements = m.requirements();
            (!requirements.tasks.is_empty() || requirements.embeddings)
                && setup.judges.unmet(&requirements).is_none()
        })
        .map(|m| m.name())
        .collect();
    let mut cells = 0;
    let mut failed = 0;
    let mut errors: std::collections::BTreeMap<&String, usize> = Default::default();
    for name in &judged {
        let Some(metric) = summary.metrics.get(name) else {
            continue;
        };
        cells += metric.n;
        failed += metric.n_failed;
        for (error, count) in &metric.failed_errors {
            *errors.entry(error).or_default() += count;
        }
    }
    let over = failed == cells || failed as f64 > limit * cells as f64;
    if cells == 0 || failed == 0 || !over {
        return None;
    }
    let commonest = errors
        .into_iter()
        .max_by_key(|(_, count)| *count)
        .map_or_else(
            || "(no error recorded)".to_owned(),
            |(error, _)| error.clone(),
        );
    Some(TooManyFailed {
        failed,
        cells,
        limit,
        commonest,
    })
}

/// Every metric whose inputs the first sample has and that the judges can answer; with the
/// offline judges, only model-free metrics and those whose judge measured above chance on
/// the first sample's script (the others are named, with why and how to run them anyway).
fn default_metrics(
    catalogue: &MetricCatalogue,
    first: &Sample,
    setup: &JudgeSetup,
    data: &Path,
    observer: &dyn Observer,
) -> Result<Vec<Box<dyn Metric>>> {
    let lang = rageval_tasks::Lang::detect(&first.question);
    let mut metrics = Vec::new();
    let mut unanswered = Vec::new();
    let mut unproven = Vec::new();
    for name in catalogue.input_defaults(first) {
        let metric = catalogue.build(name)?;
        let requirements = metric.requirements();
        if let Some(why) = setup.unmet(&requirements) {
            unanswered.push(format!("{name} ({why})"));
            continue;
        }
        let judged = !requirements.tasks.is_empty() || requirements.embeddings;
        if judged && setup.is_offline() {
            let agreement = if requirements.embeddings {
                Err("embedding similarity: agreement with people unmeasured".to_string())
            } else {
                setup.agreement_above_chance(metric.as_ref(), lang)
            };
            if let Err(why) = agreement {
                unproven.push(format!("{name} ({why})"));
                continue;
            }
        }
        metrics.push(metric);
    }
    if metrics.is_empty() {
        return Err(RunError::Usage(format!(
            "no metric applies to the first sample of {} (it needs a response with a \
             reference, or retrieved contexts)",
            data.display()
        )));
    }
    let names: Vec<String> = metrics.iter().map(|m| m.name()).collect();
    observer.note(format!(
        "metrics: {} (from the first sample's fields and the judge)",
        names.join(", ")
    ));
    if !unproven.is_empty() {
        observer.note(unproven_note(setup, &unproven));
    }
    if !unanswered.is_empty() {
        // The hint to name a writing model is said once, not once per metric.
        let hint = format!("; {}", judges::WRITER_HINT);
        let needs_writer = unanswered.iter().any(|why| why.contains(&hint));
        let listed: Vec<String> = unanswered
            .iter()
            .map(|why| why.replace(&hint, ""))
            .collect();
        let mut note = format!(
            "not run, the judge cannot answer them: {}",
            listed.join("; ")
        );
        if needs_writer {
            note.push_str(&format!(". To run them, {}", judges::WRITER_HINT));
        }
        observer.note(note);
    }
    Ok(metrics)
}

/// Refuses metrics asked for by name that need the embedded models when those are not
/// provisioned: the run would fail on every sample, and the fix is one script.
/// Why the `unproven` metrics (each with its reason) are not run by default, naming the
/// judges that would answer them: the offline heuristic judge, or a checker model with the
/// heuristic judge for what the checker does not answer.
fn unproven_note(setup: &JudgeSetup, unproven: &[String]) -> String {
    let (who, measure) = match setup.checker() {
        Some(checker) => (
            format!(
                "the judges' agreement with people (the checker model {} for support \
                 verdicts, the heuristic judge for the rest)",
                checker.name()
            ),
            ", measure the checker with `rageval judge-check LABELS --metric NAME --judge \
             checker:DIR` (docs/judges.md)",
        ),
        None => ("the offline judge's agreement with people".to_owned(), ""),
    };
    format!(
        "not run by default, {who} is not shown to be above chance on this language: {}; \
         name them with --metrics to run them anyway{measure}, or use a model judge",
        unproven.join(", ")
    )
}

fn require_models(metrics: &[Box<dyn Metric>], setup: &JudgeSetup) -> Result<()> {
    if setup.missing_models.is_none() {
        return Ok(());
    }
    for metric in metrics {
        if let Some(why) = setup.unmet(&metric.requirements()) {
            return Err(RunError::Usage(format!(
                "{} cannot run: {why}",
                metric.name()
            )));
        }
    }
    Ok(())
}

/// Says who answers each task the metrics need, and which metrics will fail.
pub(crate) fn announce_judges(
    metrics: &[Box<dyn Metric>],
    setup: &JudgeSetup,
    observer: &dyn Observer,
) {
    for metric in metrics {
        if let Some(why) = setup.unmet(&metric.requirements()) {
            observer.note(format!(
                "note: {} will fail on every sample: {why}",
                metric.name()
            ));
        }
    }
    for line in setup.route_lines(&tasks_of(metrics)) {
        observer.note(format!("judge: {line}"));
    }
    let embeds = metrics.iter().any(|m| m.requirements().embeddings);
    if let Some(fallback) = setup.embedding_fallback.as_ref().filter(|_| embeds) {
        observer.note(format!("judge: {fallback}"));
    }
}

/// One line per metric that left samples unscored, with its most frequent reason.
pub fn unscored_notes(summary: &Summary) -> Vec<String> {
    let mut notes = Vec::new();
    for name in &summary.metric_order {
        let Some(metric) = summary.metrics.get(name) else {
            continue;
        };
        for (kind, count, reasons) in [
            ("undefined", metric.n_undefined, &metric.undefined_reasons),
            ("failed", metric.n_failed, &metric.failed_errors),
        ] {
            if let Some((reason, _)) = reasons.iter().max_by_key(|(_, n)| **n) {
                let more = if reasons.len() > 1 {
                    format!(" (and {} other reasons)", reasons.len() - 1)
                } else {
                    String::new()
                };
                notes.push(format!(
                    "note: {name} is {kind} for {count} samples: {reason}{more}"
                ));
            }
        }
    }
    notes
}

fn build_metrics<'a>(
    catalogue: &MetricCatalogue,
    specs: impl Iterator<Item = &'a str>,
) -> Result<Vec<Box<dyn Metric>>> {
    let mut seen = HashSet::new();
    let mut metrics = Vec::new();
    for spec in specs.filter(|s| !s.trim().is_empty()) {
        let metric = catalogue.build(spec)?;
        if !seen.insert(metric.name()) {
            return Err(RunError::Usage(format!(
                "metric `{}` is asked for twice",
                metric.name()
            )));
        }
        metrics.push(metric);
    }
    if metrics.is_empty() {
        return Err(RunError::Usage("--metrics names no metric".into()));
    }
    Ok(metrics)
}

fn describe_format(path: &Path, given: Option<dataset::Format>) -> String {
    match given {
        Some(format) => format!("{format:?}").to_lowercase(),
        None if path.is_dir() => "seed-files".into(),
        None => path
            .extension()
            .map(|e| e.to_string_lossy().to_lowercase())
            .unwrap_or_default(),
    }
}

/// The definitions of metrics whose name does not say it all (rubrics), as identity
/// settings; none for the catalogue's metrics, so their runs keep the identity they had.
pub(crate) fn metric_definitions(
    metrics: &[Box<dyn Metric>],
) -> impl Iterator<Item = (String, String)> + '_ {
    metrics.iter().filter_map(|metric| {
        let definition = metric.definition()?;
        Some((format!("metric:{}", metric.name()), definition))
    })
}

/// Names the traces a trace format skipped for lack of a retriever span (a few ids, and
/// the count).
fn note_skipped_traces(skipped: &[String], observer: &dyn Observer) {
    const SHOWN: usize = 5;
    if skipped.is_empty() {
        return;
    }
    let mut shown: Vec<&str> = skipped.iter().take(SHOWN).map(String::as_str).collect();
    if skipped.len() > SHOWN {
        shown.push("…");
    }
    observer.note(format!(
        "note: {} traces skipped, they have no retriever span: {}",
        skipped.len(),
        shown.join(", ")
    ));
}

/// `runs/<dataset file stem>`.
pub fn default_run_path(data: &Path) -> PathBuf {
    let stem = data
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "run".into());
    PathBuf::from("runs").join(stem)
}
