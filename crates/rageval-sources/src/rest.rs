//! A JSON-over-HTTP client for the servers rageval reads from and writes to besides the
//! judge (Phoenix, MLflow, an OpenTelemetry collector), with the judge's client rules: named
//! timeouts, retries of what may succeed again (timeouts, connection failures, 429, 5xx)
//! with back-off that honours `Retry-After`, and redaction — the API key travels only in its
//! header, marked sensitive, and never appears in an error, since errors name the endpoint
//! as [`display_endpoint`] prints it (no user info, no query) and quote bodies with every
//! secret replaced by `****`.
//!
//! 401 and 403 are [`SourceError::Unauthorized`]; every other failure status is
//! [`SourceError::Status`] with the body's first line, which callers read to name what is
//! missing (Phoenix's unknown project).

use std::time::Duration;

use rageval_judge::settings::display_endpoint;
use rageval_judge::{ApiKey, RetryPolicy};
/// The HTTP method of a request (re-exported: callers need no HTTP crate of their own).
pub use reqwest::Method;
use reqwest::StatusCode;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde_json::Value;

use crate::error::SourceError;
use crate::http;

/// Longest one request to a trace or experiment server may take, the body included.
pub const DEFAULT_REST_TIMEOUT: Duration = Duration::from_secs(60);

/// How a server wants its credential.
#[derive(Debug, Clone)]
pub enum RestAuth {
    /// No credential.
    None,
    /// `Authorization: Bearer KEY` (Phoenix's API keys, MLflow's tracking token).
    Bearer(ApiKey),
    /// A header of the server's own (`api_key: KEY`, an OTLP collector's `x-api-key`).
    Header { name: String, key: ApiKey },
}

impl RestAuth {
    fn key(&self) -> Option<&ApiKey> {
        match self {
            RestAuth::None => None,
            RestAuth::Bearer(key) | RestAuth::Header { key, .. } => Some(key),
        }
    }
}

/// A client of one server, at one base URL.
#[derive(Debug, Clone)]
pub struct RestClient {
    /// The base URL, without a trailing slash.
    base: String,
    /// The base URL as errors name it.
    endpoint: String,
    auth: RestAuth,
    client: reqwest::Client,
    timeout: Duration,
    retry: RetryPolicy,
}

/// A body to send.
#[derive(Debug, Clone, Copy)]
pub enum Body<'a> {
    /// No body.
    Empty,
    /// A JSON document.
    Json(&'a Value),
    /// Bytes of the given content type.
    Bytes {
        content_type: &'a str,
        bytes: &'a [u8],
    },
}

