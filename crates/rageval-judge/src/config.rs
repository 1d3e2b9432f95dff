//! Judge settings resolved once, into plain values: command-line flags over environment
//! variables over `rageval.toml` over defaults.
//!
//! [`JudgeFlags`] is what the binary fills from its flags (this crate knows no CLI parser);
//! [`JudgeSettings::resolve`] merges it with the environment and the `[judge]` table of the
//! configuration file (format: `docs/configuration.md`); [`JudgeSettings::build`] turns the
//! result into a [`Judge`]. Resolving reads the configuration file and the environment and
//! nothing else — no network. API keys are read from the variable the file names (or the
//! file itself) straight into [`ApiKey`]; no error message quotes a value from the file,
//! since any value may be a secret.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::accounting::{Budget, Price, PriceTable};
use crate::cache::{Cache, CacheMode};
use crate::error::JudgeError;
use crate::forms::{CapParam, RequestForm};
use crate::judge::{Judge, JudgeConfig, RequestSettings, Temperature};
use crate::limiter::LimiterConfig;
use crate::models::{AnyChatModel, AnyEmbedder, Models};
use crate::openai::OpenAiBackend;
use crate::pool::{EndpointPool, PoolEndpoint};
use crate::retry::RetryPolicy;
use crate::secret::ApiKey;
use crate::settings::{
    DEFAULT_BASE_URL, ENV_JUDGE_API_KEY, ENV_JUDGE_BASE_URL, ENV_JUDGE_EMBEDDING_MODEL,
    ENV_JUDGE_HEADERS, ENV_JUDGE_MODEL, ENV_OPENAI_API_KEY, ENV_OPENAI_BASE_URL, EndpointSettings,
    default_cache_path, parse_headers,
};

mod file;
pub mod snippet;

use file::{FileEndpoint, FileJudge, HeaderSpec};

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
        let named = flags
            .config
            .clone()
            .or_else(|| non_empty(&lookup, ENV_CONFIG).map(PathBuf::from));
        let path = match named {
            Some(path) => Some(path),
            None => Some(PathBuf::from(DEFAULT_CONFIG_FILE)).filter(|p| p.is_file()),
        };
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
            None => (FileJudge::default(), None),
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
            lookup: &lookup,
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

fn non_empty(lookup: &impl Fn(&str) -> Option<String>, name: &str) -> Option<String> {
    lookup(name)
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

/// One resolution: the inputs and the rules that merge them.
struct Resolver<'a, L> {
    flags: &'a JudgeFlags,
    file: &'a FileJudge,
    file_name: String,
    config_dir: Option<PathBuf>,
    lookup: &'a L,
}

