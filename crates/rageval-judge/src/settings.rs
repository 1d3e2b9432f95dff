//! Where the judge endpoint is and how to talk to it, resolved once from explicit values or
//! the environment into a plain struct.
//!
//! Every environment variable the judge reads is declared here once, as a documented
//! constant. This module reads the environment only in [`EndpointSettings::from_env`]; it
//! never prints, and its `Debug` output never shows the key or header values.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::error::JudgeError;
use crate::forms::RequestForm;
use crate::secret::{ApiKey, REDACTED};

mod base_url;

pub use base_url::display_endpoint;
pub(crate) use base_url::{basic_authorization, credentials, request_url, url_secrets};

/// Base URL of the OpenAI-compatible judge endpoint, e.g. `http://localhost:8000/v1`.
pub const ENV_JUDGE_BASE_URL: &str = "RAGEVAL_JUDGE_BASE_URL";
/// Model name sent in every request, e.g. `gpt-4o-mini`. Required.
pub const ENV_JUDGE_MODEL: &str = "RAGEVAL_JUDGE_MODEL";
/// Embedding model at the judge endpoint, e.g. `text-embedding-3-small`; embedding metrics
/// need one.
pub const ENV_JUDGE_EMBEDDING_MODEL: &str = "RAGEVAL_JUDGE_EMBEDDING_MODEL";
/// API key for the judge endpoint (sent as `Authorization: Bearer`).
pub const ENV_JUDGE_API_KEY: &str = "RAGEVAL_JUDGE_API_KEY";
/// Extra request headers, `Name: value` pairs separated by newlines or `;`.
pub const ENV_JUDGE_HEADERS: &str = "RAGEVAL_JUDGE_HEADERS";
/// Fallback for [`ENV_JUDGE_BASE_URL`], the name the OpenAI SDKs use.
pub const ENV_OPENAI_BASE_URL: &str = "OPENAI_BASE_URL";
/// Fallback for [`ENV_JUDGE_API_KEY`], the name the OpenAI SDKs use.
pub const ENV_OPENAI_API_KEY: &str = "OPENAI_API_KEY";

/// Directory of the shared answer cache (`judge.sqlite` inside it); see [`default_cache_path`].
pub const ENV_CACHE_DIR: &str = "RAGEVAL_CACHE_DIR";
/// File name of the answer cache inside the cache directory.
pub const CACHE_FILE_NAME: &str = "judge.sqlite";

/// Base URL used when neither [`ENV_JUDGE_BASE_URL`] nor [`ENV_OPENAI_BASE_URL`] is set.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// Longest a single HTTP call may take, body included, before it counts as timed out.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
/// Longest a TCP/TLS connection may take to open.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How the output schema reaches the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SchemaMode {
    /// `response_format: {type: json_schema, ...}` (OpenAI, vLLM, llama.cpp server).
    #[default]
    ResponseFormat,
    /// The schema written into the prompt, for servers that reject `response_format`.
    InPrompt,
}

/// Everything needed to reach one OpenAI-compatible endpoint.
#[derive(Clone)]
pub struct EndpointSettings {
    /// Base URL ending before `/chat/completions`, e.g. `https://api.openai.com/v1`; a
    /// query string (`…/v1?api-key=K`) is kept on every request, after the path, and user
    /// info (`user:pass@`) is sent as HTTP Basic authentication unless an API key is set.
    pub base_url: String,
    /// Model name sent in each request.
    pub model: String,
    /// Bearer key, if the endpoint needs one.
    pub api_key: Option<ApiKey>,
    /// Extra headers sent with every request (values may be secrets: never printed).
    pub extra_headers: Vec<(String, String)>,
    /// Per-call timeout (one HTTP attempt, not the whole retry sequence).
    pub request_timeout: Duration,
    /// Connection timeout.
    pub connect_timeout: Duration,
    /// How structured calls ask for their schema.
    pub schema_mode: SchemaMode,
    /// How requests are written at first (the token cap's name, parameters left out); the
    /// endpoint's refusals may change it during a run ([`crate::forms`]).
    pub form: RequestForm,
}

