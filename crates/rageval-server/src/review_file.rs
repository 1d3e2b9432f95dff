//! The review file of a generated test set: JSON Lines, one line per decided item,
//! `{"id", "reviewer", "question", "decision": "accept" | "edit" | "reject", "reference"
//! (an edit's new reference), "edited_question" (an edit's new question), "reason" (a
//! rejection's)}`. `question` is the item's question as generated, so a review file
//! opened against another set (whose ids may be the same) is refused at its first line.
//!
//! The whole file is rewritten on every decision with `rageval_core::files::write_atomically`,
//! as the labels file is: a reader or a crash sees the old file or the new one. A
//! decision changed later replaces its line in place.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::label_file::{json_lines, read_if_exists, write_json_lines};
use crate::review::{Decision, ReviewError, Testset};

/// One reviewer's decisions on one test set, as on disk.
#[derive(Debug)]
pub struct ReviewFile {
    path: PathBuf,
    reviewer: String,
    lines: Vec<(String, Decision)>,
    /// Item id → index in `lines`.
    by_id: HashMap<String, usize>,
}

/// A reviewer name fit for a file name.
fn check_reviewer(name: &str) -> Result<(), ReviewError> {
    if crate::label::fits_file_name(name) {
        Ok(())
    } else {
        Err(ReviewError::BadReviewer { name: name.into() })
    }
}

