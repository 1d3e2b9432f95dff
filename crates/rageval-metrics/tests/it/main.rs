//! Integration tests of rageval-metrics: the judged metrics over a scripted mock judge
//! (rageval-testkit), reproducing the seeds' worked numbers, call economy, and outcomes when
//! the judge fails; graded support with the chat judge and the heuristic judge.

mod abstention_citation;
mod conversation;
mod economy;
mod failures;
mod golden;
mod graded;
mod ragas_modes;
mod resolved_question;
mod retention;
mod support;
mod tool_arguments;