impl EndpointSettings {
    /// Settings for `base_url` and `model` with no key, no extra headers and default timeouts.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        EndpointSettings {
            base_url: base_url.into().trim_end_matches('/').to_owned(),
            model: model.into(),
            api_key: None,
            extra_headers: Vec::new(),
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            schema_mode: SchemaMode::default(),
            form: RequestForm::default(),
        }
    }

    /// Resolves settings from the process environment (see the `ENV_*` constants).
    pub fn from_env() -> Result<Self, JudgeError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Resolves settings from any name → value lookup; empty values count as unset.
    /// `RAGEVAL_JUDGE_*` wins over the `OPENAI_*` fallbacks.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, JudgeError> {
        let get = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let base_url = get(ENV_JUDGE_BASE_URL)
            .or_else(|| get(ENV_OPENAI_BASE_URL))
            .unwrap_or_else(|| DEFAULT_BASE_URL.to_owned());
        let model = get(ENV_JUDGE_MODEL).ok_or_else(|| {
            JudgeError::Settings(format!("no judge model: set {ENV_JUDGE_MODEL}"))
        })?;
        let mut settings = EndpointSettings::new(base_url.trim(), model.trim());
        settings.api_key = get(ENV_JUDGE_API_KEY)
            .or_else(|| get(ENV_OPENAI_API_KEY))
            .map(ApiKey::new);
        if let Some(raw) = get(ENV_JUDGE_HEADERS) {
            settings.extra_headers = parse_headers(&raw)?;
        }
        Ok(settings)
    }

    /// The base URL as it may be shown or stored: no user info, no query value
    /// ([`display_endpoint`]).
    pub fn endpoint_for_display(&self) -> String {
        display_endpoint(&self.base_url)
    }
}

/// Where the shared answer cache lives by default: `$RAGEVAL_CACHE_DIR/judge.sqlite`, else
/// `$XDG_CACHE_HOME/rageval/judge.sqlite`, else `$HOME/.cache/rageval/judge.sqlite`; `None`
/// when none of them is set.
pub fn default_cache_path(lookup: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let get = |name: &str| {
        lookup(name)
            .filter(|v| !v.trim().is_empty())
            .map(PathBuf::from)
    };
    let dir = get(ENV_CACHE_DIR)
        .or_else(|| get("XDG_CACHE_HOME").map(|d| d.join("rageval")))
        .or_else(|| get("HOME").map(|d| d.join(".cache").join("rageval")))?;
    Some(dir.join(CACHE_FILE_NAME))
}

pub(crate) fn parse_headers(raw: &str) -> Result<Vec<(String, String)>, JudgeError> {
    raw.split(['\n', ';'])
        .map(str::trim)
        .filter(|pair| !pair.is_empty())
        .map(|pair| match pair.split_once(':') {
            Some((name, value)) if !name.trim().is_empty() => {
                Ok((name.trim().to_owned(), value.trim().to_owned()))
            }
            // The value is not quoted: it may be a secret.
            _ => Err(JudgeError::Settings(format!(
                "{ENV_JUDGE_HEADERS}: expected `Name: value` pairs separated by `;`"
            ))),
        })
        .collect()
}

/// A timeout or a wait in seconds, as a flag or the Python package gives it: a positive
/// number that a [`Duration`] holds.
pub fn positive_seconds(text: &str) -> Result<Duration, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .and_then(|seconds| Duration::try_from_secs_f64(seconds).ok())
        .filter(|duration| !duration.is_zero())
        .ok_or_else(|| "expected a positive number of seconds".to_owned())
}

