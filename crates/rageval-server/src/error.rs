//! Errors of the server: starting it, and answering a request. Each request error knows its
//! HTTP status; pages show it as HTML and the API as JSON (`{"error": "…"}`).

use std::net::SocketAddr;
use std::path::PathBuf;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use rageval_report::ReportError;

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("{path} is not a directory of runs")]
    NotADirectory {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "refusing to serve on {addr} without a token: anyone who can reach it could read every run (pass --token or set {env}, or bind 127.0.0.1)",
        env = crate::ENV_SERVE_TOKEN
    )]
    TokenRequired { addr: SocketAddr },
    #[error("the token is empty")]
    EmptyToken,
    #[error(
        "the token may hold only visible ASCII without quotes, commas, semicolons or backslashes"
    )]
    BadToken,
    #[error(
        "cannot resolve `{spec}` to an address to listen on (hint: give HOST:PORT, e.g. 127.0.0.1:8321 or localhost:8321)"
    )]
    Resolve {
        spec: String,
        #[source]
        source: std::io::Error,
    },
    #[error("`{spec}` resolves to no address")]
    NoAddress { spec: String },
    #[error("cannot listen on {addr}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("the server stopped")]
    Serve(#[source] std::io::Error),
    #[error(
        "`{name}` is not a run name (a run is one directory directly inside the runs directory)"
    )]
    BadRunName { name: String },
    #[error("no run named `{name}`")]
    NoSuchRun { name: String },
    #[error("no page at {path}")]
    NoSuchPage { path: String },
    #[error("bad query parameter `{parameter}={value}`: {why}")]
    BadQuery {
        parameter: String,
        value: String,
        why: String,
    },
    #[error(
        "this comparison would draw {work} samples (resamples and permutations, times the samples each draws, over {pairs} pair(s) and {metrics} metric(s)), past the budget of one request, {budget}; ask for at most {fits} resamples and permutations together, compare fewer runs, or run `rageval compare` on the command line"
    )]
    CompareTooBig {
        work: u64,
        budget: u64,
        pairs: usize,
        metrics: usize,
        /// The most resamples + permutations that fit the budget.
        fits: u64,
    },
    #[error(
        "the server is reading for {at_once} requests already: ask again in a moment (Retry-After)"
    )]
    Busy { at_once: usize },
    #[error(transparent)]
    Report(#[from] ReportError),
    #[error("a request handler stopped: {0}")]
    Internal(String),
}

impl ServerError {
    /// The HTTP status a request that ends in this error gets.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::BadRunName { .. } | Self::BadQuery { .. } | Self::CompareTooBig { .. } => {
                StatusCode::BAD_REQUEST
            }
            Self::NoSuchRun { .. } | Self::NoSuchPage { .. } => StatusCode::NOT_FOUND,
            Self::Busy { .. } => StatusCode::SERVICE_UNAVAILABLE,
            Self::Report(error) => match error {
                ReportError::NotARun { .. } | ReportError::OutsideRoot { .. } => {
                    StatusCode::NOT_FOUND
                }
                ReportError::Incomplete { .. } | ReportError::StageRun { .. } => {
                    StatusCode::CONFLICT
                }
                ReportError::QuestionsDiffer { .. }
                | ReportError::NoCommonQuestions { .. }
                | ReportError::TooFewRuns { .. } => StatusCode::BAD_REQUEST,
                _ => StatusCode::INTERNAL_SERVER_ERROR,
            },
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// `response` as the answer to this error: its status, and `Retry-After` when asking
    /// again later helps.
    pub(crate) fn answer(&self, mut response: Response) -> Response {
        *response.status_mut() = self.status();
        if let Self::Busy { .. } = self {
            response.headers_mut().insert(
                header::RETRY_AFTER,
                HeaderValue::from(crate::limits::RETRY_AFTER_SECONDS),
            );
        }
        response
    }

    pub(crate) fn bad_query(parameter: &str, value: &str, why: impl Into<String>) -> Self {
        Self::BadQuery {
            parameter: parameter.into(),
            value: value.into(),
            why: why.into(),
        }
    }
}
