//! A person's pass over a generated test set (`rageval testset`'s `testset.jsonl`): each
//! item is accepted, edited (its reference, and optionally its question) or rejected with
//! a reason. The decisions live in one review file (`review_file`); from it come the
//! generator's quality figure — rejection rates per category and overall ([`Rates`]) — and
//! the final set: the accepted items with their edits, rejected ones left out
//! ([`final_rows`]).
//!
//! This module reads the test set and keeps its review file; it never changes the test
//! set, and it writes no other file (the caller writes the rates and the final set).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::label_file::json_lines;
pub use crate::review_file::ReviewFile;

/// Why a test set or its review file cannot be read, or a decision cannot be saved.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    #[error("cannot read {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write review file {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}:{line}: not a JSON object", path.display())]
    NotJson {
        path: PathBuf,
        line: usize,
        #[source]
        source: serde_json::Error,
    },
    #[error("{}:{line}: field `{field}`: {why}", path.display())]
    Line {
        path: PathBuf,
        line: usize,
        field: &'static str,
        why: String,
    },
    #[error("{} has no item (hint: name the testset.jsonl a `rageval testset` run wrote)", path.display())]
    Empty { path: PathBuf },
    #[error("`{name}` is not a reviewer name (hint: letters, digits, `-`, `_` and `.`)")]
    BadReviewer { name: String },
}

/// One generated item as the reviewer sees it.
#[derive(Debug, Clone, Serialize)]
pub struct ReviewItem {
    pub id: String,
    pub question: String,
    pub category: String,
    /// The reference answer (its parts, as the set stores them).
    pub reference: Vec<String>,
    /// The key points answer correctness checks one by one.
    pub key_points: Vec<String>,
    /// The source chunks the item rests on, with their ids.
    pub context_ids: Vec<String>,
    pub contexts: Vec<String>,
    /// The gates the item was kept with failed (`testset --closed-book mark` keeps an item
    /// the model answered without its passage): `closed_book: why`.
    pub failed_gates: Vec<String>,
    /// For a follow-up question, the conversation before it (`conversation`, as `testset`
    /// writes it: the opening question and its answer), each turn as `[role, text]`.
    pub history: Vec<[String; 2]>,
}

/// A row's `conversation` (or `history`): a list of `{role, content}` turns; `None` when it
/// has another shape.
fn history(row: &Map<String, Value>) -> Option<Vec<[String; 2]>> {
    match row.get("conversation").or_else(|| row.get("history")) {
        None | Some(Value::Null) => Some(Vec::new()),
        Some(Value::Array(turns)) => turns
            .iter()
            .map(|turn| {
                let text = |key: &str| turn.get(key)?.as_str().map(str::to_owned);
                Some([text("role")?, text("content")?])
            })
            .collect(),
        Some(_) => None,
    }
}

/// The failed gates of a row's `gates` (`{"closed_book": "failed: why", …}`), as
/// `closed_book: why`.
fn failed_gates(row: &Map<String, Value>) -> Vec<String> {
    let Some(Value::Object(gates)) = row.get("gates") else {
        return Vec::new();
    };
    gates
        .iter()
        .filter_map(|(gate, outcome)| {
            let why = outcome.as_str()?.strip_prefix("failed")?;
            let why = why.trim_start_matches(':').trim();
            Some(match why.is_empty() {
                true => gate.clone(),
                false => format!("{gate}: {why}"),
            })
        })
        .collect()
}

/// A test set as read from its `testset.jsonl`: each row as written, and what the page shows.
#[derive(Debug, Clone)]
pub struct Testset {
    pub path: PathBuf,
    pub rows: Vec<Map<String, Value>>,
    pub items: Vec<ReviewItem>,
}

fn strings(value: Option<&Value>) -> Option<Vec<String>> {
    match value {
        None | Some(Value::Null) => Some(Vec::new()),
        Some(Value::String(s)) => Some(vec![s.clone()]),
        Some(Value::Array(values)) => values
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect(),
        Some(_) => None,
    }
}

