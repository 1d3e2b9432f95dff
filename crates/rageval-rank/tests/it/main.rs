//! Integration tests of rageval-rank: rankings with scripted and simulated judges, the
//! retriever-versus-judge measures, and reference planning under a small window.

mod agreement;
mod listwise;
mod ranking;
mod reference;
mod scripted;
mod simulation;