impl RestClient {
    /// A client of the server at `base_url` (`http://host:port`, perhaps with a path).
    pub fn new(
        base_url: &str,
        auth: RestAuth,
        timeout: Duration,
        retry: RetryPolicy,
    ) -> Result<Self, SourceError> {
        let base = base_url.trim().trim_end_matches('/').to_owned();
        let endpoint = display_endpoint(&base);
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(SourceError::Config {
                origin: endpoint,
                detail: "not an http:// or https:// url".into(),
            });
        }
        let mut headers = HeaderMap::new();
        let secret_header = |value: String| {
            HeaderValue::from_str(&value)
                .map(|mut value| {
                    value.set_sensitive(true);
                    value
                })
                .map_err(|_| SourceError::Config {
                    origin: endpoint.clone(),
                    detail: "the API key holds characters a header cannot carry".into(),
                })
        };
        match &auth {
            RestAuth::None => {}
            RestAuth::Bearer(key) => {
                headers.insert(
                    AUTHORIZATION,
                    secret_header(format!("Bearer {}", key.expose()))?,
                );
            }
            RestAuth::Header { name, key } => {
                let name =
                    reqwest::header::HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                        SourceError::Config {
                            origin: endpoint.clone(),
                            detail: format!("`{name}` is not a header name"),
                        }
                    })?;
                headers.insert(name, secret_header(key.expose().to_owned())?);
            }
        }
        let client = http::client(&endpoint, timeout, http::DEFAULT_CONNECT_TIMEOUT, headers)?;
        Ok(RestClient {
            base,
            endpoint,
            auth,
            client,
            timeout,
            retry,
        })
    }

    /// The base URL as errors and messages name it (redacted).
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The same client with another retry policy (a writer that must not wait long).
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// `GET base/path?query` read as JSON.
    pub async fn get_json(
        &self,
        path: &str,
        query: &[(&str, String)],
    ) -> Result<Value, SourceError> {
        self.json(Method::GET, path, query, Body::Empty).await
    }

    /// A request whose answer is read as JSON (an empty answer reads as `null`).
    pub async fn json(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Body<'_>,
    ) -> Result<Value, SourceError> {
        let bytes = self.send(method, path, query, body).await?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(Value::Null);
        }
        serde_json::from_slice(&bytes).map_err(|e| SourceError::Response {
            endpoint: self.endpoint_of(path),
            detail: format!(
                "body is not json ({e}): {}",
                http::first_line(&String::from_utf8_lossy(&bytes), &self.secrets())
            ),
        })
    }

    /// A request to `base/path` (the base URL itself when `path` is empty), retried while it
    /// fails in a way that may pass; the answer's bytes.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Body<'_>,
    ) -> Result<Vec<u8>, SourceError> {
        http::with_retries(&self.retry, || {
            self.send_once(method.clone(), path, query, body)
        })
        .await
    }

    async fn send_once(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Body<'_>,
    ) -> Result<Vec<u8>, SourceError> {
        let endpoint = self.endpoint_of(path);
        let mut url = if path.is_empty() {
            self.base.clone()
        } else {
            format!("{}/{}", self.base, path.trim_start_matches('/'))
        };
        if !query.is_empty() {
            let mut encoded = form_urlencoded::Serializer::new(String::new());
            for (name, value) in query {
                encoded.append_pair(name, value);
            }
            url.push('?');
            url.push_str(&encoded.finish());
        }
        let request = self.client.request(method, url);
        let request = match body {
            Body::Empty => request,
            Body::Json(value) => request.json(value),
            Body::Bytes {
                content_type,
                bytes,
            } => request
                .header(CONTENT_TYPE, content_type)
                .body(bytes.to_vec()),
        };
        let transport = |e| http::transport_error(&endpoint, self.timeout, e);
        let response = request.send().await.map_err(transport)?;
        let status = response.status();
        let retry_after = http::retry_after(response.headers());
        let bytes = response.bytes().await.map_err(transport)?;
        if status.is_success() {
            return Ok(bytes.to_vec());
        }
        Err(self.status_error(endpoint, status, &bytes, retry_after))
    }

    fn status_error(
        &self,
        endpoint: String,
        status: StatusCode,
        body: &[u8],
        retry_after: Option<Duration>,
    ) -> SourceError {
        let text = String::from_utf8_lossy(body);
        let reason = http::first_line(&error_text(&text), &self.secrets());
        match status.as_u16() {
            401 | 403 => SourceError::Unauthorized {
                endpoint,
                status: status.as_u16(),
                reason,
            },
            code => SourceError::Status {
                endpoint,
                status: code,
                first_line: reason,
                retry_after,
            },
        }
    }

    /// `base/path` as errors name it (the base itself for an empty path).
    fn endpoint_of(&self, path: &str) -> String {
        if path.is_empty() {
            return self.endpoint.clone();
        }
        format!("{}/{}", self.endpoint, path.trim_start_matches('/'))
    }

    fn secrets(&self) -> Vec<&ApiKey> {
        self.auth.key().into_iter().collect()
    }
}

/// The message of a JSON error body (`detail`, `message`, `error_code: message`), else the
/// body itself.
fn error_text(body: &str) -> String {
    let Ok(value) = serde_json::from_str::<Value>(body) else {
        return body.to_owned();
    };
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    match (text("error_code"), text("message"), text("detail")) {
        (Some(code), Some(message), _) => format!("{code}: {message}"),
        (_, Some(message), _) | (_, _, Some(message)) => message,
        _ => body.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_bodies_read_their_message() {
        assert_eq!(
            error_text(r#"{"detail": "Project with identifier nope not found"}"#),
            "Project with identifier nope not found"
        );
        assert_eq!(
            error_text(r#"{"error_code": "RESOURCE_DOES_NOT_EXIST", "message": "no run"}"#),
            "RESOURCE_DOES_NOT_EXIST: no run"
        );
        assert_eq!(error_text("plain"), "plain");
    }

    #[test]
    fn only_http_urls_are_servers_and_keys_never_show() {
        let key = ApiKey::new("px-secret-key-123");
        let error = RestClient::new(
            "ftp://user:pw@host/x",
            RestAuth::Bearer(key.clone()),
            DEFAULT_REST_TIMEOUT,
            RetryPolicy::default(),
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "ftp://host/x: not an http:// or https:// url"
        );
        let client = RestClient::new(
            "http://127.0.0.1:9/",
            RestAuth::Bearer(key),
            DEFAULT_REST_TIMEOUT,
            RetryPolicy::default(),
        )
        .unwrap();
        assert_eq!(client.endpoint(), "http://127.0.0.1:9");
        assert!(!format!("{client:?}").contains("px-secret-key-123"));
    }
}
