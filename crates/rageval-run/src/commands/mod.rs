//! The command half: one module per judged command, each on the engine.

pub mod calibrate;
pub mod eval;
pub mod judge_check;
pub mod merge;
pub mod pipeline;
pub mod rank;
pub mod reference;
pub mod testset;