impl Testset {
    /// Reads `path`, checking that every line is an item of a generated set: `id`,
    /// `question` and `category` as text, `reference` as text or a list of texts.
    pub fn read(path: &Path) -> Result<Self, ReviewError> {
        let text = std::fs::read_to_string(path).map_err(|source| ReviewError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let mut set = Self {
            path: path.to_path_buf(),
            rows: Vec::new(),
            items: Vec::new(),
        };
        let mut seen = BTreeMap::new();
        for (number, parsed) in json_lines(&text) {
            let bad = |field: &'static str, why: &str| ReviewError::Line {
                path: path.to_path_buf(),
                line: number,
                field,
                why: why.to_owned(),
            };
            let row = parsed.map_err(|source| ReviewError::NotJson {
                path: path.to_path_buf(),
                line: number,
                source,
            })?;
            let text_field = |field: &'static str| match row.get(field) {
                Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
                _ => Err(bad(
                    field,
                    "missing or not text (hint: a review reads the testset.jsonl `rageval testset` wrote)",
                )),
            };
            let id = text_field("id")?;
            let question = text_field("question")?;
            let category = text_field("category")?;
            let reference = strings(row.get("reference"))
                .filter(|parts| !parts.is_empty())
                .ok_or_else(|| bad("reference", "missing, or not text or a list of texts"))?;
            let key_points = strings(row.get("reference_statements"))
                .ok_or_else(|| bad("reference_statements", "not a list of texts"))?;
            let context_ids = strings(row.get("reference_context_ids"))
                .ok_or_else(|| bad("reference_context_ids", "not a list of texts"))?;
            let contexts = strings(row.get("reference_contexts"))
                .ok_or_else(|| bad("reference_contexts", "not a list of texts"))?;
            let history = history(&row).ok_or_else(|| {
                bad(
                    "conversation",
                    "not a list of turns (hint: each turn is {\"role\": …, \"content\": …}, as `rageval testset` writes a follow-up's opening turn)",
                )
            })?;
            if seen.insert(id.clone(), number).is_some() {
                return Err(bad("id", &format!("`{id}` appears twice")));
            }
            set.items.push(ReviewItem {
                id,
                question,
                category,
                reference,
                key_points,
                context_ids,
                contexts,
                failed_gates: failed_gates(&row),
                history,
            });
            set.rows.push(row);
        }
        if set.items.is_empty() {
            return Err(ReviewError::Empty {
                path: path.to_path_buf(),
            });
        }
        Ok(set)
    }

    /// The index of item `id`.
    pub fn position(&self, id: &str) -> Option<usize> {
        self.items.iter().position(|item| item.id == id)
    }
}

/// What the reviewer decided about one item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    Accept,
    /// Accepted with a new reference, and a new question when one is given.
    Edit {
        reference: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        question: Option<String>,
    },
    Reject {
        reason: String,
    },
}

impl Decision {
    /// The decision in a JSON object (a review line or a request), or why it is not one;
    /// the error names the field at fault.
    pub fn of_json(object: &Map<String, Value>) -> Result<Self, (&'static str, String)> {
        let text = |field: &str| {
            object
                .get(field)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        match object.get("decision").and_then(Value::as_str) {
            Some("accept") => Ok(Self::Accept),
            Some("edit") => Ok(Self::Edit {
                reference: text("reference")
                    .ok_or(("reference", "an edit needs the new reference".to_owned()))?,
                question: text("question"),
            }),
            Some("reject") => Ok(Self::Reject {
                reason: text("reason")
                    .ok_or(("reason", "a rejection needs a reason".to_owned()))?,
            }),
            other => Err((
                "decision",
                format!("{other:?} is not accept, edit or reject"),
            )),
        }
    }

    pub fn is_rejection(&self) -> bool {
        matches!(self, Self::Reject { .. })
    }
}

/// The rejections of one category (or of all items).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RejectionRate {
    pub items: usize,
    pub reviewed: usize,
    pub rejected: usize,
    /// Rejected over reviewed; `None` while nothing is reviewed.
    pub rate: Option<f64>,
}

impl RejectionRate {
    fn count(&mut self, decision: Option<&Decision>) {
        self.items += 1;
        if let Some(decision) = decision {
            self.reviewed += 1;
            self.rejected += usize::from(decision.is_rejection());
        }
        self.rate = (self.reviewed > 0).then(|| self.rejected as f64 / self.reviewed as f64);
    }
}

/// The generator's quality figure: rejection rates by category and overall.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rates {
    pub testset: String,
    pub review_file: String,
    pub by_category: BTreeMap<String, RejectionRate>,
    pub overall: RejectionRate,
    /// Items without a decision yet (the figure is final only at 0).
    pub unreviewed: usize,
}

impl Rates {
    pub fn of(set: &Testset, review: &ReviewFile) -> Self {
        let empty = RejectionRate {
            items: 0,
            reviewed: 0,
            rejected: 0,
            rate: None,
        };
        let mut by_category: BTreeMap<String, RejectionRate> = BTreeMap::new();
        let mut overall = empty.clone();
        for item in &set.items {
            let decision = review.get(&item.id);
            by_category
                .entry(item.category.clone())
                .or_insert_with(|| empty.clone())
                .count(decision);
            overall.count(decision);
        }
        Self {
            testset: set.path.display().to_string(),
            review_file: review.path().display().to_string(),
            by_category,
            unreviewed: overall.items - overall.reviewed,
            overall,
        }
    }

