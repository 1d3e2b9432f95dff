//! The endpoint list of a resolution: where the chat model is served, each endpoint with
//! its key, headers, timeout, request form and limits. An endpoint's own entry sits
//! between the environment and `[judge]`: flag > variable > `[[judge.endpoints]]` entry >
//! `[judge]` > default, by the one rule of [`super::layers`].

use super::file::{FileEndpoint, HeaderSpec};
use super::resolver::Resolver;
use super::{
    DEFAULT_BASE_URL, ENV_JUDGE_API_KEY, ENV_JUDGE_HEADERS, ENV_OPENAI_API_KEY,
    ENV_OPENAI_BASE_URL, EndpointEntry, EndpointSettings, var,
};
use crate::cache::CacheMode;
use crate::error::JudgeError;
use crate::forms::RequestForm;
use crate::limiter::LimiterConfig;
use crate::secret::ApiKey;
use crate::settings::parse_headers;

impl<L: Fn(&str) -> Option<String>> Resolver<'_, L> {
    /// A base URL from the flags or `RAGEVAL_JUDGE_BASE_URL`, which replaces the file's
    /// endpoints.
    pub(super) fn explicit_base_url(&self) -> Result<Option<String>, JudgeError> {
        self.env
            .layered(self.flags.base_url.clone(), &var::BASE_URL, None)
    }

    /// The endpoint list: an explicit base URL replaces the file's list; else the file's
    /// `[[judge.endpoints]]`; else one endpoint at the file's `base_url`, `OPENAI_BASE_URL`
    /// or OpenAI's own.
    pub(super) fn endpoints(
        &self,
        model: &str,
        mode: CacheMode,
    ) -> Result<Vec<EndpointEntry>, JudgeError> {
        let (flags, file, env) = (self.flags, self.file, &self.env);
        let shorthand = FileEndpoint::default();
        let listed: Vec<(String, &FileEndpoint)> = match self.explicit_base_url()? {
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
                    .or_else(|| env.text(ENV_OPENAI_BASE_URL))
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
            let file_timeout = endpoint.timeout_secs.or(file.timeout_secs).map(|s| s.0);
            settings.request_timeout = env
                .layered(flags.timeout, &var::TIMEOUT, file_timeout)?
                .unwrap_or(settings.request_timeout);
            if let Some(connect) = file.connect_timeout_secs {
                settings.connect_timeout = connect.0;
            }
            if let Some(mode) = endpoint.schema_mode.or(file.schema_mode) {
                settings.schema_mode = mode.into();
            }
            settings.form = self.request_form(endpoint)?;
            entries.push(EndpointEntry {
                settings,
                weight: endpoint.weight.map_or(1.0, |w| w.0),
                limits: endpoint_limits(endpoint),
            });
        }
        Ok(entries)
    }

    /// The form requests start in at one endpoint: the cap's name by the one rule (the
    /// endpoint's entry over `[judge]`); the parameters it leaves out.
    fn request_form(&self, endpoint: &FileEndpoint) -> Result<RequestForm, JudgeError> {
        let file_param = endpoint
            .max_tokens_param
            .or(self.file.max_tokens_param)
            .map(Into::into);
        let cap_param = self
            .env
            .layered(
                self.flags.max_tokens_param,
                &var::MAX_TOKENS_PARAM,
                file_param,
            )?
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

    /// `RAGEVAL_JUDGE_API_KEY`, else the endpoint's key, else the file's `[judge]` key, else
    /// `OPENAI_API_KEY`. A key variable named in the file must be set (except offline).
    fn api_key(
        &self,
        endpoint: &FileEndpoint,
        field: &dyn Fn(&str) -> String,
        mode: CacheMode,
    ) -> Result<Option<ApiKey>, JudgeError> {
        if let Some(key) = self.env.text(ENV_JUDGE_API_KEY) {
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
                return match self.env.text(name) {
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
        Ok(self.env.text(ENV_OPENAI_API_KEY).map(ApiKey::new))
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
                    HeaderSpec::Env { env } => self.env.text(env).ok_or_else(|| {
                        self.file_error(
                            &field_name,
                            format!("header {name} names variable {env}, which is not set"),
                        )
                    })?,
                };
                put(name.clone(), value);
            }
        }
        if let Some(raw) = self.env.text(ENV_JUDGE_HEADERS) {
            for (name, value) in parse_headers(&raw)? {
                put(name, value);
            }
        }
        Ok(merged)
    }
}

/// An endpoint's own limits, used when there are several (no flag or variable sets them).
fn endpoint_limits(endpoint: &FileEndpoint) -> LimiterConfig {
    let defaults = LimiterConfig::default();
    LimiterConfig {
        max_concurrency: endpoint
            .concurrency
            .map_or(defaults.max_concurrency, |c| c.0),
        requests_per_minute: endpoint.rpm.map(|r| r.0),
        tokens_per_minute: endpoint.tpm.map(|t| t.0),
        ..defaults
    }
}
