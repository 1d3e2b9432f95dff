//! A running Arize Phoenix server as a dataset source: the traces of one project, in a time
//! window, optionally filtered, read through Phoenix's REST API and written as the span
//! export `rageval-core`'s OpenInference reader already reads (one Phoenix REST span per
//! line), so a trace read live becomes exactly the sample it would be from an exported file.
//!
//! How: the project's root spans (`parent_id=null`) in the window, matching every
//! `key:value` attribute filter, page by page (`next_cursor`); their trace ids, kept when the
//! consistent sample ([`SampleRate`]) holds them; then every span of those traces, a few
//! traces per request. The window and the filters choose traces by their root span; a trace
//! is always read whole. Spans are written in a fixed order (traces by their root's start,
//! spans by start time and id), so the same traces give the same bytes and a rerun resumes.
//!
//! Errors say which server, and how to fix it ([`SourceError::Server`]): nothing answers,
//! the API key is refused, the project does not exist (the projects there are listed).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use rageval_core::sampling::SampleRate;
use rageval_judge::{ApiKey, RetryPolicy};
use serde_json::Value;

use crate::error::SourceError;
use crate::rest::{RestAuth, RestClient};

/// Phoenix's own variable for its API key (as its Python client reads it).
pub const ENV_PHOENIX_API_KEY: &str = "PHOENIX_API_KEY";

/// The scheme of a Phoenix location given as a dataset: `phoenix://HOST:PORT/PROJECT` (http),
/// `phoenix+https://HOST/PROJECT` (https).
pub const SCHEME: &str = "phoenix://";
/// The https form of [`SCHEME`].
pub const SCHEME_HTTPS: &str = "phoenix+https://";

/// The file in a run directory that holds the spans read (the run's dataset).
pub const SPANS_FILE: &str = "phoenix-spans.jsonl";
/// The file in a run directory that says where its traces came from ([`SourceRecord`]).
pub const SOURCE_FILE: &str = "phoenix-source.json";

/// Spans per page (Phoenix allows up to 1000).
const PAGE_SIZE: usize = 1000;
/// Trace ids per request for the spans of the chosen traces (keeps URLs short).
const TRACES_PER_REQUEST: usize = 50;

/// Where the traces are: a server and a project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhoenixLocation {
    /// `http://HOST:PORT` (or https), without a trailing slash.
    pub url: String,
    /// The project's name (or id).
    pub project: String,
}

impl PhoenixLocation {
    /// Whether `text` names a Phoenix location rather than a file.
    pub fn is_location(text: &str) -> bool {
        text.starts_with(SCHEME) || text.starts_with(SCHEME_HTTPS)
    }

    /// `phoenix://HOST:PORT/PROJECT` or `phoenix+https://HOST[:PORT]/PROJECT`.
    pub fn parse(text: &str) -> Result<Self, SourceError> {
        let (scheme, rest) = if let Some(rest) = text.strip_prefix(SCHEME_HTTPS) {
            ("https", rest)
        } else if let Some(rest) = text.strip_prefix(SCHEME) {
            ("http", rest)
        } else {
            return Err(location_error(text));
        };
        let (host, project) = rest.split_once('/').ok_or_else(|| location_error(text))?;
        let project = project.trim_end_matches('/');
        if host.is_empty() || project.is_empty() || project.contains(['/', '?', '#']) {
            return Err(location_error(text));
        }
        Ok(PhoenixLocation {
            url: format!("{scheme}://{host}"),
            project: project.to_owned(),
        })
    }
}

fn location_error(text: &str) -> SourceError {
    SourceError::Config {
        origin: rageval_judge::settings::display_endpoint(text),
        detail: format!(
            "not a Phoenix location: expected {SCHEME}HOST:PORT/PROJECT (or {SCHEME_HTTPS}HOST/PROJECT)"
        ),
    }
}

/// Which traces to read.
#[derive(Debug, Clone)]
pub struct PhoenixQuery {
    pub location: PhoenixLocation,
    /// Phoenix's API key, when the server asks for one.
    pub api_key: Option<ApiKey>,
    /// Traces whose root span starts at or after this time (ISO 8601, with a zone).
    pub start: Option<String>,
    /// Traces whose root span starts before this time.
    pub end: Option<String>,
    /// `key:value` filters on the root span's attributes (Phoenix's syntax), all of which
    /// must hold.
    pub filters: Vec<String>,
    /// The consistent sample of trace ids to keep.
    pub sample: SampleRate,
}

impl PhoenixQuery {
    /// What a run directory records of the query (no key).
    pub fn record(&self) -> SourceRecord {
        SourceRecord {
            url: self.location.url.clone(),
            project: self.location.project.clone(),
            since: self.start.clone(),
            until: self.end.clone(),
            filters: self.filters.clone(),
            sample: self.sample.rate(),
        }
    }
}

/// Where a run's traces came from, kept beside it in [`SOURCE_FILE`]: the server the
/// scores are written back to, and the query a rolling run polls again.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SourceRecord {
    /// The server, redacted.
    pub url: String,
    pub project: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filters: Vec<String>,
    /// The share of traces sampled, in (0, 1].
    pub sample: f64,
}

