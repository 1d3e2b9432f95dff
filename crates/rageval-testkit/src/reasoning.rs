//! Answering like a reasoning model (Qwen3 and DeepSeek-R1 on Ollama or vLLM, OpenAI's
//! o-series): [`ReasoningModes`] say where the thinking goes, whether chat-model parameters
//! are refused, and whether a small token cap ends the answer while the model still thinks.
//!
//! The behaviour follows the bench mock's `--reasoning` (`shared/bench/mock_llm.py`): the
//! final answer is always the one the plain mock gives for the same request, and the
//! thinking before it drafts an answer with the verdicts turned around
//! ([`crate::fill::opposite_instance`]), so a client that reads the thinking for the answer
//! gets wrong verdicts rather than an error. This module lays messages out; counting them in
//! the stats is the server's job.

use std::fmt;
use std::str::FromStr;

use serde_json::{Value, json};

/// Tokens a reasoning model spends thinking before its answer (the `budget` threshold).
pub(crate) const REASONING_TOKENS: u64 = 800;
/// The filler that makes the thinking about [`REASONING_TOKENS`] long (4 characters a token).
const THINKING_FILLER_CHARS: usize = 4 * REASONING_TOKENS as usize;

/// One way a reasoning model's answer differs from a plain chat model's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReasoningMode {
    /// `<think>` thinking `</think>` before the answer in `content`.
    Think,
    /// The same without the opening tag (templates that open it in the prompt).
    CloseOnly,
    /// The answer in `content`, the thinking in `message.reasoning_content`.
    Field,
    /// The same in `message.reasoning`.
    FieldNew,
    /// `content` null; thinking and then the answer in the reasoning field.
    FieldOnly,
    /// 400 for `temperature` other than 1 and for `max_tokens`.
    StrictParams,
    /// A token cap below the thinking's cost ends the answer with `finish_reason: length`.
    Budget,
}

impl ReasoningMode {
    /// Every mode, in the order `--help` lists them.
    pub const ALL: [ReasoningMode; 7] = [
        ReasoningMode::Think,
        ReasoningMode::CloseOnly,
        ReasoningMode::Field,
        ReasoningMode::FieldNew,
        ReasoningMode::FieldOnly,
        ReasoningMode::StrictParams,
        ReasoningMode::Budget,
    ];

    /// The mode's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            ReasoningMode::Think => "think",
            ReasoningMode::CloseOnly => "close-only",
            ReasoningMode::Field => "field",
            ReasoningMode::FieldNew => "field-new",
            ReasoningMode::FieldOnly => "field-only",
            ReasoningMode::StrictParams => "strict-params",
            ReasoningMode::Budget => "budget",
        }
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// A name that is not a reasoning mode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown reasoning mode `{mode}` (known: {known})", known = known_modes())]
pub struct UnknownReasoningMode {
    /// The name given.
    pub mode: String,
}

fn known_modes() -> String {
    ReasoningMode::ALL.map(ReasoningMode::name).join(", ")
}

impl FromStr for ReasoningMode {
    type Err = UnknownReasoningMode;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        ReasoningMode::ALL
            .into_iter()
            .find(|mode| mode.name() == name)
            .ok_or_else(|| UnknownReasoningMode {
                mode: name.to_owned(),
            })
    }
}

/// A set of [`ReasoningMode`]s; empty (the default) answers as a plain chat model.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ReasoningModes {
    bits: u8,
}

impl ReasoningModes {
    /// The set holding `modes`.
    pub fn of(modes: &[ReasoningMode]) -> Self {
        ReasoningModes {
            bits: modes.iter().fold(0, |bits, mode| bits | mode.bit()),
        }
    }

    /// Whether `mode` is in the set.
    pub fn contains(self, mode: ReasoningMode) -> bool {
        self.bits & mode.bit() != 0
    }

    /// Whether no mode is set (a plain chat model).
    pub fn is_empty(self) -> bool {
        self.bits == 0
    }

