//! The run directory's schema as docs/run-directory.md publishes it ("Schema"): a real
//! `eval` run's `manifest.json`, `results.jsonl` and `summary.json` hold no field the table
//! does not name and every field it calls `always` (issue 24, item 6). A writer that adds,
//! renames or drops a field fails here until the table says so.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;

use serde_json::Value;

use crate::{rageval, repo_root, stderr};

/// The table: object → field → whether it is always there.
fn documented() -> BTreeMap<String, BTreeMap<String, bool>> {
    let doc = fs::read_to_string(repo_root().join("docs/run-directory.md")).unwrap();
    let section = doc.split("\n## Schema\n").nth(1).expect("a Schema section");
    let mut table: BTreeMap<String, BTreeMap<String, bool>> = BTreeMap::new();
    for line in section.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let [_, object, field, present, ..] = cells.as_slice() else {
            continue;
        };
        let Some(field) = field.strip_prefix('`').and_then(|f| f.strip_suffix('`')) else {
            continue;
        };
        let always = match *present {
            "always" => true,
            "optional" => false,
            other => panic!("`{field}` of {object}: present is `{other}`"),
        };
        table
            .entry((*object).to_owned())
            .or_default()
            .insert(field.to_owned(), always);
    }
    table
}

/// The items of an array, or the values of an object.
fn all(value: &Value) -> Vec<&Value> {
    match value {
        Value::Array(items) => items.iter().collect(),
        Value::Object(map) => map.values().collect(),
        _ => panic!("{value}"),
    }
}

/// Checks the fields of `objects` (each a JSON object) against the table's `object`.
fn check(table: &BTreeMap<String, BTreeMap<String, bool>>, object: &str, objects: &[&Value]) {
    let fields = table
        .get(object)
        .unwrap_or_else(|| panic!("the table has no {object}"));
    let mut seen = BTreeSet::new();
    for value in objects {
        let map = value
            .as_object()
            .unwrap_or_else(|| panic!("{object}: {value}"));
        for key in map.keys() {
            assert!(
                fields.contains_key(key),
                "{object} holds `{key}`, which docs/run-directory.md's Schema does not name"
            );
            seen.insert(key.clone());
        }
        for (key, always) in fields {
            if *always {
                assert!(map.contains_key(key), "{object} lacks `{key}`: {value}");
            }
        }
    }
    assert!(!seen.is_empty(), "no {object} was checked");
}

#[test]
fn an_eval_run_s_files_hold_the_documented_fields() {
    let dir = tempfile::tempdir().unwrap();
    let data = repo_root().join("examples/fiqa-30.jsonl");
    let output = rageval(
        dir.path(),
        &[
            "eval",
            data.to_str().unwrap(),
            "--metrics",
            "faithfulness,rouge_l,id_mrr",
            "--judge",
            "heuristic",
            "--name",
            "V1.0",
            "--out",
            "run",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let read = |file: &str| -> Value {
        serde_json::from_slice(&fs::read(dir.path().join("run").join(file)).unwrap()).unwrap()
    };
    let (manifest, summary) = (read("manifest.json"), read("summary.json"));
    let lines: Vec<Value> = fs::read_to_string(dir.path().join("run/results.jsonl"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let table = documented();
    check(&table, "manifest", &[&manifest]);
    check(&table, "manifest.dataset", &[&manifest["dataset"]]);
    check(&table, "manifest.metrics[]", &all(&manifest["metrics"]));
    check(&table, "manifest.sessions[]", &all(&manifest["sessions"]));
    check(&table, "results line", &lines.iter().collect::<Vec<_>>());
    check(&table, "summary", &[&summary]);
    check(&table, "summary.metrics.*", &all(&summary["metrics"]));
    // Every object of the table was checked above.
    assert_eq!(
        table.keys().map(String::as_str).collect::<Vec<_>>(),
        [
            "manifest",
            "manifest.dataset",
            "manifest.metrics[]",
            "manifest.sessions[]",
            "results line",
            "summary",
            "summary.metrics.*"
        ]
    );
}
