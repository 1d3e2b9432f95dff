//! What the judge's own settings ask of every structured request, laid over each task's
//! sampling: [`Temperature`] and the rest of [`RequestSettings`]. Part of each request's
//! cache key, since they change the answer.

use crate::chat::Sampling;

/// The temperature the judge's requests ask for.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub enum Temperature {
    /// The task's own (0, for repeatable verdicts).
    #[default]
    Task,
    /// This value.
    Value(f32),
    /// None sent: the server's default (all that OpenAI's reasoning models take).
    Omit,
}

impl std::str::FromStr for Temperature {
    type Err = String;

    /// `omit` (or `none`), or a number from 0 to 2.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("omit") || text.eq_ignore_ascii_case("none") {
            return Ok(Temperature::Omit);
        }
        match text.parse::<f32>() {
            Ok(value) if (0.0..=2.0).contains(&value) => Ok(Temperature::Value(value)),
            // The value is not quoted back: it may have come from a file or a variable.
            _ => Err("temperature must be a number from 0 to 2, or `omit`".to_owned()),
        }
    }
}

impl std::fmt::Display for Temperature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Temperature::Task => write!(f, "0 (default)"),
            Temperature::Value(value) => write!(f, "{value}"),
            Temperature::Omit => write!(f, "omit"),
        }
    }
}

/// The judge's own request settings, laid over each task's sampling.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestSettings {
    /// The temperature.
    pub temperature: Temperature,
    /// A cap on generated tokens (thinking included), when set.
    pub max_tokens: Option<u32>,
    /// `reasoning_effort`, sent as given (`none` turns thinking off on Ollama).
    pub reasoning_effort: Option<String>,
    /// Thinking on or off, where the server's chat template takes a switch.
    pub thinking: Option<bool>,
}

impl RequestSettings {
    /// `sampling` with these settings over it.
    pub fn apply(&self, sampling: &mut Sampling) {
        match self.temperature {
            Temperature::Task => {}
            Temperature::Value(value) => sampling.temperature = Some(value),
            Temperature::Omit => sampling.temperature = None,
        }
        if self.max_tokens.is_some() {
            sampling.max_tokens = self.max_tokens;
        }
        if self.reasoning_effort.is_some() {
            sampling.reasoning_effort.clone_from(&self.reasoning_effort);
        }
        if self.thinking.is_some() {
            sampling.thinking = self.thinking;
        }
    }
}