    /// The modes set, in [`ReasoningMode::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = ReasoningMode> {
        ReasoningMode::ALL
            .into_iter()
            .filter(move |mode| self.contains(*mode))
    }

    /// Whether a reasoning parser moves the thinking out of `content`.
    fn uses_field(self) -> bool {
        [
            ReasoningMode::Field,
            ReasoningMode::FieldNew,
            ReasoningMode::FieldOnly,
        ]
        .into_iter()
        .any(|mode| self.contains(mode))
    }

    /// The message field the thinking goes in when [`Self::uses_field`].
    fn field_name(self) -> &'static str {
        if self.contains(ReasoningMode::FieldNew) {
            "reasoning"
        } else {
            "reasoning_content"
        }
    }
}

/// Parses a comma-separated list such as `think,strict-params,budget` (spaces around names
/// and empty items are ignored, so `""` is the empty set).
impl FromStr for ReasoningModes {
    type Err = UnknownReasoningMode;

    fn from_str(list: &str) -> Result<Self, Self::Err> {
        let mut modes = ReasoningModes::default();
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            modes.bits |= name.parse::<ReasoningMode>()?.bit();
        }
        Ok(modes)
    }
}

/// The comma-separated list [`FromStr`] reads back.
impl fmt::Display for ReasoningModes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.iter().map(ReasoningMode::name).collect();
        f.write_str(&names.join(","))
    }
}

/// The `error` object of the 400 an OpenAI reasoning model answers to chat-model sampling
/// parameters, when `strict-params` is set: `temperature` other than 1 first, then any
/// `max_tokens` (those models take `max_completion_tokens`).
pub(crate) fn strict_params_refusal(modes: ReasoningModes, body: &Value) -> Option<Value> {
    if !modes.contains(ReasoningMode::StrictParams) {
        return None;
    }
    match body.get("temperature") {
        None | Some(Value::Null) => {}
        Some(t) if t.as_f64() == Some(1.0) => {}
        Some(t) => {
            return Some(json!({
                "message": format!(
                    "Unsupported value: this model takes only the default temperature (1), not {t}."
                ),
                "type": "invalid_request_error",
                "param": "temperature",
                "code": "unsupported_value",
            }));
        }
    }
    body.get("max_tokens").map(|_| {
        json!({
            "message": "Unsupported parameter: this model does not take 'max_tokens'; \
                        send 'max_completion_tokens' instead.",
            "type": "invalid_request_error",
            "param": "max_tokens",
            "code": "unsupported_parameter",
        })
    })
}

/// What the model "thinks" before answering: the draft (an answer with the verdicts turned
/// around, or the answer itself when there is no schema to turn), then filler that makes the
/// thinking cost about [`REASONING_TOKENS`].
pub(crate) fn thinking(draft: &str) -> String {
    let filler = "x ".repeat(THINKING_FILLER_CHARS / 2);
    format!(
        "Working through the request before answering. My draft: {draft} \
         Now I go back over the material to see whether the draft holds up. {}",
        filler.trim_end()
    )
}

/// A chat message laid out as the modes say.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LaidOut {
    /// The `message` object of the choice.
    pub(crate) message: Value,
    /// `stop`, or `length` when the budget ran out while thinking.
    pub(crate) finish_reason: &'static str,
    /// Characters of the answer sent (0 when the budget cut it off).
    pub(crate) answer_chars: usize,
    /// Characters of thinking sent.
    pub(crate) reasoning_chars: usize,
}

impl LaidOut {
    /// Whether the budget ended the message before its answer.
    pub(crate) fn truncated(&self) -> bool {
        self.finish_reason == "length"
    }
}

