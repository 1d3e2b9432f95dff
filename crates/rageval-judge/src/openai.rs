//! The OpenAI-compatible HTTP backend (OpenAI, DeepSeek, vLLM, Ollama, llama.cpp server).
//!
//! One [`OpenAiBackend`] owns one `reqwest::Client`: the per-call timeout (a request's whole
//! life: connecting, the headers and the body to its last byte) and the connect timeout,
//! the headers (the key, or the base URL's user info as Basic authentication, marked
//! sensitive), request URLs joined before the base URL's query string, and the translation
//! of HTTP outcomes into [`JudgeError`]s, with every credential redacted from any body it
//! quotes. It makes exactly one
//! attempt per call; it must not retry, cache or sleep — the [`Judge`](crate::Judge) does.

use std::time::Duration;

use reqwest::Method;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::chat::{ChatModel, ChatRequest, ChatResponse, Embedder, Usage};
use crate::error::JudgeError;
use crate::forms::{FormBook, LearnedForm, MAX_LESSONS_PER_CALL, Refusal, RequestForm};
use crate::reasoning::{Thinking, split_reply};
use crate::secret::ApiKey;
use crate::settings::{
    EndpointSettings, basic_authorization, credentials, request_url, url_secrets,
};

/// Longest quoted error-body line, in characters.
const MAX_ERROR_LINE_CHARS: usize = 200;

/// A client for one OpenAI-compatible endpoint.
#[derive(Debug, Clone)]
pub struct OpenAiBackend {
    client: reqwest::Client,
    settings: EndpointSettings,
    endpoint: String,
    /// Every credential an error body might echo: the key, header values, and what the
    /// base URL carries in its user info or query string.
    secrets: Vec<ApiKey>,
    /// How requests are written, as learned from refusals; shared by clones.
    forms: FormBook,
    /// Whether a chat request in the current form was ever answered; until one is, chat
    /// calls go one at a time through `probe`, so a server that refuses the form refuses it
    /// once rather than once per call in flight.
    settled: std::sync::Arc<std::sync::atomic::AtomicBool>,
    probe: std::sync::Arc<tokio::sync::Mutex<()>>,
}

