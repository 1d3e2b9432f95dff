//! Judge settings resolved once, into plain values: command-line flags over environment
//! variables over `rageval.toml` over defaults, by one rule: the first layer that holds a
//! value wins, field by field (`layers`, uv's `Combine`).
//!
//! [`JudgeFlags`] is what the binary fills from its flags (this crate knows no CLI parser);
//! [`JudgeSettings::resolve`] merges it with the environment and the `[judge]` table of the
//! configuration file (format: `docs/configuration.md`); [`JudgeSettings::build`] turns the
//! result into a [`Judge`]. Resolving reads the configuration file and the environment and
//! nothing else — no network. API keys are read from the variable the file names (or the
//! file itself) straight into [`ApiKey`](crate::secret::ApiKey); no error message quotes a value from the file or
//! the environment, since any value may be a secret.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::accounting::{Budget, PriceTable};
use crate::cache::{Cache, CacheMode};
use crate::error::JudgeError;
use crate::forms::CapParam;
use crate::judge::{Judge, JudgeConfig, RequestSettings, Temperature};
use crate::limiter::LimiterConfig;
use crate::models::{AnyChatModel, AnyEmbedder, Models};
use crate::openai::OpenAiBackend;
use crate::pool::{EndpointPool, PoolEndpoint};
use crate::retry::RetryPolicy;
use crate::settings::{
    DEFAULT_BASE_URL, ENV_JUDGE_API_KEY, ENV_JUDGE_BASE_URL, ENV_JUDGE_EMBEDDING_MODEL,
    ENV_JUDGE_HEADERS, ENV_JUDGE_MODEL, ENV_OPENAI_API_KEY, ENV_OPENAI_BASE_URL, EndpointSettings,
};

mod endpoints;
mod file;
mod layers;
mod resolver;
pub mod snippet;

use layers::{Environment, Var};
use resolver::Resolver;

/// Path of the configuration file, when no `--config` flag names one.
pub const ENV_CONFIG: &str = "RAGEVAL_CONFIG";
/// Most judge calls in flight (all endpoints together).
pub const ENV_JUDGE_CONCURRENCY: &str = "RAGEVAL_JUDGE_CONCURRENCY";
/// Requests per minute (all endpoints together).
pub const ENV_JUDGE_RPM: &str = "RAGEVAL_JUDGE_RPM";
/// Tokens per minute (all endpoints together).
pub const ENV_JUDGE_TPM: &str = "RAGEVAL_JUDGE_TPM";
/// Per-call timeout in seconds (one HTTP attempt).
pub const ENV_JUDGE_TIMEOUT: &str = "RAGEVAL_JUDGE_TIMEOUT";
/// The judge's temperature: a number from 0 to 2, or `omit` to send none.
pub const ENV_JUDGE_TEMPERATURE: &str = "RAGEVAL_JUDGE_TEMPERATURE";
/// A cap on the judge's generated tokens (thinking included).
pub const ENV_JUDGE_MAX_TOKENS: &str = "RAGEVAL_JUDGE_MAX_TOKENS";
/// The name the cap is sent under at first: `max_tokens` or `max_completion_tokens`.
pub const ENV_JUDGE_MAX_TOKENS_PARAM: &str = "RAGEVAL_JUDGE_MAX_TOKENS_PARAM";
/// `reasoning_effort` sent with every judge request (`none`, `low`, `medium`, `high`, ...).
pub const ENV_JUDGE_REASONING_EFFORT: &str = "RAGEVAL_JUDGE_REASONING_EFFORT";
/// Thinking on or off where the server takes a switch: `on` or `off`.
pub const ENV_JUDGE_THINKING: &str = "RAGEVAL_JUDGE_THINKING";
/// The file read when neither `--config` nor [`ENV_CONFIG`] names one, if it exists in the
/// current directory.
pub const DEFAULT_CONFIG_FILE: &str = "rageval.toml";

/// The variables of the layered settings, each with how its text reads and what it must be
/// (what an error says instead of quoting the value).
mod var {
    use std::path::PathBuf;
    use std::time::Duration;

    use super::*;

