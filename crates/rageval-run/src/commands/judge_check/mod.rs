//! `judge-check`: runs the configured judge through one metric on human-labelled items and
//! measures how well its scores agree with the labels, with seeded 95% bootstrap intervals.
//!
//! - [`labels`]: the documented JSONL shapes (pairwise, binary, graded).
//! - [`convert`]: the shared sets (WikiEval, UHGEval, RGB, DuReader, Cranfield).
//! - [`journal`]: the journals of the first pass and the repeats.
//! - [`measure`]: the statistics over items; [`stability`]: `--repeat K`.
//!
//! The judging is `eval`'s scoring loop ([`crate::engine::score`]) over the items' samples,
//! so caps, cancellation, a halted judge and resuming work as they do there. Writes a run directory
//! of the same kind as `eval` (manifest, `samples.jsonl` — the items' samples with their
//! labels, `results.jsonl`, `summary.json`, reports) plus `agreement.json` (its type lives
//! in `rageval-report`, which shows it). Bad labels stop before any judging; a failure
//! halfway ends the session by the shell's rule ([`crate::engine::shell`]): kept with what
//! a model judged, removed when new and holding none.

pub mod convert;
pub mod journal;
pub mod labels;
pub mod measure;
pub mod stability;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use rageval_core::{Outcome, Sample};
use rageval_judge::CancelToken;
use rageval_metrics::Metric;
use rageval_report::{
    AGREEMENT_FILE, Aggregator, Agreement, DatasetInfo, Gate, JournalWriter, Manifest,
    MetricRecord, ResultRecord, RunDir, RunInfo, SessionEnd, sha256_bytes, sha256_file,
    utc_timestamp,
};
use serde_json::json;

use crate::engine::cells::Cells;
use crate::engine::ended::Ended;
use crate::engine::error::{Result, RunError};
use crate::engine::files::write_atomically;
use crate::engine::identity::RunIdentity;
use crate::engine::judges::{self, Env, JudgeOptions, JudgeSetup};
use crate::engine::observe::{Event, Observer, Progress};
use crate::engine::plan::Estimate;
use crate::engine::reports::{Finished, finish_reports};
use crate::engine::resume::{self, Prepared};
use crate::engine::score::tasks_of;
use crate::engine::score::{self, Scored};
use crate::engine::session::{self, SessionOpen};
use crate::engine::shell::{self, Books, Tally};
use journal::{REPEATS_FILE, RepeatRecord};
use labels::Item;

/// The file of the run directory holding the items' samples (the run's dataset).
pub const SAMPLES_FILE: &str = "samples.jsonl";
/// Stage name of the first pass's progress.
pub const STAGE: &str = "judging";
/// What the units of a judge-check's sessions are called.
const UNIT: &str = "judgements";
/// The files a judge-check writes besides the manifest, `results.jsonl` and `summary.json`.
const OWN_FILES: [&str; 3] = [AGREEMENT_FILE, SAMPLES_FILE, REPEATS_FILE];

/// The labels file's layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LabelFormat {
    /// rageval's labels JSONL (pairwise, binary or graded; docs/judge-fidelity.md).
    Jsonl,
    /// WikiEval rows: pairs chosen by what the metric reads.
    Wikieval,
    /// UHGEval rows: one binary item per annotated keyword.
    Uhgeval,
    /// An RGB file: one binary item per positive or negative passage.
    Rgb,
    /// DuReader rows: one binary item per document (`is_selected`).
    Dureader,
    /// The Cranfield folder: one graded item per judged (query, abstract).
    Cranfield,
}

impl LabelFormat {
    /// Every format, as `--format` lists them.
    pub const ALL: [LabelFormat; 6] = [
        LabelFormat::Jsonl,
        LabelFormat::Wikieval,
        LabelFormat::Uhgeval,
        LabelFormat::Rgb,
        LabelFormat::Dureader,
        LabelFormat::Cranfield,
    ];

    /// Its name on the command line and in the manifest.
    pub fn name(self) -> &'static str {
        match self {
            LabelFormat::Jsonl => "jsonl",
            LabelFormat::Wikieval => "wikieval",
            LabelFormat::Uhgeval => "uhgeval",
            LabelFormat::Rgb => "rgb",
            LabelFormat::Dureader => "dureader",
            LabelFormat::Cranfield => "cranfield",
        }
    }

    /// The format named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// What `judge-check` is asked to do.
