//! The sources settings file (TOML), resolved once into [`EsSettings`],
//! [`ServiceSettings`] and [`LocalSettings`].
//!
//! ```toml
//! [elasticsearch]
//! url = "http://127.0.0.1:9200"          # RAGEVAL_ES_URL wins
//! index = "company-news"
//! query_template = "es-query.json"        # relative to this file
//! size = 200
//! source_excludes = ["content_embedding"]
//! text_field = "metadata.content"
//! user = "elastic"                        # password from RAGEVAL_ES_PASSWORD
//!
//! [service]
//! url = "http://127.0.0.1:8001/qa"
//! query = { message = "{{question}}", company_name = "{{company_name}}" }
//! response = "lines"                      # text | json | lines | sse
//!
//! [local]
//! index = "kids.index"
//! k = 3
//! ```
//!
//! Secrets come from the environment (the `ENV_*` constants) or the file; the environment
//! wins, and neither is ever printed. Unknown keys are errors, so a typo does not silently
//! fall back to a default. Every error names the file and the key; a TOML error also its
//! line and column, and shows the line with a caret under the error (quoted values masked).
//!
//! [`SourcesConfig::locate`] finds the file as the judge finds its settings: `--config`, else
//! `RAGEVAL_CONFIG`, else `./rageval.toml` when it exists, so one file can hold both.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rageval_judge::ApiKey;
use rageval_judge::config::snippet::{locate_error, mask_quoted};
use rageval_judge::config::{DEFAULT_CONFIG_FILE, ENV_CONFIG};
use serde::Deserialize;

use crate::elastic::{EsAuth, EsSettings};
use crate::error::SourceError;
use crate::json_path::JsonPath;
use crate::local::Ranking;
use crate::response::{ContextFields, ResponseShape, StreamMode};
use crate::service::{EnvLookup, HttpMethod, ServiceSettings};
use crate::template::Template;

/// Elasticsearch base URL; overrides `[elasticsearch] url`.
pub const ENV_ES_URL: &str = "RAGEVAL_ES_URL";
/// Elasticsearch user for basic authentication; overrides `[elasticsearch] user`.
pub const ENV_ES_USER: &str = "RAGEVAL_ES_USER";
/// Elasticsearch password for basic authentication; overrides `[elasticsearch] password`.
pub const ENV_ES_PASSWORD: &str = "RAGEVAL_ES_PASSWORD";
/// Elasticsearch API key (the base64 `id:key` form); overrides `[elasticsearch] api_key`.
pub const ENV_ES_API_KEY: &str = "RAGEVAL_ES_API_KEY";

/// Top chunks per question from the local index, by default.
pub const DEFAULT_LOCAL_K: usize = 5;

/// The whole settings file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourcesFile {
    /// `[elasticsearch]`
    pub elasticsearch: Option<EsSection>,
    /// `[service]`
    pub service: Option<ServiceSection>,
    /// `[local]`
    pub local: Option<LocalSection>,
    /// `[judge]`: the judge's settings (read by `rageval-judge`, which chooses the baseline
    /// generator's chat model), allowed here so one file can hold both.
    pub judge: Option<toml::Value>,
}

/// `[elasticsearch]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EsSection {
    url: Option<String>,
    index: Option<String>,
    query_template: Option<PathBuf>,
    size: Option<usize>,
    #[serde(default)]
    source_includes: Vec<String>,
    #[serde(default)]
    source_excludes: Vec<String>,
    text_field: Option<String>,
    id_field: Option<String>,
    user: Option<String>,
    password: Option<String>,
    api_key: Option<String>,
    timeout_secs: Option<f64>,
    max_attempts: Option<u32>,
}

/// `[service]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServiceSection {
    url: Option<String>,
    method: Option<String>,
    #[serde(default)]
    query: toml::Table,
    #[serde(default)]
    headers: toml::Table,
    body: Option<toml::Value>,
    body_template: Option<PathBuf>,
    response: Option<String>,
    answer_path: Option<String>,
    contexts_path: Option<String>,
    context_text: Option<String>,
    context_id: Option<String>,
    context_score: Option<String>,
    stream_path: Option<String>,
    stream_mode: Option<String>,
    timeout_secs: Option<f64>,
    max_attempts: Option<u32>,
    empty_attempts: Option<u32>,
}

/// `[local]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LocalSection {
    index: Option<PathBuf>,
    k: Option<usize>,
    ranking: Option<String>,
}

