//! A run of rageval: every judged command — `eval`, `judge-check`, `rank`, `reference`,
//! `pipeline`, `testset` — runs, stops, resumes, shows progress and fails the same way
//! because it runs here. (`collect --generator baseline` only takes its judge from here,
//! [`engine::judges::resolve`]; its questions go through `rageval-sources`' own loop.)
//!
//! The crate is two halves, each a folder, and a test keeps them apart (`tests/it/walls.rs`:
//! no engine file names the commands, and this file re-exports nothing from them):
//!
//! - [`engine`]: what every command runs on — who judges ([`JudgeOptions`] →
//!   [`JudgeSetup`]) and why a run stops ([`Stop`]), the run's typed identity
//!   ([`RunIdentity`]), resuming, the sessions' accounts, the session shell and the one way
//!   every session ends, the one loop and the question loop on it, scoring, `--dry-run`
//!   plans ([`Estimate`]), batch passes, shards, results, reports, and the [`Event`]s a
//!   caller shows.
//! - [`commands`]: one module per command on that engine (`eval`, `judge_check`, `rank`,
//!   `reference`, `pipeline`, `testset`, `calibrate`, `merge`), each with its plan beside it.
//!
//! Its neighbours: `rageval-core` reads and normalises the data and holds the statistics,
//! `rageval-metrics` computes the scores, `rageval-tasks` routes typed tasks to a judge,
//! `rageval-judge` makes every model call, `rageval-rank` ranks contexts and writes
//! reference answers, and `rageval-report` owns the run directory's files and the reports.
//! The binary (`rageval`) and the Python package (`rageval-py`) are the fronts.
//!
//! Rules every command keeps: a judge that fails is never a finding (cells or questions it
//! did not answer are held back, not recorded); every judged path can be dry-run, capped,
//! cancelled and resumed; a stopped run's directory says it is unfinished, and a failed one
//! keeps what a judge was paid for. This crate never prints and never exits: it returns
//! [`Ended`] or a [`RunError`] and emits [`Event`]s; the fronts choose the words' place and
//! the exit codes.

pub mod commands;
pub mod engine;

pub use engine::ended::{Ended, Stopped};
pub use engine::error::RunError;
pub use engine::identity::{JudgeIdentity, RunIdentity};
pub use engine::judges::{JudgeOptions, JudgeSetup, LocalJudge, Stop};
pub use engine::observe::{Event, Observer, Progress};
pub use engine::plan::Estimate;