impl ReviewFile {
    /// Reads `path` when it exists (else starts empty), checking that every line is a
    /// decision by `reviewer` on an item of `set`, with the question that item has.
    pub fn open(path: &Path, set: &Testset, reviewer: &str) -> Result<Self, ReviewError> {
        check_reviewer(reviewer)?;
        let text = read_if_exists(path).map_err(|source| ReviewError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let mut file = Self {
            path: path.to_path_buf(),
            reviewer: reviewer.to_owned(),
            lines: Vec::new(),
            by_id: HashMap::new(),
        };
        let set_path = set.path.display();
        let another_set = "a review of another set (hint: each set's review file lies beside \
                           it as STEM.review.REVIEWER.jsonl; name this set's with --labels)";
        for (number, parsed) in json_lines(&text) {
            let bad = |field: &'static str, why: String| ReviewError::Line {
                path: path.to_path_buf(),
                line: number,
                field,
                why,
            };
            let line = parsed.map_err(|source| ReviewError::NotJson {
                path: path.to_path_buf(),
                line: number,
                source,
            })?;
            let id = line.get("id").and_then(Value::as_str).unwrap_or_default();
            let Some(position) = set.position(id) else {
                return Err(bad(
                    "id",
                    format!("`{id}` is not an item of {set_path}: {another_set}"),
                ));
            };
            if line.get("question").and_then(Value::as_str) != Some(&set.items[position].question) {
                return Err(bad(
                    "question",
                    format!("item `{id}` asks another question in {set_path}: {another_set}"),
                ));
            }
            if let Some(other) = line.get("reviewer").and_then(Value::as_str)
                && other != reviewer
            {
                return Err(bad(
                    "reviewer",
                    format!(
                        "written by `{other}`, not `{reviewer}` (hint: each reviewer keeps a file of their own)"
                    ),
                ));
            }
            let mut decision_fields = line.clone();
            if let Some(question) = line.get("edited_question") {
                decision_fields.insert("question".into(), question.clone());
            } else {
                decision_fields.remove("question");
            }
            let decision =
                Decision::of_json(&decision_fields).map_err(|(field, why)| bad(field, why))?;
            if file.by_id.insert(id.to_owned(), file.lines.len()).is_some() {
                return Err(bad("id", format!("`{id}` is decided twice")));
            }
            file.lines.push((id.to_owned(), decision));
        }
        Ok(file)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The decision on item `id`, if there is one.
    pub fn get(&self, id: &str) -> Option<&Decision> {
        Some(&self.lines[*self.by_id.get(id)?].1)
    }

    /// How many items have a decision.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// The file's line for `decision` on item `id` of `set`.
    fn line(&self, set: &Testset, id: &str, decision: &Decision) -> Map<String, Value> {
        let question = set
            .position(id)
            .map_or("", |index| set.items[index].question.as_str());
        let mut line = Map::new();
        line.insert("id".into(), json!(id));
        line.insert("reviewer".into(), json!(self.reviewer));
        line.insert("question".into(), json!(question));
        if let Value::Object(mut fields) = json!(decision) {
            if let Some(edited) = fields.remove("question") {
                fields.insert("edited_question".into(), edited);
            }
            line.extend(fields);
        }
        line
    }

    /// Sets the decision on item `id` of `set` (replacing an earlier one in place, or
    /// appending) and rewrites the file. On failure the file and this value are as they were.
    pub fn set(&mut self, set: &Testset, id: &str, decision: Decision) -> Result<(), ReviewError> {
        let mut lines = self.lines.clone();
        let slot = self.by_id.get(id).copied();
        match slot {
            Some(index) => lines[index].1 = decision,
            None => lines.push((id.to_owned(), decision)),
        }
        let rows: Vec<Map<String, Value>> = lines
            .iter()
            .map(|(id, decision)| self.line(set, id, decision))
            .collect();
        write_json_lines(&self.path, &rows).map_err(|source| ReviewError::Write {
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
    use super::*;
    use crate::review::tests::six_items;

    #[test]
    fn decisions_are_saved_replaced_in_place_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let set = six_items(dir.path());
        let path = dir.path().join("review.jsonl");
        let mut file = ReviewFile::open(&path, &set, "lin").unwrap();
        let edit = Decision::Edit {
            reference: "better".into(),
            question: Some("a clearer question?".into()),
        };
        file.set(&set, "n1", Decision::Accept).unwrap();
        file.set(&set, "f2", edit.clone()).unwrap();
        file.set(
            &set,
            "n1",
            Decision::Reject {
                reason: "wrong".into(),
            },
        )
        .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(
            first,
            json!({"id": "n1", "reviewer": "lin", "question": "question n1?",
                   "decision": "reject", "reason": "wrong"})
        );
        let reopened = ReviewFile::open(&path, &set, "lin").unwrap();
        assert_eq!(reopened.len(), 2);
        assert_eq!(reopened.get("f2"), Some(&edit));
        assert!(reopened.get("f1").is_none());
        let leftovers = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(leftovers, 2, "the set and the review, no temporary file");
    }

    #[test]
    fn a_review_of_another_set_or_reviewer_is_refused_with_its_line_and_field() {
        let dir = tempfile::tempdir().unwrap();
        let set = six_items(dir.path());
        let path = dir.path().join("review.jsonl");
        let open = |text: &str| {
            std::fs::write(&path, text).unwrap();
            ReviewFile::open(&path, &set, "lin")
                .unwrap_err()
                .to_string()
        };
        let ok = "{\"id\": \"f1\", \"question\": \"question f1?\", \"decision\": \"accept\"}\n";
        let error = open(&format!(
            "{ok}{{\"id\": \"x9\", \"question\": \"q\", \"decision\": \"accept\"}}\n"
        ));
        assert!(
            error.contains("review.jsonl:2: field `id`: `x9` is not an item of"),
            "{error}"
        );
        let error = open("{\"id\": \"f1\", \"question\": \"other?\", \"decision\": \"accept\"}\n");
        assert!(
            error.contains(":1: field `question`: item `f1` asks another question"),
            "{error}"
        );
        let error =
            open("{\"id\": \"f1\", \"question\": \"question f1?\", \"decision\": \"reject\"}\n");
        assert!(error.contains(":1: field `reason`"), "{error}");
        let error = open(&format!("{ok}{ok}"));
        assert!(
            error.contains(":2: field `id`: `f1` is decided twice"),
            "{error}"
        );
        let error = open(
            "{\"id\": \"f1\", \"question\": \"question f1?\", \"decision\": \"accept\", \"reviewer\": \"wu\"}\n",
        );
        assert!(error.contains(":1: field `reviewer`"), "{error}");
    }
}
