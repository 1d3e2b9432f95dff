//! The OpenAI-compatible HTTP backend (OpenAI, DeepSeek, vLLM, Ollama, llama.cpp server).
//!
//! One [`OpenAiBackend`] owns one `reqwest::Client`: the per-call and connect timeouts, the
//! headers (the key marked sensitive) and the translation of HTTP outcomes into
//! [`JudgeError`]s, with the key redacted from any body it quotes. It makes exactly one
//! attempt per call; it must not retry, cache or sleep — the [`Judge`](crate::Judge) does.

use std::time::Duration;

use reqwest::Method;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::chat::{ChatModel, ChatRequest, ChatResponse, Embedder, Usage};
use crate::error::JudgeError;
use crate::settings::EndpointSettings;

/// Longest quoted error-body line, in characters.
const MAX_ERROR_LINE_CHARS: usize = 200;

/// A client for one OpenAI-compatible endpoint.
#[derive(Debug, Clone)]
pub struct OpenAiBackend {
    client: reqwest::Client,
    settings: EndpointSettings,
    endpoint: String,
}

impl OpenAiBackend {
    /// Builds the client; fails only on an unusable header name or value, or TLS set-up.
    pub fn new(settings: EndpointSettings) -> Result<Self, JudgeError> {
        ensure_crypto_provider();
        let endpoint = settings.endpoint_for_display();
        let mut headers = HeaderMap::new();
        if let Some(key) = &settings.api_key {
            let mut value = HeaderValue::from_str(&format!("Bearer {}", key.expose()))
                .map_err(|_| JudgeError::Settings("api key is not a valid header value".into()))?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        for (name, value) in &settings.extra_headers {
            let header = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| JudgeError::Settings(format!("invalid header name `{name}`")))?;
            let mut value = HeaderValue::from_str(value).map_err(|_| {
                JudgeError::Settings(format!("header `{name}` has an invalid value"))
            })?;
            value.set_sensitive(true);
            headers.insert(header, value);
        }
        let client = reqwest::Client::builder()
            .default_headers(headers)
            .timeout(settings.request_timeout)
            .connect_timeout(settings.connect_timeout)
            .build()
            .map_err(|source| JudgeError::Client {
                endpoint: endpoint.clone(),
                source: source.without_url(),
            })?;
        Ok(OpenAiBackend {
            client,
            settings,
            endpoint,
        })
    }

    /// The settings it was built from.
    pub fn settings(&self) -> &EndpointSettings {
        &self.settings
    }

    async fn post(&self, path: &str, body: &Value) -> Result<Value, JudgeError> {
        let response = self
            .send(self.request(Method::POST, path).json(body))
            .await?;
        self.json_body(response).await
    }

    /// A request to `path` under the base URL, with the client's headers and timeouts.
    pub(crate) fn request(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.client
            .request(method, format!("{}/{path}", self.settings.base_url))
    }

    /// Sends one request (one attempt); a non-success status becomes [`JudgeError::Status`]
    /// with the first line of the body, the key redacted.
    pub(crate) async fn send(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, JudgeError> {
        let response = request.send().await.map_err(|e| self.transport_error(e))?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let retry_after = retry_after(response.headers());
        let body = response.text().await.unwrap_or_default();
        Err(JudgeError::Status {
            endpoint: self.endpoint.clone(),
            status: status.as_u16(),
            first_line: self.first_line(&body),
            retry_after,
        })
    }

    /// The body of a success as JSON.
    pub(crate) async fn json_body(&self, response: reqwest::Response) -> Result<Value, JudgeError> {
        let text = response.text().await.map_err(|e| self.transport_error(e))?;
        serde_json::from_str(&text).map_err(|e| JudgeError::Protocol {
            endpoint: self.endpoint.clone(),
            detail: format!("body is not json ({e}): {}", self.first_line(&text)),
        })
    }

    /// The body of a success as bytes.
    pub(crate) async fn bytes_body(
        &self,
        response: reqwest::Response,
    ) -> Result<Vec<u8>, JudgeError> {
        let bytes = response
            .bytes()
            .await
            .map_err(|e| self.transport_error(e))?;
        Ok(bytes.to_vec())
    }

    fn transport_error(&self, error: reqwest::Error) -> JudgeError {
        if error.is_timeout() {
            JudgeError::Timeout {
                endpoint: self.endpoint.clone(),
                timeout: self.settings.request_timeout,
            }
        } else {
            // Without the URL: a base URL may carry a key in its query string.
            JudgeError::Transport {
                endpoint: self.endpoint.clone(),
                source: error.without_url(),
            }
        }
    }

    fn first_line(&self, body: &str) -> String {
        let line = body.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        let line: String = line.trim().chars().take(MAX_ERROR_LINE_CHARS).collect();
        if line.is_empty() {
            return "(empty body)".into();
        }
        match &self.settings.api_key {
            Some(key) => key.redact_in(&line),
            None => line,
        }
    }

    pub(crate) fn protocol(&self, detail: impl Into<String>) -> JudgeError {
        JudgeError::Protocol {
            endpoint: self.endpoint.clone(),
            detail: detail.into(),
        }
    }
}

/// reqwest is built without a bundled TLS crypto provider (aws-lc costs minutes to compile):
/// install ring as the process default unless the application already installed one.
fn ensure_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Losing a race here means another thread installed a provider: equally fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

/// `retry-after-ms` (OpenAI's precise form) first, then `Retry-After` in seconds. The HTTP-date
/// form is ignored: back-off applies instead.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let read = |name: &str| headers.get(name)?.to_str().ok()?.trim().parse::<f64>().ok();
    let seconds = read("retry-after-ms")
        .map(|ms| ms / 1000.0)
        .or_else(|| read("retry-after"))?;
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds))
}