impl<L: Fn(&str) -> Option<String>> Resolver<'_, L> {
    fn env(&self, name: &str) -> Option<String> {
        non_empty(self.lookup, name)
    }

    /// An environment variable holding a number, with an error naming the variable.
    fn env_number<T: std::str::FromStr>(
        &self,
        name: &str,
        what: &str,
    ) -> Result<Option<T>, JudgeError> {
        match self.env(name) {
            None => Ok(None),
            Some(raw) => raw
                .parse()
                .map(Some)
                .map_err(|_| JudgeError::Settings(format!("{name}: expected {what}, got `{raw}`"))),
        }
    }

    fn file_error(&self, field: &str, message: impl Into<String>) -> JudgeError {
        JudgeError::Config {
            file: self.file_name.clone(),
            line: self.file.line_of(field),
            field: field.to_owned(),
            message: message.into(),
        }
    }

    fn resolve(&self, config_file: Option<PathBuf>) -> Result<JudgeSettings, JudgeError> {
        let file = self.file;
        let flags = self.flags;
        if flags.offline && flags.no_cache {
            return Err(JudgeError::Settings(
                "--offline answers from the cache and --no-cache turns it off: pass one".into(),
            ));
        }
        let cache_mode = if flags.offline {
            CacheMode::Offline
        } else if flags.no_cache {
            CacheMode::Off
        } else {
            file.cache.mode.map_or(CacheMode::default(), Into::into)
        };
        let model = flags
            .model
            .clone()
            .or_else(|| self.env(ENV_JUDGE_MODEL))
            .or_else(|| file.model.clone());
        let endpoints = match &model {
            Some(model) => self.endpoints(model, cache_mode)?,
            None => {
                let url_set = flags.base_url.is_some() || self.env(ENV_JUDGE_BASE_URL).is_some();
                if url_set || file.base_url.is_some() || !file.endpoints.is_empty() {
                    return Err(JudgeError::Settings(format!(
                        "a judge base URL is set but no model: pass --judge-model, set \
                         {ENV_JUDGE_MODEL}, or add `model` to [judge] in {}",
                        self.file_name
                    )));
                }
                Vec::new()
            }
        };
        let request = self.request_settings()?;
        let limits = self.global_limits(&endpoints)?;
        let retry = file.retries.apply(RetryPolicy::default());
        let cache_path = match (&flags.cache, &file.cache.path) {
            (Some(path), _) => Some(path.clone()),
            (None, Some(path)) => Some(match &self.config_dir {
                Some(dir) if path.is_relative() => dir.join(path),
                _ => path.clone(),
            }),
            (None, None) => default_cache_path(|name| (self.lookup)(name)),
        };
        let prices = self.prices()?;
        let budget = Budget {
            max_calls: flags.max_calls.or(file.caps.max_calls),
            max_cost_usd: flags.max_cost_usd.or(file.caps.max_cost_usd.map(|c| c.0)),
        };
        if let (Some(max), Some(model)) = (budget.max_cost_usd, &model) {
            if !(max.is_finite() && max >= 0.0) {
                return Err(JudgeError::Settings(format!(
                    "max cost must be a non-negative number of dollars, not {max}"
                )));
            }
            if prices.get(model).is_none() {
                return Err(JudgeError::Settings(format!(
                    "a cost cap is set but model `{model}` has no known price: add \
                     [judge.prices.\"{model}\"] with prompt_per_million and \
                     completion_per_million to {}",
                    self.file_name
                )));
            }
        }
        Ok(JudgeSettings {
            model,
            endpoints,
            embedding_model: self
                .flags
                .embedding_model
                .clone()
                .or_else(|| self.env(ENV_JUDGE_EMBEDDING_MODEL))
                .or_else(|| file.embedding_model.clone()),
            limits,
            retry,
            cache_mode,
            cache_path,
            prices,
            budget,
            config_file,
            request,
        })
    }

    /// The request settings: flags over the environment over `[judge]`.
    fn request_settings(&self) -> Result<RequestSettings, JudgeError> {
        let (flags, file) = (self.flags, self.file);
        let temperature =
            match flags.temperature {
                Some(t) => Some(t),
                None => match self.env(ENV_JUDGE_TEMPERATURE) {
                    Some(raw) => Some(raw.parse().map_err(|e| {
                        JudgeError::Settings(format!("{ENV_JUDGE_TEMPERATURE}: {e}"))
                    })?),
                    None => file.temperature.map(|t| t.0),
                },
            };
        let max_tokens = match flags.max_tokens {
            Some(n) => Some(n),
            None => self
                .env_number::<u32>(ENV_JUDGE_MAX_TOKENS, "a whole number of tokens, e.g. 4096")?
                .or(file.max_tokens.map(|c| c.0)),
        };
        if max_tokens == Some(0) {
            return Err(JudgeError::Settings(
                "the judge's token cap must be at least 1".into(),
            ));
        }
        let thinking = match flags.thinking {
            Some(on) => Some(on),
            None => match self.env(ENV_JUDGE_THINKING) {
                Some(raw) => Some(parse_switch(&raw).ok_or_else(|| {
                    JudgeError::Settings(format!(
                        "{ENV_JUDGE_THINKING}: expected `on` or `off`, got `{raw}`"
                    ))
                })?),
                None => file.thinking,
            },
        };
        Ok(RequestSettings {
            temperature: temperature.unwrap_or_default(),
            max_tokens,
            reasoning_effort: flags
                .reasoning_effort
                .clone()
                .or_else(|| self.env(ENV_JUDGE_REASONING_EFFORT))
                .or_else(|| file.reasoning_effort.clone()),
            thinking,
        })
    }

    /// The form requests start in at one endpoint: the cap's name from the flags, the
    /// environment, the endpoint's entry or `[judge]`; the parameters it leaves out.
    fn request_form(&self, endpoint: &FileEndpoint) -> Result<RequestForm, JudgeError> {
        let from_env = match self.env(ENV_JUDGE_MAX_TOKENS_PARAM) {
            Some(raw) => Some(CapParam::from_field(&raw).ok_or_else(|| {
                JudgeError::Settings(format!(
                    "{ENV_JUDGE_MAX_TOKENS_PARAM}: expected `max_tokens` or \
                     `max_completion_tokens`, got `{raw}`"
                ))
            })?),
            None => None,
        };
        let cap_param = self
            .flags
            .max_tokens_param
            .or(from_env)
            .or(endpoint.max_tokens_param.map(Into::into))
            .or(self.file.max_tokens_param.map(Into::into))
            .unwrap_or_default();
        Ok(RequestForm {
            cap_param,
            dropped: endpoint
                .leave_out
                .iter()
                .map(|p| p.name().to_owned())
                .collect(),
        })
    }

    /// The built-in price table with the file's `[judge.prices."MODEL"]` entries: the
    /// synchronous price, and the batch price when both `batch_*` keys are given (one alone
    /// is an error: half a price would be guessed).
    fn prices(&self) -> Result<PriceTable, JudgeError> {
        let mut prices = PriceTable::builtin();
        for (name, price) in &self.file.prices {
            prices.insert(
                name.clone(),
                Price {
                    prompt_per_million: price.prompt_per_million.0,
                    completion_per_million: price.completion_per_million.0,
                },
            );
            match (
                price.batch_prompt_per_million,
                price.batch_completion_per_million,
            ) {
                (Some(prompt), Some(completion)) => prices.insert_batch(
                    name.clone(),
                    Price {
                        prompt_per_million: prompt.0,
                        completion_per_million: completion.0,
                    },
                ),
                (None, None) => {}
                (prompt, _) => {
                    let key = match prompt {
                        Some(_) => "batch_prompt_per_million",
                        None => "batch_completion_per_million",
                    };
                    // The table may be written `prices."NAME"` or `prices.NAME`.
                    let quoted = format!("judge.prices.\"{name}\".{key}");
                    let bare = format!("judge.prices.{name}.{key}");
                    let field = match self.file.line_of(&bare) {
                        Some(_) => bare,
                        None => quoted,
                    };
                    return Err(self.file_error(
                        &field,
                        "a batch price needs both batch_prompt_per_million and \
                         batch_completion_per_million",
                    ));
                }
            }
        }
        Ok(prices)
    }

    /// The endpoint list: a base URL from the flags or `RAGEVAL_JUDGE_BASE_URL` replaces the
    /// file's list; else the file's `[[judge.endpoints]]`; else one endpoint at the file's
    /// `base_url`, `OPENAI_BASE_URL` or OpenAI's own.
    fn endpoints(&self, model: &str, mode: CacheMode) -> Result<Vec<EndpointEntry>, JudgeError> {
        let file = self.file;
        let explicit = self
            .flags
            .base_url
            .clone()
            .or_else(|| self.env(ENV_JUDGE_BASE_URL));
        let shorthand = FileEndpoint::default();
        let listed: Vec<(String, &FileEndpoint)> = match explicit {
            Some(url) => vec![(url, &shorthand)],
            None if !file.endpoints.is_empty() => file
                .endpoints
                .iter()
                .map(|e| (e.base_url.clone(), e))
                .collect(),
            None => {
                let url = file
                    .base_url
                    .clone()
                    .or_else(|| self.env(ENV_OPENAI_BASE_URL))
                    .unwrap_or_else(|| DEFAULT_BASE_URL.to_owned());
                vec![(url, &shorthand)]
            }
        };
        let mut entries = Vec::with_capacity(listed.len());
        for (index, (url, endpoint)) in listed.into_iter().enumerate() {
            let field = |name: &str| format!("judge.endpoints[{}].{name}", index + 1);
            let wire_model = endpoint.model.clone().unwrap_or_else(|| model.to_owned());
            let mut settings = EndpointSettings::new(url.trim(), wire_model);
            settings.api_key = self.api_key(endpoint, &field, mode)?;
            settings.extra_headers = self.headers(endpoint, &field)?;
            settings.request_timeout = match self.request_timeout()? {
                Some(timeout) => timeout,
                None => endpoint
                    .timeout_secs
                    .or(file.timeout_secs)
                    .map_or(settings.request_timeout, |s| s.0),
            };
            if let Some(connect) = file.connect_timeout_secs {
                settings.connect_timeout = connect.0;
            }
            if let Some(mode) = endpoint.schema_mode.or(file.schema_mode) {
                settings.schema_mode = mode.into();
            }
            settings.form = self.request_form(endpoint)?;
            let defaults = LimiterConfig::default();
            let limits = LimiterConfig {
                max_concurrency: endpoint
                    .concurrency
                    .map_or(defaults.max_concurrency, |c| c.0),
                requests_per_minute: endpoint.rpm.map(|r| r.0),
                tokens_per_minute: endpoint.tpm.map(|t| t.0),
                ..defaults
            };
            entries.push(EndpointEntry {
                settings,
                weight: endpoint.weight.map_or(1.0, |w| w.0),
                limits,
            });
        }
        Ok(entries)
    }

    fn request_timeout(&self) -> Result<Option<Duration>, JudgeError> {
        if let Some(timeout) = self.flags.timeout {
            return Ok(Some(timeout));
        }
        let seconds: Option<f64> = self.env_number(ENV_JUDGE_TIMEOUT, "seconds, e.g. 60")?;
        match seconds {
            None => Ok(None),
            Some(s) => Duration::try_from_secs_f64(s)
                .ok()
                .filter(|d| !d.is_zero())
                .map(Some)
                .ok_or_else(|| {
                    JudgeError::Settings(format!(
                        "{ENV_JUDGE_TIMEOUT}: expected a positive number of seconds, got `{s}`"
                    ))
                }),
        }
    }

    /// `RAGEVAL_JUDGE_API_KEY`, else the endpoint's key, else the file's `[judge]` key, else
    /// `OPENAI_API_KEY`. A key variable named in the file must be set (except offline).
    fn api_key(
        &self,
        endpoint: &FileEndpoint,
        field: &dyn Fn(&str) -> String,
        mode: CacheMode,
    ) -> Result<Option<ApiKey>, JudgeError> {
        if let Some(key) = self.env(ENV_JUDGE_API_KEY) {
            return Ok(Some(ApiKey::new(key)));
        }
        let sources = [
            (
                &endpoint.api_key_env,
                &endpoint.api_key,
                field("api_key_env"),
            ),
            (
                &self.file.api_key_env,
                &self.file.api_key,
                "judge.api_key_env".to_owned(),
            ),
        ];
        for (env_name, literal, field_name) in sources {
            if let Some(name) = env_name {
                return match self.env(name) {
                    Some(key) => Ok(Some(ApiKey::new(key))),
                    None if mode == CacheMode::Offline => Ok(None),
                    None => Err(self.file_error(
                        &field_name,
                        format!("names variable {name}, which is not set"),
                    )),
                };
            }
            if let Some(key) = literal {
                return Ok(Some(key.clone()));
            }
        }
        Ok(self.env(ENV_OPENAI_API_KEY).map(ApiKey::new))
    }

    /// The file's `[judge]` headers, then the endpoint's, then `RAGEVAL_JUDGE_HEADERS`; a
    /// later one with the same name (case-insensitive) replaces an earlier one.
    fn headers(
        &self,
        endpoint: &FileEndpoint,
        field: &dyn Fn(&str) -> String,
    ) -> Result<Vec<(String, String)>, JudgeError> {
        let mut merged: Vec<(String, String)> = Vec::new();
        let mut put = |name: String, value: String| {
            merged.retain(|(n, _)| !n.eq_ignore_ascii_case(&name));
            merged.push((name, value));
        };
        let tables = [
            (&self.file.headers, "judge.headers".to_owned()),
            (&endpoint.headers, field("headers")),
        ];
        for (table, field_name) in tables {
            for (name, spec) in table {
                let value = match spec {
                    HeaderSpec::Value(value) => value.clone(),
                    HeaderSpec::Env { env } => self.env(env).ok_or_else(|| {
                        self.file_error(
                            &field_name,
                            format!("header {name} names variable {env}, which is not set"),
                        )
                    })?,
                };
                put(name.clone(), value);
            }
        }
        if let Some(raw) = self.env(ENV_JUDGE_HEADERS) {
            for (name, value) in parse_headers(&raw)? {
                put(name, value);
            }
        }
        Ok(merged)
    }

    /// Limits over all endpoints: flag, else environment, else `[judge.limits]`; the
    /// concurrency defaults to the endpoints' total (one endpoint: its own).
    fn global_limits(&self, endpoints: &[EndpointEntry]) -> Result<LimiterConfig, JudgeError> {
        let limits = &self.file.limits;
        let defaults = LimiterConfig::default();
        let concurrency = match self.flags.concurrency {
            Some(n) => Some(n),
            None => self.env_number::<usize>(ENV_JUDGE_CONCURRENCY, "a whole number ≥ 1")?,
        };
        if concurrency == Some(0) {
            return Err(JudgeError::Settings(
                "concurrency must be at least 1".into(),
            ));
        }
        let endpoint_total: usize = endpoints.iter().map(|e| e.limits.max_concurrency).sum();
        let max_concurrency =
            concurrency
                .or(limits.concurrency.map(|c| c.0))
                .unwrap_or(if endpoint_total > 0 {
                    endpoint_total
                } else {
                    defaults.max_concurrency
                });
        let rpm = match self.flags.rpm {
            Some(r) => Some(r),
            None => self.env_number(ENV_JUDGE_RPM, "a whole number of requests per minute")?,
        };
        let tpm = match self.flags.tpm {
            Some(t) => Some(t),
            None => self.env_number(ENV_JUDGE_TPM, "a whole number of tokens per minute")?,
        };
        let single = endpoints.first().filter(|_| endpoints.len() == 1);
        Ok(LimiterConfig {
            max_concurrency,
            min_concurrency: limits
                .min_concurrency
                .map_or(defaults.min_concurrency, |c| c.0),
            requests_per_minute: rpm
                .or(limits.rpm.map(|r| r.0))
                .or(single.and_then(|e| e.limits.requests_per_minute)),
            tokens_per_minute: tpm
                .or(limits.tpm.map(|t| t.0))
                .or(single.and_then(|e| e.limits.tokens_per_minute)),
            ..defaults
        })
    }
}

#[cfg(test)]
mod tests;