    /// The table a person reads.
    pub fn table(&self) -> String {
        let mut out = format!(
            "{:<14}{:>7}{:>10}{:>10}{:>8}\n",
            "category", "items", "reviewed", "rejected", "rate"
        );
        let rows = self
            .by_category
            .iter()
            .map(|(name, rate)| (name.as_str(), rate));
        for (name, rate) in rows.chain([("all", &self.overall)]) {
            let shown = rate
                .rate
                .map_or_else(|| "-".to_owned(), |r| format!("{r:.2}"));
            out.push_str(&format!(
                "{name:<14}{:>7}{:>10}{:>10}{shown:>8}\n",
                rate.items, rate.reviewed, rate.rejected
            ));
        }
        out
    }
}

/// The final set: the accepted items' rows in the set's order, each edit applied (an
/// edited reference drops the key points written for the old one), each row marked
/// `review: accepted | edited`. Items without a decision are left out too.
pub fn final_rows(set: &Testset, review: &ReviewFile) -> Vec<Map<String, Value>> {
    set.items
        .iter()
        .zip(&set.rows)
        .filter_map(|(item, row)| {
            let mut row = row.clone();
            match review.get(&item.id)? {
                Decision::Reject { .. } => return None,
                Decision::Accept => {
                    row.insert("review".into(), json!("accepted"));
                }
                Decision::Edit {
                    reference,
                    question,
                } => {
                    row.insert("reference".into(), json!([reference]));
                    row.remove("reference_statements");
                    if let Some(question) = question {
                        row.insert("question".into(), json!(question));
                    }
                    row.insert("review".into(), json!("edited"));
                }
            }
            Some(row)
        })
        .collect()
}