#[derive(Debug, Clone)]
pub struct JudgeCheckOptions {
    /// The labels file (a folder for Cranfield).
    pub labels: PathBuf,
    pub format: LabelFormat,
    /// The metric spec.
    pub metric: String,
    /// Files of `[[metric]]` rubric tables (`--metric-file`); empty: the judge's
    /// configuration file ([`crate::engine::rubrics`]).
    pub rubric_files: Vec<PathBuf>,
    /// The run directory (default: `runs/judge-check-<labels>-<metric>`).
    pub out: Option<PathBuf>,
    pub overwrite: bool,
    /// Only the first N source records.
    pub samples: Option<usize>,
    /// Judge each sample this many times (repeats bypass the cache).
    pub repeat: u32,
    /// Binary labels: a score at or above this is a "good" verdict.
    pub threshold: f64,
    /// Folds of the cross-validated threshold.
    pub folds: u32,
    pub seed: u64,
    pub bootstrap_resamples: usize,
    pub judge: JudgeOptions,
}

impl JudgeCheckOptions {
    /// The run directory.
    pub fn run_path(&self) -> PathBuf {
        self.out.clone().unwrap_or_else(|| default_run_path(self))
    }
}

/// A complete judge-check.
#[derive(Debug)]
pub struct Checked {
    pub path: PathBuf,
    pub agreement: Agreement,
    pub footer: String,
    pub finished: Finished,
}

/// What a judge-check reads before judging: the metric, the items and their samples.
struct Material {
    metrics: Vec<Box<dyn Metric>>,
    items: Vec<Item>,
    samples: Vec<Sample>,
}

fn material(options: &JudgeCheckOptions, env: Env<'_>) -> Result<Material> {
    if !options.threshold.is_finite() {
        return Err(RunError::Usage("--threshold must be a number".into()));
    }
    let catalogue =
        crate::engine::rubrics::catalogue(&options.rubric_files, &options.judge.flags, env)?;
    let metrics = vec![catalogue.build(&options.metric)?];
    let items = read_items(options, metrics[0].as_ref())?;
    if options.repeat > 1 && options.judge.flags.offline {
        return Err(RunError::Usage(
            "--repeat asks the judge again, which --offline (replay the cache only) forbids".into(),
        ));
    }
    let samples: Vec<Sample> = items
        .iter()
        .flat_map(|item| {
            item.samples.iter().enumerate().map(|(i, sample)| {
                let mut sample = sample.clone();
                sample.metadata = item.label_metadata(i);
                sample
            })
        })
        .collect();
    Ok(Material {
        metrics,
        items,
        samples,
    })
}

/// Judges the labelled items (resuming a run there) and measures the agreement.
pub fn run(
    options: &JudgeCheckOptions,
    env: Env<'_>,
    observer: &dyn Observer,
    cancel: &CancelToken,
) -> Result<Ended<Checked>> {
    let session_started = utc_timestamp();
    let material = material(options, env)?;
    let metric = material.metrics[0].as_ref();
    let setup = judges::resolve(&options.judge, env)?;
    if let Some(why) = setup.unmet(&metric.requirements()) {
        return Err(RunError::Usage(format!(
            "the judge cannot answer {}: {why}",
            metric.name()
        )));
    }
    for line in setup.route_lines(&metric.requirements().tasks) {
        observer.note(format!("judge: {line}"));
    }
    let again = repeat_judge(options, env)?;
    let run_path = options.run_path();
    let samples_text = samples_jsonl(&material.samples)?;
    let fresh = fresh_manifest(options, &material, &setup, &run_path, &samples_text)?;
    let mut identity = RunIdentity {
        command: "judge-check".into(),
        dataset_sha256: fresh.dataset.sha256.clone(),
        metrics: vec![metric.name()],
        judge: setup.identity()?.for_tasks(&tasks_of(&material.metrics)),
        labels_sha256: Some(sha256_file(&options.labels).unwrap_or_default()),
        labels_file: Some(options.labels.display().to_string()),
        settings: [
            ("format".to_string(), options.format.name().to_string()),
            ("samples".to_string(), format!("{:?}", options.samples)),
        ]
        .into(),
    };
    identity
        .settings
        .extend(crate::commands::eval::metric_definitions(&material.metrics));
    let mut prepared = resume::prepare(&run_path, options.overwrite, false, fresh, &identity)?;
    for note in &prepared.notes {
        observer.note(format!("note: {note}"));
    }
    let check = Check {
        options,
        material: &material,
        setup: &setup,
        again: again.as_ref(),
        observer,
        cancel,
    };
    check.judge_and_write(&mut prepared, &samples_text, session_started)
}