/// Lays `answer` and the `thought` before it out as `modes` say, for request `body` (whose
/// `max_completion_tokens`, else `max_tokens`, is the `budget` cap).
pub(crate) fn lay_out(modes: ReasoningModes, answer: &str, thought: &str, body: &Value) -> LaidOut {
    let answer_chars = answer.chars().count();
    let thought_chars = thought.chars().count();
    let sent = |message: Value, reasoning_chars: usize| LaidOut {
        message,
        finish_reason: "stop",
        answer_chars,
        reasoning_chars,
    };
    let cap = body
        .get("max_completion_tokens")
        .or_else(|| body.get("max_tokens"))
        .and_then(Value::as_f64);
    let needed = (REASONING_TOKENS + answer_chars.div_ceil(4) as u64) as f64;
    if let Some(cap) = cap.filter(|cap| modes.contains(ReasoningMode::Budget) && *cap < needed) {
        // The cap ran out mid-thought: no answer, the thinking cut at the cap.
        let cut: String = thought.chars().take((cap.max(0.0) as usize) * 4).collect();
        let reasoning_chars = cut.chars().count();
        let message = if modes.uses_field() {
            json!({"role": "assistant", "content": "", modes.field_name(): cut})
        } else {
            json!({"role": "assistant", "content": format!("<think>{cut}")})
        };
        return LaidOut {
            message,
            finish_reason: "length",
            answer_chars: 0,
            reasoning_chars,
        };
    }
    if modes.contains(ReasoningMode::FieldOnly) {
        // A reasoning parser that took the answer for more thinking.
        let everything = format!("{thought}\n\n{answer}");
        let message = json!({"role": "assistant", "content": null, modes.field_name(): everything});
        return sent(message, thought_chars);
    }
    if modes.contains(ReasoningMode::Field) || modes.contains(ReasoningMode::FieldNew) {
        let message = json!({"role": "assistant", "content": answer, modes.field_name(): thought});
        return sent(message, thought_chars);
    }
    if modes.contains(ReasoningMode::CloseOnly) {
        let content = format!("{thought}\n</think>\n\n{answer}");
        return sent(
            json!({"role": "assistant", "content": content}),
            thought_chars,
        );
    }
    if modes.contains(ReasoningMode::Think) {
        let content = format!("<think>\n{thought}\n</think>\n\n{answer}");
        return sent(
            json!({"role": "assistant", "content": content}),
            thought_chars,
        );
    }
    sent(json!({"role": "assistant", "content": answer}), 0)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use axum::Router;
    use axum::body::Body;
    use axum::http::Request;
    use tower::ServiceExt;

    use super::*;
    use crate::server::{Shared, router};
    use crate::{MockConfig, MockStats};

    fn app(modes: &str) -> (Router, Arc<Shared>) {
        let shared = Shared::new(MockConfig {
            reasoning: modes.parse().unwrap(),
            ..MockConfig::default()
        });
        (router(Arc::clone(&shared)), shared)
    }

    /// A judge-like request: a reason, and verdicts of three kinds; `extra` adds sampling
    /// parameters.
    fn request(extra: Value) -> Value {
        let mut body = json!({
            "model": "m",
            "messages": [{"role": "user", "content": "Item 7 is green. Item 8 is round."}],
            "response_format": {"type": "json_schema", "json_schema": {"name": "v", "schema": {
                "type": "object",
                "properties": {
                    "reason": {"type": "string"},
                    "verdict": {"type": "integer"},
                    "supported": {"type": "boolean"},
                    "label": {"type": "string", "enum": ["pass", "fail"]}
                },
                "required": ["reason", "verdict", "supported", "label"]
            }}}
        });
        if let (Some(body), Value::Object(extra)) = (body.as_object_mut(), extra) {
            body.extend(extra);
        }
        body
    }

    async fn post(app: &Router, body: &Value) -> (u16, Value) {
        let request = Request::post("/v1/chat/completions")
            .header("content-type", "application/json")
            .body(Body::from(body.to_string()))
            .unwrap();
        let response = app.clone().oneshot(request).await.unwrap();
        let status = response.status().as_u16();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        (status, serde_json::from_slice(&bytes).unwrap())
    }

    /// What the plain mock (no reasoning) answers.
    async fn plain_answer(body: &Value) -> String {
        let (status, reply) = post(&app("").0, body).await;
        assert_eq!(status, 200, "{reply}");
        assert!(reply["usage"].get("completion_tokens_details").is_none());
        reply["choices"][0]["message"]["content"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// The answer drafted inside a thought: the first JSON object after the draft's label.
    fn draft_in(thought: &str) -> Value {
        let (_, after) = thought.split_once("My draft: ").unwrap();
        let mut values = serde_json::Deserializer::from_str(after).into_iter::<Value>();
        values.next().unwrap().unwrap()
    }

    /// The draft parses, with every verdict the other way from the answer's.
    fn assert_contrary(thought: &str, answer: &str) {
        let draft = draft_in(thought);
        let answer: Value = serde_json::from_str(answer).unwrap();
        for verdict in ["verdict", "supported", "label"] {
            assert!(!draft[verdict].is_null(), "{draft}");
            assert_ne!(
                draft[verdict], answer[verdict],
                "{verdict}: {draft} vs {answer}"
            );
        }
    }

    fn tokens(text: &str) -> u64 {
        text.chars().count().div_ceil(4) as u64
    }

    /// Usage and stats count the answer and the thinking, the thinking apart too.
    fn assert_usage(reply: &Value, stats: &MockStats, answer: &str, thought: &str) {
        let usage = &reply["usage"];
        let thought_tokens = tokens(thought);
        assert_eq!(
            usage["completion_tokens"],
            json!(tokens(answer) + thought_tokens)
        );
        assert_eq!(
            usage["completion_tokens_details"]["reasoning_tokens"],
            json!(thought_tokens)
        );
        assert_eq!(stats.reasoning_tokens, thought_tokens);
        assert_eq!(stats.completion_tokens, tokens(answer) + thought_tokens);
    }

    /// The thought and answer a `think` model sends for `body`.
    async fn think_parts(body: &Value) -> (String, String) {
        let (_, reply) = post(&app("think").0, body).await;
        let content = reply["choices"][0]["message"]["content"].as_str().unwrap();
        let inner = content.strip_prefix("<think>\n").unwrap();
        let (thought, answer) = inner.split_once("\n</think>\n\n").unwrap();
        (thought.to_owned(), answer.to_owned())
    }

    #[tokio::test]
    async fn think_puts_a_contrary_draft_in_tags_before_the_plain_answer() {
        let body = request(json!({}));
        let (app, shared) = app("think");
        let (status, reply) = post(&app, &body).await;
        assert_eq!(status, 200);
        let choice = &reply["choices"][0];
        assert_eq!(choice["finish_reason"], "stop");
        let content = choice["message"]["content"].as_str().unwrap();
        let inner = content.strip_prefix("<think>\n").unwrap();
        let (thought, answer) = inner.split_once("\n</think>\n\n").unwrap();
        assert_eq!(answer, plain_answer(&body).await);
        assert_contrary(thought, answer);
        assert!(tokens(thought) >= REASONING_TOKENS, "{}", tokens(thought));
        assert!(choice["message"].get("reasoning_content").is_none());
        assert_usage(&reply, &shared.lock().stats, answer, thought);
        // Same content, same answer and thinking, whatever the sampling knobs say.
        let knobs = request(json!({"temperature": 0.3, "max_tokens": 10}));
        assert_eq!(post(&app, &knobs).await.1["choices"], reply["choices"]);
    }

    #[tokio::test]
    async fn close_only_drops_the_opening_tag() {
        let body = request(json!({}));
        let (app, shared) = app("close-only");
        let (_, reply) = post(&app, &body).await;
        let content = reply["choices"][0]["message"]["content"].as_str().unwrap();
        assert!(!content.contains("<think>"), "{content}");
        let (thought, answer) = content.split_once("\n</think>\n\n").unwrap();
        assert_eq!(answer, plain_answer(&body).await);
        assert_eq!(
            (thought.to_owned(), answer.to_owned()),
            think_parts(&body).await
        );
        assert_contrary(thought, answer);
        assert_usage(&reply, &shared.lock().stats, answer, thought);
    }

    #[tokio::test]
    async fn field_modes_put_the_thinking_beside_the_answer() {
        let body = request(json!({}));
        let (thought, answer) = think_parts(&body).await;
        for (modes, field, other) in [
            ("field", "reasoning_content", "reasoning"),
            ("field-new", "reasoning", "reasoning_content"),
            ("field,field-new", "reasoning", "reasoning_content"),
        ] {
            let (app, shared) = app(modes);
            let (_, reply) = post(&app, &body).await;
            let message = &reply["choices"][0]["message"];
            assert_eq!(message["content"], json!(answer), "{modes}");
            assert_eq!(message[field], json!(thought), "{modes}");
            assert!(message.get(other).is_none(), "{modes}: {message}");
            assert_eq!(reply["choices"][0]["finish_reason"], "stop");
            assert_contrary(message[field].as_str().unwrap(), &answer);
            assert_usage(&reply, &shared.lock().stats, &answer, &thought);
        }
    }

    #[tokio::test]
    async fn field_only_leaves_content_null_and_ends_the_reasoning_with_the_answer() {
        let body = request(json!({}));
        let (thought, answer) = think_parts(&body).await;
        for (modes, field) in [
            ("field-only", "reasoning_content"),
            ("field-new,field-only", "reasoning"),
        ] {
            let (app, shared) = app(modes);
            let (_, reply) = post(&app, &body).await;
            let message = &reply["choices"][0]["message"];
            assert!(message["content"].is_null(), "{modes}: {message}");
            assert_eq!(message[field], json!(format!("{thought}\n\n{answer}")));
            assert_eq!(reply["choices"][0]["finish_reason"], "stop");
            assert_contrary(message[field].as_str().unwrap(), &answer);
            assert_usage(&reply, &shared.lock().stats, &answer, &thought);
        }
    }

    #[tokio::test]
    async fn strict_params_refuses_chat_model_parameters_as_openai_does() {
        let (app, shared) = app("strict-params");
        let (status, reply) = post(&app, &request(json!({"temperature": 0}))).await;
        assert_eq!(status, 400);
        let error = &reply["error"];
        assert_eq!(error["type"], "invalid_request_error");
        assert_eq!(error["param"], "temperature");
        assert_eq!(error["code"], "unsupported_value");
        assert!(error["message"].as_str().unwrap().contains("temperature"));
        // temperature is named first when both are wrong.
        let both = request(json!({"temperature": 0.5, "max_tokens": 300}));
        assert_eq!(post(&app, &both).await.1["error"]["param"], "temperature");
        let (status, reply) = post(&app, &request(json!({"max_tokens": 300}))).await;
        assert_eq!(status, 400);
        let error = &reply["error"];
        assert_eq!(error["param"], "max_tokens");
        assert_eq!(error["code"], "unsupported_parameter");
        assert!(
            error["message"]
                .as_str()
                .unwrap()
                .contains("max_completion_tokens")
        );
        let allowed = request(json!({"temperature": 1, "max_completion_tokens": 300}));
        let (status, reply) = post(&app, &allowed).await;
        assert_eq!(status, 200, "{reply}");
        assert_eq!(
            reply["choices"][0]["message"]["content"],
            json!(plain_answer(&allowed).await)
        );
        assert_eq!(
            reply["usage"]["completion_tokens_details"]["reasoning_tokens"],
            0
        );
        let stats = shared.lock().stats.clone();
        assert_eq!(stats.faults.param_400, 3);
        assert_eq!(stats.status_counts.get(&400), Some(&3));
        // The counters as `GET /stats` shows them.
        let stats_request = Request::get("/stats").body(Body::empty()).unwrap();
        let response = app.clone().oneshot(stats_request).await.unwrap();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        let shown: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(shown["faults"]["param_400"], 3);
        assert_eq!(shown["faults"]["truncated"], 0);
        assert_eq!(shown["reasoning_tokens"], 0);
        assert_eq!(shown["status_counts"]["400"], 3);
    }

    #[tokio::test]
    async fn budget_cuts_the_thinking_below_the_cap_and_not_at_it() {
        let body = request;
        let (thought, answer) = think_parts(&body(json!({}))).await;
        let enough = REASONING_TOKENS + tokens(&answer);
        let (app, shared) = app("budget");
        let (_, reply) = post(&app, &body(json!({"max_completion_tokens": 100}))).await;
        let choice = &reply["choices"][0];
        assert_eq!(choice["finish_reason"], "length");
        let cut: String = thought.chars().take(400).collect();
        assert_eq!(choice["message"]["content"], json!(format!("<think>{cut}")));
        assert_eq!(reply["usage"]["completion_tokens"], 100);
        assert_eq!(
            reply["usage"]["completion_tokens_details"]["reasoning_tokens"],
            100
        );
        assert_eq!(shared.lock().stats.faults.truncated, 1);
        // `max_tokens` is the cap when `max_completion_tokens` is absent.
        let legacy = body(json!({"max_tokens": enough - 1}));
        assert_eq!(
            post(&app, &legacy).await.1["choices"][0]["finish_reason"],
            "length"
        );
        // A cap that covers the thinking and the answer lets the answer through.
        for cap in [json!({"max_completion_tokens": enough}), json!({})] {
            let (_, reply) = post(&app, &body(cap)).await;
            assert_eq!(reply["choices"][0]["finish_reason"], "stop");
            assert_eq!(reply["choices"][0]["message"]["content"], json!(answer));
        }
        assert_eq!(shared.lock().stats.faults.truncated, 2);
    }

    #[tokio::test]
    async fn think_strict_params_and_budget_together() {
        let (thought, answer) = think_parts(&request(json!({}))).await;
        let (app, shared) = app("think,strict-params,budget");
        let (status, _) = post(&app, &request(json!({"temperature": 0.2}))).await;
        assert_eq!(status, 400);
        let short = request(json!({"temperature": 1, "max_completion_tokens": 50}));
        let (status, reply) = post(&app, &short).await;
        assert_eq!(status, 200);
        assert_eq!(reply["choices"][0]["finish_reason"], "length");
        let cut: String = thought.chars().take(200).collect();
        assert_eq!(
            reply["choices"][0]["message"]["content"],
            json!(format!("<think>{cut}"))
        );
        let ample = request(json!({"max_completion_tokens": 4000}));
        let (_, reply) = post(&app, &ample).await;
        assert_eq!(reply["choices"][0]["finish_reason"], "stop");
        assert_eq!(
            reply["choices"][0]["message"]["content"],
            json!(format!("<think>\n{thought}\n</think>\n\n{answer}"))
        );
        let faults = shared.lock().stats.faults.clone();
        assert_eq!((faults.param_400, faults.truncated), (1, 1));
    }

    #[tokio::test]
    async fn field_new_field_only_and_budget_together() {
        let (thought, answer) = think_parts(&request(json!({}))).await;
        let (app, _) = app("field-new,field-only,budget");
        let (_, reply) = post(&app, &request(json!({"max_completion_tokens": 10}))).await;
        let message = &reply["choices"][0]["message"];
        assert_eq!(reply["choices"][0]["finish_reason"], "length");
        assert_eq!(message["content"], "");
        let cut: String = thought.chars().take(40).collect();
        assert_eq!(message["reasoning"], json!(cut));
        assert!(message.get("reasoning_content").is_none());
        let (_, reply) = post(&app, &request(json!({"max_completion_tokens": 4000}))).await;
        let message = &reply["choices"][0]["message"];
        assert!(message["content"].is_null());
        assert_eq!(
            message["reasoning"],
            json!(format!("{thought}\n\n{answer}"))
        );
    }

    #[test]
    fn modes_parse_from_a_list_and_print_back() {
        let modes: ReasoningModes = " think,strict-params ,, budget".parse().unwrap();
        assert!(modes.contains(ReasoningMode::Think));
        assert!(modes.contains(ReasoningMode::Budget));
        assert!(!modes.contains(ReasoningMode::Field));
        assert_eq!(modes.to_string(), "think,strict-params,budget");
        assert_eq!(modes.to_string().parse::<ReasoningModes>(), Ok(modes));
        assert!("".parse::<ReasoningModes>().unwrap().is_empty());
        let every: ReasoningModes = known_modes().replace(' ', "").parse().unwrap();
        assert_eq!(every, ReasoningModes::of(&ReasoningMode::ALL));
    }

    #[test]
    fn an_unknown_mode_is_named_with_the_known_ones() {
        let error = "think,field_new".parse::<ReasoningModes>().unwrap_err();
        assert_eq!(error.mode, "field_new");
        assert_eq!(
            error.to_string(),
            "unknown reasoning mode `field_new` (known: think, close-only, field, field-new, \
             field-only, strict-params, budget)"
        );
    }

    #[test]
    fn the_thinking_costs_about_the_reasoning_tokens() {
        let thought = thinking("{}");
        let tokens = thought.chars().count().div_ceil(4) as u64;
        assert!(
            (REASONING_TOKENS..REASONING_TOKENS + 50).contains(&tokens),
            "{tokens}"
        );
        assert!(!thought.contains("think>"));
    }
}
