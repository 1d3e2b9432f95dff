//! The labels file as calibration reads it: JSON Lines, the binary and graded lines that
//! `rageval judge-check` reads (docs/judge-fidelity.md), so one file feeds both.
//!
//! Each line is an object with
//! - `id` (string or number): the sample it labels; without one, the 1-based line number
//!   (as `judge-check` numbers its items);
//! - exactly one of `label` (`true` = good, read as 1; `false` read as 0) and `grade` (a
//!   number, higher is better, read as `(grade − min) / (max − min)` on the file's
//!   [`GradeScale`], so every label lies in [0, 1]);
//! - optionally `metric`: the metric the label is about (otherwise the caller says which
//!   metrics unnamed labels are about, see [`super::matching`]).
//!
//! Other fields (`question`, `contexts`, `answer`, `reference`, `group`, anything a
//! labelling tool adds) are ignored here. Pairwise lines (`a`, `b`, `preferred`) say which
//! of two answers is better, not a value per sample, and are refused. Errors name the file,
//! the line and the field.

use std::collections::HashMap;
use std::path::Path;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The range of a graded label, mapped onto [0, 1].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GradeScale {
    pub min: f64,
    pub max: f64,
}

impl GradeScale {
    /// A scale from `min` to `max`; `None` unless both are finite and `min < max`.
    pub fn new(min: f64, max: f64) -> Option<Self> {
        (min.is_finite() && max.is_finite() && min < max).then_some(Self { min, max })
    }

    /// `grade` on [0, 1]; `None` outside the scale.
    pub fn normalise(&self, grade: f64) -> Option<f64> {
        (self.min..=self.max)
            .contains(&grade)
            .then(|| (grade - self.min) / (self.max - self.min))
    }
}

/// `MIN..MAX`, e.g. `1..5`.
impl FromStr for GradeScale {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || format!("`{text}` is not a grade scale MIN..MAX (e.g. 1..5, min below max)");
        let (min, max) = text.split_once("..").ok_or_else(bad)?;
        let min: f64 = min.trim().parse().map_err(|_| bad())?;
        let max: f64 = max.trim().parse().map_err(|_| bad())?;
        Self::new(min, max).ok_or_else(bad)
    }
}

/// What the person said, as written.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LabelValue {
    Binary(bool),
    Graded(f64),
}

/// One line of a labels file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabelRecord {
    /// 1-based line number in the file.
    pub line: usize,
    /// The labelled sample's id.
    pub id: String,
    /// The metric the label is about, when the line names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    pub written: LabelValue,
    /// The label on [0, 1]: 1/0 for binary labels, the grade on its scale.
    pub value: f64,
}

/// A labels file that cannot be used; each names the file and, where there is one, the
/// line and field.
#[derive(Debug, thiserror::Error)]
pub enum LabelsError {
    #[error("cannot read labels file {file}")]
    Read {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}:{line}: not a JSON object")]
    NotJson {
        file: String,
        line: usize,
        #[source]
        source: serde_json::Error,
    },
    #[error("{file}:{line}: field `{field}`: {why}")]
    Field {
        file: String,
        line: usize,
        field: &'static str,
        why: String,
    },
    #[error("{file}: no labels")]
    Empty { file: String },
}

/// The fields calibration reads; the rest of the line is ignored.
#[derive(Debug, Deserialize)]
struct Line {
    id: Option<Value>,
    label: Option<Value>,
    grade: Option<Value>,
    metric: Option<Value>,
    preferred: Option<Value>,
}

/// Reads a labels file; `scale` is needed when it holds graded labels.
pub fn read_labels(
    path: &Path,
    scale: Option<GradeScale>,
) -> Result<Vec<LabelRecord>, LabelsError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| LabelsError::Read {
        file: file.clone(),
        source,
    })?;
    parse_labels(&text, &file, scale)
}

/// Parses the text of a labels file named `file` (for messages).
pub fn parse_labels(
    text: &str,
    file: &str,
    scale: Option<GradeScale>,
) -> Result<Vec<LabelRecord>, LabelsError> {
    let mut records = Vec::new();
    let mut first_line: HashMap<(String, Option<String>), usize> = HashMap::new();
    for (index, raw) in text.lines().enumerate() {
        if raw.trim().is_empty() {
            continue;
        }
        let line = index + 1;
        let field_error = |field: &'static str, why: String| LabelsError::Field {
            file: file.to_owned(),
            line,
            field,
            why,
        };
        let parsed: Line = serde_json::from_str(raw).map_err(|source| LabelsError::NotJson {
            file: file.to_owned(),
            line,
            source,
        })?;
        let record = record_of(parsed, line, scale).map_err(|(f, why)| field_error(f, why))?;
        let key = (record.id.clone(), record.metric.clone());
        if let Some(earlier) = first_line.insert(key, line) {
            return Err(field_error(
                "id",
                format!(
                    "`{}` is labelled twice (lines {earlier} and {line})",
                    record.id
                ),
            ));
        }
        records.push(record);
    }
    if records.is_empty() {
        return Err(LabelsError::Empty {
            file: file.to_owned(),
        });
    }
    Ok(records)
}

