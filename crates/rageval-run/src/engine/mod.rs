//! The engine half: what every judged command runs on.

pub mod batch;
pub mod budget;
pub mod cells;
pub mod ended;
pub mod error;
pub mod forecast;
pub mod identity;
pub mod judges;
pub mod observe;
pub mod plan;
pub mod questions;
pub mod reports;
pub mod results;
pub mod resume;
pub mod rubrics;
pub mod score;
pub mod session;
pub mod shard;
pub(crate) mod shell;
pub mod units;
pub mod words;
