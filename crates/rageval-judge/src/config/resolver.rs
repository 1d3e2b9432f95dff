//! One resolution of the judge's settings: the flags, the environment and the parsed
//! `[judge]` table, merged field by field by the one rule of [`super::layers`]; the endpoint
//! list is [`super::endpoints`]'.

use std::path::PathBuf;

use super::file::FileJudge;
use super::layers::Environment;
use super::{ENV_JUDGE_MODEL, EndpointEntry, JudgeFlags, JudgeSettings, RequestSettings, var};
use crate::accounting::{Budget, Price, PriceTable};
use crate::cache::CacheMode;
use crate::error::JudgeError;
use crate::limiter::LimiterConfig;
use crate::retry::RetryPolicy;
use crate::settings::default_cache_path;

/// One resolution: the inputs and the rules that merge them.
pub(super) struct Resolver<'a, L> {
    pub(super) flags: &'a JudgeFlags,
    pub(super) file: &'a FileJudge,
    /// The file as errors name it.
    pub(super) file_name: String,
    /// Where relative paths in the file start.
    pub(super) config_dir: Option<PathBuf>,
    pub(super) env: Environment<'a, L>,
}

impl<L: Fn(&str) -> Option<String>> Resolver<'_, L> {
    /// An error at `field` of the file, with its line when known.
    pub(super) fn file_error(&self, field: &str, message: impl Into<String>) -> JudgeError {
        JudgeError::Config {
            file: self.file_name.clone(),
            line: self.file.line_of(field),
            field: field.to_owned(),
            message: message.into(),
        }
    }

    pub(super) fn resolve(
        &self,
        config_file: Option<PathBuf>,
    ) -> Result<JudgeSettings, JudgeError> {
        let (flags, file, env) = (self.flags, self.file, &self.env);
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
        let model = env.layered(flags.model.clone(), &var::MODEL, file.model.clone())?;
        let endpoints = match &model {
            Some(model) => self.endpoints(model, cache_mode)?,
            None => {
                let url_set = self.explicit_base_url()?.is_some();
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
        // No variable names the cache file (RAGEVAL_CACHE_DIR is the default's folder).
        let cache_path = match (&flags.cache, &file.cache.path) {
            (Some(path), _) => Some(path.clone()),
            (None, Some(path)) => Some(match &self.config_dir {
                Some(dir) if path.is_relative() => dir.join(path),
                _ => path.clone(),
            }),
            (None, None) => default_cache_path(|name| env.raw(name)),
        };
        let prices = self.prices()?;
        // The caps have no variable: a flag over the file.
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
            embedding_model: env.layered(
                flags.embedding_model.clone(),
                &var::EMBEDDING_MODEL,
                file.embedding_model.clone(),
            )?,
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

    /// What every request asks: temperature, token cap, reasoning effort, thinking.
    fn request_settings(&self) -> Result<RequestSettings, JudgeError> {
        let (flags, file, env) = (self.flags, self.file, &self.env);
        let temperature = env.layered(
            flags.temperature,
            &var::TEMPERATURE,
            file.temperature.map(|t| t.0),
        )?;
        let max_tokens = env.layered(
            flags.max_tokens,
            &var::MAX_TOKENS,
            file.max_tokens.map(|c| c.0),
        )?;
        if max_tokens == Some(0) {
            return Err(JudgeError::Settings(
                "the judge's token cap must be at least 1".into(),
            ));
        }
        Ok(RequestSettings {
            temperature: temperature.unwrap_or_default(),
            max_tokens,
            reasoning_effort: env.layered(
                flags.reasoning_effort.clone(),
                &var::REASONING_EFFORT,
                file.reasoning_effort.clone(),
            )?,
            thinking: env.layered(flags.thinking, &var::THINKING, file.thinking)?,
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

    /// Limits over all endpoints: flag, else environment, else `[judge.limits]`; the
    /// concurrency defaults to the endpoints' total (one endpoint: its own), the rates to
    /// a single endpoint's own.
    fn global_limits(&self, endpoints: &[EndpointEntry]) -> Result<LimiterConfig, JudgeError> {
        let (flags, limits, env) = (self.flags, &self.file.limits, &self.env);
        let defaults = LimiterConfig::default();
        let concurrency = env.layered(
            flags.concurrency,
            &var::CONCURRENCY,
            limits.concurrency.map(|c| c.0),
        )?;
        if concurrency == Some(0) {
            return Err(JudgeError::Settings(
                "concurrency must be at least 1".into(),
            ));
        }
        let endpoint_total: usize = endpoints.iter().map(|e| e.limits.max_concurrency).sum();
        let max_concurrency = concurrency.unwrap_or(if endpoint_total > 0 {
            endpoint_total
        } else {
            defaults.max_concurrency
        });
        let single = endpoints.first().filter(|_| endpoints.len() == 1);
        let rpm = env.layered(flags.rpm, &var::RPM, limits.rpm.map(|r| r.0))?;
        let tpm = env.layered(flags.tpm, &var::TPM, limits.tpm.map(|t| t.0))?;
        Ok(LimiterConfig {
            max_concurrency,
            min_concurrency: limits
                .min_concurrency
                .map_or(defaults.min_concurrency, |c| c.0),
            requests_per_minute: rpm.or(single.and_then(|e| e.limits.requests_per_minute)),
            tokens_per_minute: tpm.or(single.and_then(|e| e.limits.tokens_per_minute)),
            ..defaults
        })
    }
}
