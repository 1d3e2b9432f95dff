//! The labels file the labelling page keeps: JSON Lines in `judge-check`'s binary or graded
//! shape (docs/judge-fidelity.md), one line per labelled sample, so the same file feeds
//! `rageval judge-check --labels` and `rageval calibrate --labels`.
//!
//! A line is `{"id", "metric", "labeller", "label": bool | "grade": 1..5, "question",
//! "contexts", "answer", "reference"}` plus `stratum` when the sample was stratified; every
//! field but the label is one `judge-check` keeps as metadata or reads as the sample.
//! The whole file is rewritten on every label — to a temporary file beside it, flushed to
//! disk, then renamed over it — so a reader (or a crash) sees the old file or the new one,
//! never half of one. Lines already there are kept as they are, in their order; a line
//! another labeller wrote, or one of the other shape, is refused rather than mixed in.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::label::{LabelError, LabelScale, LabelValue};

/// The text of `path`, empty when there is no such file (one not written yet).
pub(crate) fn read_if_exists(path: &Path) -> std::io::Result<String> {
    match std::fs::read_to_string(path) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        other => other,
    }
}

/// Each non-blank line of `text` with its 1-based number, as a JSON object or why not.
pub(crate) fn json_lines(
    text: &str,
) -> impl Iterator<Item = (usize, Result<Map<String, Value>, serde_json::Error>)> + '_ {
    text.lines()
        .enumerate()
        .filter(|(_, raw)| !raw.trim().is_empty())
        .map(|(index, raw)| (index + 1, serde_json::from_str(raw)))
}

/// Writes `lines` to `path` as JSON Lines, whole or not at all.
pub(crate) fn write_json_lines(path: &Path, lines: &[Map<String, Value>]) -> std::io::Result<()> {
    let mut bytes = Vec::new();
    for line in lines {
        // A map of JSON values always encodes.
        bytes.extend(serde_json::to_vec(line).unwrap_or_default());
        bytes.push(b'\n');
    }
    rageval_core::files::write_atomically(path, &bytes)
}

/// The labels of one labeller for one metric, as on disk.
#[derive(Debug)]
pub(crate) struct LabelsFile {
    path: PathBuf,
    lines: Vec<Map<String, Value>>,
    /// Sample id → index in `lines`.
    by_id: HashMap<String, usize>,
}

impl LabelsFile {
    /// Reads `path` when it exists (else starts empty), checking that every line is a
    /// label of `scale`'s shape by `labeller`, for `metric` or for no metric named.
    pub(crate) fn open(
        path: &Path,
        metric: &str,
        scale: LabelScale,
        labeller: &str,
    ) -> Result<Self, LabelError> {
        let text = read_if_exists(path).map_err(|source| LabelError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let mut file = Self {
            path: path.to_path_buf(),
            lines: Vec::new(),
            by_id: HashMap::new(),
        };
        for (number, parsed) in json_lines(&text) {
            let bad = |field: &'static str, why: String| LabelError::Line {
                path: path.to_path_buf(),
                line: number,
                field,
                why,
            };
            let line = parsed.map_err(|source| LabelError::NotJson {
                path: path.to_path_buf(),
                line: number,
                source,
            })?;
            let id = match line.get("id") {
                Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_owned(),
                Some(Value::Number(n)) => n.to_string(),
                _ => {
                    return Err(bad(
                        "id",
                        "missing (the page writes every line with one)".into(),
                    ));
                }
            };
            if let Some(other) = line.get("labeller").and_then(Value::as_str) {
                if other != labeller {
                    return Err(bad(
                        "labeller",
                        format!(
                            "written by `{other}`, not `{labeller}` (hint: each labeller keeps \
                             a file of their own; leave out --labels or name another file)"
                        ),
                    ));
                }
            }
            if let Some(other) = line.get("metric").and_then(Value::as_str) {
                if other != metric {
                    return Err(bad(
                        "metric",
                        format!(
                            "a label for `{other}`, not `{metric}` (hint: one file per metric; \
                             name another file with --labels)"
                        ),
                    ));
                }
            }
            if LabelValue::of_line(&line, scale).is_none() {
                return Err(bad(
                    scale.field(),
                    format!("not a {} label (one shape per file)", scale.name()),
                ));
            }
            if file.by_id.insert(id.clone(), file.lines.len()).is_some() {
                return Err(bad("id", format!("`{id}` is labelled twice")));
            }
            file.lines.push(line);
        }
        Ok(file)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The label of sample `id`, if there is one.
    pub(crate) fn get(&self, id: &str, scale: LabelScale) -> Option<LabelValue> {
        let line = &self.lines[*self.by_id.get(id)?];
        LabelValue::of_line(line, scale)
    }

    pub(crate) fn len(&self) -> usize {
        self.lines.len()
    }

    /// Sets the line of sample `id` (replacing its earlier label in place, or appending)
    /// and rewrites the file. On failure the file and this value are as they were.
    pub(crate) fn set(&mut self, id: &str, line: Map<String, Value>) -> Result<(), LabelError> {
        let mut lines = self.lines.clone();
        let slot = self.by_id.get(id).copied();
        match slot {
            Some(index) => lines[index] = line,
            None => lines.push(line),
        }
        write_json_lines(&self.path, &lines).map_err(|source| LabelError::Write {
            path: self.path.clone(),
            source,
        })?;
        if slot.is_none() {
            self.by_id.insert(id.to_owned(), lines.len() - 1);
        }
        self.lines = lines;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn line(id: &str, grade: u8) -> Map<String, Value> {
        let Value::Object(map) =
            json!({"id": id, "metric": "m", "labeller": "lin", "grade": grade})
        else {
            unreachable!()
        };
        map
    }

    #[test]
    fn a_label_replaces_the_earlier_one_in_place_and_the_file_reopens() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("labels.jsonl");
        let mut file = LabelsFile::open(&path, "m", LabelScale::Graded, "lin").unwrap();
        file.set("a", line("a", 2)).unwrap();
        file.set("b", line("b", 5)).unwrap();
        file.set("a", line("a", 4)).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let ids: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["id"].clone())
            .collect();
        assert_eq!(ids, vec![json!("a"), json!("b")]);
        let reopened = LabelsFile::open(&path, "m", LabelScale::Graded, "lin").unwrap();
        assert_eq!(
            reopened.get("a", LabelScale::Graded),
            Some(LabelValue::Grade(4))
        );
        assert_eq!(reopened.len(), 2);
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(leftovers.len(), 1, "no temporary file left: {leftovers:?}");
    }