impl SourceRecord {
    /// The record in the run directory `dir`, if it has one.
    pub fn read(dir: &Path) -> Option<SourceRecord> {
        let text = std::fs::read_to_string(dir.join(SOURCE_FILE)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Writes the record into the run directory `dir`.
    pub fn write(&self, dir: &Path) -> Result<(), SourceError> {
        let path = dir.join(SOURCE_FILE);
        let text = serde_json::to_string_pretty(self).unwrap_or_default();
        std::fs::create_dir_all(dir).map_err(|e| SourceError::io(dir, e))?;
        rageval_core::files::write_atomically(&path, text.as_bytes())
            .map_err(|e| SourceError::io(path, e))
    }
}

/// What one read found.
#[derive(Debug, Clone, Default)]
pub struct PhoenixSpans {
    /// Every span of the chosen traces, as Phoenix's REST API gives them, in the fixed order.
    pub spans: Vec<Value>,
    /// Traces in the window that matched the filters.
    pub traces_seen: usize,
    /// Of them, the ones the sample keeps (whose spans were read).
    pub traces_kept: usize,
}

impl PhoenixSpans {
    /// The spans as JSON Lines, the bytes a run's dataset file holds.
    pub fn to_jsonl(&self) -> String {
        let mut out = String::new();
        for span in &self.spans {
            out.push_str(&span.to_string());
            out.push('\n');
        }
        out
    }

    /// Writes the spans to `path` whole or not at all (a file that is already there with the
    /// same bytes is left untouched, so its time does not change).
    pub fn write(&self, path: &Path) -> Result<(), SourceError> {
        let bytes = self.to_jsonl();
        if std::fs::read(path).is_ok_and(|old| old == bytes.as_bytes()) {
            return Ok(());
        }
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| SourceError::io(parent, e))?;
        }
        rageval_core::files::write_atomically(path, bytes.as_bytes())
            .map_err(|e| SourceError::io(path, e))
    }
}

/// A client of one Phoenix server.
#[derive(Debug, Clone)]
pub struct PhoenixClient {
    rest: RestClient,
    url: String,
}

impl PhoenixClient {
    /// A client of the server at `url`, sending `api_key` as a bearer token.
    pub fn new(url: &str, api_key: Option<ApiKey>, timeout: Duration) -> Result<Self, SourceError> {
        let auth = api_key.map_or(RestAuth::None, RestAuth::Bearer);
        // Three tries: a server someone just named that does not answer should say so in
        // seconds, not after the judge's minute of back-off.
        let retry = RetryPolicy {
            max_attempts: 3,
            ..RetryPolicy::default()
        };
        let rest = RestClient::new(url, auth, timeout, retry)?;
        Ok(PhoenixClient {
            url: rest.endpoint().to_owned(),
            rest,
        })
    }

