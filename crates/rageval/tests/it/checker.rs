//! `--judge checker:DIR` end to end, on the tiny random-weight ModernBERT token classifier
//! that `scripts/checker-fixtures.py` made (its outputs are meaningless, so these tests
//! assert properties, never values): every cell is a score in [0, 1] or undefined with a
//! reason, the manifest and `metrics explain` name the checker, its family and its weights'
//! SHA-256, and another weight file is another judge.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{rageval, repo_root, stderr, stdout};

fn fixture(family: &str) -> PathBuf {
    repo_root().join(format!(
        "crates/rageval-judge/tests/fixtures/checkers/{family}"
    ))
}

/// A copy of a fixture folder in `dir`, to change without touching the repository.
fn copy_fixture(family: &str, dir: &Path) -> PathBuf {
    let copy = dir.join(family);
    fs::create_dir_all(&copy).unwrap();
    for file in ["config.json", "tokenizer.json", "model.safetensors"] {
        fs::copy(fixture(family).join(file), copy.join(file)).unwrap();
    }
    copy
}

/// The weights' SHA-256, as the checker computes it (the judge crate's tests pin it).
fn sha256_of(checker: &Path) -> String {
    rageval_judge::SupportChecker::open(checker)
        .unwrap()
        .sha256()
        .to_owned()
}

/// The first five samples of `examples/fiqa-30.jsonl`, in `dir` (a short run).
const SAMPLES: usize = 5;

fn eval(dir: &Path, checker: &Path, out: &Path) -> std::process::Output {
    let data = dir.join("fiqa-5.jsonl");
    if !data.exists() {
        let fiqa = fs::read_to_string(repo_root().join("examples/fiqa-30.jsonl")).unwrap();
        let lines: Vec<&str> = fiqa.lines().take(SAMPLES).collect();
        fs::write(&data, lines.join("\n") + "\n").unwrap();
    }
    rageval(
        dir,
        &[
            "eval",
            data.to_str().unwrap(),
            "--judge",
            &format!("checker:{}", checker.display()),
            "--metrics",
            "faithfulness",
            "--out",
            out.to_str().unwrap(),
        ],
    )
}

#[test]
fn faithfulness_by_a_checker_is_a_score_or_undefined_and_names_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let checker = fixture("modernbert-tokens");
    let out = dir.path().join("run");
    let output = eval(dir.path(), &checker, &out);
    assert!(output.status.success(), "{}", stderr(&output));
    // The session's accounting counts what the checker answered.
    assert!(
        stdout(&output).contains("checker answers"),
        "{}",
        stdout(&output)
    );

    let results = fs::read_to_string(out.join("results.jsonl")).unwrap();
    let cells: Vec<Value> = results
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(cells.len(), SAMPLES);
    let mut scored = 0;
    for cell in &cells {
        assert_eq!(cell["metric"], "faithfulness");
        match cell["status"].as_str() {
            Some("score") => {
                let value = cell["value"].as_f64().unwrap();
                assert!((0.0..=1.0).contains(&value), "{cell}");
                scored += 1;
            }
            Some("undefined") => assert!(
                cell["reason"].as_str().is_some_and(|r| !r.is_empty()),
                "{cell}"
            ),
            _ => panic!("neither a score nor undefined: {cell}"),
        }
    }
    assert!(scored > 0);
    // Regression: a dry run ran the checker (minutes on CPU) and counted none of its work.
    // Now it counts the claims the checker will score, as many as the run's verdicts.
    let verdicts: usize = cells
        .iter()
        .filter_map(|cell| cell["evidence"]["verdicts"].as_array())
        .map(Vec::len)
        .sum();
    let mut args: Vec<String> = Vec::new();
    args.extend(
        [
            "eval",
            dir.path().join("fiqa-5.jsonl").to_str().unwrap(),
            "--judge",
            &format!("checker:{}", checker.display()),
            "--metrics",
            "faithfulness",
            "--dry-run",
        ]
        .map(str::to_owned),
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let dry = rageval(dir.path(), &args);
    assert!(dry.status.success(), "{}", stderr(&dry));
    let table = stdout(&dry);
    assert!(table.contains("checker claims"), "{table}");
    let planned = table
        .lines()
        .find(|line| line.starts_with("faithfulness"))
        .and_then(|line| line.split_whitespace().last())
        .and_then(|claims| claims.parse::<usize>().ok());
    assert_eq!(planned, Some(verdicts), "{table}");
    // The checker's verdicts are the evidence: who judged, and what it said.
    assert!(results.contains("checker modernbert"), "{results}");
    assert!(results.contains("checker P(supported)"), "{results}");

    let manifest = fs::read_to_string(out.join("manifest.json")).unwrap();
    let sha = sha256_of(&checker);
    assert!(manifest.contains(&sha), "{manifest}");
    assert!(
        manifest.contains("\"family\": \"modernbert\"")
            || manifest.contains("\"family\":\"modernbert\"")
    );
    assert!(manifest.contains("agreement"), "{manifest}");

    // The report's judge line: the checker, its hash, and no agreement figure.
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        report.contains(&format!(
            "checker modernbert modernbert-tokens (sha256 {}",
            &sha[..12]
        )),
        "{report}"
    );
    assert!(report.contains("unmeasured"), "{report}");
}