/// The local retriever's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalSettings {
    /// The index directory.
    pub index: PathBuf,
    /// Chunks per question.
    pub k: usize,
    /// How to rank.
    pub ranking: Ranking,
}

/// A parsed settings file, and where it lives (relative paths are resolved against it).
#[derive(Debug, Default)]
pub struct SourcesConfig {
    path: Option<PathBuf>,
    file: SourcesFile,
}

impl SourcesConfig {
    /// Reads a settings file.
    pub fn read(path: &Path) -> Result<SourcesConfig, SourceError> {
        let text = std::fs::read_to_string(path).map_err(|e| SourceError::io(path, e))?;
        let file: SourcesFile = toml::from_str(&text).map_err(|e| {
            let message = mask_quoted(e.message());
            match locate_error(&text, &e) {
                Some(at) => SourceError::Config {
                    origin: format!("{}:{}:{}", path.display(), at.line, at.column),
                    detail: format!("{message}\n{}", at.snippet),
                },
                None => SourceError::Config {
                    origin: path.display().to_string(),
                    detail: message,
                },
            }
        })?;
        Ok(SourcesConfig {
            path: Some(path.to_owned()),
            file,
        })
    }

    /// The settings file `flag` names (`--config`), else the one [`ENV_CONFIG`] names, else
    /// [`DEFAULT_CONFIG_FILE`] in the current directory when it exists; no file at all gives
    /// [`SourcesConfig::empty`]. A named file that does not exist is an error saying so.
    pub fn locate(
        flag: Option<&Path>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<SourcesConfig, SourceError> {
        let named = match flag {
            Some(path) => Some((path.to_owned(), "--config")),
            None => env(ENV_CONFIG)
                .filter(|v| !v.trim().is_empty())
                .map(|v| (PathBuf::from(v), ENV_CONFIG)),
        };
        match named {
            Some((path, by)) if !path.exists() => Err(SourceError::Config {
                origin: path.display().to_string(),
                detail: format!("no such settings file (named by {by})"),
            }),
            Some((path, _)) => SourcesConfig::read(&path),
            None if Path::new(DEFAULT_CONFIG_FILE).is_file() => {
                SourcesConfig::read(Path::new(DEFAULT_CONFIG_FILE))
            }
            None => Ok(SourcesConfig::empty()),
        }
    }

    /// No file: every setting must come from flags or the environment.
    pub fn empty() -> SourcesConfig {
        SourcesConfig::default()
    }

    /// The file the settings were read from, if any.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    fn origin(&self, key: &str) -> String {
        match &self.path {
            Some(path) => format!("{}: {key}", path.display()),
            None => key.to_owned(),
        }
    }

    fn resolve(&self, path: &Path) -> PathBuf {
        match self.path.as_ref().and_then(|p| p.parent()) {
            Some(dir) if path.is_relative() => dir.join(path),
            _ => path.to_owned(),
        }
    }

    /// The JSON template in the file `path` that the settings `key` names (relative to the
    /// settings file); a file that cannot be read is named with the key and the settings file.
    fn template_file(&self, key: &str, path: &Path) -> Result<Template, SourceError> {
        let resolved = self.resolve(path);
        if let Err(error) = std::fs::metadata(&resolved) {
            return Err(SourceError::Config {
                origin: self.origin(key),
                detail: format!("cannot read {}: {error}", resolved.display()),
            });
        }
        Template::json_file(&resolved)
    }

    fn missing(&self, key: &str, hint: &str) -> SourceError {
        let no_file = if self.path.is_none() {
            format!("; no settings file was read (pass --config FILE, or set {ENV_CONFIG})")
        } else {
            String::new()
        };
        SourceError::Config {
            origin: self.origin(key),
            detail: format!("missing{hint}{no_file}"),
        }
    }

