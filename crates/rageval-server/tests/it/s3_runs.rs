//! Regression of issue 25: `serve` over a folder with `rank`, `reference` and `pipeline`
//! runs listed every rank and reference run as unreadable (their `summary.json` has another
//! shape) and did not list pipelines (their eval is one level down). Each is now an entry
//! of its kind: a rank run and a pipeline with their retriever-versus-judge figures, a
//! reference run with its counts, a pipeline's page and comparisons its `eval/` run's.

use std::fs;
use std::path::Path;

use axum::http::StatusCode;
use rageval_report::testing::{scores, write_run};
use rageval_report::{DatasetInfo, Manifest, RANK_AGREEMENT_FILE, RunDir};
use serde_json::json;
use tempfile::TempDir;

use crate::get;

/// Three questions' retriever-versus-judge figures, one left out.
const RANK_AGREEMENT: &str = concat!(
    r#"{"sample_id":"q0","question":"a","k":3,"spearman":0.5,"kendall_tau_b":0.4,"top_k_overlap":1.0,"overlap_indices":[0,1,2],"ndcg_at_k":0.9,"map":0.8}"#,
    "\n",
    r#"{"sample_id":"q1","question":"b","k":3,"spearman":1.0,"kendall_tau_b":1.0,"top_k_overlap":1.0,"overlap_indices":[0,1,2],"ndcg_at_k":1.0,"map":1.0}"#,
    "\n",
    r#"{"sample_id":"q2","question":"c","k":3,"left_out":"the judge failed to grade 1 of 3 contexts"}"#,
    "\n"
);

/// A finished `command` run at `dir` whose `summary.json` is `summary` (a stage's own
/// shape), with `rank_agreement.jsonl` for a rank run.
fn stage_run(dir: &Path, command: &str, summary: &serde_json::Value) {
    let run = RunDir::create(dir, true).unwrap();
    let dataset = DatasetInfo {
        path: "questions.jsonl".into(),
        sha256: "q".into(),
        format: "jsonl".into(),
        samples: Some(3),
    };
    let mut manifest = Manifest::start(command, dataset, Vec::new(), json!({}));
    if command == "rank" {
        fs::write(dir.join(RANK_AGREEMENT_FILE), RANK_AGREEMENT).unwrap();
    }
    run.finish_with(&mut manifest, summary).unwrap();
}

/// `runs/` with a lone `rank` run, a lone `reference` run, and two pipeline folders.
fn s3_fixture() -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("runs");
    // The shapes `rank` and `reference` write (abridged): no `models`, no `metrics`.
    let rank_summary = json!({"questions": 3, "left_out": 1, "agreement": {"questions": 2}});
    let reference_summary = json!({"questions": 3, "written": 2, "judge_failed": 1});
    stage_run(&root.join("ranked"), "rank", &rank_summary);
    stage_run(&root.join("refs"), "reference", &reference_summary);
    for (name, shift) in [("pipeA", 0.0), ("pipeB", 0.1)] {
        let pipeline = root.join(name);
        stage_run(&pipeline.join("rank"), "rank", &rank_summary);
        stage_run(&pipeline.join("reference"), "reference", &reference_summary);
        write_run(&pipeline.join("eval"), "d1", &scores(shift));
        fs::write(
            pipeline.join("eval").join(RANK_AGREEMENT_FILE),
            RANK_AGREEMENT,
        )
        .unwrap();
    }
    dir
}

#[tokio::test]
async fn issue_25_rank_reference_and_pipeline_runs_are_listed_as_readable() {
    let dir = s3_fixture();
    let app = crate::server(dir.path(), None);
    let json = get(&app, "/api/runs").await.json();
    let runs = json["runs"].as_array().unwrap();
    let entry = |name: &str| runs.iter().find(|r| r["name"] == name).unwrap().clone();
    let names: Vec<&str> = runs.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, vec!["pipeA", "pipeB", "ranked", "refs"]);
    for name in &names {
        assert_eq!(entry(name)["status"], "complete", "{}", entry(name));
    }
    let ranked = entry("ranked");
    assert_eq!(ranked["kind"], "rank");
    let figures = &ranked["rank_agreement"];
    assert_eq!(figures["questions"], 3);
    assert_eq!(figures["left_out"], 1);
    assert_eq!(figures["figures"][0][0], "spearman");
    assert_eq!(figures["figures"][0][1]["mean"], 0.75);
    let refs = entry("refs");
    assert_eq!(refs["kind"], "reference");
    assert_eq!(refs["references"], json!({"questions": 3, "written": 2}));
    let pipeline = entry("pipeA");
    assert_eq!(pipeline["kind"], "pipeline");
    assert_eq!(pipeline["summary"]["metrics"]["faithfulness"]["n"], 40);
    assert_eq!(pipeline["rank_agreement"]["figures"][0][1]["mean"], 0.75);

    let index = get(&app, "/").await.body;
    assert!(!index.contains("unreadable"), "{index}");
    assert!(
        index.contains(
            "<a href=\"/runs/pipeA\">pipeA</a></td><td>complete <span class=\"muted\">pipeline</span>"
        ),
        "{index}"
    );
    assert!(
        index.contains("<span class=\"chip\">Spearman ρ 0.7500</span>"),
        "{index}"
    );
    assert!(index.contains("references written 2 of 3"), "{index}");
}

#[tokio::test]
async fn issue_25_a_pipeline_opens_and_compares_as_its_eval_run() {
    let dir = s3_fixture();
    let app = crate::server(dir.path(), None);
    let page = get(&app, "/runs/pipeA").await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(page.body.contains("<h1>pipeA</h1>"), "{}", page.body);
    assert!(page.body.contains("Spearman ρ"), "{}", page.body);
    let compared = get(&app, "/api/compare?run=pipeA&run=pipeB").await;
    assert_eq!(compared.status, StatusCode::OK, "{}", compared.body);
    let json = compared.json();
    assert_eq!(json["runs"][0]["name"], "pipeA");
    assert_eq!(json["runs"][1]["version"], "pipeB");
    // A rank run has no samples to open: the answer says what it is.
    let refused = get(&app, "/api/runs/ranked").await;
    assert_eq!(refused.status, StatusCode::CONFLICT);
    assert!(
        refused.json()["error"]
            .as_str()
            .unwrap()
            .starts_with("ranked is a `rank` run: it has per-question figures"),
        "{}",
        refused.body
    );
}
