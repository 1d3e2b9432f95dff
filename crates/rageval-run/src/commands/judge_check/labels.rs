//! Human labels as `judge-check` reads them: one JSON object per line, in one of three
//! shapes (docs/judge-fidelity.md):
//!
//! - pairwise: `{"id", "a": SAMPLE, "b": SAMPLE, "preferred": "a" | "b" | "tie"}`;
//! - binary: SAMPLE's fields with `"label": true | false` (true: good — faithful, relevant);
//! - graded: SAMPLE's fields with `"grade": NUMBER` (higher is better), and optionally
//!   `"group"` (items ordered within a group, e.g. a query's documents).
//!
//! SAMPLE is `{"question", "contexts": [text…], "answer", "reference"}`, each optional as
//! the metric allows. Every line of a file has the same shape; errors name file, line and
//! field. Any other field (where an item came from, a labeller, a `metric` for
//! `calibrate`) is kept as the item's metadata and shown beside its verdict.

use std::collections::HashSet;
use std::path::Path;

use rageval_core::{Context, Sample};
use rageval_report::LabelShape;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::engine::error::{Result, RunError};

/// What the person said about an item.
#[derive(Debug, Clone, PartialEq)]
pub enum Label {
    /// Which of the item's two samples is better (0 = `a`, 1 = `b`), or `None` when the
    /// labeller found them equally good (a tie).
    Preferred(Option<usize>),
    /// Good (true) or bad.
    Binary(bool),
    /// A grade, higher is better, within an optional group.
    Graded { grade: f64, group: Option<String> },
}

/// One labelled item: its samples (two for a pair, else one) and the label.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub id: String,
    pub samples: Vec<Sample>,
    pub label: Label,
    /// The line's other fields, kept as they are.
    pub metadata: Map<String, Value>,
}

impl Item {
    pub fn shape(&self) -> LabelShape {
        match self.label {
            Label::Preferred(_) => LabelShape::Pairwise,
            Label::Binary(_) => LabelShape::Binary,
            Label::Graded { .. } => LabelShape::Graded,
        }
    }

    /// A pairwise item (`preferred`: 0 for `a`, 1 for `b`, `None` for a tie); sample ids are
    /// `ID/a` and `ID/b`.
    pub fn pair(id: String, a: Sample, b: Sample, preferred: Option<usize>) -> Self {
        let name = |mut s: Sample, side: &str| {
            s.id = format!("{id}/{side}");
            s
        };
        Item {
            samples: vec![name(a, "a"), name(b, "b")],
            id,
            label: Label::Preferred(preferred),
            metadata: Map::new(),
        }
    }

    /// A binary or graded item; the sample's id is the item's.
    pub fn single(id: String, mut sample: Sample, label: Label) -> Self {
        sample.id.clone_from(&id);
        Item {
            id,
            samples: vec![sample],
            label,
            metadata: Map::new(),
        }
    }

    /// The label as the samples' metadata (shown in reports next to the verdicts).
    pub fn label_metadata(&self, index: usize) -> Map<String, Value> {
        let mut map = self.metadata.clone();
        map.insert("label_item".into(), json!(self.id));
        match &self.label {
            Label::Preferred(Some(p)) => {
                map.insert("label_preferred".into(), json!(*p == index));
            }
            Label::Preferred(None) => {
                map.insert("label_preferred".into(), json!("tie"));
            }
            Label::Binary(b) => {
                map.insert("label".into(), json!(b));
            }
            Label::Graded { grade, group } => {
                map.insert("grade".into(), json!(grade));
                if let Some(group) = group {
                    map.insert("group".into(), json!(group));
                }
            }
        }
        map
    }
}

/// A sample's fields in a labels file.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct SampleFields {
    question: String,
    contexts: Vec<String>,
    answer: Option<String>,
    reference: Option<String>,
}

impl SampleFields {
    fn into_sample(self) -> Sample {
        Sample {
            question: self.question,
            contexts: self.contexts.into_iter().map(Context::text).collect(),
            answer: self.answer,
            references: self.reference.into_iter().collect(),
            ..Sample::default()
        }
    }
}