#[derive(Deserialize)]
struct WireChat {
    #[serde(default)]
    choices: Vec<WireChoice>,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct WireChoice {
    message: Option<WireMessage>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireMessage {
    #[serde(default)]
    content: Option<String>,
}

#[derive(Deserialize)]
struct WireEmbeddings {
    data: Vec<WireEmbedding>,
}

#[derive(Deserialize)]
struct WireEmbedding {
    index: usize,
    embedding: Vec<f32>,
}

impl ChatModel for OpenAiBackend {
    fn kind(&self) -> &str {
        "openai"
    }

    fn model(&self) -> &str {
        &self.settings.model
    }

    fn endpoint(&self) -> String {
        self.endpoint.clone()
    }

    fn supports_response_schema(&self) -> bool {
        self.settings.schema_mode == crate::settings::SchemaMode::ResponseFormat
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, JudgeError> {
        let body = chat_body(&self.settings.model, request);
        let value = self.post("chat/completions", &body).await?;
        parse_chat_completion(value).map_err(|detail| self.protocol(detail))
    }
}

/// The `/chat/completions` body for `request` to `model`: what the backend sends, and what a
/// batch input line carries (see [`crate::batch`]), so both ask exactly the same thing.
pub(crate) fn chat_body(model: &str, request: &ChatRequest) -> Value {
    let mut body = json!({
        "model": model,
        "messages": request.messages,
        "temperature": request.sampling.temperature,
    });
    if let Some(top_p) = request.sampling.top_p {
        body["top_p"] = json!(top_p);
    }
    if let Some(max_tokens) = request.sampling.max_tokens {
        body["max_tokens"] = json!(max_tokens);
    }
    if let Some(seed) = request.sampling.seed {
        body["seed"] = json!(seed);
    }
    if let Some(schema) = &request.response_schema {
        body["response_format"] = json!({
            "type": "json_schema",
            "json_schema": {"name": schema.name, "schema": schema.schema},
        });
    }
    body
}

/// A chat completion body read into a [`ChatResponse`] (first choice; usage when the server
/// sent it), or what is wrong with it.
pub(crate) fn parse_chat_completion(value: Value) -> Result<ChatResponse, String> {
    let wire: WireChat =
        serde_json::from_value(value).map_err(|e| format!("not a chat completion: {e}"))?;
    let choice = wire
        .choices
        .into_iter()
        .next()
        .ok_or_else(|| "chat completion without choices".to_owned())?;
    Ok(ChatResponse {
        text: choice.message.and_then(|m| m.content).unwrap_or_default(),
        usage: wire.usage.unwrap_or_default(),
        finish_reason: choice.finish_reason,
    })
}

impl Embedder for OpenAiBackend {
    fn embedding_kind(&self) -> &str {
        "openai"
    }

    fn embedding_model(&self) -> &str {
        &self.settings.model
    }

    async fn embed(&self, inputs: &[String]) -> Result<Vec<Vec<f32>>, JudgeError> {
        let body = json!({"model": self.settings.model, "input": inputs});
        let value = self.post("embeddings", &body).await?;
        let mut wire: WireEmbeddings = serde_json::from_value(value)
            .map_err(|e| self.protocol(format!("not an embeddings answer: {e}")))?;
        if wire.data.len() != inputs.len() {
            return Err(self.protocol(format!(
                "{} embeddings for {} inputs",
                wire.data.len(),
                inputs.len()
            )));
        }
        wire.data.sort_by_key(|d| d.index);
        Ok(wire.data.into_iter().map(|d| d.embedding).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn https_client_builds_and_a_non_tls_peer_is_a_transport_error() {
        // Proves the TLS path is wired (no missing-provider panic) without leaving loopback.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let accept = std::thread::spawn(move || {
            use std::io::Write;
            if let Ok((mut stream, _)) = listener.accept() {
                let _ = stream.write_all(b"HTTP/1.1 200 OK\r\n\r\nnot tls");
            }
        });
        let mut settings = EndpointSettings::new(format!("https://127.0.0.1:{port}/v1"), "m");
        settings.request_timeout = Duration::from_secs(5);
        let backend = OpenAiBackend::new(settings).unwrap();
        let request = ChatRequest {
            messages: vec![crate::chat::Message::user("x")],
            sampling: crate::chat::Sampling::default(),
            response_schema: None,
        };
        let err = backend.chat(&request).await.unwrap_err();
        assert!(matches!(err, JudgeError::Transport { .. }), "{err}");
        let _ = accept.join();
    }

    #[test]
    fn retry_after_prefers_milliseconds() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", HeaderValue::from_static("25"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(25)));
        let mut date = HeaderMap::new();
        date.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&date), None);
    }
}
