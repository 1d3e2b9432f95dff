//! What a run tells the person who started it while it works: notes (resuming, routing,
//! what was left out), the start of each stage with its size, and progress after every unit
//! of work (a sample, a question) with the judge's counters. This crate never prints: the
//! binary renders events (a bar on a terminal, plain lines with `--progress`, nothing with
//! `-q`); bindings forward them.

use rageval_judge::{Judge, Models};

/// One thing a run has to say.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A line for the person running the command.
    Note(String),
    /// A stage starts: its name and how many units it has, when known.
    Stage {
        name: &'static str,
        total: Option<u64>,
    },
    /// Progress within the current stage.
    Progress(Progress),
    /// The current stage is over (finished or stopped).
    StageEnd,
}

/// Where a stage stands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Progress {
    /// The stage (`scoring`, `ranking`, `references`, `judging`, …).
    pub stage: &'static str,
    /// Units done in this session (skipped ones, already in the journal, not counted).
    pub done: u64,
    /// Units this session set out to do, when known.
    pub total: Option<u64>,
    /// Units (or cells) that failed.
    pub failed: u64,
    /// Model calls answered so far in this session (cache hits not counted).
    pub calls: u64,
    /// Answers taken from the cache.
    pub cache_hits: u64,
    /// Model call attempts that failed (retried or not).
    pub failed_calls: u64,
    /// Answers the judge got that the answer cache failed to store.
    pub cache_write_errors: u64,
}

impl Progress {
    /// Progress of `stage` with the counters of `judge` (none for the heuristic judge).
    pub fn of(stage: &'static str, judge: Option<&Judge<Models>>) -> Self {
        let mut progress = Progress {
            stage,
            ..Progress::default()
        };
        if let Some(judge) = judge {
            let stats = judge.stats();
            progress.calls = judge.usage().templates.values().map(|t| t.calls).sum();
            progress.cache_hits = stats.cache_hits;
            progress.failed_calls = stats.failed_attempts;
            progress.cache_write_errors = stats.cache_write_errors;
        }
        progress
    }
}

/// Receives a run's events. Called from the run's threads: keep it quick.
pub trait Observer: Sync {
    fn event(&self, event: &Event);

    /// A note.
    fn note(&self, text: String) {
        self.event(&Event::Note(text));
    }
}

/// An observer that drops everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl Observer for Silent {
    fn event(&self, _: &Event) {}
}

/// An observer that keeps every event, for tests.
#[derive(Debug, Default)]
pub struct Recorded {
    events: std::sync::Mutex<Vec<Event>>,
}

impl Recorded {
    /// The events so far.
    pub fn events(&self) -> Vec<Event> {
        self.events
            .lock()
            .map(|events| events.clone())
            .unwrap_or_default()
    }

    /// The notes so far.
    pub fn notes(&self) -> Vec<String> {
        self.events()
            .into_iter()
            .filter_map(|event| match event {
                Event::Note(text) => Some(text),
                _ => None,
            })
            .collect()
    }
}

impl Observer for Recorded {
    fn event(&self, event: &Event) {
        if let Ok(mut events) = self.events.lock() {
            events.push(event.clone());
        }
    }
}
