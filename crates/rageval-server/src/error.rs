//! Errors of the server: starting it, and answering a request. Each request error knows its
//! HTTP status; pages show it as HTML and the API as JSON (`{"error": "…"}`).

use std::net::SocketAddr;
use std::path::PathBuf;

use axum::http::StatusCode;
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
    #[error(transparent)]
    Report(#[from] ReportError),
    #[error("a request handler stopped: {0}")]
    Internal(String),
}

impl ServerError {
    /// The HTTP status a request that ends in this error gets.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::BadRunName { .. } | Self::BadQuery { .. } => StatusCode::BAD_REQUEST,
            Self::NoSuchRun { .. } | Self::NoSuchPage { .. } => StatusCode::NOT_FOUND,
            Self::Report(error) => match error {
                ReportError::NotARun { .. } => StatusCode::NOT_FOUND,
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

    pub(crate) fn bad_query(parameter: &str, value: &str, why: impl Into<String>) -> Self {
        Self::BadQuery {
            parameter: parameter.into(),
            value: value.into(),
            why: why.into(),
        }
    }
}
