//! The one error type of `rageval-sources`, and which of its cases are worth retrying.
//!
//! Variants carry what a person needs to fix the problem: the file and position of a bad
//! template, the endpoint (as [`display_endpoint`](rageval_judge::settings::display_endpoint)
//! prints it: no user info, no query string) and status of a failed call, the index that does
//! not exist. Never a password, an API key or a header value.

use std::path::PathBuf;
use std::time::Duration;

/// Everything that can go wrong while fetching contexts and answers or building an index.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// A settings file or value is unusable.
    #[error("{origin}: {detail}")]
    Config {
        /// The file (and key) the value came from.
        origin: String,
        /// What is wrong with it.
        detail: String,
    },

    /// A template is not valid JSON or has a malformed placeholder.
    #[error("{origin}:{line}:{column}: {detail}")]
    Template {
        /// Template file, or the settings key holding an inline template.
        origin: String,
        /// 1-based line in the template.
        line: usize,
        /// 1-based column (in characters) in the template.
        column: usize,
        /// What is wrong.
        detail: String,
    },

    /// A placeholder has no value for one question.
    #[error(
        "{origin}:{line}:{column}: placeholder `{{{{{name}}}}}` has no value for question {question} (known: {known})"
    )]
    MissingVariable {
        /// Template file or settings key.
        origin: String,
        /// 1-based line of the placeholder's first use.
        line: usize,
        /// 1-based column of the placeholder's first use.
        column: usize,
        /// The placeholder's name.
        name: String,
        /// The question's id.
        question: String,
        /// The names that do have values, comma-separated.
        known: String,
    },

    /// Reading or writing a file failed (the cause says how).
    #[error("{}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },

    /// The HTTP client could not be built.
    #[error("cannot build http client for {endpoint}")]
    Client {
        /// Endpoint, redacted.
        endpoint: String,
        /// Why.
        #[source]
        source: reqwest::Error,
    },

    /// The connection failed, was refused or was reset.
    #[error("connection to {endpoint} failed")]
    Transport {
        /// Endpoint, redacted.
        endpoint: String,
        /// The transport error, with its URL removed.
        #[source]
        source: reqwest::Error,
    },

    /// One request took longer than its timeout (the body included).
    #[error("request to {endpoint} timed out after {}s", timeout.as_secs_f64())]
    Timeout {
        /// Endpoint, redacted.
        endpoint: String,
        /// The per-request timeout that expired.
        timeout: Duration,
    },

    /// The server rejected the credentials (401) or their rights (403).
    #[error("{endpoint} refused the credentials (http {status}): {reason}")]
    Unauthorized {
        /// Endpoint, redacted.
        endpoint: String,
        /// 401 or 403.
        status: u16,
        /// The server's reason, shortened, secrets redacted.
        reason: String,
    },

    /// Elasticsearch has no index (or alias) of this name.
    #[error("{endpoint} has no index `{index}`")]
    MissingIndex {
        /// Endpoint, redacted.
        endpoint: String,
        /// The index asked for.
        index: String,
    },

    /// Any other non-success status.
    #[error("{endpoint} answered http {status}: {first_line}")]
    Status {
        /// Endpoint, redacted.
        endpoint: String,
        /// HTTP status code.
        status: u16,
        /// First line of the body (or Elasticsearch's error reason), shortened, redacted.
        first_line: String,
        /// The server's `Retry-After`, if it sent one.
        retry_after: Option<Duration>,
    },

    /// A success status whose body is not what the settings say it is.
    #[error("unexpected response from {endpoint}: {detail}")]
    Response {
        /// Endpoint, redacted.
        endpoint: String,
        /// What was wrong.
        detail: String,
    },

    /// Hits of a search lack the field the settings name as the chunk text.
    #[error(
        "hit `{hit}` from {endpoint} has no text field `{field}` in its _source (its fields: {fields})"
    )]
    MissingTextField {
        /// Endpoint, redacted.
        endpoint: String,
        /// The hit's `_id`.
        hit: String,
        /// The configured text field.
        field: String,
        /// The `_source` fields the hit has, comma-separated (`none` when it has none).
        fields: String,
    },

    /// The service answered with an empty answer every time it was asked.
    #[error("{endpoint} gave an empty answer {attempts} times")]
    EmptyAnswer {
        /// Endpoint, redacted.
        endpoint: String,
        /// Empty answers received.
        attempts: u32,
        /// Requests made, the retries after failed requests included.
        requests: u32,
    },

    /// The retriever found nothing for a question (an error only when `collect` is told to
    /// fail on empty results).
    #[error("{retriever} returned no contexts")]
    NoContexts {
        /// The retriever, as it describes itself.
        retriever: String,
    },

    /// A trace or experiment server (Phoenix, MLflow, a collector) failed in a way whose fix
    /// is known: nothing answers, the key is refused, the project does not exist.
    #[error("{what}")]
    Server {
        /// Which kind of server (`Phoenix`, `MLflow`).
        server: &'static str,
        /// What could not be done, naming the server's URL (redacted) and what was asked.
        what: String,
        /// How to fix it.
        hint: String,
        /// The request's own error.
        #[source]
        source: Box<SourceError>,
    },

    /// Every retry failed; the cause is the final attempt's error.
    #[error("gave up after {attempts} attempts")]
    RetriesExhausted {
        /// Attempts made.
        attempts: u32,
        /// The last attempt's error.
        #[source]
        last: Box<SourceError>,
    },

    /// A document could not be read into text.
    #[error("{}: {detail}", path.display())]
    Document {
        /// The document.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
    },

    /// The local index could not be built, opened or searched.
    #[error("index {}: {detail}", path.display())]
    Index {
        /// The index directory.
        path: PathBuf,
        /// What went wrong.
        detail: String,
    },

    /// An index or output is already where a new one would be written.
    #[error("{} already exists", path.display())]
    Exists {
        /// The path in the way.
        path: PathBuf,
    },

    /// The output of an earlier `collect` run has a line that is not a record.
    #[error("{}:{line}: {detail}", path.display())]
    Output {
        /// The output file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong with it.
        detail: String,
    },

    /// The embedding model failed.
    #[error("embedding failed")]
    Embedding(#[source] rageval_judge::JudgeError),

    /// The chat model behind a generator gave no usable answer (or none is configured).
    #[error("answering from the contexts failed")]
    Answer(#[source] rageval_tasks::TaskError),

    /// The questions file could not be read.
    #[error(transparent)]
    Dataset(#[from] rageval_core::dataset::DatasetError),
}

impl SourceError {
    /// Whether trying the same request again may succeed: timeouts, connection failures, 429
    /// and 5xx. Never a 4xx, an authentication failure or a bad template.
    pub fn is_retryable(&self) -> bool {
        match self {
            SourceError::Timeout { .. } | SourceError::Transport { .. } => true,
            SourceError::Status { status, .. } => *status == 429 || (500..600).contains(status),
            _ => false,
        }
    }

    /// Whether the error will recur for every question, so collecting should stop: bad
    /// credentials, a missing index, bad settings or templates, a placeholder without a
    /// value, hits without the configured text field, a server that cannot be connected to
    /// (after the retries), an unreadable file.
    pub fn is_fatal(&self) -> bool {
        match self {
            SourceError::Config { .. }
            | SourceError::Template { .. }
            | SourceError::MissingVariable { .. }
            | SourceError::MissingTextField { .. }
            | SourceError::Io { .. }
            | SourceError::Client { .. }
            | SourceError::Unauthorized { .. }
            | SourceError::MissingIndex { .. }
            | SourceError::Index { .. }
            | SourceError::Exists { .. }
            | SourceError::Output { .. }
            | SourceError::Dataset(_) => true,
            SourceError::Transport { source, .. } => source.is_connect(),
            SourceError::RetriesExhausted { last, .. } => last.is_fatal(),
            SourceError::Server { .. } => true,
            SourceError::Answer(error) => answer_is_fatal(error),
            _ => false,
        }
    }

    /// The judge's stop behind this error (a cap reached, a judge halted, a cancel), when it
    /// is one: the run ends resumably, not as bad input.
    pub fn judge_stop(&self) -> Option<&rageval_judge::JudgeError> {
        match self {
            SourceError::Answer(rageval_tasks::TaskError::Judge { source, .. })
                if source.is_stop() =>
            {
                Some(source)
            }
            SourceError::RetriesExhausted { last, .. } => last.judge_stop(),
            _ => None,
        }
    }

    /// How to fix an error whose fix is known, for the binary to print as a `hint:`.
    pub fn hint(&self) -> Option<String> {
        match self {
            SourceError::MissingTextField { fields, .. } => Some(format!(
                "set [elasticsearch] text_field to the _source field that holds the chunk text \
                 (dotted for nested fields; this hit has: {fields})"
            )),
            SourceError::Transport { endpoint, source } if source.is_connect() => Some(format!(
                "nothing answers at {endpoint}: start the server, or fix the url \
                 ([elasticsearch] url or {}, [service] url)",
                crate::config::ENV_ES_URL
            )),
            SourceError::NoContexts { .. } => Some(
                "check the query template's filters (a collection or index name that matches \
                 nothing gives no hits)"
                    .into(),
            ),
            SourceError::RetriesExhausted { last, .. } => last.hint(),
            SourceError::Server { hint, .. } => Some(hint.clone()),
            _ => None,
        }
    }

    /// The server's `Retry-After`, when it sent one.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            SourceError::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// The error of a file operation on `path`.
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        SourceError::Io {
            path: path.into(),
            source,
        }
    }
}
/// Whether a chat model's failure will recur for every question: no model configured, a
/// cap reached, bad settings, or an endpoint that refuses the credentials or the model.
fn answer_is_fatal(error: &rageval_tasks::TaskError) -> bool {
    use rageval_judge::JudgeError;
    match error {
        rageval_tasks::TaskError::Unavailable { .. } => true,
        rageval_tasks::TaskError::Judge { source, .. } => {
            source.is_stop()
                || matches!(
                    source,
                    JudgeError::Settings(_)
                        | JudgeError::Client { .. }
                        | JudgeError::Config { .. }
                        | JudgeError::Status {
                            status: 401 | 403 | 404,
                            ..
                        }
                )
        }
        _ => false,
    }
}