/// The judge of repeats 2..K (`--repeat`): a fresh one that neither reads nor writes the
/// cache, so that repeats reach the model; none without repeats.
fn repeat_judge(options: &JudgeCheckOptions, env: Env<'_>) -> Result<Option<JudgeSetup>> {
    if options.repeat <= 1 {
        return Ok(None);
    }
    let mut uncached = options.judge.clone();
    uncached.flags.no_cache = true;
    Ok(Some(judges::resolve(&uncached, env)?))
}

/// Estimates what the judge-check would ask of the judge (all repeats), sending nothing.
pub fn dry_run(
    options: &JudgeCheckOptions,
    env: Env<'_>,
    observer: &dyn Observer,
) -> Result<Estimate> {
    let material = material(options, env)?;
    let (setup, planner) = crate::engine::plan::planning_setup(&options.judge, env)?;
    let names = vec![material.metrics[0].name()];
    let plan = crate::commands::eval::plan::EvalPlan {
        metrics: &material.metrics,
        names: &names,
        setup: &setup,
        planner: planner.as_ref(),
        top_k: None,
        window: setup.window(),
    };
    let repeats = options.repeat as usize;
    let samples = material
        .samples
        .iter()
        .cycle()
        .take(material.samples.len() * repeats)
        .cloned()
        .map(Ok);
    let mut stage = plan.run(samples, None, observer)?;
    stage.stage = "judge-check";
    stage.unit_name = if repeats > 1 {
        "sample judgements (every repeat)"
    } else {
        "samples"
    };
    Ok(Estimate::new(setup.models(), vec![stage]))
}

fn read_items(options: &JudgeCheckOptions, metric: &dyn Metric) -> Result<Vec<Item>> {
    let path = &options.labels;
    let limit = options.samples;
    let items = match options.format {
        LabelFormat::Jsonl => labels::read_jsonl(path, limit)?,
        LabelFormat::Wikieval => convert::wikieval(path, metric.info().inputs, limit)?,
        LabelFormat::Uhgeval => convert::uhgeval(path, limit)?,
        LabelFormat::Rgb => convert::rgb(path, limit)?,
        LabelFormat::Dureader => convert::dureader(path, limit)?,
        LabelFormat::Cranfield => convert::cranfield(path, limit)?,
    };
    labels::check_items(&items, &path.display().to_string())?;
    Ok(items)
}

/// One judge-check: what is checked, on which items, by which judge.
struct Check<'a> {
    options: &'a JudgeCheckOptions,
    material: &'a Material,
    setup: &'a JudgeSetup,
    /// The uncached judge of repeats 2..K (`--repeat`).
    again: Option<&'a JudgeSetup>,
    observer: &'a dyn Observer,
    cancel: &'a CancelToken,
}

