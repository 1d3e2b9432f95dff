//! Regressions of issue 25, "S3 results cannot be browsed or compared where they are":
//! `compare` and `report` given a `pipeline` folder use its `eval/` run (and say so), a
//! `rank` run is refused naming what it is and where the eval run is, two pipelines' evals
//! are told apart, and versions carry names given at eval time or compare time into every
//! rendering of the version table.

use std::fs;
use std::path::Path;

use rageval_report::testing::calamine::{Data, Reader, Xlsx, open_workbook};
use rageval_report::testing::{scores, write_run, write_stage_run};
use serde_json::Value;

use crate::snapshots::{transcript, with_filters};
use crate::{rageval, stderr, stdout};

/// A finished stage run of `command` (`rank`, `reference`) at `dir`, as far as the readers
/// look: its manifest.
fn stage_run(dir: &Path, command: &str) {
    write_stage_run(dir, command, &serde_json::json!({"questions": 40}));
}

/// A pipeline folder as `rageval pipeline` lays it out: `rank/`, `reference/` and a
/// complete `eval/` whose scores are shifted by `shift`.
fn pipeline_folder(root: &Path, shift: f64) {
    stage_run(&root.join("rank"), "rank");
    stage_run(&root.join("reference"), "reference");
    write_run(&root.join("eval"), "d1", &scores(shift));
}

#[test]
fn issue_25_compare_and_report_use_a_pipeline_folder_s_eval() {
    let dir = tempfile::tempdir().unwrap();
    pipeline_folder(&dir.path().join("pipeA"), 0.0);
    pipeline_folder(&dir.path().join("pipeB"), 0.1);
    let compared = rageval(
        dir.path(),
        &["compare", "pipeA", "pipeB", "--permutations", "999"],
    );
    assert!(compared.status.success(), "{}", stderr(&compared));
    let out = stdout(&compared);
    // Each pipeline's eval is named by its folder, not both `eval`.
    assert!(out.contains("\n| pipeA | 0.6000 |"), "{out}");
    assert!(out.contains("\n| pipeB | 0.7000 · Δ +0.1000"), "{out}");
    let notes = stderr(&compared);
    assert!(
        notes.contains("pipeA is a pipeline folder: using its eval run pipeA/eval"),
        "{notes}"
    );

    let reported = rageval(dir.path(), &["report", "pipeA", "--no-dataset"]);
    assert!(reported.status.success(), "{}", stderr(&reported));
    let markdown = fs::read_to_string(dir.path().join("pipeA/eval/report.md")).unwrap();
    assert!(
        markdown.starts_with("# rageval report: pipeA\n"),
        "{markdown}"
    );
}

#[test]
fn issue_25_a_rank_run_is_refused_naming_the_pipeline_s_eval() {
    let dir = tempfile::tempdir().unwrap();
    pipeline_folder(&dir.path().join("pipeA"), 0.0);
    pipeline_folder(&dir.path().join("pipeB"), 0.1);
    let refused = rageval(dir.path(), &["compare", "pipeA/rank", "pipeB"]);
    let stage = rageval(dir.path(), &["report", "pipeA/reference"]);
    let not_a_run = rageval(dir.path(), &["compare", "pipeA/eval", "."]);
    with_filters(dir.path(), || {
        insta::assert_snapshot!("issue_25_compare_a_rank_run", transcript(&refused));
        insta::assert_snapshot!("issue_25_report_a_reference_run", transcript(&stage));
        insta::assert_snapshot!("issue_25_compare_not_a_run", transcript(&not_a_run));
    });
}

/// A dataset of `n` questions that a model-free metric scores.
fn dataset(path: &Path, n: usize) {
    let lines: String = (0..n)
        .map(|i| {
            format!(
                "{{\"id\": \"q{i}\", \"question\": \"question {i}\", \"response\": \"the answer \
                 is {i}\", \"reference\": \"the answer is {}\"}}\n",
                i % 3
            )
        })
        .collect();
    fs::write(path, lines).unwrap();
}

#[test]
fn issue_25_versions_are_named_at_eval_time_and_at_compare_time() {
    let dir = tempfile::tempdir().unwrap();
    dataset(&dir.path().join("data.jsonl"), 6);
    let eval = |out: &str, name: Option<&str>| {
        let mut args = vec!["eval", "data.jsonl", "--metrics", "chrf", "--out", out];
        args.extend(name.iter().flat_map(|name| ["--name", *name]));
        let output = rageval(dir.path(), &args);
        assert!(output.status.success(), "{}", stderr(&output));
        output
    };
    eval("v10", Some("V1.0"));
    eval("v11", None);
    let journal = fs::read_to_string(dir.path().join("v11/results.jsonl")).unwrap();
    // A name given when the run is resumed renames it and scores nothing again.
    eval("v11", Some("V1.1 (rerank)"));
    assert_eq!(
        fs::read_to_string(dir.path().join("v11/results.jsonl")).unwrap(),
        journal
    );
    let manifest: Value =
        serde_json::from_slice(&fs::read(dir.path().join("v11/manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["version_name"], "V1.1 (rerank)");
    // Resumed without a name, the run keeps the one it has.
    eval("v11", None);
    let manifest: Value =
        serde_json::from_slice(&fs::read(dir.path().join("v11/manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["version_name"], "V1.1 (rerank)");

    let compared = rageval(
        dir.path(),
        &[
            "compare", "v10", "v11", "--json", "cmp.json", "--html", "cmp.html", "--xlsx",
            "cmp.xlsx",
        ],
    );
    assert!(compared.status.success(), "{}", stderr(&compared));
    let out = stdout(&compared);
    assert!(out.contains("\n| V1.0 | "), "{out}");
    assert!(out.contains("\n| V1.1 (rerank) | "), "{out}");
    assert!(out.contains("## V1.0 → V1.1 (rerank)"), "{out}");
    let json: Value =
        serde_json::from_slice(&fs::read(dir.path().join("cmp.json")).unwrap()).unwrap();
    assert_eq!(json["runs"][0]["name"], "v10");
    assert_eq!(json["runs"][0]["version"], "V1.0");
    assert_eq!(json["runs"][1]["version"], "V1.1 (rerank)");
    let html = fs::read_to_string(dir.path().join("cmp.html")).unwrap();
    assert!(html.contains(">V1.1 (rerank)</td>"), "{html}");
    let mut workbook: Xlsx<_> = open_workbook(dir.path().join("cmp.xlsx")).unwrap();
    let sheet = workbook.worksheet_range("versions").unwrap();
    assert_eq!(sheet.get_value((1, 0)), Some(&Data::String("V1.0".into())));
    assert_eq!(
        sheet.get_value((2, 0)),
        Some(&Data::String("V1.1 (rerank)".into()))
    );

    // Names given at compare time win; a run left without one keeps its own.
    let renamed = rageval(dir.path(), &["compare", "v10", "v11", "--name", "baseline"]);
    assert!(renamed.status.success(), "{}", stderr(&renamed));
    let out = stdout(&renamed);
    assert!(out.contains("\n| baseline | "), "{out}");
    assert!(out.contains("\n| V1.1 (rerank) | "), "{out}");
    let too_many = rageval(
        dir.path(),
        &[
            "compare", "v10", "v11", "--name", "a", "--name", "b", "--name", "c",
        ],
    );
    assert_eq!(too_many.status.code(), Some(2));
    assert!(
        stderr(&too_many).contains("3 --name for 2 runs"),
        "{}",
        stderr(&too_many)
    );
}
