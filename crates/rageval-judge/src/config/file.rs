//! The `[judge]` table of `rageval.toml`, as written (see `docs/configuration.md`).
//!
//! Unknown keys inside `[judge]` are errors (a typo must not silently fall back to a
//! default); other top-level tables belong to other parts of rageval and are ignored here.
//! Errors name the file, the line and the key, then the column and the line with a caret
//! under the error ([`snippet`](super::snippet)), and never quote a value: `toml`'s own
//! messages and the shown line have their quoted strings masked, since a misplaced value
//! may be a key.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use super::snippet::mask_quoted;
use crate::cache::CacheMode;
use crate::error::JudgeError;
use crate::secret::ApiKey;
use crate::settings::SchemaMode;

#[derive(Debug, Default, Deserialize)]
struct FileRoot {
    #[serde(default)]
    judge: FileJudge,
}

/// `[judge]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileJudge {
    pub model: Option<String>,
    pub embedding_model: Option<String>,
    pub base_url: Option<String>,
    pub api_key_env: Option<String>,
    #[serde(default, deserialize_with = "api_key")]
    pub api_key: Option<ApiKey>,
    #[serde(default)]
    pub headers: BTreeMap<String, HeaderSpec>,
    pub schema_mode: Option<FileSchemaMode>,
    pub timeout_secs: Option<Seconds>,
    pub connect_timeout_secs: Option<Seconds>,
    pub temperature: Option<FileTemperature>,
    pub max_tokens: Option<TokenCap>,
    pub max_tokens_param: Option<FileCapParam>,
    pub reasoning_effort: Option<String>,
    pub thinking: Option<bool>,
    #[serde(default)]
    pub limits: FileLimits,
    #[serde(default)]
    pub retries: FileRetries,
    #[serde(default)]
    pub cache: FileCache,
    #[serde(default)]
    pub caps: FileCaps,
    #[serde(default)]
    pub prices: BTreeMap<String, FilePrice>,
    #[serde(default)]
    pub endpoints: Vec<FileEndpoint>,
    /// Dotted key → 1-based line, for errors found after parsing.
    #[serde(skip)]
    lines: BTreeMap<String, usize>,
}

impl FileJudge {
    /// The line where `field` (dotted, `judge.endpoints[2].api_key_env`) is set.
    pub(crate) fn line_of(&self, field: &str) -> Option<usize> {
        self.lines.get(field).copied()
    }
}

/// `[[judge.endpoints]]`, and the shorthand of a single endpoint.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileEndpoint {
    pub base_url: String,
    /// The model name sent to this endpoint, when it differs from `judge.model`.
    pub model: Option<String>,
    pub weight: Option<Positive>,
    pub api_key_env: Option<String>,
    #[serde(default, deserialize_with = "api_key")]
    pub api_key: Option<ApiKey>,
    #[serde(default)]
    pub headers: BTreeMap<String, HeaderSpec>,
    pub schema_mode: Option<FileSchemaMode>,
    pub timeout_secs: Option<Seconds>,
    /// The name this endpoint takes the token cap under.
    pub max_tokens_param: Option<FileCapParam>,
    /// Parameters this endpoint is never sent (`temperature`, `reasoning_effort`, ...).
    #[serde(default)]
    pub leave_out: Vec<FileDroppable>,
    pub concurrency: Option<AtLeastOne>,
    pub rpm: Option<PerMinute>,
    pub tpm: Option<PerMinute>,
}

/// `temperature`: a number from 0 to 2, or `"omit"`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(try_from = "toml::Value")]
pub(crate) struct FileTemperature(pub crate::judge::Temperature);

impl TryFrom<toml::Value> for FileTemperature {
    type Error = String;
    fn try_from(value: toml::Value) -> Result<Self, String> {
        let text = match value {
            toml::Value::Float(f) => f.to_string(),
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::String(s) => s,
            _ => return Err("must be a number from 0 to 2, or `omit`".into()),
        };
        text.parse().map(FileTemperature)
    }
}

