//! How an endpoint wants its requests written, learned from its refusals rather than from
//! lists of model names (which go stale: every peer that keeps one chases new models).
//!
//! A [`RequestForm`] says how the parameters a request carries are put on the wire: under
//! which name the token cap goes (`max_tokens` or `max_completion_tokens`), whether the
//! temperature is sent, and which optional parameters the server refused and no longer gets.
//! When a server answers 400 naming a parameter (OpenAI's structured `error.param` and
//! `error.code`, else the parameter named in the message), the endpoint's form book changes the
//! form and the request is sent again in the new form; the form is kept for the rest of the
//! run and reported, so a run directory says what was sent. What a request *asks* (its
//! temperature, cap, effort) is decided by the judge's settings and is part of the cache key;
//! the form is how it is spelled for one endpoint and is part of neither the key nor a run's
//! identity.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, MutexGuard};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Parameters whose refusal makes the request go out again without them. `response_format`
/// is not among them: the judge answers its refusal by writing the schema into the prompt.
const DROPPABLE: [&str; 6] = [
    "reasoning_effort",
    "chat_template_kwargs",
    "enable_thinking",
    "seed",
    "top_p",
    "temperature",
];

/// Refusals one call may learn from before the last one is returned as an error: one per
/// parameter that can change, so a server that keeps refusing cannot loop.
pub(crate) const MAX_LESSONS_PER_CALL: usize = 6;

/// The name a request's token cap is sent under.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CapParam {
    /// `max_tokens`: what most OpenAI-compatible servers take.
    #[default]
    MaxTokens,
    /// `max_completion_tokens`: what OpenAI's reasoning models require.
    MaxCompletionTokens,
}

impl CapParam {
    /// The field name on the wire.
    pub fn field(self) -> &'static str {
        match self {
            CapParam::MaxTokens => "max_tokens",
            CapParam::MaxCompletionTokens => "max_completion_tokens",
        }
    }

    /// The form named `name` (`max_tokens`, `max_completion_tokens`).
    pub fn from_field(name: &str) -> Option<Self> {
        match name {
            "max_tokens" => Some(CapParam::MaxTokens),
            "max_completion_tokens" => Some(CapParam::MaxCompletionTokens),
            _ => None,
        }
    }
}

/// `max_tokens` or `max_completion_tokens`, as `--judge-max-tokens-param` and the Python
/// package's `max_tokens_param` take it.
impl std::str::FromStr for CapParam {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        CapParam::from_field(text.trim())
            .ok_or_else(|| "expected max_tokens or max_completion_tokens".to_owned())
    }
}

/// How requests to one endpoint are written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestForm {
    /// The name the token cap goes under.
    pub cap_param: CapParam,
    /// Parameters no longer sent, because the server refused them.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub dropped: BTreeSet<String>,
}

/// One refusal the form learned from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lesson {
    /// The parameter the server refused.
    pub param: String,
    /// The server's error code, when it sent one (`unsupported_value`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// What changed, in words (`max_tokens sent as max_completion_tokens`).
    pub change: String,
}

/// The forms one endpoint settled on, for the manifest and the console.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LearnedForm {
    /// The endpoint, redacted.
    pub endpoint: String,
    /// The model.
    pub model: String,
    /// The form in use.
    pub form: RequestForm,
    /// What it learned, in order (empty when the configured form was never refused).
    pub lessons: Vec<Lesson>,
}

impl LearnedForm {
    /// One line for a person: `m at URL: max_tokens sent as max_completion_tokens; ...`.
    pub fn describe(&self) -> String {
        let changes: Vec<&str> = self.lessons.iter().map(|l| l.change.as_str()).collect();
        format!(
            "{} at {}: {}",
            self.model,
            self.endpoint,
            changes.join("; ")
        )
    }
}

/// The refusal a 400 body carries: the parameters it names and the error code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    /// `error.param` alone when the server sent it, else every parameter the message names.
    pub params: Vec<String>,
    pub code: Option<String>,
}