    pub(super) const CONFIG: Var<PathBuf> =
        Var::new(ENV_CONFIG, |text| Some(PathBuf::from(text)), "a path");
    pub(super) const MODEL: Var<String> = Var::text(ENV_JUDGE_MODEL);
    pub(super) const EMBEDDING_MODEL: Var<String> = Var::text(ENV_JUDGE_EMBEDDING_MODEL);
    pub(super) const BASE_URL: Var<String> = Var::text(ENV_JUDGE_BASE_URL);
    pub(super) const CONCURRENCY: Var<usize> =
        Var::parsed(ENV_JUDGE_CONCURRENCY, "a whole number ≥ 1");
    pub(super) const RPM: Var<u32> =
        Var::parsed(ENV_JUDGE_RPM, "a whole number of requests per minute");
    pub(super) const TPM: Var<u32> =
        Var::parsed(ENV_JUDGE_TPM, "a whole number of tokens per minute");
    pub(super) const TIMEOUT: Var<Duration> = Var::new(
        ENV_JUDGE_TIMEOUT,
        |text| {
            let seconds: f64 = text.parse().ok()?;
            Duration::try_from_secs_f64(seconds)
                .ok()
                .filter(|d| !d.is_zero())
        },
        "a positive number of seconds, e.g. 60",
    );
    pub(super) const TEMPERATURE: Var<Temperature> =
        Var::parsed(ENV_JUDGE_TEMPERATURE, "a number from 0 to 2, or `omit`");
    pub(super) const MAX_TOKENS: Var<u32> =
        Var::parsed(ENV_JUDGE_MAX_TOKENS, "a whole number of tokens, e.g. 4096");
    pub(super) const MAX_TOKENS_PARAM: Var<CapParam> = Var::new(
        ENV_JUDGE_MAX_TOKENS_PARAM,
        CapParam::from_field,
        "`max_tokens` or `max_completion_tokens`",
    );
    pub(super) const REASONING_EFFORT: Var<String> = Var::text(ENV_JUDGE_REASONING_EFFORT);
    pub(super) const THINKING: Var<bool> =
        Var::new(ENV_JUDGE_THINKING, parse_switch, "`on` or `off`");
}

/// The judge's command-line values; `None` (or `false`) means the flag was not given.
#[derive(Debug, Clone, Default)]
pub struct JudgeFlags {
    /// `--config PATH`.
    pub config: Option<PathBuf>,
    /// `--judge-base-url URL`: one endpoint, replacing any list in the file.
    pub base_url: Option<String>,
    /// `--judge-model NAME`.
    pub model: Option<String>,
    /// `--judge-embedding-model NAME`: an embedding model served by the same endpoints.
    pub embedding_model: Option<String>,
    /// `--concurrency N`.
    pub concurrency: Option<usize>,
    /// `--rpm N`.
    pub rpm: Option<u32>,
    /// `--tpm N`.
    pub tpm: Option<u32>,
    /// `--timeout SECS`.
    pub timeout: Option<Duration>,
    /// `--no-cache`.
    pub no_cache: bool,
    /// `--offline`.
    pub offline: bool,
    /// `--cache PATH`.
    pub cache: Option<PathBuf>,
    /// `--max-calls N`.
    pub max_calls: Option<u64>,
    /// `--max-cost USD`.
    pub max_cost_usd: Option<f64>,
    /// `--judge-temperature T|omit`.
    pub temperature: Option<Temperature>,
    /// `--judge-max-tokens N`.
    pub max_tokens: Option<u32>,
    /// `--judge-max-tokens-param NAME`.
    pub max_tokens_param: Option<CapParam>,
    /// `--judge-reasoning-effort LEVEL`.
    pub reasoning_effort: Option<String>,
    /// `--judge-thinking on|off`.
    pub thinking: Option<bool>,
}

/// One endpoint with its share of the traffic and its own limits.
#[derive(Debug, Clone)]
pub struct EndpointEntry {
    /// How to reach it.
    pub settings: EndpointSettings,
    /// Share of the traffic relative to the other endpoints.
    pub weight: f64,
    /// Its own limits (used when there are several endpoints).
    pub limits: LimiterConfig,
}

/// Everything the judge needs, resolved.
#[derive(Debug, Clone)]
pub struct JudgeSettings {
    /// The judge model's name: the cache identity, whichever endpoint answers. `None` when
    /// nothing names one — then no endpoint is configured.
    pub model: Option<String>,
    /// Where the chat model is served; empty when no model is configured.
    pub endpoints: Vec<EndpointEntry>,
    /// Embedding model served by the same endpoints, when the file names one.
    pub embedding_model: Option<String>,
    /// Limits over all endpoints together.
    pub limits: LimiterConfig,
    /// Retry policy.
    pub retry: RetryPolicy,
    /// Cache use.
    pub cache_mode: CacheMode,
    /// The cache file (`None` only when no cache directory could be found).
    pub cache_path: Option<PathBuf>,
    /// Prices: the built-in table with the file's overrides.
    pub prices: PriceTable,
    /// Caps.
    pub budget: Budget,
    /// The configuration file that was read, if any.
    pub config_file: Option<PathBuf>,
    /// What every request asks (temperature, cap, effort, thinking).
    pub request: RequestSettings,
}

