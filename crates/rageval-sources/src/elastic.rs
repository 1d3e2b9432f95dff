//! The Elasticsearch retriever: one `_search` request per question, built from a JSON query
//! template, over plain reqwest.
//!
//! The request body is the rendered template, plus `size` when the template sets none, plus
//! `_source` includes/excludes when the settings name any (the settings win over the
//! template's own `_source`). Each hit becomes a [`Retrieved`]: its id from `_id` or a
//! `_source` field, its text from a `_source` field, `_score` as the score and the rest of
//! the (filtered) `_source` as fields. Credentials go in the `Authorization` header, marked
//! sensitive; they never appear in errors or `Debug` output. Errors say what to fix: a 401
//! is [`SourceError::Unauthorized`], a missing index [`SourceError::MissingIndex`].

use std::time::Duration;

use rageval_core::Sample;
use rageval_judge::settings::display_endpoint;
use rageval_judge::{ApiKey, BoxFuture, RetryPolicy};
use reqwest::StatusCode;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use serde_json::{Map, Value, json};

use crate::error::SourceError;
use crate::http;
use crate::json_path::{JsonPath, scalar_text};
use crate::system::{Retrieved, Retriever};
use crate::template::{Template, Variables};

/// Hits per question when neither the settings nor the template say.
pub const DEFAULT_SIZE: usize = 10;
/// Longest one `_search` request may take.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Attempts per search, the first included.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;

/// How to authenticate to Elasticsearch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum EsAuth {
    /// No credentials.
    #[default]
    None,
    /// HTTP basic authentication.
    Basic {
        /// User name (not secret).
        user: String,
        /// Password; prints as `****`.
        password: ApiKey,
    },
    /// An Elasticsearch API key (`Authorization: ApiKey …`, the base64 form).
    ApiKey(ApiKey),
}

/// Everything the retriever needs, resolved once.
#[derive(Debug, Clone)]
pub struct EsSettings {
    /// Base URL, e.g. `http://127.0.0.1:9200`.
    pub url: String,
    /// Index, alias or comma-separated list.
    pub index: String,
    /// Credentials.
    pub auth: EsAuth,
    /// The `_search` body template.
    pub template: Template,
    /// Hits per question (`size`), unless the template sets its own.
    pub size: usize,
    /// `_source` fields to return (empty: all); the text and id fields are added.
    pub source_includes: Vec<String>,
    /// `_source` fields to leave out (embedding vectors, say).
    pub source_excludes: Vec<String>,
    /// The `_source` field holding the chunk text (dotted path).
    pub text_field: JsonPath,
    /// The `_source` field holding the chunk id; `None` uses the hit's `_id`.
    pub id_field: Option<JsonPath>,
    /// Per-request timeout.
    pub timeout: Duration,
    /// Connection timeout.
    pub connect_timeout: Duration,
    /// Retries of retryable failures.
    pub retry: RetryPolicy,
}

impl EsSettings {
    /// Settings with defaults for everything but the essentials.
    pub fn new(
        url: impl Into<String>,
        index: impl Into<String>,
        template: Template,
        text_field: &str,
    ) -> Self {
        EsSettings {
            url: url.into().trim_end_matches('/').to_owned(),
            index: index.into(),
            auth: EsAuth::None,
            template,
            size: DEFAULT_SIZE,
            source_includes: Vec::new(),
            source_excludes: Vec::new(),
            text_field: JsonPath::parse(text_field),
            id_field: None,
            timeout: DEFAULT_TIMEOUT,
            connect_timeout: http::DEFAULT_CONNECT_TIMEOUT,
            retry: RetryPolicy {
                max_attempts: DEFAULT_MAX_ATTEMPTS,
                ..RetryPolicy::default()
            },
        }
    }
}

