//! The crate's one error type. A metric turns any of these into `Outcome::Failed` with the
//! message; none of them is a panic or a NaN.

use rageval_judge::JudgeError;

use crate::task::TaskKind;

/// Why a task got no answer.
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    /// Nothing configured can answer this task (no chat model for a generation task, no
    /// heuristic and no chat model for a verdict task).
    #[error("{task}: no judge can answer it: {why}")]
    Unavailable {
        /// The task.
        task: TaskKind,
        /// What is missing.
        why: String,
    },

    /// The judge pipeline gave no usable answer: transport errors after retries, an offline
    /// cache miss, or an answer that never matched the schema (its raw text is kept, see
    /// [`TaskError::raw_answer`]).
    #[error("{task}: {source}")]
    Judge {
        /// The task.
        task: TaskKind,
        /// The pipeline's error.
        #[source]
        source: JudgeError,
    },

    /// The input cannot be judged (e.g. nothing to merge).
    #[error("{task}: {why}")]
    Input {
        /// The task.
        task: TaskKind,
        /// What is wrong with the input.
        why: String,
    },

    /// A labelled data file could not be read (validation sets).
    #[error("{file}:{line}: {why}")]
    Data {
        /// The file.
        file: String,
        /// The 1-based line (0 for the whole file).
        line: usize,
        /// What is wrong.
        why: String,
    },

    /// A bundled prompt template is malformed (a bug caught by the crate's tests).
    #[error("prompt template {file}: {why}")]
    Template {
        /// The template file.
        file: String,
        /// What is wrong.
        why: String,
    },
}

impl TaskError {
    /// The model's last raw answer, when the error is an answer that never matched its
    /// schema.
    pub fn raw_answer(&self) -> Option<&str> {
        match self {
            TaskError::Judge {
                source: JudgeError::Unparsed { raw, .. },
                ..
            } => Some(raw),
            _ => None,
        }
    }

    /// Whether the prompt did not fit the chat model's context window: asking again with
    /// less material (fewer contexts) may succeed.
    pub fn is_prompt_too_long(&self) -> bool {
        matches!(
            self,
            TaskError::Judge {
                source: JudgeError::PromptTooLong { .. },
                ..
            }
        )
    }

    /// The task that failed, when the error concerns one.
    pub fn task(&self) -> Option<TaskKind> {
        match self {
            TaskError::Unavailable { task, .. }
            | TaskError::Judge { task, .. }
            | TaskError::Input { task, .. } => Some(*task),
            TaskError::Template { .. } | TaskError::Data { .. } => None,
        }
    }
}