    /// The same client with another retry policy.
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.rest = self.rest.with_retry(retry);
        self
    }

    /// The REST client underneath (for writers of annotations).
    pub fn rest(&self) -> &RestClient {
        &self.rest
    }

    /// The server's URL as messages name it.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Reads the traces `query` chooses.
    pub async fn read(&self, query: &PhoenixQuery) -> Result<PhoenixSpans, SourceError> {
        let project = &query.location.project;
        let mut roots = Vec::new();
        let mut base: Vec<(&str, String)> = vec![
            ("parent_id", "null".into()),
            ("sort", "start_time".into()),
            ("order", "asc".into()),
        ];
        if let Some(start) = &query.start {
            base.push(("start_time", start.clone()));
        }
        if let Some(end) = &query.end {
            base.push(("end_time", end.clone()));
        }
        for filter in &query.filters {
            base.push(("attribute", filter.clone()));
        }
        if let Err(error) = self
            .each_page(project, &base, |span| roots.push(span))
            .await
        {
            return Err(self.explained(project, error).await);
        }
        let mut order: Vec<String> = Vec::new();
        for root in &roots {
            if let Some(trace) = trace_id(root) {
                if !order.contains(&trace) {
                    order.push(trace);
                }
            }
        }
        let traces_seen = order.len();
        order.retain(|trace| query.sample.holds(trace));
        let mut by_trace: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        for chunk in order.chunks(TRACES_PER_REQUEST) {
            let mut params: Vec<(&str, String)> =
                vec![("sort", "start_time".into()), ("order", "asc".into())];
            params.extend(chunk.iter().map(|trace| ("trace_id", trace.clone())));
            let read = self
                .each_page(project, &params, |span| {
                    if let Some(trace) = trace_id(&span) {
                        by_trace.entry(trace).or_default().push(span);
                    }
                })
                .await;
            if let Err(error) = read {
                return Err(self.explained(project, error).await);
            }
        }
        let mut spans = Vec::new();
        for trace in &order {
            let mut members = by_trace.remove(trace).unwrap_or_default();
            members.sort_by_key(span_key);
            spans.extend(members);
        }
        Ok(PhoenixSpans {
            spans,
            traces_seen,
            traces_kept: order.len(),
        })
    }

    /// Every span of the project's pages for `params`, handed to `take` in order.
    async fn each_page(
        &self,
        project: &str,
        params: &[(&str, String)],
        mut take: impl FnMut(Value),
    ) -> Result<(), SourceError> {
        let path = format!("v1/projects/{}/spans", encode_segment(project));
        let mut cursor: Option<String> = None;
        loop {
            let mut query = params.to_vec();
            query.push(("limit", PAGE_SIZE.to_string()));
            if let Some(cursor) = &cursor {
                query.push(("cursor", cursor.clone()));
            }
            let page = self.rest.get_json(&path, &query).await?;
            let Some(data) = page.get("data").and_then(Value::as_array) else {
                return Err(SourceError::Response {
                    endpoint: format!("{}/{path}", self.url),
                    detail: "no `data` list in the answer".into(),
                });
            };
            for span in data {
                take(span.clone());
            }
            match page.get("next_cursor").and_then(Value::as_str) {
                Some(next) if !next.is_empty() && !data.is_empty() => {
                    cursor = Some(next.to_owned())
                }
                _ => return Ok(()),
            }
        }
    }

    /// The project names on the server (for the hint of an unknown project); empty when
    /// they cannot be listed.
    pub async fn project_names(&self) -> Vec<String> {
        let Ok(page) = self
            .rest
            .get_json("v1/projects", &[("limit", "100".into())])
            .await
        else {
            return Vec::new();
        };
        page.get("data")
            .and_then(Value::as_array)
            .map(|projects| {
                projects
                    .iter()
                    .filter_map(|p| p.get("name").and_then(Value::as_str).map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// `error` with what it means at this server and how to fix it.
    async fn explained(&self, project: &str, error: SourceError) -> SourceError {
        let hint = match innermost(&error) {
            SourceError::Transport { source, .. } if source.is_connect() => format!(
                "nothing answers at {}: start Phoenix (`phoenix serve`), or fix the host and \
                 port of {SCHEME}HOST:PORT/{project}",
                self.url
            ),
            SourceError::Timeout { .. } => format!(
                "{} did not answer in time: check that it is Phoenix and that it is not overloaded",
                self.url
            ),
            SourceError::Unauthorized { .. } => format!(
                "this Phoenix asks for an API key: set {ENV_PHOENIX_API_KEY} (a system or user key \
                 from Phoenix's settings page)"
            ),
            SourceError::Status { status: 404, .. } => {
                let names = self.project_names().await;
                let known = if names.is_empty() {
                    "none could be listed".to_owned()
                } else {
                    names.join(", ")
                };
                return SourceError::Server {
                    server: "Phoenix",
                    what: format!("project `{project}` does not exist at {}", self.url),
                    hint: format!(
                        "the projects there: {known}; name one as {SCHEME}HOST:PORT/PROJECT"
                    ),
                    source: Box::new(error),
                };
            }
            _ => return error,
        };
        SourceError::Server {
            server: "Phoenix",
            what: format!(
                "cannot read the traces of project `{project}` at {}",
                self.url
            ),
            hint,
            source: Box::new(error),
        }
    }
}

/// The last error of a chain of retries.
fn innermost(error: &SourceError) -> &SourceError {
    match error {
        SourceError::RetriesExhausted { last, .. } => innermost(last),
        other => other,
    }
}

/// A REST span's trace id.
fn trace_id(span: &Value) -> Option<String> {
    span.pointer("/context/trace_id")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
        .map(str::to_owned)
}

/// Spans of a trace in start order, ties by span id.
fn span_key(span: &Value) -> (String, String) {
    let text = |pointer: &str| {
        span.pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    (text("/start_time"), text("/context/span_id"))
}

/// A project name as one URL path segment.
fn encode_segment(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_name_a_server_and_a_project() {
        assert_eq!(
            PhoenixLocation::parse("phoenix://127.0.0.1:6006/rag-prod").unwrap(),
            PhoenixLocation {
                url: "http://127.0.0.1:6006".into(),
                project: "rag-prod".into()
            }
        );
        assert_eq!(
            PhoenixLocation::parse("phoenix+https://px.example/p/")
                .unwrap()
                .url,
            "https://px.example"
        );
        for bad in [
            "phoenix://host",
            "phoenix:///p",
            "phoenix://h/a/b",
            "http://h/p",
        ] {
            assert!(PhoenixLocation::parse(bad).is_err(), "{bad}");
        }
        assert!(PhoenixLocation::is_location("phoenix://h/p"));
        assert!(!PhoenixLocation::is_location("spans.jsonl"));
    }

    #[test]
    fn spans_of_a_trace_sort_by_start_then_id() {
        let span = |start: &str, id: &str| serde_json::json!({"start_time": start, "context": {"span_id": id, "trace_id": "t"}});
        let mut spans = [span("2", "b"), span("1", "z"), span("2", "a")];
        spans.sort_by_key(span_key);
        let ids: Vec<&str> = spans
            .iter()
            .map(|s| s.pointer("/context/span_id").unwrap().as_str().unwrap())
            .collect();
        assert_eq!(ids, ["z", "a", "b"]);
        assert_eq!(encode_segment("my project/x"), "my%20project%2Fx");
    }
}