impl fmt::Debug for EndpointSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<String> = self
            .extra_headers
            .iter()
            .map(|(name, _)| format!("{name}: {REDACTED}"))
            .collect();
        f.debug_struct("EndpointSettings")
            .field("base_url", &self.endpoint_for_display())
            .field("model", &self.model)
            .field("api_key", &self.api_key)
            .field("extra_headers", &headers)
            .field("request_timeout", &self.request_timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("schema_mode", &self.schema_mode)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn seconds_are_positive_and_finite() {
        assert_eq!(positive_seconds("2.5"), Ok(Duration::from_millis(2_500)));
        assert_eq!(positive_seconds(" 60 "), Ok(Duration::from_secs(60)));
        for text in ["0", "-1", "nan", "inf", "soon", ""] {
            assert_eq!(
                positive_seconds(text),
                Err("expected a positive number of seconds".to_owned()),
                "{text}"
            );
        }
    }

    fn lookup(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn rageval_vars_win_over_openai_fallbacks() {
        let s = EndpointSettings::from_lookup(lookup(&[
            (ENV_JUDGE_BASE_URL, "http://judge/v1/"),
            (ENV_OPENAI_BASE_URL, "http://openai/v1"),
            (ENV_JUDGE_MODEL, "m"),
            (ENV_JUDGE_API_KEY, "sk-judge"),
            (ENV_OPENAI_API_KEY, "sk-openai"),
        ]))
        .unwrap();
        assert_eq!(s.base_url, "http://judge/v1");
        assert_eq!(s.api_key.unwrap().expose(), "sk-judge");
    }

    #[test]
    fn openai_fallbacks_apply_and_empty_counts_as_unset() {
        let s = EndpointSettings::from_lookup(lookup(&[
            (ENV_JUDGE_BASE_URL, " "),
            (ENV_OPENAI_BASE_URL, "http://openai/v1"),
            (ENV_JUDGE_MODEL, "m"),
            (ENV_OPENAI_API_KEY, "sk-openai"),
        ]))
        .unwrap();
        assert_eq!(s.base_url, "http://openai/v1");
        assert_eq!(s.api_key.unwrap().expose(), "sk-openai");
        let d = EndpointSettings::from_lookup(lookup(&[(ENV_JUDGE_MODEL, "m")])).unwrap();
        assert_eq!(d.base_url, DEFAULT_BASE_URL);
        assert!(d.api_key.is_none());
    }

    #[test]
    fn cache_path_prefers_the_rageval_directory() {
        let path = |pairs: &[(&str, &str)]| default_cache_path(lookup(pairs));
        assert_eq!(
            path(&[(ENV_CACHE_DIR, "/c"), ("HOME", "/h")]),
            Some(PathBuf::from("/c/judge.sqlite"))
        );
        assert_eq!(
            path(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")]),
            Some(PathBuf::from("/x/rageval/judge.sqlite"))
        );
        assert_eq!(
            path(&[("HOME", "/h")]),
            Some(PathBuf::from("/h/.cache/rageval/judge.sqlite"))
        );
        assert_eq!(path(&[]), None);
    }

    #[test]
    fn missing_model_names_the_variable() {
        let err = EndpointSettings::from_lookup(lookup(&[])).unwrap_err();
        assert!(err.to_string().contains(ENV_JUDGE_MODEL), "{err}");
    }

    #[test]
    fn headers_parse_and_debug_hides_secrets() {
        let s = EndpointSettings::from_lookup(lookup(&[
            (ENV_JUDGE_MODEL, "m"),
            (
                ENV_JUDGE_BASE_URL,
                "https://user:pw-secret@host/v1?api-key=q-secret",
            ),
            (ENV_JUDGE_API_KEY, "sk-top-secret"),
            (ENV_JUDGE_HEADERS, "X-Org: org-secret; api-version: 2024"),
        ]))
        .unwrap();
        assert_eq!(s.extra_headers.len(), 2);
        assert_eq!(s.extra_headers[1], ("api-version".into(), "2024".into()));
        let shown = format!("{s:?}");
        for secret in ["sk-top-secret", "org-secret", "pw-secret", "q-secret"] {
            assert!(!shown.contains(secret), "{secret} leaked in {shown}");
        }
        assert!(shown.contains("https://host/v1"), "{shown}");
        let bad = EndpointSettings::from_lookup(lookup(&[
            (ENV_JUDGE_MODEL, "m"),
            (ENV_JUDGE_HEADERS, "no-colon-secret"),
        ]))
        .unwrap_err();
        assert!(!bad.to_string().contains("no-colon-secret"));
    }
}