#[derive(Debug, Deserialize)]
struct Line {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    a: Option<SampleFields>,
    #[serde(default)]
    b: Option<SampleFields>,
    #[serde(default)]
    preferred: Option<String>,
    #[serde(default)]
    label: Option<bool>,
    #[serde(default)]
    grade: Option<f64>,
    #[serde(default)]
    group: Option<Value>,
    #[serde(default)]
    question: String,
    #[serde(default)]
    contexts: Vec<String>,
    #[serde(default)]
    answer: Option<String>,
    #[serde(default)]
    reference: Option<String>,
    /// Every other field: the item's metadata.
    #[serde(flatten)]
    extra: Map<String, Value>,
}

/// An id given as a string or a number.
fn id_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_owned()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn item_of(line: Line, number: usize) -> Result<Item, String> {
    let id = match &line.id {
        None => number.to_string(),
        Some(value) => id_text(value).ok_or("field `id`: not a non-empty string or number")?,
    };
    let single = SampleFields {
        question: line.question,
        contexts: line.contexts,
        answer: line.answer,
        reference: line.reference,
    };
    let metadata = line.extra;
    let item = match (line.a, line.b, line.preferred, line.label, line.grade) {
        (Some(a), Some(b), Some(preferred), None, None) => {
            let preferred = match preferred.as_str() {
                "a" => Some(0),
                "b" => Some(1),
                "tie" => None,
                other => {
                    return Err(format!(
                        "field `preferred`: `{other}` is not \"a\", \"b\" or \"tie\""
                    ));
                }
            };
            Ok(Item::pair(id, a.into_sample(), b.into_sample(), preferred))
        }
        (None, None, None, Some(label), None) => {
            Ok(Item::single(id, single.into_sample(), Label::Binary(label)))
        }
        (None, None, None, None, Some(grade)) => {
            let group = match &line.group {
                None => None,
                Some(value) => Some(id_text(value).ok_or("field `group`: not a string or number")?),
            };
            Ok(Item::single(
                id,
                single.into_sample(),
                Label::Graded { grade, group },
            ))
        }
        (Some(_), Some(_), None, None, None) => {
            Err("field `preferred`: missing (\"a\", \"b\" or \"tie\")".into())
        }
        _ => Err(
            "fields: a line needs exactly one label: `a`, `b` and `preferred` (pairwise), \
             `label` (binary) or `grade` (graded)"
                .into(),
        ),
    };
    item.map(|item: Item| Item { metadata, ..item })
}

/// Reads a labels file; `limit` keeps the first lines only.
pub fn read_jsonl(path: &Path, limit: Option<usize>) -> Result<Vec<Item>> {
    let text = std::fs::read_to_string(path).map_err(RunError::read(path))?;
    let mut items: Vec<Item> = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        if raw.trim().is_empty() {
            continue;
        }
        if limit.is_some_and(|n| items.len() >= n) {
            break;
        }
        let number = index + 1;
        let at = || format!("{}:{number}", path.display());
        let line: Line = serde_json::from_str(raw)
            .map_err(|error| RunError::Labels(format!("{}: not a labels line: {error}", at())))?;
        let item =
            item_of(line, number).map_err(|why| RunError::Labels(format!("{}: {why}", at())))?;
        if let Some(first) = items.first() {
            if first.shape() != item.shape() {
                return Err(RunError::Labels(format!(
                    "{}: a {} label in a file of {} labels (one shape per file)",
                    at(),
                    item.shape().name(),
                    first.shape().name()
                )));
            }
        }
        items.push(item);
    }
    check_items(&items, &path.display().to_string())?;
    Ok(items)
}

/// Item ids unique and at least one item.
pub fn check_items(items: &[Item], source: &str) -> Result<()> {
    if items.is_empty() {
        return Err(RunError::Labels(format!("{source}: no labelled items")));
    }
    let mut seen = HashSet::new();
    for item in items {
        if !seen.insert(item.id.as_str()) {
            return Err(RunError::Labels(format!(
                "{source}: field `id`: `{}` is used twice",
                item.id
            )));
        }
    }
    Ok(())
}

