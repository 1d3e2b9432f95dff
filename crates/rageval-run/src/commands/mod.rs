//! The command half: one module per judged command, each on the engine, each with its
//! dry-run plan beside it. Commands may use each other (`pipeline` runs `rank`,
//! `reference` and `eval`); the engine never uses them.
//!
//! - [`eval`]: a dataset scored with every metric into a run directory that resumes.
//! - [`judge_check`]: the judge run through one metric on human labels, and its agreement.
//! - [`rank`]: each question's contexts ordered by the judge against the retriever's order.
//! - [`reference`](mod@reference): a reference answer per question from its contexts.
//! - [`pipeline`]: rank, reference and eval as three runs under one folder.
//! - [`testset`]: a question set written from a team's chunks, gated item by item.
//! - [`calibrate`]: human labels on some samples and the judge's scores on all turned into
//!   a calibrated mean (PPI++) with its interval.
//! - [`pairwise`]: versions' answers judged head to head, both seat orders, with win
//!   rates, position and length bias.
//! - [`confirm`]: `compare --gate --confirm K` — the cells that drove a regression judged
//!   again K times by `eval` without the cache, and their medians.
//! - [`merge`]: the shards of a sharded `eval` joined into one run.
//! - [`watch`]: `eval --watch` — a growing source polled into one rolling run: new samples
//!   sampled by id, scored by `eval`, cost caps per hour and day, alerts when a metric's
//!   latest window drops below its baseline.

pub mod calibrate;
pub mod confirm;
pub mod eval;
pub mod judge_check;
pub mod merge;
pub mod pairwise;
pub mod pipeline;
pub mod rank;
pub mod reference;
pub mod testset;
pub mod watch;