impl EsSettings {
    /// The settings as `key, value` pairs for a person to read (`collect --show-settings`):
    /// the URL without its user info or query string, the kind of credentials and never the
    /// secret.
    pub fn shown(&self) -> Vec<(&'static str, String)> {
        let list = |fields: &[String], none: &str| {
            if fields.is_empty() {
                none.to_owned()
            } else {
                fields.join(", ")
            }
        };
        let auth = match &self.auth {
            EsAuth::None => "none".to_owned(),
            EsAuth::Basic { user, password } => format!("basic, user {user}, password {password}"),
            EsAuth::ApiKey(key) => format!("api key {key}"),
        };
        vec![
            ("url", display_endpoint(&self.url)),
            ("index", self.index.clone()),
            ("auth", auth),
            ("query_template", self.template.origin().to_owned()),
            ("text_field", self.text_field.to_string()),
            (
                "id_field",
                self.id_field
                    .as_ref()
                    .map_or_else(|| "_id".to_owned(), ToString::to_string),
            ),
            ("size", self.size.to_string()),
            ("source_includes", list(&self.source_includes, "all")),
            ("source_excludes", list(&self.source_excludes, "none")),
            ("timeout", format!("{}s", self.timeout.as_secs_f64())),
            ("max_attempts", self.retry.max_attempts.to_string()),
        ]
    }
}

/// A client for one index.
#[derive(Debug, Clone)]
pub struct EsRetriever {
    client: reqwest::Client,
    settings: EsSettings,
    endpoint: String,
}