/// `max_tokens_param`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum FileCapParam {
    MaxTokens,
    MaxCompletionTokens,
}

impl From<FileCapParam> for crate::forms::CapParam {
    fn from(param: FileCapParam) -> Self {
        match param {
            FileCapParam::MaxTokens => crate::forms::CapParam::MaxTokens,
            FileCapParam::MaxCompletionTokens => crate::forms::CapParam::MaxCompletionTokens,
        }
    }
}

/// A parameter an endpoint can be told never to receive.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum FileDroppable {
    Temperature,
    TopP,
    Seed,
    ReasoningEffort,
    ChatTemplateKwargs,
    EnableThinking,
}

impl FileDroppable {
    pub(crate) fn name(self) -> &'static str {
        match self {
            FileDroppable::Temperature => "temperature",
            FileDroppable::TopP => "top_p",
            FileDroppable::Seed => "seed",
            FileDroppable::ReasoningEffort => "reasoning_effort",
            FileDroppable::ChatTemplateKwargs => "chat_template_kwargs",
            FileDroppable::EnableThinking => "enable_thinking",
        }
    }
}

/// A header value: literal, or `{ env = "VAR" }`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum HeaderSpec {
    Value(String),
    Env { env: String },
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum FileSchemaMode {
    ResponseFormat,
    InPrompt,
}

impl From<FileSchemaMode> for SchemaMode {
    fn from(mode: FileSchemaMode) -> Self {
        match mode {
            FileSchemaMode::ResponseFormat => SchemaMode::ResponseFormat,
            FileSchemaMode::InPrompt => SchemaMode::InPrompt,
        }
    }
}

/// `[judge.limits]`: over all endpoints together.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileLimits {
    pub concurrency: Option<AtLeastOne>,
    pub min_concurrency: Option<AtLeastOne>,
    pub rpm: Option<PerMinute>,
    pub tpm: Option<PerMinute>,
}

/// `[judge.retries]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileRetries {
    pub max_attempts: Option<AtLeastOne>,
    pub base_delay_secs: Option<Seconds>,
    pub max_delay_secs: Option<Seconds>,
    pub max_retry_after_secs: Option<Seconds>,
}

impl FileRetries {
    pub(crate) fn apply(&self, mut policy: crate::retry::RetryPolicy) -> crate::retry::RetryPolicy {
        if let Some(n) = self.max_attempts {
            policy.max_attempts = u32::try_from(n.0).unwrap_or(u32::MAX);
        }
        if let Some(d) = self.base_delay_secs {
            policy.base_delay = d.0;
        }
        if let Some(d) = self.max_delay_secs {
            policy.max_delay = d.0;
        }
        if let Some(d) = self.max_retry_after_secs {
            policy.max_retry_after = d.0;
        }
        policy
    }
}

/// `[judge.cache]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileCache {
    pub path: Option<std::path::PathBuf>,
    pub mode: Option<FileCacheMode>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum FileCacheMode {
    ReadWrite,
    Offline,
    Off,
}

impl From<FileCacheMode> for CacheMode {
    fn from(mode: FileCacheMode) -> Self {
        match mode {
            FileCacheMode::ReadWrite => CacheMode::ReadWrite,
            FileCacheMode::Offline => CacheMode::Offline,
            FileCacheMode::Off => CacheMode::Off,
        }
    }
}

/// `[judge.caps]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileCaps {
    pub max_calls: Option<u64>,
    pub max_cost_usd: Option<NonNegative>,
}

/// `[judge.prices."MODEL"]`: the synchronous price, and the batch price when the provider's
/// batch discount is not the default half.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FilePrice {
    pub prompt_per_million: NonNegative,
    pub completion_per_million: NonNegative,
    pub batch_prompt_per_million: Option<NonNegative>,
    pub batch_completion_per_million: Option<NonNegative>,
}