/// The labels file's layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LabelFormat {
    /// rageval's labels JSONL (pairwise, binary or graded; docs/judge-fidelity.md).
    Jsonl,
    /// WikiEval rows: pairs chosen by what the metric reads.
    Wikieval,
    /// UHGEval rows: one binary item per annotated keyword.
    Uhgeval,
    /// An RGB file: one binary item per positive or negative passage.
    Rgb,
    /// DuReader rows: one binary item per document (`is_selected`).
    Dureader,
    /// The Cranfield folder: one graded item per judged (query, abstract).
    Cranfield,
}

impl LabelFormat {
    /// Every format, as `--format` lists them.
    pub const ALL: [LabelFormat; 6] = [
        LabelFormat::Jsonl,
        LabelFormat::Wikieval,
        LabelFormat::Uhgeval,
        LabelFormat::Rgb,
        LabelFormat::Dureader,
        LabelFormat::Cranfield,
    ];

    /// Its name on the command line and in the manifest.
    pub fn name(self) -> &'static str {
        match self {
            LabelFormat::Jsonl => "jsonl",
            LabelFormat::Wikieval => "wikieval",
            LabelFormat::Uhgeval => "uhgeval",
            LabelFormat::Rgb => "rgb",
            LabelFormat::Dureader => "dureader",
            LabelFormat::Cranfield => "cranfield",
        }
    }

    /// The format named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Vec<Item>> {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("labels.jsonl");
        std::fs::write(&path, text).expect("writes");
        read_jsonl(&path, None)
    }

    #[test]
    fn reads_each_shape() {
        let items = read(
            r#"{"id": 7, "a": {"question": "q", "answer": "x", "contexts": ["c"]}, "b": {"question": "q", "answer": "y"}, "preferred": "b"}"#,
        )
        .unwrap();
        assert_eq!(items[0].id, "7");
        assert_eq!(items[0].samples[1].id, "7/b");
        assert_eq!(items[0].label, Label::Preferred(Some(1)));
        assert_eq!(items[0].samples[0].contexts[0].text, "c");
        let items = read("{\"question\": \"q\", \"contexts\": [\"c\"], \"label\": false}\n\n{\"question\": \"r\", \"label\": true}").unwrap();
        assert_eq!((items[0].id.as_str(), items[1].id.as_str()), ("1", "3"));
        let items =
            read(r#"{"question": "q", "contexts": ["c"], "grade": 2, "group": 4}"#).unwrap();
        assert_eq!(
            items[0].label,
            Label::Graded {
                grade: 2.0,
                group: Some("4".into())
            }
        );
    }

    #[test]
    fn errors_name_line_and_field() {
        let mixed = "{\"question\": \"q\", \"label\": true}\n{\"question\": \"q\", \"grade\": 1}";
        let error = format!("{:#}", read(mixed).unwrap_err());
        assert!(
            error.contains("labels.jsonl:2") && error.contains("one shape"),
            "{error}"
        );
        let bad = r#"{"a": {}, "b": {}, "preferred": "c"}"#;
        let error = format!("{:#}", read(bad).unwrap_err());
        assert!(error.contains(":1: field `preferred`"), "{error}");
        let error = format!("{:#}", read(r#"{"question": "q"}"#).unwrap_err());
        assert!(error.contains("exactly one label"), "{error}");
        let error = format!(
            "{:#}",
            read(r#"{"question": "q", "label": "yes"}"#).unwrap_err()
        );
        assert!(error.contains(":1: not a labels line"), "{error}");
        let twice = "{\"id\": \"x\", \"label\": true}\n{\"id\": \"x\", \"label\": false}";
        let error = format!("{:#}", read(twice).unwrap_err());
        assert!(error.contains("`x` is used twice"), "{error}");
    }

    #[test]
    fn other_fields_are_kept_as_metadata_and_a_pair_may_be_a_tie() {
        let items = read(
            r#"{"id": "p1", "a": {"answer": "x"}, "b": {"answer": "y"}, "preferred": "tie", "source": "sheet 3", "labeller": "lin"}"#,
        )
        .unwrap();
        assert_eq!(items[0].label, Label::Preferred(None));
        assert_eq!(items[0].metadata["source"], "sheet 3");
        let shown = items[0].label_metadata(0);
        assert_eq!(shown["labeller"], "lin");
        assert_eq!(shown["label_preferred"], "tie");
    }
}