#[test]
fn another_weight_file_is_another_judge() {
    let dir = tempfile::tempdir().unwrap();
    let checker = copy_fixture("modernbert-tokens", dir.path());
    let out = dir.path().join("run");
    let first = eval(dir.path(), &checker, &out);
    assert!(first.status.success(), "{}", stderr(&first));
    // The same run again resumes: nothing changed.
    let again = eval(dir.path(), &checker, &out);
    assert!(again.status.success(), "{}", stderr(&again));

    // One weight nudged (the file's last byte is inside the last tensor's data).
    let weights = checker.join("model.safetensors");
    let mut bytes = fs::read(&weights).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x01;
    fs::write(&weights, bytes).unwrap();
    let changed = eval(dir.path(), &checker, &out);
    assert_eq!(changed.status.code(), Some(2), "{}", stderr(&changed));
    let why = stderr(&changed);
    assert!(
        why.contains("support_verdicts was answered by checker modernbert"),
        "{why}"
    );
}

#[test]
fn families_rageval_does_not_run_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let checker = copy_fixture("deberta-v2-nli", dir.path());
    let config = checker.join("config.json");
    let mut value: Value = serde_json::from_str(&fs::read_to_string(&config).unwrap()).unwrap();
    value["model_type"] = "eurobert".into();
    fs::write(&config, value.to_string()).unwrap();
    let output = eval(dir.path(), &checker, &dir.path().join("run"));
    assert_eq!(output.status.code(), Some(2));
    let why = stderr(&output);
    assert!(
        why.contains("model_type `eurobert`") && why.contains("config.json"),
        "{why}"
    );

    value["model_type"] = "deberta-v2".into();
    value["auto_map"] = serde_json::json!({"AutoModel": "modeling_custom.Model"});
    fs::write(&config, value.to_string()).unwrap();
    let output = eval(dir.path(), &checker, &dir.path().join("run"));
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("`auto_map`"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn metrics_explain_names_the_checker_and_its_unmeasured_agreement() {
    let dir = tempfile::tempdir().unwrap();
    let checker = fixture("deberta-v2-nli");
    let output = rageval(
        dir.path(),
        &[
            "metrics",
            "explain",
            "faithfulness",
            "--judge",
            &format!("checker:{}", checker.display()),
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    let sha = sha256_of(&checker);
    assert!(text.contains("checker deberta-v2"), "{text}");
    assert!(text.contains(&sha[..12]), "{text}");
    assert!(
        text.contains("agreement unmeasured — run `rageval judge-check"),
        "{text}"
    );
    // Regression: the heuristic's support-verdict figures stood above the checker's line as
    // if they were the checker's.
    assert!(!text.contains("balanced accuracy"), "{text}");
    assert!(!text.contains("pairwise accuracy"), "{text}");
    assert!(!text.contains("headline"), "{text}");
}

#[test]
fn judge_check_measures_a_checker_like_any_judge() {
    let dir = tempfile::tempdir().unwrap();
    super::judge_check::write_curie_pairs(dir.path());
    let checker = fixture("deberta-v2-nli");
    let output = rageval(
        dir.path(),
        &[
            "judge-check",
            "labels.jsonl",
            "--metric",
            "faithfulness",
            "--judge",
            &format!("checker:{}", checker.display()),
            "--out",
            "run",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let agreement: Value =
        serde_json::from_str(&fs::read_to_string(dir.path().join("run/agreement.json")).unwrap())
            .unwrap();
    let accuracy = agreement["figures"]["pairwise_accuracy"]["value"]
        .as_f64()
        .unwrap();
    assert!((0.0..=1.0).contains(&accuracy), "{agreement}");
    let manifest = fs::read_to_string(dir.path().join("run/manifest.json")).unwrap();
    assert!(manifest.contains(&sha256_of(&checker)), "{manifest}");
}

/// Regression: with a checker and no `--metrics`, the note on the metrics left out spoke of
/// "the offline judge" and its figures, not of the checker that would answer them.
#[test]
fn the_default_metrics_note_names_the_checker() {
    let dir = tempfile::tempdir().unwrap();
    let checker = fixture("modernbert-tokens");
    let data = repo_root().join("examples/fiqa-30.jsonl");
    let output = rageval(
        dir.path(),
        &[
            "eval",
            data.to_str().unwrap(),
            "--judge",
            &format!("checker:{}", checker.display()),
            "--samples",
            "2",
            "--out",
            "run",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let said = stderr(&output);
    let note = said
        .lines()
        .find(|line| line.starts_with("not run by default"))
        .unwrap_or_else(|| panic!("no note on the metrics left out: {said}"));
    assert!(
        note.contains("the checker model modernbert-tokens for support verdicts"),
        "{note}"
    );
    assert!(!note.contains("the offline judge"), "{note}");
    let sha = sha256_of(&checker);
    assert!(
        note.contains(&format!(
            "faithfulness (support_verdicts by checker modernbert modernbert-tokens (sha256 {}…)",
            &sha[..12]
        )),
        "{note}"
    );
    assert!(note.contains("rageval judge-check"), "{note}");
}
