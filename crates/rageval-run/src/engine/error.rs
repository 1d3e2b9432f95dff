//! The crate's one error type. Every variant names what it is about (a path, a line, a
//! sample id); causes stay in `#[source]`, so the binary prints the chain and picks hints.

use std::path::PathBuf;

/// What stops a run with an error (bad input, settings that cannot work, a file that cannot
/// be written). A judge that fails is not one of these: runs end with [`crate::Ended`].
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A file could not be read.
    #[error("cannot read {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A file could not be written.
    #[error("cannot write {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A journal line could not be read back: the run directory is damaged.
    #[error(
        "{}:{line}: not a journal line; the run directory is damaged (pass --overwrite to start \
         over)",
        path.display()
    )]
    Journal {
        path: PathBuf,
        line: usize,
        #[source]
        source: serde_json::Error,
    },

    /// A journal line that parses but no run of this identity wrote: a score outside its
    /// metric's range or not finite, a metric the run does not have, a sample its data does
    /// not hold (an edit, a damaged disk).
    #[error("{}:{line}: {why}", path.display())]
    JournalValue {
        path: PathBuf,
        line: usize,
        why: String,
    },

    /// `manifest.json` is not a run manifest.
    #[error("{} is not a run manifest", path.display())]
    Manifest {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },

    /// The run directory holds another run.
    #[error(transparent)]
    ResumeRefused(#[from] crate::engine::resume::ResumeRefused),

    /// A labels file is wrong: `file:line: field: what`.
    #[error("{0}")]
    Labels(String),

    /// Settings that cannot work together (a gate on a metric not run, a judge that cannot
    /// answer what is asked); the message says what to change.
    #[error("{0}")]
    Usage(String),

    /// A command needs a model that writes (answers, merges) and none is configured.
    #[error("{what} needs a judge model that writes text, and none is configured")]
    NoWritingModel { what: String },

    /// Two samples of a dataset share an id.
    #[error("two samples have the id `{0}`")]
    DuplicateId(String),

    /// The dataset could not be read.
    #[error(transparent)]
    Dataset(#[from] rageval_core::dataset::DatasetError),

    /// A run directory could not be written or read.
    #[error(transparent)]
    Report(#[from] rageval_report::ReportError),

    /// A metric name or its settings are wrong.
    #[error(transparent)]
    Metric(#[from] rageval_metrics::MetricError),

    /// A rubric file cannot be read or holds a table that is not a rubric
    /// (`file:line: field: what`).
    #[error(transparent)]
    Rubric(rageval_metrics::RubricError),

    /// A ranking or reference setting cannot work.
    #[error(transparent)]
    Rank(#[from] rageval_rank::RankError),

    /// The judge could not be built from its settings.
    #[error("cannot build the judge")]
    Judge(#[source] rageval_judge::JudgeError),

    /// The judge settings could not be resolved.
    #[error("cannot resolve the judge settings")]
    JudgeSettings(#[source] rageval_judge::JudgeError),

    /// The embedded models could not be used.
    #[error("cannot use the embedded models")]
    Models(#[source] rageval_judge::JudgeError),

    /// The checker model (`--judge checker:DIR`) could not be used.
    #[error("cannot use the checker model")]
    Checker(#[source] rageval_judge::JudgeError),

    /// A batch job or a batch file could not be sent, polled, downloaded or read; the jobs
    /// already started are journaled, so running the same command again resumes them.
    #[error("{what}")]
    Batch {
        what: String,
        #[source]
        source: Box<rageval_judge::JudgeError>,
    },

    /// Run directories that cannot be merged into one run; the message says why.
    #[error(transparent)]
    MergeRefused(#[from] MergeRefused),

    /// A shared labelled set could not be read.
    #[error(transparent)]
    Task(#[from] rageval_tasks::TaskError),

    /// The async runtime could not start.
    #[error("cannot start the async runtime")]
    Runtime(#[source] std::io::Error),

    /// A value could not be written as JSON.
    #[error("cannot encode {what} as JSON")]
    Encode {
        what: &'static str,
        #[source]
        source: serde_json::Error,
    },
}

impl RunError {
    /// A [`RunError::Read`] of `path`.
    pub fn read(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> RunError {
        let path = path.into();
        move |source| RunError::Read { path, source }
    }

    /// A [`RunError::Write`] of `path`.
    pub fn write(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> RunError {
        let path = path.into();
        move |source| RunError::Write { path, source }
    }

    /// A [`RunError::Encode`] of `what`.
    pub fn encode(what: &'static str) -> impl FnOnce(serde_json::Error) -> RunError {
        move |source| RunError::Encode { what, source }
    }
}

/// An error and its causes on one line, `error: cause: cause`.
pub(crate) fn chain_text(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

/// This crate's result.
pub type Result<T, E = RunError> = std::result::Result<T, E>;

/// Run directories that cannot be merged into one run (`merge`'s refusal; here so the
/// engine's error names no command module).
#[derive(Debug, thiserror::Error)]
#[error("cannot merge: {why}")]
pub struct MergeRefused {
    pub why: String,
}