impl Check<'_> {
    /// Judges every sample not yet journaled (K times with `--repeat`), journaling each as
    /// it finishes; then measures from the journals and finishes the run directory.
    fn judge_and_write(
        &self,
        prepared: &mut Prepared,
        samples_text: &str,
        session_started: String,
    ) -> Result<Ended<Checked>> {
        let (setup, again) = (self.setup, self.again);
        let name = self.material.metrics[0].name();
        let mut session = SessionOpen::new(setup, session_started, &prepared.manifest);
        if let Some(again) = again {
            session.also_counting(again);
        }
        let opened = self
            .open_files(prepared, samples_text, &name)
            .and_then(|done| {
                let results = prepared.run.journal()?;
                Ok((done, results, prepared.run.side_journal(REPEATS_FILE)?))
            });
        let (repeats_done, mut results, mut repeats) = match opened {
            Ok(opened) => opened,
            Err(error) => {
                let books = books(prepared, &session);
                return Err(shell::failed(error, books, 0, UNIT, self.observer));
            }
        };
        let stop_of = || {
            if self.cancel.is_cancelled() {
                return Some(judges::Stop::Cancelled);
            }
            setup.stop().or_else(|| again.and_then(JudgeSetup::stop))
        };
        let stopped = || stop_of().is_some();
        let mut scored = Scored::default();
        let mut sink = JudgementSink {
            results: &mut results,
            repeats: &mut repeats,
            session: &mut session,
            run_dir: &prepared.run,
            manifest: &mut prepared.manifest,
        };
        let done = &prepared.done;
        let judging = async {
            self.first_pass(done, &stopped, &mut sink, &mut scored)
                .await?;
            let Some(again) = again else {
                return Ok::<(), RunError>(());
            };
            self.repeat_passes(again, &repeats_done, &stopped, &mut sink, &mut scored)
                .await
        };
        let chats = [setup.chat.clone(), again.and_then(|a| a.chat.clone())];
        let ended = shell::until_cancelled(self.cancel, chats, judging)?;
        results.flush()?;
        repeats.flush()?;
        let tally = Tally {
            done: scored.cells,
            left: scored.held_back,
            unit: UNIT,
        };
        let ended = ended.map(|judged| judged.map(|()| None));
        let books = books(prepared, &session);
        if let Some(stopped) = shell::end(ended, stop_of(), books, tally, self.observer)? {
            return Ok(Ended::Stopped(stopped));
        }
        drop((results, repeats));
        self.finish(prepared, &session, &scored, &name)
            .map(Ended::Complete)
    }

    /// The first judgement of every sample not in `done`, journaled as each finishes.
    async fn first_pass(
        &self,
        done: &Cells,
        stopped: &(dyn Fn() -> bool + Sync),
        sink: &mut JudgementSink<'_, '_>,
        scored: &mut Scored,
    ) -> Result<()> {
        let (metrics, samples, observer) = (
            &self.material.metrics,
            &self.material.samples,
            self.observer,
        );
        let name = metrics[0].name();
        let judges = self.setup.judges.clone().plan_for(metrics);
        let plan = pass_plan(metrics, &name, &judges, self.setup, done, stopped);
        let todo = samples.len() - done.len().min(samples.len());
        observer.note(format!(
            "judging {todo} of {} samples ({} items) with {name}",
            samples.len(),
            self.material.items.len()
        ));
        observer.event(&Event::Stage {
            name: STAGE,
            total: Some(todo as u64),
        });
        score::score_all(
            &plan,
            samples.iter().cloned().map(Ok),
            scored,
            &mut |records: &[ResultRecord], scored: &Scored| {
                sink.record(records, scored.cells)?;
                progress(observer, STAGE, self.setup, scored, todo);
                Ok(())
            },
        )
        .await?;
        observer.event(&Event::StageEnd);
        Ok(())
    }

    /// Opens this session's files: figures an earlier session left are stale until this one
    /// finishes (and repeats of a run not resumed are not this run's), the samples are
    /// written, the manifest too. Returns the repeat judgements kept, `(repeat, sample id)`.
    fn open_files(
        &self,
        prepared: &mut Prepared,
        samples_text: &str,
        name: &str,
    ) -> Result<HashSet<(u32, String)>> {
        let run_path = prepared.run.path().to_path_buf();
        let stale: &[&str] = if prepared.resumed {
            &[AGREEMENT_FILE]
        } else {
            &[AGREEMENT_FILE, REPEATS_FILE]
        };
        remove_files(&run_path, stale)?;
        write_atomically(
            &run_path.join(crate::commands::judge_check::SAMPLES_FILE),
            samples_text,
        )?;
        prepared.run.write_manifest(&prepared.manifest)?;
        let repeats_done = journal::repeats_done(&run_path, name)?;
        if prepared.resumed {
            let first = prepared.done.count_of(name);
            self.observer.note(format!(
                "resuming {}: {first} of {} samples judged, {} repeat judgements kept",
                run_path.display(),
                self.material.samples.len(),
                repeats_done.len()
            ));
        }
        Ok(repeats_done)
    }

    /// Repeats 2..K of every sample by `again` (the uncached judge), each journaled in
    /// `repeats.jsonl` as it finishes, skipping the judgements `repeats_done` kept.
    async fn repeat_passes(
        &self,
        again: &JudgeSetup,
        repeats_done: &HashSet<(u32, String)>,
        stopped: &(dyn Fn() -> bool + Sync),
        sink: &mut JudgementSink<'_, '_>,
        scored: &mut Scored,
    ) -> Result<()> {
        let (metrics, samples) = (&self.material.metrics, &self.material.samples);
        let name = metrics[0].name();
        let judges = again.judges.clone().plan_for(metrics);
        for k in 2..=self.options.repeat {
            let done: Cells = repeats_done
                .iter()
                .filter(|(repeat, _)| *repeat == k)
                .map(|(_, id)| (id.clone(), name.clone()))
                .collect();
            let plan = pass_plan(metrics, &name, &judges, self.setup, &done, stopped);
            let todo = samples.len() - done.len().min(samples.len());
            self.observer.note(format!(
                "repeat {k} of {}: {todo} samples",
                self.options.repeat
            ));
            self.observer.event(&Event::Stage {
                name: "repeating",
                total: Some(todo as u64),
            });
            let mut repeat_scored = Scored::default();
            score::score_all(
                &plan,
                samples.iter().cloned().map(Ok),
                &mut repeat_scored,
                &mut |records: &[ResultRecord], _: &Scored| {
                    scored.cells += records.len();
                    sink.record_repeat(k, records, scored.cells)
                },
            )
            .await?;
            scored.held_back += repeat_scored.held_back;
            self.observer.event(&Event::StageEnd);
        }
        Ok(())
    }

    /// Measures the agreement from the journals, writes `agreement.json` and the summary,
    /// closes the session and writes the reports.
    fn finish(
        &self,
        prepared: &mut Prepared,
        session: &SessionOpen<'_>,
        scored: &Scored,
        name: &str,
    ) -> Result<Checked> {
        let (options, samples) = (self.options, &self.material.samples);
        let run_path = prepared.run.path().to_path_buf();
        let passes = journal::read_passes(&run_path, name, samples, options.repeat)?;
        let measure_settings = measure::Settings {
            threshold: options.threshold,
            folds: options.folds as usize,
            resamples: options.bootstrap_resamples,
            seed: options.seed,
        };
        let scores = scores_of(samples, &passes[0]);
        let items = &self.material.items;
        let mut agreement = measure::measure(items, &scores, &measure_settings);
        if passes.len() > 1 {
            let report = stability::stability(items, samples, &passes, &measure_settings);
            agreement.stability = Some(report);
        }
        write_atomically(
            &run_path.join(AGREEMENT_FILE),
            &serde_json::to_string_pretty(&agreement).map_err(RunError::encode("the agreement"))?,
        )?;
        let mut aggregator = Aggregator::new(vec![name.to_owned()]);
        for outcome in &passes[0] {
            aggregator.add(name, outcome);
        }
        let mut summary =
            aggregator.finish(samples.len(), options.bootstrap_resamples, options.seed);
        let manifest = &mut prepared.manifest;
        manifest.settings["judge"]["stats"] = self.setup.stats();
        manifest.settings["agreement"] = json!({
            "figures": agreement.figures,
            "unscored": agreement.unscored,
        });
        let account = session.close(manifest, SessionEnd::Complete, None, scored.cells);
        let footer = session::footer(&account, &session::this_session(manifest));
        summary.judge = Some(account);
        prepared.run.finish(manifest, &summary)?;
        let finished_run = RunInfo::load(&run_path)?;
        let texts = crate::engine::reports::texts_of(
            &finished_run.manifest,
            &finished_run.path,
            self.observer,
        );
        let finished = finish_reports(&finished_run, &texts, &Gate::default(), None)?;
        Ok(Checked {
            path: run_path,
            agreement,
            footer,
            finished,
        })
    }
}