/// A newtype whose deserialization checks the value, so that `toml` reports a bad one at
/// its line: `name(inner) from raw ("raw"): |value| Option<inner>, message`.
macro_rules! checked {
    ($(#[$doc:meta])* $name:ident($inner:ty) from $raw:ty, $raw_name:literal,
     |$value:ident| $convert:expr, $message:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Deserialize)]
        #[serde(try_from = $raw_name)]
        pub(crate) struct $name(pub $inner);

        impl TryFrom<$raw> for $name {
            type Error = String;
            fn try_from($value: $raw) -> Result<Self, String> {
                $convert.map($name).ok_or_else(|| $message.to_owned())
            }
        }
    };
}

checked!(
    /// A finite number > 0.
    Positive(f64) from f64, "f64",
    |v| (v.is_finite() && v > 0.0).then_some(v),
    "must be a number greater than 0"
);
checked!(
    /// A finite number ≥ 0.
    NonNegative(f64) from f64, "f64",
    |v| (v.is_finite() && v >= 0.0).then_some(v),
    "must be a number ≥ 0"
);
checked!(
    /// A whole number ≥ 1.
    AtLeastOne(usize) from u64, "u64",
    |v| usize::try_from(v).ok().filter(|n| *n >= 1),
    "must be a whole number ≥ 1"
);
checked!(
    /// A rate per minute, ≥ 1.
    PerMinute(u32) from u64, "u64",
    |v| u32::try_from(v).ok().filter(|n| *n >= 1),
    "must be a whole number between 1 and 4294967295"
);
checked!(
    /// A cap on generated tokens, ≥ 1.
    TokenCap(u32) from u64, "u64",
    |v| u32::try_from(v).ok().filter(|n| *n >= 1),
    "must be a whole number between 1 and 4294967295"
);
checked!(
    /// A positive number of seconds.
    Seconds(Duration) from f64, "f64",
    |v| Duration::try_from_secs_f64(v).ok().filter(|d| !d.is_zero()),
    "must be a positive number of seconds"
);

fn api_key<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<ApiKey>, D::Error> {
    Ok(Option::<String>::deserialize(d)?.map(ApiKey::new))
}

/// Parses `text` (the file at `path`) and indexes where each key is set.
pub(crate) fn parse(path: &Path, text: &str) -> Result<FileJudge, JudgeError> {
    let lines = key_lines(text);
    let root: FileRoot = toml::from_str(text).map_err(|error| {
        let located = super::snippet::locate_error(text, &error);
        let line = located.as_ref().map(|l| l.line);
        let field = line
            .and_then(|l| {
                lines
                    .iter()
                    .filter(|(_, at)| **at == l)
                    .map(|(key, _)| key.clone())
                    .next()
            })
            .unwrap_or_else(|| "judge".to_owned());
        let message = mask_quoted(error.message());
        JudgeError::Config {
            file: path.display().to_string(),
            line,
            field,
            message: match located {
                Some(at) => format!("{message} (column {})\n{}", at.column, at.snippet),
                None => message,
            },
        }
    })?;
    let mut judge = root.judge;
    judge.lines = lines;
    Ok(judge)
}

/// Every `key = value` line's dotted key (with `[[array]]` tables numbered from 1) and its
/// 1-based line. A plain scan, good enough for locating what the parser already accepted.
fn key_lines(text: &str) -> BTreeMap<String, usize> {
    let mut found = BTreeMap::new();
    let mut table = String::new();
    let mut arrays: BTreeMap<String, usize> = BTreeMap::new();
    for (index, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if let Some(name) = line.strip_prefix("[[").and_then(|l| l.split("]]").next()) {
            let name = name.trim().to_owned();
            let count = arrays.entry(name.clone()).or_default();
            *count += 1;
            table = format!("{name}[{count}]");
        } else if let Some(name) = line.strip_prefix('[').and_then(|l| l.split(']').next()) {
            table = name.trim().to_owned();
        } else if let Some((key, _)) = line.split_once('=') {
            let key = key.trim().trim_matches('"');
            if key.is_empty() || key.starts_with('#') {
                continue;
            }
            let dotted = if table.is_empty() {
                key.to_owned()
            } else {
                format!("{table}.{key}")
            };
            found.entry(dotted).or_insert(index + 1);
        }
    }
    found
}