impl OpenAiBackend {
    /// Builds the client; fails only on an unusable header name or value, or TLS set-up.
    pub fn new(settings: EndpointSettings) -> Result<Self, JudgeError> {
        ensure_crypto_provider();
        let endpoint = settings.endpoint_for_display();
        let mut headers = HeaderMap::new();
        // A key wins over user info in the base URL, which is otherwise sent as Basic
        // authentication; request URLs never carry the user info themselves.
        let authorization = match (&settings.api_key, credentials(&settings.base_url)) {
            (Some(key), _) => Some(format!("Bearer {}", key.expose())),
            (None, Some((user, password))) => Some(basic_authorization(&user, &password)),
            (None, None) => None,
        };
        if let Some(authorization) = authorization {
            let mut value = HeaderValue::from_str(&authorization).map_err(|_| {
                JudgeError::Settings("the credential is not a valid header value".into())
            })?;
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
        let mut secrets: Vec<ApiKey> = settings
            .api_key
            .iter()
            .cloned()
            .chain(settings.extra_headers.iter().map(|(_, v)| ApiKey::new(v)))
            .chain(url_secrets(&settings.base_url).into_iter().map(ApiKey::new))
            .collect();
        // Longest first: a secret holding another (`Basic …`) is redacted whole.
        secrets.sort_by_key(|secret| std::cmp::Reverse(secret.expose().len()));
        let forms = FormBook::new(settings.form.clone());
        Ok(OpenAiBackend {
            client,
            settings,
            endpoint,
            secrets,
            forms,
            settled: Default::default(),
            probe: Default::default(),
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

    /// A request to `path` under the base URL (before its query string, which is kept),
    /// with the client's headers and timeouts.
    pub(crate) fn request(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.client
            .request(method, request_url(&self.settings.base_url, path))
    }

    /// Sends one request (one attempt); a non-success status becomes [`JudgeError::Status`]
    /// with the first line of the body, the key redacted.
    pub(crate) async fn send(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, JudgeError> {
        self.send_reading_refusals(request)
            .await
            .map_err(|(error, _)| error)
    }

    /// Like [`Self::send`], and a 400 or 422 also gives back its whole body, for
    /// [`Refusal::read`].
    async fn send_reading_refusals(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, (JudgeError, Option<String>)> {
        let response = request
            .send()
            .await
            .map_err(|e| (self.transport_error(e), None))?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let retry_after = retry_after(response.headers());
        let body = response.text().await.unwrap_or_default();
        let error = JudgeError::Status {
            endpoint: self.endpoint.clone(),
            status: status.as_u16(),
            first_line: self.first_line(&body),
            retry_after,
        };
        let refusal = matches!(status.as_u16(), 400 | 422).then_some(body);
        Err((error, refusal))
    }

    /// The form requests are written in now, and what it learned, for the manifest.
    pub fn learned_form(&self) -> LearnedForm {
        LearnedForm {
            endpoint: self.endpoint.clone(),
            model: self.settings.model.clone(),
            form: self.forms.form(),
            lessons: self.forms.lessons(),
        }
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
        self.secrets
            .iter()
            .fold(line, |line, secret| secret.redact_in(&line))
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
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    completion_tokens_details: Option<WireCompletionDetails>,
}

#[derive(Deserialize)]
struct WireCompletionDetails {
    #[serde(default)]
    reasoning_tokens: Option<u64>,
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
    /// DeepSeek's API and vLLM before 2026.
    #[serde(default)]
    reasoning_content: Option<String>,
    /// vLLM from 2026 (renamed from `reasoning_content`), OpenRouter, Ollama.
    #[serde(default)]
    reasoning: Option<String>,
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

    fn learned_forms(&self) -> Vec<LearnedForm> {
        vec![self.learned_form()]
    }

    fn learn_from_refusal(&self, body: &str, sent: &Value) -> bool {
        Refusal::read(body).is_some_and(|refusal| self.forms.learn(&refusal, sent))
    }

    fn adopt_forms(&self, forms: &[LearnedForm]) {
        let mine = forms
            .iter()
            .find(|f| f.endpoint == self.endpoint && f.model == self.settings.model);
        if let Some(recorded) = mine {
            self.forms.adopt(recorded.form.clone());
        }
    }

    /// One call; a 400 that names a parameter the form can change (a temperature or a cap
    /// name a reasoning model refuses, an option the server does not know) is sent again in
    /// the changed form, which the next calls use from the start. Until the endpoint first
    /// answers, calls go one at a time, so the form is learned by one call, not by every call
    /// in flight.
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, JudgeError> {
        use std::sync::atomic::Ordering;
        let _probing = if self.settled.load(Ordering::Acquire) {
            None
        } else {
            let guard = self.probe.lock().await;
            (!self.settled.load(Ordering::Acquire)).then_some(guard)
        };
        let answer = self.chat_in_form(request).await;
        if answer.is_ok() {
            self.settled.store(true, Ordering::Release);
        }
        answer
    }
}

impl OpenAiBackend {
    /// One call in the form in use, learning from refusals that name a parameter.
    async fn chat_in_form(&self, request: &ChatRequest) -> Result<ChatResponse, JudgeError> {
        let mut lessons = 0;
        let response = loop {
            let body = chat_body(&self.settings.model, request, &self.forms.form());
            let sent = self
                .send_reading_refusals(self.request(Method::POST, "chat/completions").json(&body))
                .await;
            match sent {
                Ok(response) => break response,
                Err((error, Some(refusal))) if lessons < MAX_LESSONS_PER_CALL => {
                    let learned = Refusal::read(&refusal)
                        .is_some_and(|refusal| self.forms.learn(&refusal, &body));
                    if !learned {
                        return Err(error);
                    }
                    lessons += 1;
                    tracing::debug!(endpoint = %self.endpoint, %error, "request form changed");
                }
                Err((error, _)) => return Err(error),
            }
        };
        let value = self.json_body(response).await?;
        parse_chat_completion(value).map_err(|detail| self.protocol(detail))
    }
}

/// The `/chat/completions` body for `request` to `model`, written in `form`: what the backend
/// sends, and what a batch input line carries (see [`crate::batch`]), so both ask exactly the
/// same thing.
pub(crate) fn chat_body(model: &str, request: &ChatRequest, form: &RequestForm) -> Value {
    let sampling = &request.sampling;
    let mut body = json!({
        "model": model,
        "messages": request.messages,
    });
    let mut set = |name: &str, value: Value| {
        if !form.dropped.contains(name) {
            body[name] = value;
        }
    };
    if let Some(temperature) = sampling.temperature {
        set("temperature", json!(temperature));
    }
    if let Some(top_p) = sampling.top_p {
        set("top_p", json!(top_p));
    }
    if let Some(max_tokens) = sampling.max_tokens {
        set(form.cap_param.field(), json!(max_tokens));
    }
    if let Some(seed) = sampling.seed {
        set("seed", json!(seed));
    }
    if let Some(effort) = &sampling.reasoning_effort {
        set("reasoning_effort", json!(effort));
    }
    if let Some(thinking) = sampling.thinking {
        // vLLM and SGLang pass it to the chat template; DashScope reads it at the top level.
        // A server that refuses either teaches the form to leave it out.
        set("chat_template_kwargs", json!({"enable_thinking": thinking}));
        set("enable_thinking", json!(thinking));
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
/// sent it), the answer split from any thinking ([`crate::reasoning`]), or what is wrong with
/// it.
pub(crate) fn parse_chat_completion(value: Value) -> Result<ChatResponse, String> {
    let wire: WireChat =
        serde_json::from_value(value).map_err(|e| format!("not a chat completion: {e}"))?;
    let choice = wire
        .choices
        .into_iter()
        .next()
        .ok_or_else(|| "chat completion without choices".to_owned())?;
    let (content, field) = match choice.message {
        Some(m) => (m.content, m.reasoning_content.or(m.reasoning)),
        None => (None, None),
    };
    let split = split_reply(
        content.as_deref(),
        field.as_deref(),
        choice.finish_reason.as_deref(),
    );
    let usage = wire.usage.map_or_else(Usage::default, |u| Usage {
        prompt_tokens: u.prompt_tokens,
        completion_tokens: u.completion_tokens,
        reasoning_tokens: u.completion_tokens_details.and_then(|d| d.reasoning_tokens),
    });
    let (thinking, thinking_text) = match split.thinking {
        Some((source, text)) => (
            Some(Thinking {
                source,
                chars: text.chars().count() as u64,
            }),
            text,
        ),
        None => (None, String::new()),
    };
    Ok(ChatResponse {
        text: split.answer,
        usage,
        finish_reason: choice.finish_reason,
        thinking,
        thinking_text,
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
    fn a_reasoning_reply_is_read_after_its_thinking_with_its_tokens() {
        let draft = r#"{"verdict": 0}"#;
        let answer = r#"{"verdict": 1}"#;
        let reply = |message: Value, finish: &str| {
            json!({
                "choices": [{"message": message, "finish_reason": finish}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 900,
                          "completion_tokens_details": {"reasoning_tokens": 880}}
            })
        };
        let field = format!("Thinking. Draft: {draft}. Checking again.");
        let cases = [
            json!({"content": format!("<think>{field}</think>\n{answer}")}),
            json!({"content": format!("{field}</think>{answer}")}),
            json!({"content": answer, "reasoning_content": field}),
            json!({"content": answer, "reasoning": field}),
            json!({"content": null, "reasoning": format!("{field}\n\n{answer}")}),
        ];
        for message in cases {
            let parsed = parse_chat_completion(reply(message.clone(), "stop")).unwrap();
            assert_eq!(parsed.text, answer, "{message}");
            assert!(parsed.thinking.is_some() && parsed.thinking_text.contains(draft));
            assert_eq!(parsed.usage.reasoning_tokens, Some(880));
        }
        let cut = parse_chat_completion(reply(json!({"content": "<think>Thinking"}), "length"));
        assert!(cut.unwrap().cut_off());
    }

    #[test]
    fn the_body_is_written_in_the_endpoints_form() {
        let request = ChatRequest {
            messages: vec![crate::chat::Message::user("x")],
            sampling: crate::chat::Sampling {
                max_tokens: Some(64),
                reasoning_effort: Some("low".into()),
                thinking: Some(false),
                ..crate::chat::Sampling::default()
            },
            response_schema: None,
        };
        let plain = chat_body("m", &request, &RequestForm::default());
        assert_eq!(plain["temperature"], json!(0.0));
        assert_eq!(plain["max_tokens"], json!(64));
        assert_eq!(plain["reasoning_effort"], json!("low"));
        assert_eq!(
            plain["chat_template_kwargs"],
            json!({"enable_thinking": false})
        );
        let form = RequestForm {
            cap_param: crate::forms::CapParam::MaxCompletionTokens,
            dropped: ["temperature".to_owned(), "enable_thinking".to_owned()].into(),
        };
        let strict = chat_body("m", &request, &form);
        assert!(strict.get("temperature").is_none() && strict.get("max_tokens").is_none());
        assert_eq!(strict["max_completion_tokens"], json!(64));
        assert!(strict.get("enable_thinking").is_none());
        assert_eq!(
            strict["chat_template_kwargs"],
            json!({"enable_thinking": false})
        );
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
