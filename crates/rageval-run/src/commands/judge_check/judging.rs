//! One judge-check under way: the first pass and the repeats judged on `eval`'s scoring
//! loop, each judgement journaled as it finishes (`results.jsonl`, `repeats.jsonl`), the
//! session ended by the shell's rule, then the agreement measured from the journals and the
//! run finished.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use rageval_core::{Outcome, Sample};
use rageval_judge::CancelToken;
use rageval_metrics::Metric;
use rageval_report::{
    AGREEMENT_FILE, Aggregator, Gate, JournalWriter, Manifest, ResultRecord, RunDir, RunInfo,
    SessionEnd,
};
use serde_json::json;

use super::journal::{self, REPEATS_FILE, RepeatRecord};
use super::{Checked, JudgeCheckOptions, Material, SAMPLES_FILE, STAGE, measure, stability};
use crate::engine::cells::Cells;
use crate::engine::ended::Ended;
use crate::engine::error::{Result, RunError};
use crate::engine::files::write_atomically;
use crate::engine::judges::{self, JudgeSetup};
use crate::engine::observe::{Event, Observer, Progress};
use crate::engine::reports::finish_reports;
use crate::engine::resume::Prepared;
use crate::engine::score::{self, Scored};
use crate::engine::session::{self, SessionOpen};
use crate::engine::shell::{self, Books, Tally};

/// What the units of a judge-check's sessions are called.
const UNIT: &str = "judgements";

/// The files a judge-check writes besides the manifest, `results.jsonl` and `summary.json`.
const OWN_FILES: [&str; 3] = [AGREEMENT_FILE, SAMPLES_FILE, REPEATS_FILE];

/// One judge-check: what is checked, on which items, by which judge.
pub(super) struct Check<'a> {
    pub(super) options: &'a JudgeCheckOptions,
    pub(super) material: &'a Material,
    pub(super) setup: &'a JudgeSetup,
    /// The uncached judge of repeats 2..K (`--repeat`).
    pub(super) again: Option<&'a JudgeSetup>,
    pub(super) observer: &'a dyn Observer,
    pub(super) cancel: &'a CancelToken,
}

impl Check<'_> {
    /// Judges every sample not yet journaled (K times with `--repeat`), journaling each as
    /// it finishes; then measures from the journals and finishes the run directory.
    pub(super) fn judge_and_write(
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
        let retry_failed = self.options.retry_failed;
        let (repeats_done, repeats_retried) = journal::repeats_done(&run_path, name, retry_failed)?;
        if prepared.resumed {
            let first = prepared.done.count_of(name);
            let retried = prepared.retried + repeats_retried;
            let retried = if retried > 0 {
                format!(", {retried} failed judgements to judge again")
            } else {
                String::new()
            };
            self.observer.note(format!(
                "resuming {}: {first} of {} samples judged, {} repeat judgements kept{retried}",
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
            head_to_head: matches!(options.measured, super::Measured::HeadToHead { .. }),
        };
        let scores = scores_of(samples, &passes[0]);
        let items = &self.material.items;
        let mut agreement = measure::measure(items, &scores, &measure_settings);
        let few_shot = self
            .material
            .drawn
            .as_ref()
            .map(super::few_shot::Drawn::describe);
        if let Some(text) = &few_shot {
            agreement.notes.insert("few_shot".into(), json!(text));
        }
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
        if let Some(text) = few_shot {
            summary.notes.insert("few_shot".into(), text);
        }
        let manifest = &mut prepared.manifest;
        manifest.settings["judge"]["stats"] = self.setup.stats();
        manifest.settings["agreement"] = json!({
            "figures": agreement.figures,
            "unscored": agreement.unscored,
        });
        let account = session.close(manifest, SessionEnd::Complete, None, scored.cells);
        let mut footer = session::footer(&account, &session::this_session(manifest));
        if let Some(warning) = self.setup.cut_off_warning() {
            footer = format!("{footer}\n{warning}");
        }
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

/// Each sample's score (`None`: undefined or failed).
fn scores_of(samples: &[Sample], outcomes: &[Outcome]) -> HashMap<String, Option<f64>> {
    samples
        .iter()
        .zip(outcomes)
        .map(|(sample, outcome)| (sample.id.clone(), outcome.value()))
        .collect()
}

/// Removes `files` from the run directory where they exist.
fn remove_files(run: &Path, files: &[&str]) -> Result<()> {
    for file in files {
        crate::engine::files::remove_if_present(&run.join(file))?;
    }
    Ok(())
}
