//! `rageval report` and quality gates end to end: human files, exit codes, JUnit.

use std::fs;

use crate::{eval_fiqa, rageval, repo_root, stderr, stdout};
use rageval_report::testing::{scores, write_run};

#[test]
fn rewrites_the_human_files_of_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    write_run(&run, "d1", &scores(0.0));
    let output = rageval(dir.path(), &["report", run.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    for file in ["report.html", "report.md", "results.xlsx"] {
        assert!(run.join(file).is_file(), "{file} missing");
    }
    let html = fs::read_to_string(run.join("report.html")).unwrap();
    assert!(html.contains("<code>faithfulness</code>"));
    // The dataset path in the manifest does not exist: the report says it shows no texts.
    assert!(
        stderr(&output).contains("data.jsonl of the run: it is not there"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_failed_gate_exits_1_after_writing_everything_and_names_metrics_and_samples() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    write_run(&run, "d1", &scores(0.0));
    let junit = dir.path().join("gate.xml");
    let output = rageval(
        dir.path(),
        &[
            "report",
            run.to_str().unwrap(),
            "--fail-under",
            "faithfulness=0.65,context_recall=0.8",
            "--junit",
            junit.to_str().unwrap(),
        ],
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(run.join("report.html").is_file());
    let out = stdout(&output);
    assert!(
        out.contains("gate FAIL: faithfulness mean 0.6000 (minimum 0.65), 24 sample(s)"),
        "{out}"
    );
    assert!(out.contains("gate pass: context_recall mean 0.9000"));
    let xml = fs::read_to_string(&junit).unwrap();
    assert!(xml.contains(r#"tests="2" failures="1""#));
    assert!(xml.contains("faithfulness mean 0.6000 is below 0.65"));
    // The lowest samples (wobble 0) come first.
    assert!(xml.contains("q0: 0.5000\n"));

    let output = rageval(
        dir.path(),
        &[
            "report",
            run.to_str().unwrap(),
            "--fail-under",
            "faithfulness=0.5",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

#[test]
fn a_gate_on_an_unknown_metric_or_a_bad_directory_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    write_run(&run, "d1", &scores(0.0));
    let output = rageval(
        dir.path(),
        &[
            "report",
            run.to_str().unwrap(),
            "--fail-under",
            "faithfulnes=0.5",
        ],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("quality gate names metric `faithfulnes`"));

    let output = rageval(
        dir.path(),
        &[
            "report",
            run.to_str().unwrap(),
            "--fail-under",
            "faithfulness",
        ],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("expected METRIC=MINIMUM"));

    let output = rageval(dir.path(), &["report", dir.path().to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("is not a run directory"));
}

#[test]
fn eval_writes_reports_and_fails_its_gate() {
    let dir = tempfile::tempdir().unwrap();
    let data = repo_root().join("examples/fiqa-30.jsonl");
    let out = dir.path().join("run");
    let junit = dir.path().join("junit.xml");
    let output = rageval(
        dir.path(),
        &[
            "eval",
            data.to_str().unwrap(),
            "--metrics",
            "rouge_l,exact_match",
            "--out",
            out.to_str().unwrap(),
            "--fail-under",
            "rouge_l=0.99",
            "--junit",
            junit.to_str().unwrap(),
        ],
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    for file in ["summary.json", "report.html", "report.md", "results.xlsx"] {
        assert!(out.join(file).is_file(), "{file} missing");
    }
    let html = fs::read_to_string(out.join("report.html")).unwrap();
    // Eval keeps the samples, so the drill-down shows the questions.
    assert!(!html.contains("The dataset was not available"));
    assert!(fs::read_to_string(&junit).unwrap().contains("rouge_l mean"));

    // A gate on a metric the run does not compute is refused before any work.
    let output = rageval(
        dir.path(),
        &[
            "eval",
            data.to_str().unwrap(),
            "--metrics",
            "rouge_l",
            "--out",
            dir.path().join("other").to_str().unwrap(),
            "--fail-under",
            "bleu=0.1",
        ],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(!dir.path().join("other").exists());
}

#[test]
fn eval_s_workbook_reads_back_equal_to_its_journal() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    // 30 samples × 5 metrics, scored and undefined (id_mrr: the rows have no context ids).
    eval_fiqa(dir.path(), "bleu,chrf,rouge_l,jaro_winkler,id_mrr", &out);
    rageval_report::testing::assert_workbook_matches_journal(
        &out.join("results.xlsx"),
        &out.join("results.jsonl"),
    );
}
