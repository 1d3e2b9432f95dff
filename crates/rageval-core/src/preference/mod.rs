//! Preferences between versions, judged head to head: the statistics `pairwise` reports and
//! `compare` and its gate read, beside the paired statistics of [`crate::stats`].
//!
//! - [`head_to_head`]: the rule that joins a question's two verdicts (one per seat order)
//!   into one result, and [`HeadToHead`], the figures of one pair of versions — win rate
//!   with its bootstrap interval, sign test, position bias, length bias.
//! - [`logistic`]: a one-covariate logistic fit by Newton's method (the win rate with
//!   length held equal).
//! - [`bradley_terry`]: Bradley–Terry strengths from pairwise games and their bootstrap
//!   intervals (`rank` orders contexts by them, `pairwise` more than two versions).
//!
//! Pure functions over numbers: no model, no file.

pub mod bradley_terry;
pub mod head_to_head;
pub mod logistic;

pub use head_to_head::{
    BothOrders, Duel, HeadToHead, HeldEqual, JudgedQuestion, LengthBias, LengthSplit, PositionBias,
    PreferenceReading, Resampling, Seat, sign_test_p_value,
};
