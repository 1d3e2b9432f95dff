//! Seed S3's per-question files: a directory of `GT_{question}.json` (question, contexts,
//! ground truth) and `FULL_{question}.json` (the same plus the system's answer).
//!
//! Each file is one JSON object and one sample. When both files of a question exist the
//! `FULL_` one is read, since it holds everything the `GT_` one does. Files are taken in name
//! order; other files in the directory are ignored.
//!
//! A file without an id of its own (`id`, `sample_id`, `uuid`; seed S3's files have none)
//! gets the part of its name between the prefix and `.json` as its id — the question as a
//! file name — so a question keeps its id whatever other files the directory holds. (Record
//! numbers in name order gave id 1 to whichever question sorted first, another question than
//! id 1 of the data the files were written from.)

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::error::{DatasetError, DatasetErrorKind};
use super::field::Field;
use super::json::read_text;
use super::jsonl::message_without_line;
use super::value::{Record, type_name};

/// One record per question file, errors naming the file they concern.
pub(crate) fn load(directory: &Path) -> Result<Vec<Result<Record, DatasetError>>, DatasetError> {
    let io = |error| DatasetError::file(directory, DatasetErrorKind::Io(error));
    // question key → (has FULL_, path)
    let mut files: BTreeMap<String, (bool, PathBuf)> = BTreeMap::new();
    for entry in std::fs::read_dir(directory).map_err(io)? {
        let path = entry.map_err(io)?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(stem) = name.strip_suffix(".json") else {
            continue;
        };
        let (full, key) = match (stem.strip_prefix("FULL_"), stem.strip_prefix("GT_")) {
            (Some(key), _) => (true, key),
            (None, Some(key)) => (false, key),
            (None, None) => continue,
        };
        let slot = files.entry(key.to_string()).or_insert((full, path.clone()));
        if full && !slot.0 {
            *slot = (true, path);
        }
    }
    if files.is_empty() {
        return Err(DatasetError::file(directory, DatasetErrorKind::NoSeedFiles));
    }
    Ok(files
        .into_iter()
        .map(|(key, (_, path))| read_one(&path, &key))
        .collect())
}

fn read_one(path: &Path, key: &str) -> Result<Record, DatasetError> {
    let text = read_text(path)?;
    if text.trim().is_empty() {
        return Err(DatasetError::file(path, DatasetErrorKind::Empty));
    }
    let value: Value = serde_json::from_str(&text).map_err(|error| {
        let kind = DatasetErrorKind::InvalidJson {
            message: message_without_line(&error),
        };
        DatasetError::at(path, error.line().max(1), kind)
    })?;
    let line = text
        .lines()
        .position(|l| !l.trim().is_empty())
        .map_or(1, |i| i + 1);
    match value {
        Value::Object(mut fields) => {
            if !Field::Id.aliases().iter().any(|a| fields.contains_key(*a)) {
                fields.insert("id".into(), Value::from(key));
            }
            Ok(Record {
                file: Some(path.to_path_buf()),
                line,
                fields,
            })
        }
        other => Err(DatasetError::at(
            path,
            line,
            DatasetErrorKind::NotObject {
                found: type_name(&other),
            },
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_files_win_over_gt_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("GT_b.json"), r#"{"question": "b"}"#).unwrap();
        std::fs::write(
            dir.path().join("FULL_a.json"),
            r#"{"question": "a", "answer": "x"}"#,
        )
        .unwrap();
        std::fs::write(dir.path().join("GT_a.json"), r#"{"question": "a"}"#).unwrap();
        std::fs::write(dir.path().join("notes.txt"), "ignored").unwrap();
        let records: Vec<Record> = load(dir.path())
            .unwrap()
            .into_iter()
            .map(Result::unwrap)
            .collect();
        assert_eq!(records.len(), 2);
        assert!(records[0].fields.contains_key("answer"));
        assert_eq!(records[1].fields.get("question"), Some(&Value::from("b")));
    }

    /// Regression: ids were record numbers in file-name order, so id 1 named whichever
    /// question sorted first, and adding a file renumbered the others.
    #[test]
    fn ids_come_from_file_names_and_survive_other_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("GT_乙.json"), r#"{"question": "乙"}"#).unwrap();
        std::fs::write(dir.path().join("GT_b.json"), r#"{"question": "b"}"#).unwrap();
        let ids = |dir: &Path| -> Vec<(String, String)> {
            load(dir)
                .unwrap()
                .into_iter()
                .map(|r| {
                    let fields = r.unwrap().fields;
                    let id = fields.get("id").or(fields.get("sample_id")).unwrap();
                    (id.to_string(), fields["question"].to_string())
                })
                .collect()
        };
        let before = ids(dir.path());
        assert_eq!(before[0], ("\"b\"".into(), "\"b\"".into()));
        std::fs::write(dir.path().join("GT_a.json"), r#"{"question": "a"}"#).unwrap();
        // The file's own id wins.
        std::fs::write(
            dir.path().join("FULL_c.json"),
            r#"{"question": "c", "sample_id": 7}"#,
        )
        .unwrap();
        let after = ids(dir.path());
        for pair in &before {
            assert!(after.contains(pair), "{pair:?} in {after:?}");
        }
        let c = load(dir.path())
            .unwrap()
            .into_iter()
            .map(Result::unwrap)
            .find(|r| r.fields["question"] == "c")
            .unwrap();
        assert!(!c.fields.contains_key("id"));
    }

    #[test]
    fn directory_without_seed_files_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let error = load(dir.path()).unwrap_err();
        assert!(error.to_string().contains("no GT_*.json or FULL_*.json"));
    }
}
