//! The client of the RAG service under test: one HTTP request per question, built from
//! templates, and the answer (and optionally the contexts it used) read from the response.
//!
//! Requests: GET or POST; the URL, each query parameter and header value, and the JSON body
//! are [`Template`]s over the question's variables (`question`, `id`, the questions file's
//! other fields, and `contexts`, the retrieved texts as a JSON list). Header values may read
//! the environment (`{{env.RAG_TOKEN}}`); they are marked sensitive and redacted from error
//! bodies. Responses: see [`ResponseShape`] and [`parse_answer`](crate::response).
//!
//! Failures: a non-success status is an error with the status and the body's first line;
//! timeouts, connection failures, 429 and 5xx are retried per the [`RetryPolicy`]; an empty
//! answer is asked again, at most [`ServiceSettings::empty_attempts`] times, then
//! [`SourceError::EmptyAnswer`]. Every request is counted, retries included
//! ([`Generated::attempts`]). The per-request timeout covers the whole body, so a stream
//! that hangs half-way times out too.

use std::sync::Arc;
use std::time::Duration;

use rageval_core::Sample;
use rageval_judge::settings::display_endpoint;
use rageval_judge::{ApiKey, BoxFuture, RetryPolicy};
use reqwest::header::{HeaderName, HeaderValue};
use serde_json::Value;

use crate::error::SourceError;
use crate::http;
use crate::response::{ResponseShape, parse_answer};
use crate::system::{Generated, Generator, Retrieved};
use crate::template::{Template, Variables};

/// Longest one request may take, the streamed body included.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// Requests per question when the answer keeps coming back empty.
pub const DEFAULT_EMPTY_ATTEMPTS: u32 = 3;
/// Pause before asking again after an empty answer.
pub const DEFAULT_EMPTY_DELAY: Duration = Duration::from_millis(500);
/// Attempts per request for retryable failures, the first included.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;

/// The HTTP method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HttpMethod {
    /// Parameters in the query string (seed S3's service).
    #[default]
    Get,
    /// The JSON body, if one is configured (and query parameters, if any).
    Post,
}

/// Reads an environment variable; tests pass their own.
pub type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Everything the client needs, resolved once.
#[derive(Clone)]
pub struct ServiceSettings {
    /// GET or POST.
    pub method: HttpMethod,
    /// The URL (a text template).
    pub url: Template,
    /// Query parameters, name → text template, in order.
    pub query: Vec<(String, Template)>,
    /// Headers, name → text template (may read `{{env.NAME}}`).
    pub headers: Vec<(String, Template)>,
    /// The JSON body (POST).
    pub body: Option<Template>,
    /// How to read the answer.
    pub response: ResponseShape,
    /// Per-request timeout, body included.
    pub timeout: Duration,
    /// Connection timeout.
    pub connect_timeout: Duration,
    /// Retries of retryable failures.
    pub retry: RetryPolicy,
    /// Requests per question while the answer is empty (at least 1).
    pub empty_attempts: u32,
    /// Pause between those requests.
    pub empty_delay: Duration,
    /// Where `{{env.NAME}}` reads from (the process environment by default).
    pub env: EnvLookup,
}

impl std::fmt::Debug for ServiceSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Header templates are shown (they hold placeholders, not secrets); the environment
        // they read is not.
        f.debug_struct("ServiceSettings")
            .field("method", &self.method)
            .field("url", &display_endpoint(&self.url.source_text()))
            .field(
                "query",
                &self.query.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .field(
                "headers",
                &self.headers.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .field("body", &self.body.as_ref().map(Template::origin))
            .field("response", &self.response)
            .field("timeout", &self.timeout)
            .field("empty_attempts", &self.empty_attempts)
            .finish_non_exhaustive()
    }
}