/// The run directory of `prepared` as the session's ending sees it.
fn books<'s, 'a>(prepared: &'s mut Prepared, session: &'s SessionOpen<'a>) -> Books<'s, 'a> {
    Books {
        run: &prepared.run,
        manifest: &mut prepared.manifest,
        session,
        resumed: prepared.resumed,
        own_files: &OWN_FILES,
        paid_elsewhere: false,
    }
}

/// Where judgements go as they finish: the first's to `results.jsonl`, a repeat's to
/// `repeats.jsonl` (each flushed), and the session's checkpoint.
struct JudgementSink<'s, 'j> {
    results: &'s mut JournalWriter,
    repeats: &'s mut JournalWriter,
    session: &'s mut SessionOpen<'j>,
    run_dir: &'s RunDir,
    manifest: &'s mut Manifest,
}

impl JudgementSink<'_, '_> {
    fn record(&mut self, records: &[ResultRecord], cells: usize) -> Result<()> {
        for record in records {
            self.results.append(record)?;
        }
        self.results.flush()?;
        self.session.checkpoint(self.run_dir, self.manifest, cells)
    }

    fn record_repeat(&mut self, repeat: u32, records: &[ResultRecord], cells: usize) -> Result<()> {
        for record in records {
            self.repeats.append(&RepeatRecord {
                repeat,
                record: record.clone(),
            })?;
        }
        self.repeats.flush()?;
        self.session.checkpoint(self.run_dir, self.manifest, cells)
    }
}

