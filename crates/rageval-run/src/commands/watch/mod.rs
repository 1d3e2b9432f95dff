//! `eval --watch`: online evaluation of a source that keeps growing (a JSONL dataset or trace
//! export being appended to, a Phoenix project), into one rolling run.
//!
//! Each poll reads the source ([`WatchSource`]), chooses the samples it has not seen before
//! that the consistent sample keeps (a hash of the id: the same traces on every machine and
//! every restart), appends them to the run's dataset ([`selection`]) and scores what the
//! journal lacks with `eval` itself — so the judge, caps, journal, resume and failure rules
//! are `eval`'s, and a restart resumes where the last session stopped. The run's identity
//! names it rolling ([`crate::commands::eval::ROLLING_DATA`]) instead of its data's hash.
//!
//! Spending stops at a cost cap per hour or per day (the sum over the polls of the last hour
//! or day, kept in [`ledger`]), loudly: the report hears [`WatchEvent::Capped`] and the
//! health line says until when. After each poll every metric's latest window is read
//! against its baseline window ([`alerts`]); a significant drop is
//! [`WatchEvent::Alert`], once, until the metric recovers. A judge that stops answering
//! stops that poll's scoring with [`WatchEvent::Stopped`]; the next poll tries again. Where
//! the events go (stderr, a webhook, a command) is the caller's ([`WatchReport`]); this
//! module never prints.

pub mod alerts;
pub mod ledger;
pub mod selection;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rageval_core::Sample;
use rageval_core::dataset::Format;
use rageval_core::sampling::SampleRate;
use rageval_judge::CancelToken;
use rageval_report::{RESULTS_FILE, any_file, read_manifest, read_results, utc_timestamp};

use crate::commands::eval::{self, EvalOptions};
use crate::engine::ended::Ended;
use crate::engine::error::Result;
use crate::engine::judges::{Env, Stop};
use crate::engine::observe::Silent;
use alerts::{AlertRule, Reading, readings};
use ledger::{Ledger, LedgerLine};
use selection::Selection;

const HOUR: u64 = 3_600;
const DAY: u64 = 86_400;

/// What to watch and how.
#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// The run's `eval` options (metrics, judge, run directory); the dataset is the run's
    /// own selection, set each poll.
    pub eval: EvalOptions,
    /// Time between the starts of two polls.
    pub interval: Duration,
    /// The share of new samples scored, by id.
    pub sample: SampleRate,
    /// Most dollars the judge may spend in any hour.
    pub max_cost_per_hour: Option<f64>,
    /// Most dollars the judge may spend in any day.
    pub max_cost_per_day: Option<f64>,
    pub alerts: AlertRule,
    /// Stop after this many polls (none: until cancelled).
    pub max_polls: Option<u64>,
}

/// Where samples come from: every sample there now, in order.
pub trait WatchSource {
    /// Reads the source; an error is reported and the poll goes on with nothing new.
    fn read(&mut self) -> std::result::Result<Vec<Sample>, String>;
}

/// How the watch stands after a poll (the health line).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Health {
    pub polls: u64,
    /// When the last poll started (UTC).
    pub last_poll: String,
    /// Samples in the source at the last poll.
    pub seen: usize,
    /// Samples chosen so far (in the sample).
    pub chosen: usize,
    /// Of them, the ones whose every cell is journaled.
    pub scored: usize,
    /// New samples the sample left out, so far.
    pub skipped: usize,
    /// Cells the judge failed, over the watch's polls.
    pub judge_failures: usize,
    /// When spending may resume, while a cost cap holds (Unix seconds).
    pub paused_until: Option<u64>,
}