impl ServiceSettings {
    /// GET `url` with defaults, answer read as plain text.
    pub fn new(url: Template) -> Self {
        ServiceSettings {
            method: HttpMethod::Get,
            url,
            query: Vec::new(),
            headers: Vec::new(),
            body: None,
            response: ResponseShape::Text,
            timeout: DEFAULT_TIMEOUT,
            connect_timeout: http::DEFAULT_CONNECT_TIMEOUT,
            retry: RetryPolicy {
                max_attempts: DEFAULT_MAX_ATTEMPTS,
                ..RetryPolicy::default()
            },
            empty_attempts: DEFAULT_EMPTY_ATTEMPTS,
            empty_delay: DEFAULT_EMPTY_DELAY,
            env: Arc::new(|name| std::env::var(name).ok()),
        }
    }
}

impl ServiceSettings {
    /// The settings as `key, value` pairs for a person to read (`collect --show-settings`):
    /// the URL without its user info or query string, the names of the query parameters and
    /// headers, never the values the headers read from the environment.
    pub fn shown(&self) -> Vec<(&'static str, String)> {
        let names = |pairs: &[(String, Template)]| {
            if pairs.is_empty() {
                "none".to_owned()
            } else {
                pairs
                    .iter()
                    .map(|(name, _)| name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        };
        let method = match self.method {
            HttpMethod::Get => "GET",
            HttpMethod::Post => "POST",
        };
        vec![
            ("method", method.to_owned()),
            ("url", display_endpoint(&self.url.source_text())),
            ("query", names(&self.query)),
            ("headers", names(&self.headers)),
            (
                "body",
                self.body
                    .as_ref()
                    .map_or_else(|| "none".to_owned(), |t| t.origin().to_owned()),
            ),
            ("response", self.response.describe()),
            ("timeout", format!("{}s", self.timeout.as_secs_f64())),
            ("max_attempts", self.retry.max_attempts.to_string()),
            ("empty_attempts", self.empty_attempts.to_string()),
        ]
    }
}

/// A client of one RAG service.
#[derive(Debug, Clone)]
pub struct RagService {
    client: reqwest::Client,
    settings: ServiceSettings,
}

/// One request, rendered.
struct Rendered {
    url: reqwest::Url,
    endpoint: String,
    headers: Vec<(HeaderName, HeaderValue)>,
    secrets: Vec<ApiKey>,
    body: Option<Value>,
}

impl RagService {
    /// Builds the HTTP client.
    pub fn new(settings: ServiceSettings) -> Result<Self, SourceError> {
        let client = http::client(
            &display_endpoint(&settings.url.source_text()),
            settings.timeout,
            settings.connect_timeout,
            Default::default(),
        )?;
        Ok(RagService { client, settings })
    }

    /// The settings it was built from.
    pub fn settings(&self) -> &ServiceSettings {
        &self.settings
    }

    /// Asks the service about one question, given the contexts retrieved for it.
    pub async fn ask(
        &self,
        sample: &Sample,
        contexts: &[Retrieved],
    ) -> Result<Generated, SourceError> {
        let s = &self.settings;
        let env = |name: &str| (s.env)(name);
        let mut vars = Variables::for_sample(sample).with_env(&env);
        let texts: Vec<&str> = contexts.iter().map(|c| c.text.as_str()).collect();
        vars.set("contexts", serde_json::json!(texts));
        let rendered = self.render(&vars)?;
        let attempts = s.empty_attempts.max(1);
        // Every request counts, the retries after a 5xx or a timeout too: the record's
        // `attempts` says what the question cost the service.
        let mut requests = 0;
        for attempt in 1..=attempts {
            let (answer, contexts) =
                http::with_retries_counted(&s.retry, &mut requests, || self.send(&rendered))
                    .await?;
            if !answer.trim().is_empty() {
                return Ok(Generated {
                    answer,
                    contexts,
                    attempts: requests,
                    details: serde_json::Map::new(),
                });
            }
            if attempt < attempts {
                tokio::time::sleep(s.empty_delay).await;
            }
        }
        Err(SourceError::EmptyAnswer {
            endpoint: rendered.endpoint,
            attempts,
            requests,
        })
    }

    fn render(&self, vars: &Variables<'_>) -> Result<Rendered, SourceError> {
        let s = &self.settings;
        let raw_url = s.url.render_text(vars)?;
        let endpoint = display_endpoint(&raw_url);
        let mut url = reqwest::Url::parse(&raw_url).map_err(|e| SourceError::Config {
            origin: s.url.origin().to_owned(),
            detail: format!("`{endpoint}` is not a url: {e}"),
        })?;
        if !s.query.is_empty() {
            let mut pairs = url.query_pairs_mut();
            for (name, template) in &s.query {
                pairs.append_pair(name, &template.render_text(vars)?);
            }
        }
        let mut headers = Vec::with_capacity(s.headers.len());
        let mut secrets = Vec::new();
        for (name, template) in &s.headers {
            let bad = |detail: &str| SourceError::Config {
                origin: template.origin().to_owned(),
                detail: format!("header `{name}`: {detail}"),
            };
            let header =
                HeaderName::from_bytes(name.as_bytes()).map_err(|_| bad("not a header name"))?;
            let text = template.render_text(vars)?;
            let mut value = HeaderValue::from_str(&text)
                .map_err(|_| bad("the value is not valid in a header"))?;
            value.set_sensitive(true);
            if template.reads_env() {
                secrets.push(ApiKey::new(text));
            }
            headers.push((header, value));
        }
        let body = match &s.body {
            Some(template) => Some(template.render_json(vars)?),
            None => None,
        };
        Ok(Rendered {
            url,
            endpoint,
            headers,
            secrets,
            body,
        })
    }

    async fn send(
        &self,
        request: &Rendered,
    ) -> Result<(String, Option<Vec<Retrieved>>), SourceError> {
        let s = &self.settings;
        let mut builder = match s.method {
            HttpMethod::Get => self.client.get(request.url.clone()),
            HttpMethod::Post => self.client.post(request.url.clone()),
        };
        for (name, value) in &request.headers {
            builder = builder.header(name, value);
        }
        if let Some(body) = &request.body {
            builder = builder.json(body);
        }
        let transport = |e| http::transport_error(&request.endpoint, s.timeout, e);
        let response = builder.send().await.map_err(transport)?;
        let status = response.status();
        let retry_after = http::retry_after(response.headers());
        let bytes = response.bytes().await.map_err(transport)?;
        let secrets: Vec<&ApiKey> = request.secrets.iter().collect();
        if !status.is_success() {
            let first_line = http::first_line(&String::from_utf8_lossy(&bytes), &secrets);
            return Err(match status.as_u16() {
                401 | 403 => SourceError::Unauthorized {
                    endpoint: request.endpoint.clone(),
                    status: status.as_u16(),
                    reason: first_line,
                },
                code => SourceError::Status {
                    endpoint: request.endpoint.clone(),
                    status: code,
                    first_line,
                    retry_after,
                },
            });
        }
        let text = String::from_utf8(bytes.to_vec()).map_err(|e| SourceError::Response {
            endpoint: request.endpoint.clone(),
            detail: format!("body is not utf-8 (byte {})", e.utf8_error().valid_up_to()),
        })?;
        parse_answer(&s.response, &text).map_err(|detail| SourceError::Response {
            endpoint: request.endpoint.clone(),
            detail,
        })
    }
}

impl Generator for RagService {
    fn describe(&self) -> String {
        format!(
            "http {}",
            display_endpoint(&self.settings.url.source_text())
        )
    }

    fn generate<'a>(
        &'a self,
        sample: &'a Sample,
        contexts: &'a [Retrieved],
    ) -> BoxFuture<'a, Result<Generated, SourceError>> {
        Box::pin(self.ask(sample, contexts))
    }
}