impl Refusal {
    /// The parameters a 400 or 422 body blames: `error.param` (OpenAI's structured form), else
    /// those this form can change that the message names as words (`'temperature'`,
    /// `max_tokens`). `None` when it names none.
    pub fn read(body: &str) -> Option<Refusal> {
        let value: Option<Value> = serde_json::from_str(body).ok();
        let error = value.as_ref().and_then(|v| v.get("error"));
        let text_of = |key: &str| {
            error
                .and_then(|e| e.get(key))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let code = text_of("code");
        if let Some(param) = text_of("param").filter(|p| !p.is_empty()) {
            return Some(Refusal {
                params: vec![param],
                code,
            });
        }
        let message = text_of("message").unwrap_or_else(|| body.to_owned());
        let params: Vec<String> = ["max_completion_tokens", "max_tokens"]
            .into_iter()
            .chain(DROPPABLE)
            .filter(|name| names_word(&message, name))
            .map(str::to_owned)
            .collect();
        (!params.is_empty()).then_some(Refusal { params, code })
    }
}

/// Whether `text` names `word` as a whole word (not `max_tokens` inside `max_tokens_x`).
fn names_word(text: &str, word: &str) -> bool {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

/// The form of one endpoint, shared by its calls, with what it learned.
#[derive(Debug, Clone)]
pub(crate) struct FormBook {
    inner: Arc<Mutex<(RequestForm, Vec<Lesson>)>>,
}

impl FormBook {
    /// Starts from `form` (the settings' choice, or what a previous run learned).
    pub fn new(form: RequestForm) -> Self {
        FormBook {
            inner: Arc::new(Mutex::new((form, Vec::new()))),
        }
    }

    fn lock(&self) -> MutexGuard<'_, (RequestForm, Vec<Lesson>)> {
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The form now.
    pub fn form(&self) -> RequestForm {
        self.lock().0.clone()
    }

    /// What was learned so far.
    pub fn lessons(&self) -> Vec<Lesson> {
        self.lock().1.clone()
    }

    /// Uses `form` from now on (what an earlier session of the run settled on).
    pub fn adopt(&self, form: RequestForm) {
        self.lock().0 = form;
    }

    /// Learns from `refusal` of a request sent as `sent` (the body): true when the request is
    /// worth sending again in the form now in use — because this refusal changed it, or
    /// because another call already did. False for a parameter the form cannot change, or
    /// one the body did not carry.
    pub fn learn(&self, refusal: &Refusal, sent: &Value) -> bool {
        // A message may name the refused parameter and its replacement: the refused one is
        // the one the request carried.
        let Some(param) = refusal
            .params
            .iter()
            .map(String::as_str)
            .find(|p| sent.get(*p).is_some())
        else {
            return false;
        };
        let mut guard = self.lock();
        let (form, lessons) = &mut *guard;
        let change = match CapParam::from_field(param) {
            Some(refused) if form.cap_param == refused => {
                form.cap_param = match refused {
                    CapParam::MaxTokens => CapParam::MaxCompletionTokens,
                    CapParam::MaxCompletionTokens => CapParam::MaxTokens,
                };
                format!("{param} sent as {}", form.cap_param.field())
            }
            // Another call switched the form already: send again as it is now.
            Some(_) => return true,
            None if !DROPPABLE.contains(&param) => return false,
            None if form.dropped.contains(param) => return true,
            None if param == "temperature" => {
                form.dropped.insert(param.to_owned());
                "temperature left out (the server takes only its default)".to_owned()
            }
            None => {
                form.dropped.insert(param.to_owned());
                format!("{param} left out (refused)")
            }
        };
        lessons.push(Lesson {
            param: param.to_owned(),
            code: refusal.code.clone(),
            change,
        });
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn openai_400(param: &str, code: &str) -> String {
        json!({"error": {"message": format!("Unsupported parameter: '{param}'"),
            "type": "invalid_request_error", "param": param, "code": code}})
        .to_string()
    }

    #[test]
    fn structured_refusals_switch_the_cap_and_drop_the_temperature() {
        let book = FormBook::new(RequestForm::default());
        let sent = json!({"temperature": 0.0, "max_tokens": 10});
        let refusal = Refusal::read(&openai_400("max_tokens", "unsupported_parameter")).unwrap();
        assert!(book.learn(&refusal, &sent));
        assert_eq!(book.form().cap_param, CapParam::MaxCompletionTokens);
        // A second call that raced with the same body is sent again, not learned twice.
        assert!(book.learn(&refusal, &sent));
        let refusal = Refusal::read(&openai_400("temperature", "unsupported_value")).unwrap();
        assert!(book.learn(&refusal, &sent));
        assert!(book.form().dropped.contains("temperature"));
        let lessons = book.lessons();
        assert_eq!(lessons.len(), 2);
        assert_eq!(
            lessons[0].change,
            "max_tokens sent as max_completion_tokens"
        );
        assert_eq!(lessons[1].code.as_deref(), Some("unsupported_value"));
    }

    #[test]
    fn a_message_without_param_still_names_it_and_unknown_params_are_not_learned() {
        let body =
            r#"{"error": {"message": "max_tokens is not supported; use max_completion_tokens"}}"#;
        let refusal = Refusal::read(body).unwrap();
        assert_eq!(refusal.params, ["max_completion_tokens", "max_tokens"]);
        // The message names both: the one sent is the one refused.
        let book = FormBook::new(RequestForm::default());
        assert!(book.learn(&refusal, &json!({"max_tokens": 5})));
        assert_eq!(book.form().cap_param, CapParam::MaxCompletionTokens);
        let book = FormBook::new(RequestForm::default());
        let body = "Unsupported value: 'temperature' does not support 0 with this model";
        assert_eq!(Refusal::read(body).unwrap().params, ["temperature"]);
        assert_eq!(Refusal::read("context length exceeded"), None);
        let odd = Refusal::read(&openai_400("messages", "invalid")).unwrap();
        assert!(!book.learn(&odd, &json!({"messages": []})));
        assert_eq!(book.form(), RequestForm::default());
    }

    #[test]
    fn whole_words_only() {
        assert!(names_word("'max_tokens' is too large", "max_tokens"));
        assert!(!names_word("max_tokens_total", "max_tokens"));
        assert!(!names_word("max_completion_tokens", "max_tokens"));
    }
}