/// `DIR/STEM.review.REVIEWER.jsonl` beside the test set: one file per reviewer.
pub fn default_review_path(testset: &Path, reviewer: &str) -> PathBuf {
    let stem = testset
        .file_stem()
        .map_or_else(|| "testset".into(), |s| s.to_string_lossy().into_owned());
    testset.with_file_name(format!("{stem}.review.{reviewer}.jsonl"))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Six items: `f1..f3` fact, `n1..n3` numeric.
    pub(crate) fn six_items(dir: &Path) -> Testset {
        let mut text = String::new();
        for (id, category) in [
            ("f1", "fact"),
            ("f2", "fact"),
            ("f3", "fact"),
            ("n1", "numeric"),
            ("n2", "numeric"),
            ("n3", "numeric"),
        ] {
            let row = json!({"id": id, "question": format!("question {id}?"),
                "reference": [format!("answer {id}")], "category": category,
                "reference_statements": [format!("point {id}")],
                "reference_context_ids": [format!("c-{id}")],
                "reference_contexts": [format!("chunk {id}")], "language": "en"});
            text.push_str(&format!("{row}\n"));
        }
        let path = dir.join("testset.jsonl");
        std::fs::write(&path, text).unwrap();
        Testset::read(&path).unwrap()
    }

    fn decide(object: Value) -> Decision {
        Decision::of_json(object.as_object().unwrap()).unwrap()
    }

    #[test]
    fn rejection_rates_by_category_and_overall_are_counted_by_hand() {
        let dir = tempfile::tempdir().unwrap();
        let set = six_items(dir.path());
        let mut review = ReviewFile::open(&dir.path().join("r.jsonl"), &set, "lin").unwrap();
        let reject = decide(json!({"decision": "reject", "reason": "unsupported"}));
        let set_one = |review: &mut ReviewFile, id: &str, decision: &Decision| {
            review.set(&set, id, decision.clone()).unwrap();
        };
        set_one(&mut review, "f1", &reject);
        set_one(&mut review, "f2", &Decision::Accept);
        let edit = decide(json!({"decision": "edit", "reference": "new answer"}));
        set_one(&mut review, "f3", &edit);
        set_one(&mut review, "n1", &reject);
        set_one(&mut review, "n2", &reject);
        // Half reviewed: the rate is over the reviewed items, the rest counted apart.
        let partial = Rates::of(&set, &review);
        assert_eq!(partial.unreviewed, 1);
        assert_eq!(partial.by_category["numeric"].rate, Some(1.0));
        set_one(&mut review, "n3", &Decision::Accept);
        let rates = Rates::of(&set, &review);
        assert_eq!(rates.by_category["fact"].rate, Some(1.0 / 3.0));
        assert_eq!(rates.by_category["numeric"].rate, Some(2.0 / 3.0));
        assert_eq!(rates.overall.rate, Some(3.0 / 6.0));
        assert_eq!(rates.unreviewed, 0);
        let rows = final_rows(&set, &review);
        let ids: Vec<&str> = rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["f2", "f3", "n3"]);
        assert_eq!(rows[1]["reference"], json!(["new answer"]));
        assert_eq!(rows[1]["question"], "question f3?");
        assert!(rows[1].get("reference_statements").is_none());
        assert_eq!(rows[0]["reference_statements"], json!(["point f2"]));
    }

    /// Issue 39, item 4: the review page did not show that an item was kept with its
    /// closed-book gate failed (`testset --closed-book mark`).
    #[test]
    fn regression_issue_39_an_item_kept_with_a_failed_gate_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("testset.jsonl");
        let row = json!({"id": "a", "question": "Which year was Scratch released?",
            "reference": ["2007"], "category": "fact",
            "gates": {"self_contained": "passed", "closed_book": "failed: answered without \
                the passage", "supported": "passed"}});
        std::fs::write(&path, format!("{row}\n")).unwrap();
        let set = Testset::read(&path).unwrap();
        assert_eq!(
            set.items[0].failed_gates,
            ["closed_book: answered without the passage"]
        );
        let state = serde_json::to_value(&set.items[0]).unwrap();
        assert_eq!(
            state["failed_gates"][0],
            "closed_book: answered without the passage"
        );
        let script = include_str!("review_page.js");
        assert!(script.contains("item.failed_gates") && script.contains("\"failed-gates\""));
    }

    /// Issue 37: a follow-up question is shown with the conversation before it (the page
    /// showed the follow-up alone, which a reviewer cannot judge); a `conversation` of another
    /// shape is refused naming the line and field.
    #[test]
    fn a_follow_up_is_shown_with_its_opening_turn() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("testset.jsonl");
        let row = json!({"id": "f1", "question": "And how much did it cost?",
            "reference": ["Nothing: it is free."], "category": "follow_up",
            "conversation": [
                {"role": "user", "content": "Which language do children start with?"},
                {"role": "assistant", "content": "Most start with Scratch."}]});
        std::fs::write(&path, format!("{row}\n")).unwrap();
        let set = Testset::read(&path).unwrap();
        assert_eq!(
            set.items[0].history,
            [
                ["user", "Which language do children start with?"],
                ["assistant", "Most start with Scratch."]
            ]
        );
        let state = serde_json::to_value(&set.items[0]).unwrap();
        assert_eq!(state["history"][1][1], "Most start with Scratch.");
        let script = include_str!("review_page.js");
        assert!(script.contains("item.history") && script.contains("\"history-turns\""));

        let bad = json!({"id": "f2", "question": "And then?", "reference": ["x"],
            "category": "follow_up", "conversation": "Which language?"});
        std::fs::write(&path, format!("{row}\n{bad}\n")).unwrap();
        let err = Testset::read(&path).unwrap_err().to_string();
        assert!(
            err.contains("testset.jsonl:2: field `conversation`: not a list of turns"),
            "{err}"
        );
    }

    #[test]
    fn nothing_reviewed_is_no_rate_never_nan() {
        let dir = tempfile::tempdir().unwrap();
        let set = six_items(dir.path());
        let review = ReviewFile::open(&dir.path().join("r.jsonl"), &set, "lin").unwrap();
        let rates = Rates::of(&set, &review);
        assert_eq!(rates.overall.rate, None);
        let table = rates.table();
        let last: Vec<&str> = table.lines().last().unwrap().split_whitespace().collect();
        assert_eq!(last, ["all", "6", "0", "0", "-"], "{table}");
        assert!(final_rows(&set, &review).is_empty());
    }

    #[test]
    fn decisions_need_their_reference_or_reason() {
        let error = |object: Value| {
            Decision::of_json(object.as_object().unwrap())
                .unwrap_err()
                .0
        };
        assert_eq!(error(json!({"decision": "edit"})), "reference");
        assert_eq!(
            error(json!({"decision": "reject", "reason": " "})),
            "reason"
        );
        assert_eq!(error(json!({"decision": "maybe"})), "decision");
        assert_eq!(
            decide(json!({"decision": "edit", "reference": "r", "question": "q?"})),
            Decision::Edit {
                reference: "r".into(),
                question: Some("q?".into())
            }
        );
    }

    #[test]
    fn a_file_that_is_not_a_testset_is_refused_with_its_line_and_field() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data.jsonl");
        let read = |text: &str| {
            std::fs::write(&path, text).unwrap();
            Testset::read(&path).unwrap_err().to_string()
        };
        let error = read("{\"id\": \"a\", \"question\": \"q\", \"reference\": \"r\"}\n");
        assert!(error.ends_with("data.jsonl:1: field `category`: missing or not text (hint: a review reads the testset.jsonl `rageval testset` wrote)"), "{error}");
        let good =
            "{\"id\": \"a\", \"question\": \"q\", \"reference\": \"r\", \"category\": \"fact\"}\n";
        let error = read(&format!("{good}{good}"));
        assert!(
            error.contains(":2: field `id`: `a` appears twice"),
            "{error}"
        );
        assert!(read("").contains("has no item"));
        assert!(read("[1]\n").contains(":1: not a JSON object"));
    }
}