    /// The Elasticsearch settings; `env` reads the `RAGEVAL_ES_*` variables.
    pub fn elasticsearch(
        &self,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<EsSettings, SourceError> {
        let empty = EsSection::default();
        let section = self.file.elasticsearch.as_ref().unwrap_or(&empty);
        let get = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        let url = get(ENV_ES_URL)
            .or_else(|| section.url.clone())
            .ok_or_else(|| {
                self.missing("[elasticsearch] url", &format!(" (or set {ENV_ES_URL})"))
            })?;
        let index = section
            .index
            .clone()
            .ok_or_else(|| self.missing("[elasticsearch] index", ""))?;
        let template_path = section.query_template.as_ref().ok_or_else(|| {
            self.missing(
                "[elasticsearch] query_template",
                " (a JSON file with the _search body)",
            )
        })?;
        let template = self.template_file("[elasticsearch] query_template", template_path)?;
        let text_field = section.text_field.as_deref().ok_or_else(|| {
            self.missing(
                "[elasticsearch] text_field",
                " (the _source field with the chunk text)",
            )
        })?;
        let mut settings = EsSettings::new(url, index, template, text_field);
        if let Some(size) = section.size {
            settings.size = size;
        }
        settings.source_includes = section.source_includes.clone();
        settings.source_excludes = section.source_excludes.clone();
        settings.id_field = section
            .id_field
            .as_deref()
            .filter(|f| *f != "_id")
            .map(JsonPath::parse);
        if let Some(timeout) = section.timeout_secs {
            settings.timeout = self.duration(timeout, "[elasticsearch] timeout_secs")?;
        }
        if let Some(attempts) = section.max_attempts {
            settings.retry.max_attempts = attempts.max(1);
        }
        let api_key = get(ENV_ES_API_KEY).or_else(|| section.api_key.clone());
        let user = get(ENV_ES_USER).or_else(|| section.user.clone());
        let password = get(ENV_ES_PASSWORD).or_else(|| section.password.clone());
        settings.auth = match (api_key, user, password) {
            (Some(key), _, _) => EsAuth::ApiKey(ApiKey::new(key)),
            (None, Some(user), Some(password)) => EsAuth::Basic {
                user,
                password: ApiKey::new(password),
            },
            (None, Some(_), None) => {
                return Err(self.missing(
                    "[elasticsearch] password",
                    &format!(" for the user (set {ENV_ES_PASSWORD})"),
                ));
            }
            (None, None, _) => EsAuth::None,
        };
        Ok(settings)
    }

    /// The RAG service settings; `env` is what `{{env.NAME}}` header placeholders read.
    pub fn service(&self, env: EnvLookup) -> Result<ServiceSettings, SourceError> {
        let empty = ServiceSection::default();
        let section = self.file.service.as_ref().unwrap_or(&empty);
        let url = section
            .url
            .as_deref()
            .ok_or_else(|| self.missing("[service] url", ""))?;
        let mut settings = ServiceSettings::new(Template::text(url, self.origin("[service] url"))?);
        settings.env = env;
        settings.method = match section
            .method
            .as_deref()
            .map(str::to_ascii_uppercase)
            .as_deref()
        {
            None | Some("GET") => HttpMethod::Get,
            Some("POST") => HttpMethod::Post,
            Some(other) => return Err(self.invalid("[service] method", other, "get or post")),
        };
        settings.query = self.text_templates(&section.query, "[service] query")?;
        settings.headers = self.text_templates(&section.headers, "[service] headers")?;
        settings.body = match (&section.body, &section.body_template) {
            (Some(_), Some(_)) => {
                return Err(self.invalid(
                    "[service] body",
                    "both body and body_template",
                    "one of them",
                ));
            }
            (Some(inline), None) => {
                let value = serde_json::to_value(inline).map_err(|e| SourceError::Config {
                    origin: self.origin("[service] body"),
                    detail: e.to_string(),
                })?;
                Some(Template::json_value(value, self.origin("[service] body"))?)
            }
            (None, Some(path)) => Some(self.template_file("[service] body_template", path)?),
            (None, None) => None,
        };
        settings.response = self.response_shape(section)?;
        if let Some(timeout) = section.timeout_secs {
            settings.timeout = self.duration(timeout, "[service] timeout_secs")?;
        }
        if let Some(attempts) = section.max_attempts {
            settings.retry.max_attempts = attempts.max(1);
        }
        if let Some(attempts) = section.empty_attempts {
            settings.empty_attempts = attempts.max(1);
        }
        Ok(settings)
    }

    /// The local retriever settings; `index`, `k` and `ranking` given on the command line win.
    pub fn local(
        &self,
        index: Option<PathBuf>,
        k: Option<usize>,
        ranking: Option<Ranking>,
    ) -> Result<LocalSettings, SourceError> {
        let empty = LocalSection::default();
        let section = self.file.local.as_ref().unwrap_or(&empty);
        let index = index
            .or_else(|| section.index.as_ref().map(|p| self.resolve(p)))
            .ok_or_else(|| self.missing("[local] index", " (or pass --index)"))?;
        let ranking = match (ranking, section.ranking.as_deref()) {
            (Some(r), _) => r,
            (None, None) => Ranking::Bm25,
            (None, Some(name)) => Ranking::from_name(name)
                .ok_or_else(|| self.invalid("[local] ranking", name, "bm25, vector or hybrid"))?,
        };
        Ok(LocalSettings {
            index,
            k: k.or(section.k).unwrap_or(DEFAULT_LOCAL_K),
            ranking,
        })
    }

    fn response_shape(&self, section: &ServiceSection) -> Result<ResponseShape, SourceError> {
        let path = |p: &Option<String>| p.as_deref().map(JsonPath::parse);
        let mode = |default: StreamMode| -> Result<StreamMode, SourceError> {
            Ok(match section.stream_mode.as_deref() {
                None => default,
                Some("last") => StreamMode::Last,
                Some("join") => StreamMode::Join,
                Some("concat") => StreamMode::Concat,
                Some(other) => {
                    return Err(self.invalid(
                        "[service] stream_mode",
                        other,
                        "last, join or concat",
                    ));
                }
            })
        };
        Ok(match section.response.as_deref().unwrap_or("text") {
            "text" => ResponseShape::Text,
            "json" => ResponseShape::Json {
                answer: path(&section.answer_path).ok_or_else(|| {
                    self.missing("[service] answer_path", " (needed by response = \"json\")")
                })?,
                contexts: path(&section.contexts_path).map(|contexts| ContextFields {
                    path: contexts,
                    text: path(&section.context_text),
                    id: path(&section.context_id),
                    score: path(&section.context_score),
                }),
            },
            "lines" => ResponseShape::Lines {
                mode: mode(StreamMode::Last)?,
                path: path(&section.stream_path),
            },
            "sse" => ResponseShape::Sse {
                mode: mode(StreamMode::Concat)?,
                path: path(&section.stream_path),
            },
            other => {
                return Err(self.invalid("[service] response", other, "text, json, lines or sse"));
            }
        })
    }

    fn text_templates(
        &self,
        table: &toml::Table,
        key: &str,
    ) -> Result<Vec<(String, Template)>, SourceError> {
        table
            .iter()
            .map(|(name, value)| {
                let origin = self.origin(&format!("{key}.{name}"));
                let text = match value {
                    toml::Value::String(s) => s.clone(),
                    toml::Value::Integer(i) => i.to_string(),
                    toml::Value::Float(f) => f.to_string(),
                    toml::Value::Boolean(b) => b.to_string(),
                    _ => {
                        return Err(SourceError::Config {
                            origin,
                            detail: "expected a string".into(),
                        });
                    }
                };
                Ok((name.clone(), Template::text(&text, origin)?))
            })
            .collect()
    }

    fn duration(&self, seconds: f64, key: &str) -> Result<Duration, SourceError> {
        Duration::try_from_secs_f64(seconds)
            .ok()
            .filter(|d| !d.is_zero())
            .ok_or_else(|| self.invalid(key, &seconds.to_string(), "a positive number of seconds"))
    }

    fn invalid(&self, key: &str, value: &str, expected: &str) -> SourceError {
        SourceError::Config {
            origin: self.origin(key),
            detail: format!("`{value}` is not valid; expected {expected}"),
        }
    }
}

/// The environment as an [`EnvLookup`].
pub fn process_env() -> EnvLookup {
    Arc::new(|name| std::env::var(name).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn elasticsearch_settings_with_env_credentials_winning() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "q.json",
            r#"{"query": {"match": {"body": "{{question}}"}}}"#,
        );
        let config = write(
            dir.path(),
            "s.toml",
            "[elasticsearch]\nurl = \"http://es:9200\"\nindex = \"news\"\nquery_template = \"q.json\"\n\
             text_field = \"body\"\nid_field = \"_id\"\nsize = 50\nuser = \"reader\"\npassword = \"from-file\"\n",
        );
        let config = SourcesConfig::read(&config).unwrap();
        let env = |name: &str| (name == ENV_ES_PASSWORD).then(|| "from-env".to_string());
        let settings = config.elasticsearch(&env).unwrap();
        assert_eq!((settings.size, settings.id_field.clone()), (50, None));
        let EsAuth::Basic { user, password } = &settings.auth else {
            panic!()
        };
        assert_eq!((user.as_str(), password.expose()), ("reader", "from-env"));
        assert!(!format!("{settings:?}").contains("from-"));
    }