impl JudgeSettings {
    /// Resolves settings from `flags`, the environment seen through `lookup`, and the
    /// configuration file: `flags.config`, else [`ENV_CONFIG`], else `./rageval.toml` when it
    /// exists.
    pub fn resolve(
        flags: &JudgeFlags,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, JudgeError> {
        let named = Environment::new(&lookup).layered(flags.config.clone(), &var::CONFIG, None)?;
        let path =
            named.or_else(|| Some(PathBuf::from(DEFAULT_CONFIG_FILE)).filter(|p| p.is_file()));
        match path {
            Some(path) => {
                let text = std::fs::read_to_string(&path).map_err(|e| JudgeError::Config {
                    file: path.display().to_string(),
                    line: None,
                    field: String::new(),
                    message: if e.kind() == std::io::ErrorKind::NotFound {
                        format!("no such settings file (named by --config or {ENV_CONFIG})")
                    } else {
                        format!("cannot read: {e}")
                    },
                })?;
                Self::resolve_with(flags, Some((&path, &text)), lookup)
            }
            None => Self::resolve_with(flags, None, lookup),
        }
    }

    /// Resolves settings from `flags`, an already-read configuration file (`path`, `text`)
    /// and the environment seen through `lookup`. Reads nothing itself.
    pub fn resolve_with(
        flags: &JudgeFlags,
        file: Option<(&Path, &str)>,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, JudgeError> {
        let (parsed, config_file) = match file {
            Some((path, text)) => (file::parse(path, text)?, Some(path.to_path_buf())),
            None => (file::FileJudge::default(), None),
        };
        let file_name = config_file.as_ref().map_or_else(
            || DEFAULT_CONFIG_FILE.to_owned(),
            |p| p.display().to_string(),
        );
        Resolver {
            flags,
            file: &parsed,
            file_name,
            config_dir: config_file
                .as_ref()
                .and_then(|p| p.parent())
                .map(Path::to_path_buf),
            env: Environment::new(&lookup),
        }
        .resolve(config_file)
    }

    /// Whether a judge endpoint is configured.
    pub fn has_endpoint(&self) -> bool {
        !self.endpoints.is_empty()
    }

    /// The [`JudgeConfig`] these settings describe.
    pub fn judge_config(&self) -> JudgeConfig {
        JudgeConfig {
            limiter: self.limits.clone(),
            retry: self.retry.clone(),
            cache_mode: self.cache_mode,
            budget: self.budget,
            prices: self.prices.clone(),
            halt_after: Some(crate::health::DEFAULT_HALT_AFTER),
            request: self.request.clone(),
        }
    }

    /// The models these settings describe: one endpoint, or a pool of them, for chat (and
    /// for embeddings when `embedding_model` is set). No network: clients connect lazily.
    pub fn models(&self) -> Result<Models, JudgeError> {
        let Some(model) = &self.model else {
            return Ok(Models::default());
        };
        let chat = self.endpoint_models(model, |s| s.model.clone())?;
        let embedder = match &self.embedding_model {
            Some(name) => Some(self.endpoint_models(name, |_| name.clone())?),
            None => None,
        };
        Ok(Models {
            chat: Some(match chat {
                Endpoints::One(backend) => AnyChatModel::new(backend),
                Endpoints::Pool(pool) => AnyChatModel::new(pool),
            }),
            embedder: embedder.map(|e| match e {
                Endpoints::One(backend) => AnyEmbedder::new(backend),
                Endpoints::Pool(pool) => AnyEmbedder::new(pool),
            }),
        })
    }

    /// A judge with these settings: the models, the cache (opened, created if missing)
    /// and the configuration.
    pub fn build(&self) -> Result<Judge<Models>, JudgeError> {
        self.build_with(self.models()?)
    }

    /// A judge with these settings (cache, limits, caps) over `models` instead of the
    /// endpoints: the embedded models when no endpoint is configured.
    pub fn build_with(&self, models: Models) -> Result<Judge<Models>, JudgeError> {
        let cache = match (self.cache_mode, &self.cache_path) {
            (CacheMode::Off, _) => None,
            (_, Some(path)) => Some(Cache::open(path)?),
            (_, None) => {
                return Err(JudgeError::Settings(format!(
                    "no cache location: pass --cache PATH, set {} or HOME, or --no-cache",
                    crate::settings::ENV_CACHE_DIR
                )));
            }
        };
        Ok(Judge::new(models, cache, self.judge_config()))
    }

    fn endpoint_models(
        &self,
        identity: &str,
        wire_model: impl Fn(&EndpointSettings) -> String,
    ) -> Result<Endpoints, JudgeError> {
        let mut backends = Vec::new();
        for entry in &self.endpoints {
            let mut settings = entry.settings.clone();
            settings.model = wire_model(&settings);
            backends.push(PoolEndpoint {
                backend: OpenAiBackend::new(settings)?,
                weight: entry.weight,
                limits: entry.limits.clone(),
            });
        }
        // One endpoint is called directly, unless it sends another model name on the wire:
        // a pool of one keeps the cache identity at `identity` (see `crate::pool`).
        if backends.len() == 1 && backends[0].backend.settings().model == identity {
            return Ok(Endpoints::One(backends.remove(0).backend));
        }
        Ok(Endpoints::Pool(EndpointPool::new(identity, backends)?))
    }
}

enum Endpoints {
    One(OpenAiBackend),
    Pool(EndpointPool),
}

/// `on`/`off` (also `true`/`false`, `yes`/`no`, `1`/`0`).
pub fn parse_switch(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Some(true),
        "off" | "false" | "no" | "0" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