    #[test]
    fn a_failed_write_leaves_the_file_and_the_labels_as_they_were() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("labels.jsonl");
        let mut file = LabelsFile::open(&path, "m", LabelScale::Graded, "lin").unwrap();
        file.set("a", line("a", 3)).unwrap();
        let before = std::fs::read(&path).unwrap();
        // A directory where the temporary file would go makes the write fail.
        let blocker = dir
            .path()
            .join(format!(".labels.jsonl.{}.tmp", std::process::id()));
        std::fs::create_dir(&blocker).unwrap();
        let error = file.set("b", line("b", 1)).unwrap_err();
        assert!(matches!(error, LabelError::Write { .. }), "{error}");
        assert_eq!(std::fs::read(&path).unwrap(), before);
        assert_eq!(file.len(), 1);
        assert_eq!(file.get("b", LabelScale::Graded), None);
    }

    #[test]
    fn readers_never_see_a_half_written_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("labels.jsonl");
        let mut file = LabelsFile::open(&path, "m", LabelScale::Graded, "lin").unwrap();
        file.set("0", line("0", 1)).unwrap();
        let reader_path = path.clone();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stop_reader = std::sync::Arc::clone(&stop);
        let reader = std::thread::spawn(move || {
            let mut reads = 0;
            while !stop_reader.load(std::sync::atomic::Ordering::Relaxed) {
                let text = std::fs::read_to_string(&reader_path).unwrap();
                assert!(text.ends_with('\n'), "a torn file: {} bytes", text.len());
                for l in text.lines() {
                    serde_json::from_str::<Value>(l).unwrap();
                }
                reads += 1;
            }
            reads
        });
        // Long lines, so that a write in place would be seen half done.
        for i in 1..40 {
            let mut long = line(&i.to_string(), 3);
            long.insert("answer".into(), json!("x".repeat(20_000)));
            file.set(&i.to_string(), long).unwrap();
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        assert!(reader.join().unwrap() > 0);
    }

    #[test]
    fn lines_of_another_labeller_metric_or_shape_are_refused_with_their_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("labels.jsonl");
        let open = |text: &str| {
            std::fs::write(&path, text).unwrap();
            LabelsFile::open(&path, "m", LabelScale::Graded, "lin")
                .unwrap_err()
                .to_string()
        };
        let error = open(
            "{\"id\": \"a\", \"grade\": 2}\n{\"id\": \"b\", \"grade\": 2, \"labeller\": \"wu\"}\n",
        );
        assert!(
            error.contains("labels.jsonl:2: field `labeller`"),
            "{error}"
        );
        let error = open("{\"id\": \"a\", \"grade\": 2, \"metric\": \"other\"}\n");
        assert!(error.contains(":1: field `metric`"), "{error}");
        let error = open("{\"id\": \"a\", \"label\": true}\n");
        assert!(error.contains(":1: field `grade`: not a graded"), "{error}");
        let error = open("{\"id\": \"a\", \"grade\": 9}\n");
        assert!(error.contains(":1: field `grade`"), "{error}");
        let error = open("{\"id\": \"a\", \"grade\": 2}\n[1]\n");
        assert!(
            error.contains("labels.jsonl:2: not a JSON object"),
            "{error}"
        );
        let error = open("{\"id\": \"a\", \"grade\": 2}\n{\"id\": \"a\", \"grade\": 3}\n");
        assert!(
            error.contains(":2: field `id`: `a` is labelled twice"),
            "{error}"
        );
        // A line without labeller or metric is taken as this labeller's, for this metric.
        std::fs::write(&path, "{\"id\": 7, \"grade\": 2}\n").unwrap();
        let file = LabelsFile::open(&path, "m", LabelScale::Graded, "lin").unwrap();
        assert_eq!(
            file.get("7", LabelScale::Graded),
            Some(LabelValue::Grade(2))
        );
    }
}