    #[test]
    fn errors_name_the_file_and_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let typo = write(
            dir.path(),
            "typo.toml",
            "[service]\nurl = \"http://x\"\nrespones = \"json\"\n",
        );
        let err = SourcesConfig::read(&typo).unwrap_err().to_string();
        assert!(
            err.contains("typo.toml") && err.contains("respones"),
            "{err}"
        );

        write(
            dir.path(),
            "bad.json",
            "{\n  \"query\": {\"match\": \"{{question\"}\n}",
        );
        let config = write(
            dir.path(),
            "s.toml",
            "[elasticsearch]\nurl = \"http://es\"\nindex = \"i\"\nquery_template = \"bad.json\"\ntext_field = \"t\"\n\
             [service]\nurl = \"http://x\"\nresponse = \"xml\"\n",
        );
        let config = SourcesConfig::read(&config).unwrap();
        let err = config.elasticsearch(&no_env).unwrap_err().to_string();
        assert!(err.contains("bad.json:2:23: `{{` is never closed"), "{err}");
        let err = config.service(process_env()).unwrap_err().to_string();
        assert!(
            err.ends_with(
                "s.toml: [service] response: `xml` is not valid; expected text, json, lines or sse"
            ),
            "{err}"
        );
        // Issue 39, item 11: a missing template file said only `missing.json: No such
        // file or directory`.
        let config = write(
            dir.path(),
            "gone.toml",
            "[elasticsearch]\nurl = \"http://es\"\nindex = \"i\"\nquery_template = \"missing.json\"\ntext_field = \"t\"\n",
        );
        let config = SourcesConfig::read(&config).unwrap();
        let err = config.elasticsearch(&no_env).unwrap_err().to_string();
        assert!(
            err.contains("gone.toml: [elasticsearch] query_template: cannot read ")
                && err.contains("missing.json: "),
            "{err}"
        );
        let err = SourcesConfig::empty()
            .local(None, None, None)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "[local] index: missing (or pass --index); no settings file was read (pass --config FILE, or set RAGEVAL_CONFIG)"
        );
    }

    #[test]
    fn toml_errors_keep_line_column_and_a_caret_without_values() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            dir.path(),
            "s.toml",
            "[elasticsearch]\nurl = \"http://es\"\npassword = hunter2\n",
        );
        let err = SourcesConfig::read(&path).unwrap_err().to_string();
        let origin = format!("{}:3:12: ", path.display());
        assert!(err.starts_with(&origin), "{err}");
        assert!(
            err.ends_with("\n  |\n3 | password = …\n  |            ^"),
            "{err}"
        );
        assert!(!err.contains("hunter2"), "{err}");
        let path = write(
            dir.path(),
            "t.toml",
            "[service]\nurl = \"http://x\"\nrespones = \"json\"\n",
        );
        let err = SourcesConfig::read(&path).unwrap_err().to_string();
        assert!(
            err.contains("t.toml:3:1: unknown field `respones`"),
            "{err}"
        );
        assert!(err.ends_with("3 | respones = \"…\"\n  | ^^^^^^^^"), "{err}");
    }

    #[test]
    fn a_named_settings_file_that_does_not_exist_is_reported_as_such() {
        let dir = tempfile::tempdir().unwrap();
        let absent = dir.path().join("absent.toml");
        let err = SourcesConfig::locate(Some(&absent), &no_env)
            .unwrap_err()
            .to_string();
        assert!(
            err.ends_with("absent.toml: no such settings file (named by --config)"),
            "{err}"
        );
        let by_env = |name: &str| (name == ENV_CONFIG).then(|| absent.display().to_string());
        let err = SourcesConfig::locate(None, &by_env)
            .unwrap_err()
            .to_string();
        assert!(
            err.ends_with("absent.toml: no such settings file (named by RAGEVAL_CONFIG)"),
            "{err}"
        );
        let present = write(dir.path(), "s.toml", "[local]\nindex = \"kids.index\"\n");
        let by_env = |name: &str| (name == ENV_CONFIG).then(|| present.display().to_string());
        let config = SourcesConfig::locate(None, &by_env).unwrap();
        assert_eq!(config.path(), Some(present.as_path()));
    }

    #[test]
    fn a_user_without_a_password_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "q.json", "{}");
        let config = write(
            dir.path(),
            "s.toml",
            "[elasticsearch]\nurl = \"http://es\"\nindex = \"i\"\nquery_template = \"q.json\"\ntext_field = \"t\"\nuser = \"u\"\n",
        );
        let err = SourcesConfig::read(&config)
            .unwrap()
            .elasticsearch(&no_env)
            .unwrap_err();
        assert!(err.to_string().contains(ENV_ES_PASSWORD), "{err}");
    }
}
