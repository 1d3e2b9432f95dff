//! Templates with `{{name}}` placeholders: Elasticsearch query bodies, the RAG service's URL,
//! query parameters, headers and JSON body.
//!
//! A JSON template is parsed once, when settings are read, and every placeholder's position is
//! recorded, so that a bad template or a question without a value names file, line, column and
//! placeholder. Rendering follows two rules:
//!
//! - a JSON string that is exactly one placeholder (`"{{size}}"`) becomes the variable's JSON
//!   value, so numbers stay numbers and lists stay lists;
//! - a placeholder inside a longer string (or a text template) is replaced by the value as
//!   text: strings as they are, anything else as JSON.
//!
//! Which names exist is the caller's business ([`Variables`]); this module never reads the
//! environment unless a [`Variables`] was given an environment lookup.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::{Map, Value};

use crate::error::SourceError;

/// Where one placeholder first appears in its template.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Placeholder {
    name: String,
    line: usize,
    column: usize,
}

#[derive(Debug, Clone, PartialEq)]
enum Body {
    Json(Value),
    Text(String),
}

/// A parsed template: JSON or plain text, with its placeholders located.
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    origin: String,
    body: Body,
    placeholders: Vec<Placeholder>,
}

/// Prefix of placeholders that read an environment variable (`{{env.RAG_TOKEN}}`).
pub const ENV_PREFIX: &str = "env.";

/// Reads an environment variable by name.
pub type EnvRead<'a> = &'a (dyn Fn(&str) -> Option<String> + Sync);

/// The values placeholders are replaced with, for one question.
#[derive(Default)]
pub struct Variables<'a> {
    question_id: String,
    values: BTreeMap<String, Value>,
    env: Option<EnvRead<'a>>,
}

impl fmt::Debug for Variables<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Values may hold per-question secrets passed through fields; names suffice.
        f.debug_struct("Variables")
            .field("question_id", &self.question_id)
            .field("names", &self.values.keys().collect::<Vec<_>>())
            .field("env", &self.env.is_some())
            .finish()
    }
}

impl<'a> Variables<'a> {
    /// No values yet; `question_id` names the question in errors.
    pub fn new(question_id: impl Into<String>) -> Self {
        Variables {
            question_id: question_id.into(),
            values: BTreeMap::new(),
            env: None,
        }
    }

    /// The variables of one sample: `question`, `id`, and every field of the questions file
    /// that is not a sample field (`company_name`, say), by its column name.
    pub fn for_sample(sample: &rageval_core::Sample) -> Self {
        let mut vars = Variables::new(sample.id.clone());
        for (name, value) in &sample.metadata {
            vars.values.insert(name.clone(), value.clone());
        }
        vars.set("question", Value::String(sample.question.clone()));
        vars.set("id", Value::String(sample.id.clone()));
        vars
    }

    /// Sets (or replaces) one variable.
    pub fn set(&mut self, name: impl Into<String>, value: Value) -> &mut Self {
        self.values.insert(name.into(), value);
        self
    }

    /// Lets `{{env.NAME}}` placeholders read `NAME` through `lookup` (headers only: secrets
    /// belong there, not in a query body that may be logged by a server).
    pub fn with_env(mut self, lookup: EnvRead<'a>) -> Self {
        self.env = Some(lookup);
        self
    }

    /// The value of `name`, if it has one.
    pub fn value(&self, name: &str) -> Option<Value> {
        if let Some(var) = name.strip_prefix(ENV_PREFIX) {
            return self.env.and_then(|lookup| lookup(var)).map(Value::String);
        }
        self.values.get(name).cloned()
    }

    fn known(&self) -> String {
        let names: Vec<&str> = self.values.keys().map(String::as_str).collect();
        names.join(", ")
    }
}

impl Template {
    /// Parses a JSON template; `origin` (a file path, or a settings key) names it in errors.
    pub fn json(text: &str, origin: impl Into<String>) -> Result<Template, SourceError> {
        let origin = origin.into();
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let body: Value = serde_json::from_str(text).map_err(|e| SourceError::Template {
            origin: origin.clone(),
            line: e.line(),
            column: e.column(),
            detail: format!("not valid json: {e}"),
        })?;
        let placeholders = locate(text, &origin)?;
        Ok(Template {
            origin,
            body: Body::Json(body),
            placeholders,
        })
    }

    /// Reads and parses a JSON template file.
    pub fn json_file(path: &std::path::Path) -> Result<Template, SourceError> {
        let text = std::fs::read_to_string(path).map_err(|e| SourceError::io(path, e))?;
        Template::json(&text, path.display().to_string())
    }

