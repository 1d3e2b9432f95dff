//! The one error type of this crate. Judge calls that fail inside a ranking are recorded in
//! its output, not raised; these are the failures that leave no usable result.

use crate::judges::CallError;

/// Why a ranking or a reference answer could not be produced.
#[derive(Debug, thiserror::Error)]
pub enum RankError {
    /// A setting has a value the algorithm cannot run with.
    #[error("setting {name} = {value}: {reason}")]
    InvalidSetting {
        /// The setting's name.
        name: &'static str,
        /// The value given.
        value: String,
        /// What it must be.
        reason: &'static str,
    },

    /// Even a prompt with the question and a single character of context is over the window.
    #[error(
        "the prompt window of {max_prompt_tokens} tokens cannot hold the question and any context: one character already needs {needed}"
    )]
    WindowTooSmall {
        /// The window.
        max_prompt_tokens: usize,
        /// Tokens of the smallest possible prompt.
        needed: usize,
    },

    /// No two of the remaining answers fit one merge prompt, so merging cannot go on.
    #[error(
        "{answers} partial answers are left and no two of them fit one merge prompt of {max_prompt_tokens} tokens"
    )]
    AnswersTooLong {
        /// The window.
        max_prompt_tokens: usize,
        /// How many answers were left.
        answers: usize,
    },

    /// A merge call failed; the reference would silently lack what it was merging.
    #[error("merge call in merge round {round} failed")]
    MergeFailed {
        /// 1-based merge round.
        round: u32,
        /// The judge's error.
        #[source]
        source: CallError,
    },
}

/// `Ok` when `value` is at least 1, else the setting named `name` is invalid.
pub(crate) fn require_positive(name: &'static str, value: usize) -> Result<(), RankError> {
    if value == 0 {
        return Err(RankError::InvalidSetting {
            name,
            value: value.to_string(),
            reason: "must be at least 1",
        });
    }
    Ok(())
}