impl EsRetriever {
    /// Builds the HTTP client; fails on an unusable credential or TLS set-up.
    pub fn new(settings: EsSettings) -> Result<Self, SourceError> {
        let endpoint = display_endpoint(&settings.url);
        let mut headers = HeaderMap::new();
        if let EsAuth::ApiKey(key) = &settings.auth {
            let mut value =
                HeaderValue::from_str(&format!("ApiKey {}", key.expose())).map_err(|_| {
                    SourceError::Config {
                        origin: "elasticsearch".into(),
                        detail: "the api key is not a valid header value".into(),
                    }
                })?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        let client = http::client(
            &endpoint,
            settings.timeout,
            settings.connect_timeout,
            headers,
        )?;
        Ok(EsRetriever {
            client,
            settings,
            endpoint,
        })
    }

    /// The settings it was built from.
    pub fn settings(&self) -> &EsSettings {
        &self.settings
    }

    /// The `_search` body for these variables (`size` is added to them).
    pub fn request_body(&self, vars: &mut Variables<'_>) -> Result<Value, SourceError> {
        let s = &self.settings;
        vars.set("size", json!(s.size));
        let mut body = s.template.render_json(vars)?;
        let Value::Object(map) = &mut body else {
            return Err(SourceError::Template {
                origin: s.template.origin().to_owned(),
                line: 1,
                column: 1,
                detail: "a query template must be a json object (the `_search` body)".into(),
            });
        };
        map.entry("size").or_insert(json!(s.size));
        if !s.source_includes.is_empty() || !s.source_excludes.is_empty() {
            let mut filter = Map::new();
            if !s.source_includes.is_empty() {
                let mut includes = s.source_includes.clone();
                for field in std::iter::once(&s.text_field).chain(&s.id_field) {
                    let name = field.to_string();
                    if !includes.contains(&name) {
                        includes.push(name);
                    }
                }
                filter.insert("includes".into(), json!(includes));
            }
            if !s.source_excludes.is_empty() {
                filter.insert("excludes".into(), json!(s.source_excludes));
            }
            map.insert("_source".into(), Value::Object(filter));
        }
        Ok(body)
    }

    /// Runs one search, retrying retryable failures.
    pub async fn search(&self, vars: &mut Variables<'_>) -> Result<Vec<Retrieved>, SourceError> {
        let body = self.request_body(vars)?;
        http::with_retries(&self.settings.retry, || self.search_once(&body)).await
    }

    async fn search_once(&self, body: &Value) -> Result<Vec<Retrieved>, SourceError> {
        let s = &self.settings;
        let url = format!("{}/{}/_search", s.url, s.index);
        let mut request = self.client.post(url).json(body);
        if let EsAuth::Basic { user, password } = &s.auth {
            request = request.basic_auth(user, Some(password.expose()));
        }
        let transport = |e| http::transport_error(&self.endpoint, s.timeout, e);
        let response = request.send().await.map_err(transport)?;
        let status = response.status();
        let retry_after = http::retry_after(response.headers());
        let text = response.text().await.map_err(transport)?;
        if !status.is_success() {
            return Err(self.status_error(status, &text, retry_after));
        }
        let value: Value = serde_json::from_str(&text).map_err(|e| {
            self.response_error(format!(
                "body is not json ({e}): {}",
                http::first_line(&text, &self.secrets())
            ))
        })?;
        self.hits(&value)
    }

    fn hits(&self, value: &Value) -> Result<Vec<Retrieved>, SourceError> {
        let Some(hits) = value
            .get("hits")
            .and_then(|h| h.get("hits"))
            .and_then(Value::as_array)
        else {
            return Err(self.response_error("no `hits.hits` array in the answer".into()));
        };
        hits.iter().map(|hit| self.retrieved(hit)).collect()
    }

    fn retrieved(&self, hit: &Value) -> Result<Retrieved, SourceError> {
        let s = &self.settings;
        let es_id = hit.get("_id").and_then(scalar_text).unwrap_or_default();
        let source = match hit.get("_source") {
            Some(Value::Object(map)) => map.clone(),
            _ => Map::new(),
        };
        let source_value = Value::Object(source);
        let text = match s.text_field.get(&source_value) {
            Some(Value::String(text)) => text.clone(),
            Some(Value::Array(parts)) if parts.iter().all(Value::is_string) => parts
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join("\n"),
            _ => {
                return Err(SourceError::MissingTextField {
                    endpoint: self.endpoint.clone(),
                    hit: es_id,
                    field: s.text_field.to_string(),
                    fields: field_names(&source_value),
                });
            }
        };
        let id = match &s.id_field {
            None => es_id,
            Some(path) => path
                .get(&source_value)
                .and_then(scalar_text)
                .ok_or_else(|| {
                    self.response_error(format!(
                        "hit `{es_id}` has no id field `{path}` in its _source"
                    ))
                })?,
        };
        let fields = match source_value {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        Ok(Retrieved {
            id,
            text,
            score: hit.get("_score").and_then(Value::as_f64),
            fields,
        })
    }

    fn status_error(
        &self,
        status: StatusCode,
        body: &str,
        retry_after: Option<Duration>,
    ) -> SourceError {
        let (kind, reason) = es_error(body);
        let reason = match reason {
            Some(reason) => http::first_line(&reason, &self.secrets()),
            None => http::first_line(body, &self.secrets()),
        };
        match status.as_u16() {
            401 | 403 => SourceError::Unauthorized {
                endpoint: self.endpoint.clone(),
                status: status.as_u16(),
                reason,
            },
            404 if kind.as_deref() == Some("index_not_found_exception") => {
                SourceError::MissingIndex {
                    endpoint: self.endpoint.clone(),
                    index: self.settings.index.clone(),
                }
            }
            code => SourceError::Status {
                endpoint: self.endpoint.clone(),
                status: code,
                first_line: match kind {
                    Some(kind) => format!("{kind}: {reason}"),
                    None => reason,
                },
                retry_after,
            },
        }
    }

    fn response_error(&self, detail: String) -> SourceError {
        SourceError::Response {
            endpoint: self.endpoint.clone(),
            detail,
        }
    }

    fn secrets(&self) -> Vec<&ApiKey> {
        match &self.settings.auth {
            EsAuth::None => Vec::new(),
            EsAuth::Basic { password, .. } => vec![password],
            EsAuth::ApiKey(key) => vec![key],
        }
    }
}

impl Retriever for EsRetriever {
    fn describe(&self) -> String {
        format!(
            "elasticsearch {} index {}",
            self.endpoint, self.settings.index
        )
    }

    fn retrieve<'a>(
        &'a self,
        sample: &'a Sample,
    ) -> BoxFuture<'a, Result<Vec<Retrieved>, SourceError>> {
        Box::pin(async move { self.search(&mut Variables::for_sample(sample)).await })
    }
}

/// Elasticsearch's error `type` and `reason`, when the body is its error JSON.
fn es_error(body: &str) -> (Option<String>, Option<String>) {
    let Ok(value) = serde_json::from_str::<Value>(body) else {
        return (None, None);
    };
    match value.get("error") {
        Some(Value::String(reason)) => (None, Some(reason.clone())),
        Some(error) => (
            error.get("type").and_then(scalar_text),
            error.get("reason").and_then(scalar_text),
        ),
        None => (None, None),
    }
}