fn record_of(
    line: Line,
    number: usize,
    scale: Option<GradeScale>,
) -> Result<LabelRecord, (&'static str, String)> {
    if line.preferred.is_some() {
        return Err((
            "preferred",
            "a pairwise label says which of two answers is better, not a value per sample; \
             calibration needs binary (`label`) or graded (`grade`) lines"
                .into(),
        ));
    }
    let id = match &line.id {
        None => number.to_string(),
        Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_owned(),
        Some(Value::Number(n)) => n.to_string(),
        Some(_) => return Err(("id", "not a non-empty string or number".into())),
    };
    let metric = match &line.metric {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_owned()),
        Some(_) => return Err(("metric", "not a metric name".into())),
    };
    let (written, value) = match (&line.label, &line.grade) {
        (Some(Value::Bool(good)), None) => (LabelValue::Binary(*good), f64::from(u8::from(*good))),
        (Some(_), None) => return Err(("label", "not true or false".into())),
        (None, Some(grade)) => {
            let grade = grade
                .as_f64()
                .filter(|g| g.is_finite())
                .ok_or(("grade", "not a number".to_owned()))?;
            let scale = scale.ok_or((
                "grade",
                "graded labels need their scale to be read on [0, 1] \
                 (hint: give the grade scale, e.g. 1..5)"
                    .to_owned(),
            ))?;
            let value = scale.normalise(grade).ok_or((
                "grade",
                format!("{grade} is outside the scale {}..{}", scale.min, scale.max),
            ))?;
            (LabelValue::Graded(grade), value)
        }
        _ => {
            return Err((
                "label",
                "a line needs exactly one of `label` (binary) and `grade` (graded)".into(),
            ));
        }
    };
    Ok(LabelRecord {
        line: number,
        id,
        metric,
        written,
        value,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str, scale: Option<GradeScale>) -> Result<Vec<LabelRecord>, LabelsError> {
        parse_labels(text, "labels.jsonl", scale)
    }

    #[test]
    fn reads_judge_check_lines_and_ignores_other_fields() {
        let text = "{\"id\": 7, \"question\": \"q\", \"contexts\": [\"c\"], \"label\": true}\n\n\
                    {\"answer\": \"a\", \"label\": false, \"metric\": \"faithfulness\"}";
        let records = parse(text, None).unwrap();
        assert_eq!(records[0].id, "7");
        assert_eq!(records[0].value, 1.0);
        assert_eq!(records[0].metric, None);
        // No id: the line number, blank lines counted, as judge-check numbers items.
        assert_eq!(records[1].id, "3");
        assert_eq!(records[1].value, 0.0);
        assert_eq!(records[1].metric.as_deref(), Some("faithfulness"));
        assert_eq!(records[1].written, LabelValue::Binary(false));
    }

    #[test]
    fn grades_are_read_on_their_scale() {
        let scale: GradeScale = "1..5".parse().unwrap();
        let records = parse(
            "{\"id\": \"a\", \"grade\": 1, \"group\": 3}\n{\"id\": \"b\", \"grade\": 4}",
            Some(scale),
        )
        .unwrap();
        assert_eq!((records[0].value, records[1].value), (0.0, 0.75));
        assert_eq!(records[1].written, LabelValue::Graded(4.0));
        let error = parse("{\"grade\": 6}", Some(scale))
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "labels.jsonl:1: field `grade`: 6 is outside the scale 1..5"
        );
        let error = parse("{\"grade\": 2}", None).unwrap_err().to_string();
        assert!(error.contains("hint: give the grade scale"), "{error}");
        assert!("5..1".parse::<GradeScale>().is_err());
        assert!("1-5".parse::<GradeScale>().is_err());
    }

    #[test]
    fn errors_name_line_and_field() {
        let error = |text: &str| parse(text, None).unwrap_err().to_string();
        assert_eq!(
            error("{\"label\": true}\n{\"label\": \"yes\"}"),
            "labels.jsonl:2: field `label`: not true or false"
        );
        assert!(
            error("{\"a\": {}, \"b\": {}, \"preferred\": \"a\"}").contains("field `preferred`")
        );
        assert!(error("{\"id\": \"x\"}").contains("exactly one of"));
        assert!(error("{\"label\": true, \"grade\": 1}").contains("exactly one of"));
        assert_eq!(
            error("{\"id\": \"x\", \"label\": true}\n{\"id\": \"x\", \"label\": false}"),
            "labels.jsonl:2: field `id`: `x` is labelled twice (lines 1 and 2)"
        );
        assert_eq!(error("\n"), "labels.jsonl: no labels");
        assert!(error("not json").starts_with("labels.jsonl:1: not a JSON object"));
        // The same sample may carry one label per metric.
        let both = "{\"id\": \"x\", \"label\": true, \"metric\": \"m\"}\n\
                    {\"id\": \"x\", \"label\": false, \"metric\": \"k\"}";
        assert_eq!(parse(both, None).unwrap().len(), 2);
    }
}