/// What a watch has to say.
#[derive(Debug, Clone, Copy)]
pub enum WatchEvent<'a> {
    /// After every poll.
    Health(&'a Health),
    /// A cost cap stopped the spending: which one, its limit, what was spent in its period,
    /// until when (Unix seconds), and how many chosen samples wait.
    Capped {
        period: &'static str,
        limit_usd: f64,
        spent_usd: f64,
        until: u64,
        waiting: usize,
    },
    /// A metric dropped significantly below its baseline.
    Alert(&'a Reading),
    /// A metric that was alerting is no longer below its baseline.
    Recovered(&'a Reading),
    /// A poll's scoring stopped (the judge does not answer, the data is bad): why.
    Stopped(&'a str),
    /// The source could not be read this time.
    SourceFailed(&'a str),
}

/// Receives the watch's events. Called from the watching thread.
pub trait WatchReport: Sync {
    fn report(&self, event: WatchEvent<'_>);
}

/// How a watch ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Watched {
    /// Cancelled (Ctrl-C): the run is whole and a restart resumes it.
    Interrupted,
    /// `max_polls` polls were made.
    Finished,
}

/// Watches `source` until cancelled (or `max_polls`).
pub fn watch(
    options: &WatchOptions,
    source: &mut dyn WatchSource,
    report: &dyn WatchReport,
    env: Env<'_>,
    cancel: &CancelToken,
) -> Result<Watched> {
    let dir = options.eval.run_path();
    std::fs::create_dir_all(&dir).map_err(|source| crate::RunError::Write {
        path: dir.clone(),
        source,
    })?;
    let selection = Selection::open(&dir)?;
    let mut state = State {
        // Whatever an earlier session chose and did not score is scored at the first poll.
        pending: !selection.is_empty(),
        selection,
        ledger: Ledger::open(&dir)?,
        skipped: HashSet::new(),
        health: Health::default(),
        paused_until: None,
        dir,
    };
    loop {
        if cancel.is_cancelled() {
            return Ok(Watched::Interrupted);
        }
        let started = Instant::now();
        if state.poll(options, source, report, env, cancel)? {
            return Ok(Watched::Interrupted);
        }
        if options
            .max_polls
            .is_some_and(|max| state.health.polls >= max)
        {
            return Ok(Watched::Finished);
        }
        while started.elapsed() < options.interval {
            if cancel.is_cancelled() {
                return Ok(Watched::Interrupted);
            }
            std::thread::sleep(Duration::from_millis(50).min(options.interval));
        }
    }
}

/// What a watch keeps between polls.
struct State {
    dir: PathBuf,
    selection: Selection,
    ledger: Ledger,
    /// New samples the sample left out (not chosen again at the next poll).
    skipped: HashSet<String>,
    health: Health,
    /// Chosen samples may wait unscored (a stopped or capped poll).
    pending: bool,
    /// While a cap holds, nothing is scored, and it is announced once.
    paused_until: Option<u64>,
}

/// What one poll found new in the source.
struct Found {
    new: usize,
    chosen: usize,
}

impl State {
    /// One poll: read, choose, score within the caps, look for drops, report. True when it
    /// was cancelled.
    fn poll(
        &mut self,
        options: &WatchOptions,
        source: &mut dyn WatchSource,
        report: &dyn WatchReport,
        env: Env<'_>,
        cancel: &CancelToken,
    ) -> Result<bool> {
        let now = unix_now();
        self.health.polls += 1;
        self.health.last_poll = utc_timestamp();
        let found = self.choose(options, source, report)?;
        if self.paused_until.is_some_and(|until| now >= until) {
            self.paused_until = None;
        }
        let work = (self.pending || found.chosen > 0) && !self.selection.is_empty();
        let poll = if work && self.paused_until.is_none() {
            self.spend(options, report, env, cancel, now)?
        } else {
            Scoring::default()
        };
        self.health.paused_until = self.paused_until;
        self.health.judge_failures += poll.failed;
        self.ledger.append(LedgerLine::Poll {
            at: now,
            seen: self.health.seen,
            new: found.new,
            chosen: found.chosen,
            skipped: found.new - found.chosen,
            cells: poll.cells,
            failed: poll.failed,
            calls: poll.calls,
            cost_usd: poll.cost_usd,
        })?;
        if matches!(poll.stop, Some(Stop::Cancelled)) {
            return Ok(true);
        }
        let journal = self.dir.join(RESULTS_FILE);
        self.health.scored = scored_samples(&journal)?;
        self.compare_windows(options, report, &journal, now)?;
        report.report(WatchEvent::Health(&self.health));
        Ok(false)
    }

    /// Reads the source and appends the new samples the sample keeps to the selection.
    fn choose(
        &mut self,
        options: &WatchOptions,
        source: &mut dyn WatchSource,
        report: &dyn WatchReport,
    ) -> Result<Found> {
        let samples = source.read().unwrap_or_else(|error| {
            report.report(WatchEvent::SourceFailed(&error));
            Vec::new()
        });
        self.health.seen = samples.len();
        let (mut new, mut chosen) = (0, Vec::new());
        for sample in samples {
            if self.selection.contains(&sample.id) || self.skipped.contains(&sample.id) {
                continue;
            }
            new += 1;
            if options.sample.holds(&sample.id) {
                chosen.push(sample);
            } else {
                self.skipped.insert(sample.id);
            }
        }
        self.selection.append(&chosen)?;
        self.health.chosen = self.selection.len();
        self.health.skipped = self.skipped.len();
        Ok(Found {
            new,
            chosen: chosen.len(),
        })
    }

    /// Scores what waits, within what the cost caps leave; a cap reached is announced.
    fn spend(
        &mut self,
        options: &WatchOptions,
        report: &dyn WatchReport,
        env: Env<'_>,
        cancel: &CancelToken,
        now: u64,
    ) -> Result<Scoring> {
        let left = match budget(options, &self.ledger, now) {
            Budget::Reached(cap) => {
                self.pending = true;
                self.capped(&cap, report, now)?;
                return Ok(Scoring::default());
            }
            Budget::Left(left) => left,
        };
        let budget_usd = left.map(|(_, usd)| usd);
        let poll = score(options, &self.dir, &self.selection, budget_usd, env, cancel)?;
        self.pending = poll.stop.is_some() || poll.error.is_some();
        match (&poll.stop, &poll.error) {
            (Some(Stop::Cancelled), _) => {}
            (Some(Stop::CapReached(_)), _) => {
                let (period, _) = left.unwrap_or(("hour", 0.0));
                let cap = reached(options, &self.ledger, now, period, poll.cost_usd);
                self.capped(&cap, report, now)?;
            }
            (_, Some(message)) => report.report(WatchEvent::Stopped(message)),
            _ => {}
        }
        Ok(poll)
    }

    /// Pauses the spending until `cap` frees room, and says so.
    fn capped(&mut self, cap: &Cap, report: &dyn WatchReport, now: u64) -> Result<()> {
        self.paused_until = Some(cap.until);
        let waiting = waiting(&self.health, &self.dir)?;
        announce(cap, &mut self.ledger, report, now, waiting)
    }

    /// Fires an alert for each metric whose latest window dropped, once until it recovers.
    fn compare_windows(
        &mut self,
        options: &WatchOptions,
        report: &dyn WatchReport,
        journal: &Path,
        now: u64,
    ) -> Result<()> {
        for reading in readings(journal, &options.alerts)? {
            let alerting = self.ledger.alerting(&reading.metric);
            if reading.dropped() && !alerting {
                report.report(WatchEvent::Alert(&reading));
                self.ledger.append(LedgerLine::Alert {
                    at: now,
                    metric: reading.metric.clone(),
                    baseline: reading.baseline.clone(),
                    latest: reading.latest.clone(),
                    difference: reading.difference,
                    ci95: reading.ci95,
                })?;
            } else if !reading.dropped() && alerting {
                report.report(WatchEvent::Recovered(&reading));
                self.ledger.append(LedgerLine::Recovered {
                    at: now,
                    metric: reading.metric.clone(),
                })?;
            }
        }
        Ok(())
    }
}

/// Chosen samples not yet scored.
fn waiting(health: &Health, dir: &Path) -> Result<usize> {
    Ok(health
        .chosen
        .saturating_sub(scored_samples(&dir.join(RESULTS_FILE))?))
}

/// What one poll's scoring did.
#[derive(Debug, Default)]
struct Scoring {
    cells: usize,
    failed: usize,
    calls: u64,
    cost_usd: f64,
    /// Why it stopped before scoring everything, if it did.
    stop: Option<Stop>,
    /// What to tell the person about a stop or an error.
    error: Option<String>,
}

/// Scores what the journal lacks of the selection, with `budget_usd` dollars at most.
fn score(
    options: &WatchOptions,
    dir: &Path,
    selection: &Selection,
    budget_usd: Option<f64>,
    env: Env<'_>,
    cancel: &CancelToken,
) -> Result<Scoring> {
    let mut eval = options.eval.clone();
    eval.data = selection.path().to_path_buf();
    eval.format = Some(Format::Jsonl);
    eval.field_map.clear();
    eval.sheet = None;
    eval.samples = None;
    eval.shard = None;
    eval.rolling = true;
    eval.reports = false;
    if let Some(usd) = budget_usd {
        eval.judge.flags.max_cost_usd = Some(usd);
    }
    let before = spending(dir);
    let mut scoring = Scoring::default();
    match eval::run(&eval, env, &Silent, cancel) {
        Ok(Ended::Complete(done)) => {
            scoring.cells = done.scored.cells;
            scoring.failed = done.scored.failed;
            if let Some(too_many) = &done.too_many_failed {
                scoring.error = Some(too_many.message());
            }
        }
        Ok(Ended::Stopped(stopped)) => {
            scoring.error = Some(stopped.message.clone());
            scoring.stop = Some(stopped.stop);
        }
        Err(error) => scoring.error = Some(rageval_report::error_chain(&error)),
    }
    let after = spending(dir);
    scoring.calls = after.0.saturating_sub(before.0);
    scoring.cost_usd = (after.1 - before.1).max(0.0);
    Ok(scoring)
}

/// Calls and dollars the run's sessions spent so far (none before its first session).
fn spending(dir: &Path) -> (u64, f64) {
    let Ok(manifest) = read_manifest(dir, &any_file) else {
        return (0, 0.0);
    };
    manifest
        .sessions
        .iter()
        .fold((0, 0.0), |(calls, usd), session| {
            let total = &session.judge.total;
            (calls + total.calls, usd + total.cost_usd.unwrap_or(0.0))
        })
}

/// Samples of the journal at `path`.
fn scored_samples(path: &Path) -> Result<usize> {
    if !path.is_file() {
        return Ok(0);
    }
    let ids: HashSet<String> = read_results(path)?
        .into_iter()
        .map(|r| r.sample_id)
        .collect();
    Ok(ids.len())
}

/// A cost cap that holds: which, its limit, what was spent, until when.
#[derive(Debug, Clone, PartialEq)]
struct Cap {
    period: &'static str,
    limit_usd: f64,
    spent_usd: f64,
    until: u64,
}

/// What the caps leave for a poll.
enum Budget {
    /// A cap is reached.
    Reached(Cap),
    /// Dollars left under the tighter cap (and which), or no cap.
    Left(Option<(&'static str, f64)>),
}

fn budget(options: &WatchOptions, ledger: &Ledger, now: u64) -> Budget {
    let mut tightest: Option<(&'static str, f64)> = None;
    for (period, seconds, limit) in [
        ("hour", HOUR, options.max_cost_per_hour),
        ("day", DAY, options.max_cost_per_day),
    ] {
        let Some(limit) = limit else { continue };
        let left = limit - ledger.spent_since(now.saturating_sub(seconds));
        if left <= 0.0 {
            return Budget::Reached(reached(options, ledger, now, period, 0.0));
        }
        if tightest.is_none_or(|(_, usd)| left < usd) {
            tightest = Some((period, left));
        }
    }
    Budget::Left(tightest)
}

/// The cap of `period` as it stands, with `now_spent` dollars not yet in the ledger.
fn reached(
    options: &WatchOptions,
    ledger: &Ledger,
    now: u64,
    period: &'static str,
    now_spent: f64,
) -> Cap {
    let (seconds, limit) = match period {
        "day" => (DAY, options.max_cost_per_day),
        _ => (HOUR, options.max_cost_per_hour),
    };
    let since = now.saturating_sub(seconds);
    Cap {
        period,
        limit_usd: limit.unwrap_or(0.0),
        spent_usd: ledger.spent_since(since) + now_spent,
        until: ledger.frees_at(since, seconds).unwrap_or(now + seconds),
    }
}

fn announce(
    cap: &Cap,
    ledger: &mut Ledger,
    report: &dyn WatchReport,
    now: u64,
    waiting: usize,
) -> Result<()> {
    report.report(WatchEvent::Capped {
        period: cap.period,
        limit_usd: cap.limit_usd,
        spent_usd: cap.spent_usd,
        until: cap.until,
        waiting,
    });
    ledger.append(LedgerLine::Capped {
        at: now,
        period: cap.period.to_owned(),
        limit_usd: cap.limit_usd,
        spent_usd: cap.spent_usd,
        until: cap.until,
    })
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