fn field_names(value: &Value) -> String {
    match value {
        Value::Object(map) if !map.is_empty() => map
            .keys()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(", "),
        _ => "none".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn retriever(includes: &[&str], excludes: &[&str]) -> EsRetriever {
        let template = Template::json(
            r#"{"query": {"bool": {
                "must": [{"match_phrase": {"collection_info.collect_id": "{{company_name}}"}}],
                "should": [{"match": {"metadata.content": {"query": "{{question}}", "boost": 8}}}]}}}"#,
            "s3.json",
        )
        .unwrap();
        let mut settings =
            EsSettings::new("http://127.0.0.1:9/", "news", template, "metadata.content");
        settings.size = 200;
        settings.source_includes = includes.iter().map(|s| s.to_string()).collect();
        settings.source_excludes = excludes.iter().map(|s| s.to_string()).collect();
        settings.auth = EsAuth::Basic {
            user: "elastic".into(),
            password: ApiKey::new("hunter22"),
        };
        EsRetriever::new(settings).unwrap()
    }

    #[test]
    fn body_has_size_source_filter_and_rendered_query() {
        let r = retriever(&["title"], &["content_embedding"]);
        let mut vars = Variables::new("1");
        vars.set("question", json!("主营业务"))
            .set("company_name", json!("东方航空公司"));
        let body = r.request_body(&mut vars).unwrap();
        assert_eq!(body["size"], json!(200));
        assert_eq!(
            body["_source"],
            json!({"includes": ["title", "metadata.content"], "excludes": ["content_embedding"]})
        );
        assert_eq!(
            body["query"]["bool"]["must"][0]["match_phrase"]["collection_info.collect_id"],
            json!("东方航空公司")
        );
    }

    #[test]
    fn debug_output_hides_the_password() {
        let r = retriever(&[], &[]);
        let shown = format!("{r:?}");
        assert!(!shown.contains("hunter22"), "{shown}");
        assert!(shown.contains("****"));
    }

    #[test]
    fn error_bodies_map_to_clear_errors() {
        let r = retriever(&[], &[]);
        let missing = r#"{"error":{"type":"index_not_found_exception","reason":"no such index [news]"},"status":404}"#;
        assert!(matches!(
            r.status_error(StatusCode::NOT_FOUND, missing, None),
            SourceError::MissingIndex { .. }
        ));
        let auth = r#"{"error":{"type":"security_exception","reason":"unable to authenticate user [elastic] with hunter22"},"status":401}"#;
        let err = r.status_error(StatusCode::UNAUTHORIZED, auth, None);
        let text = err.to_string();
        assert!(
            text.contains("http 401") && text.contains("unable to authenticate"),
            "{text}"
        );
        assert!(!text.contains("hunter22"), "{text}");
        let bad = r#"{"error":{"type":"parsing_exception","reason":"unknown query [mtch]"},"status":400}"#;
        let text = r
            .status_error(StatusCode::BAD_REQUEST, bad, None)
            .to_string();
        assert!(
            text.ends_with("http 400: parsing_exception: unknown query [mtch]"),
            "{text}"
        );
    }

    #[test]
    fn hits_take_text_id_score_and_fields() {
        let mut r = retriever(&[], &[]);
        r.settings.id_field = Some(JsonPath::parse("uuid"));
        let answer = json!({"hits": {"hits": [
            {"_id": "a", "_score": 2.5, "_source": {"uuid": "u-1", "metadata": {"content": "正文"}}},
        ]}});
        let hits = r.hits(&answer).unwrap();
        assert_eq!(hits[0].id, "u-1");
        assert_eq!(hits[0].text, "正文");
        assert_eq!(hits[0].score, Some(2.5));
        let bad = json!({"hits": {"hits": [{"_id": "b", "_source": {"title": "x"}}]}});
        let err = r.hits(&bad).unwrap_err().to_string();
        assert!(
            err.contains("hit `b` from http://127.0.0.1:9 has no text field `metadata.content`"),
            "{err}"
        );
        assert!(err.contains("(its fields: title)"), "{err}");
    }
}
