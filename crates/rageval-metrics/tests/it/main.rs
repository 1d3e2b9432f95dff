//! Integration tests of rageval-metrics: the judged metrics over a scripted mock judge
//! (rageval-testkit), reproducing the seeds' worked numbers, call economy, and outcomes when
//! the judge fails.

mod economy;
mod failures;
mod golden;
mod ragas_modes;
mod support;