/// The scoring plan of one pass (the first, or a repeat) over the items' samples.
fn pass_plan<'a>(
    metrics: &'a [Box<dyn Metric>],
    name: &'a String,
    judges: &'a rageval_metrics::Judges,
    setup: &JudgeSetup,
    done: &'a Cells,
    stopped: &'a (dyn Fn() -> bool + Sync),
) -> score::Plan<'a> {
    score::Plan {
        metrics,
        names: std::slice::from_ref(name),
        judges,
        top_k: None,
        window: setup.window(),
        in_flight: setup.concurrency.saturating_mul(2),
        done,
        stopped,
        hold_failed: &|| false,
    }
}

/// Sends a progress event of `stage` after `scored`.
fn progress(
    observer: &dyn Observer,
    stage: &'static str,
    setup: &JudgeSetup,
    scored: &Scored,
    todo: usize,
) {
    let mut progress = Progress::of(stage, setup.chat.as_ref());
    progress.done = scored.samples as u64;
    progress.total = Some(todo as u64);
    progress.failed = scored.failed as u64;
    observer.event(&Event::Progress(progress));
}

/// The manifest a new run starts with: the samples (the run's dataset, hashed as they will
/// be written), the metric, and the labels, judge and statistics settings.
fn fresh_manifest(
    options: &JudgeCheckOptions,
    material: &Material,
    setup: &JudgeSetup,
    run_path: &Path,
    samples_text: &str,
) -> Result<Manifest> {
    let metric = material.metrics[0].as_ref();
    let dataset = DatasetInfo {
        path: run_path.join(SAMPLES_FILE).display().to_string(),
        sha256: sha256_bytes(samples_text.as_bytes()),
        format: "jsonl".into(),
        samples: Some(samples_text.lines().count()),
    };
    let record = MetricRecord {
        name: metric.name(),
        formula: metric.formula().0.to_string(),
        source: metric.formula().1.to_string(),
        // This run measures its judge; agreement.json holds the figures.
        judges: Vec::new(),
    };
    let settings = json!({
        "labels": options.labels.display().to_string(),
        "labels_sha256": sha256_file(&options.labels).ok(),
        "labels_format": options.format.name(),
        "shape": material.items[0].shape().name(),
        "items": material.items.len(),
        "metric": metric.name(),
        "samples": options.samples,
        "repeat": options.repeat,
        "threshold": options.threshold,
        "folds": options.folds,
        "seed": options.seed,
        "bootstrap_resamples": options.bootstrap_resamples,
        "judge": setup.description,
    });
    Ok(Manifest::start(
        "judge-check",
        dataset,
        vec![record],
        settings,
    ))
}

/// Each sample's score (`None`: undefined or failed).
fn scores_of(samples: &[Sample], outcomes: &[Outcome]) -> HashMap<String, Option<f64>> {
    samples
        .iter()
        .zip(outcomes)
        .map(|(sample, outcome)| (sample.id.clone(), outcome.value()))
        .collect()
}

/// The samples as rageval JSONL (`eval`'s reader reads them back for the report), labels
/// in the extra fields.
fn samples_jsonl(samples: &[Sample]) -> Result<String> {
    let mut text = String::new();
    for sample in samples {
        let mut row = json!({
            "id": sample.id,
            "question": sample.question,
            "contexts": sample.contexts.iter().map(|c| c.text.as_str()).collect::<Vec<_>>(),
        });
        if let Some(answer) = &sample.answer {
            row["answer"] = json!(answer);
        }
        if let Some(reference) = sample.references.first() {
            row["reference"] = json!(reference);
        }
        for (key, value) in &sample.metadata {
            row[key] = value.clone();
        }
        text.push_str(&serde_json::to_string(&row).map_err(RunError::encode("a sample"))?);
        text.push('\n');
    }
    Ok(text)
}

/// Removes `files` from the run directory where they exist.
fn remove_files(run: &Path, files: &[&str]) -> Result<()> {
    for file in files {
        crate::engine::files::remove_if_present(&run.join(file))?;
    }
    Ok(())
}

/// `runs/judge-check-<labels file stem>-<metric>`.
fn default_run_path(options: &JudgeCheckOptions) -> PathBuf {
    let stem = options
        .labels
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "labels".into());
    let metric: String = options
        .metric
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    PathBuf::from("runs").join(format!("judge-check-{stem}-{metric}"))
}