    /// A JSON template from a value already parsed (an inline table of a settings file);
    /// positions are then within the string holding each placeholder.
    pub fn json_value(value: Value, origin: impl Into<String>) -> Result<Template, SourceError> {
        let origin = origin.into();
        let mut placeholders = Vec::new();
        collect_strings(&value, &mut |s| {
            for p in locate(s, &origin)? {
                if !placeholders.iter().any(|q: &Placeholder| q.name == p.name) {
                    placeholders.push(p);
                }
            }
            Ok(())
        })?;
        Ok(Template {
            origin,
            body: Body::Json(value),
            placeholders,
        })
    }

    /// A plain-text template (a URL, a query parameter, a header value).
    pub fn text(text: &str, origin: impl Into<String>) -> Result<Template, SourceError> {
        let origin = origin.into();
        let placeholders = locate(text, &origin)?;
        Ok(Template {
            origin,
            body: Body::Text(text.to_owned()),
            placeholders,
        })
    }

    /// The template as written (compact JSON for a JSON template).
    pub fn source_text(&self) -> String {
        match &self.body {
            Body::Text(text) => text.clone(),
            Body::Json(value) => value.to_string(),
        }
    }

    /// Where the template came from.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The names of its placeholders, in order of first use.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.placeholders.iter().map(|p| p.name.as_str())
    }

    /// Whether it has an `env.` placeholder.
    pub fn reads_env(&self) -> bool {
        self.names().any(|n| n.starts_with(ENV_PREFIX))
    }

    /// Renders a JSON template (a text template renders to a JSON string).
    pub fn render_json(&self, vars: &Variables<'_>) -> Result<Value, SourceError> {
        match &self.body {
            Body::Json(value) => self.render_value(value, vars),
            Body::Text(text) => self.render_str(text, vars).map(Value::String),
        }
    }

    /// Renders to text (a JSON template renders to its compact JSON text).
    pub fn render_text(&self, vars: &Variables<'_>) -> Result<String, SourceError> {
        match &self.body {
            Body::Text(text) => self.render_str(text, vars),
            Body::Json(_) => Ok(self.render_json(vars)?.to_string()),
        }
    }

    fn render_value(&self, value: &Value, vars: &Variables<'_>) -> Result<Value, SourceError> {
        Ok(match value {
            Value::String(s) => match whole_placeholder(s) {
                Some(name) => self.lookup(name, vars)?,
                None => Value::String(self.render_str(s, vars)?),
            },
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|item| self.render_value(item, vars))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Object(map) => {
                let mut out = Map::with_capacity(map.len());
                for (key, item) in map {
                    out.insert(self.render_str(key, vars)?, self.render_value(item, vars)?);
                }
                Value::Object(out)
            }
            other => other.clone(),
        })
    }

    fn render_str(&self, text: &str, vars: &Variables<'_>) -> Result<String, SourceError> {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find("{{") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            // `locate` already checked that every `{{` closes.
            let end = after.find("}}").unwrap_or(after.len());
            match self.lookup(after[..end].trim(), vars)? {
                Value::String(s) => out.push_str(&s),
                other => out.push_str(&other.to_string()),
            }
            rest = after.get(end + 2..).unwrap_or("");
        }
        out.push_str(rest);
        Ok(out)
    }

    fn lookup(&self, name: &str, vars: &Variables<'_>) -> Result<Value, SourceError> {
        vars.value(name).ok_or_else(|| {
            let (line, column) = self
                .placeholders
                .iter()
                .find(|p| p.name == name)
                .map_or((1, 1), |p| (p.line, p.column));
            SourceError::MissingVariable {
                origin: self.origin.clone(),
                line,
                column,
                name: name.to_owned(),
                question: vars.question_id.clone(),
                known: vars.known(),
            }
        })
    }
}

/// The name of a string that is one placeholder and nothing else.
fn whole_placeholder(s: &str) -> Option<&str> {
    let inner = s.strip_prefix("{{")?.strip_suffix("}}")?;
    (!inner.contains("{{") && !inner.contains("}}")).then(|| inner.trim())
}

/// Every placeholder of `text` with its 1-based line and column (first use per name); a
/// `{{` that never closes, or a name that is not `letters, digits, _ . -`, is an error.
fn locate(text: &str, origin: &str) -> Result<Vec<Placeholder>, SourceError> {
    let mut found: Vec<Placeholder> = Vec::new();
    let mut offset = 0;
    while let Some(start) = text[offset..].find("{{") {
        let start = offset + start;
        let (line, column) = line_column(text, start);
        let bad = |detail: String| SourceError::Template {
            origin: origin.to_owned(),
            line,
            column,
            detail,
        };
        let after = &text[start + 2..];
        let Some(end) = after.find("}}") else {
            return Err(bad("`{{` is never closed by `}}`".into()));
        };
        let name = after[..end].trim();
        let valid = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '-'));
        if !valid {
            return Err(bad(format!(
                "`{{{{{}}}}}` is not a placeholder name (letters, digits, `_`, `.`, `-`)",
                &after[..end]
            )));
        }
        if !found.iter().any(|p| p.name == name) {
            found.push(Placeholder {
                name: name.to_owned(),
                line,
                column,
            });
        }
        offset = start + 2 + end + 2;
    }
    Ok(found)
}

/// 1-based line and character column of byte `offset` in `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

fn collect_strings(
    value: &Value,
    visit: &mut dyn FnMut(&str) -> Result<(), SourceError>,
) -> Result<(), SourceError> {
    match value {
        Value::String(s) => visit(s),
        Value::Array(items) => items.iter().try_for_each(|v| collect_strings(v, visit)),
        Value::Object(map) => map.iter().try_for_each(|(k, v)| {
            visit(k)?;
            collect_strings(v, visit)
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vars() -> Variables<'static> {
        let mut v = Variables::new("q7");
        v.set("question", json!("少儿编程 市场"))
            .set("company_name", json!("东方航空"))
            .set("size", json!(200));
        v
    }

    #[test]
    fn whole_placeholders_keep_their_type_and_inner_ones_become_text() {
        let t = Template::json(
            r#"{"size": "{{size}}", "query": {"match": {"content": "Q: {{ question }} ({{size}})"}}}"#,
            "t.json",
        )
        .unwrap();
        assert_eq!(
            t.render_json(&vars()).unwrap(),
            json!({"size": 200, "query": {"match": {"content": "Q: 少儿编程 市场 (200)"}}})
        );
        assert_eq!(t.names().collect::<Vec<_>>(), ["size", "question"]);
    }

    #[test]
    fn a_missing_value_names_file_line_column_placeholder_and_question() {
        let t =
            Template::json("{\n  \"a\": 1,\n  \"b\": \"x {{collection}}\"\n}", "q.json").unwrap();
        let err = t.render_json(&vars()).unwrap_err().to_string();
        assert!(
            err.starts_with("q.json:3:11: placeholder `{{collection}}`"),
            "{err}"
        );
        assert!(err.contains("question q7"), "{err}");
        assert!(err.contains("company_name"), "{err}");
    }

    #[test]
    fn bad_json_and_bad_placeholders_name_their_position() {
        let err = Template::json("{\"a\": }", "bad.json").unwrap_err();
        assert!(
            err.to_string().starts_with("bad.json:1:7: not valid json"),
            "{err}"
        );
        let err = Template::json("{\n \"a\": \"{{question\"\n}", "open.json").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("open.json:2:8: `{{` is never closed"),
            "{err}"
        );
        let err = Template::text("x {{ a b }}", "service.url").unwrap_err();
        assert!(err.to_string().starts_with("service.url:1:3:"), "{err}");
    }

    #[test]
    fn env_placeholders_read_only_through_a_lookup() {
        let t = Template::text("Bearer {{env.TOKEN}}", "headers.Authorization").unwrap();
        assert!(t.reads_env());
        assert!(t.render_text(&vars()).is_err());
        let lookup = |name: &str| (name == "TOKEN").then(|| "s3cret".to_string());
        let v = vars().with_env(&lookup);
        assert_eq!(t.render_text(&v).unwrap(), "Bearer s3cret");
    }

    #[test]
    fn inline_values_and_non_string_variables() {
        let t =
            Template::json_value(json!({"k": "{{size}}", "q": ["{{question}}"]}), "body").unwrap();
        assert_eq!(
            t.render_json(&vars()).unwrap(),
            json!({"k": 200, "q": ["少儿编程 市场"]})
        );
        let t = Template::text("{{size}} docs", "x").unwrap();
        assert_eq!(t.render_text(&vars()).unwrap(), "200 docs");
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        let err = Template::text("问题：{{ }}", "cn").unwrap_err();
        assert!(err.to_string().starts_with("cn:1:4:"), "{err}");
    }
}
