//! Regressions of issue 25 and issue 39, item 1: `serve` over a folder with `rank`,
//! `reference`, `testset` and `pipeline` runs listed every rank, reference and testset run
//! as unreadable (their `summary.json` has another shape: the figures sit under its
//! `summary`; issue 25's fix read a shape no command writes) and did not list pipelines
//! (their eval is one level down). Each is now an entry of its kind with its figures and a
//! page of its own: a rank run and a pipeline with their retriever-versus-judge figures, a
//! reference or testset run with its counts, a pipeline's page and comparisons its `eval/`
//! run's. The binary's `serve_kinds` test reads the folders the commands themselves write.

use std::fs;
use std::path::Path;

use axum::http::StatusCode;
use rageval_report::RANK_AGREEMENT_FILE;
use rageval_report::testing::{scores, write_run, write_stage_run};
use serde_json::json;
use tempfile::TempDir;

use rageval_server::{RunState, RunsRoot};

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
    write_stage_run(dir, command, summary);
    if command == "rank" {
        fs::write(dir.join(RANK_AGREEMENT_FILE), RANK_AGREEMENT).unwrap();
    }
}

/// `runs/` with a lone `rank`, `reference` and `testset` run, two pipeline folders, and a
/// pipeline stopped before its `eval` stage.
fn s3_fixture() -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("runs");
    // The shapes `rank`, `reference` and `testset` write (abridged).
    let rank_summary = json!({"command": "rank", "settings": {}, "k": 3, "judge": {},
        "summary": {"questions": 3, "left_out": 1, "agreement": {"questions": 2},
                    "calls": {"total": 9}, "rounds": {}, "judge": {}}});
    let reference_summary = json!({"command": "reference", "settings": {}, "judge": {},
        "summary": {"questions": 3, "written": 2, "judge_failed": 1, "unanswered": 0,
                    "calls": 4, "judge": {}}});
    let testset_summary = json!({"command": "testset", "plan": {}, "generator": {},
        "summary": {"chunks": 9, "planned": 24, "written": 20, "judge_failed": 1,
                    "dropped": {"self_contained": 2, "duplicate_exact": 1},
                    "marked_closed_book": 0, "judge": {}}});
    stage_run(&root.join("ranked"), "rank", &rank_summary);
    stage_run(&root.join("refs"), "reference", &reference_summary);
    stage_run(&root.join("questions"), "testset", &testset_summary);
    stage_run(&root.join("stopped/rank"), "rank", &rank_summary);
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
    assert_eq!(
        names,
        vec!["pipeA", "pipeB", "questions", "ranked", "refs", "stopped"]
    );
    for name in ["pipeA", "pipeB", "questions", "ranked", "refs"] {
        assert_eq!(entry(name)["status"], "complete", "{}", entry(name));
    }
    let stopped = entry("stopped");
    assert_eq!(
        (&stopped["kind"], &stopped["status"], &stopped["stages"]),
        (&json!("pipeline"), &json!("running"), &json!(["rank"]))
    );
    let ranked = entry("ranked");
    assert_eq!(ranked["kind"], "rank");
    let figures = &ranked["rank_agreement"];
    assert_eq!(figures["questions"], 3);
    assert_eq!(figures["left_out"], 1);
    assert_eq!(figures["figures"][0][0], "spearman");
    assert_eq!(figures["figures"][0][1]["mean"], 0.75);
    assert_eq!(ranked["figures"], json!({"questions": 3, "left_out": 1}));
    let refs = entry("refs");
    assert_eq!(refs["kind"], "reference");
    assert_eq!(
        refs["figures"],
        json!({"questions": 3, "written": 2, "judge_failed": 1, "unanswered": 0})
    );
    let questions = entry("questions");
    assert_eq!(questions["kind"], "testset");
    assert_eq!(questions["figures"]["written"], 20);
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
    assert!(
        index.contains("references written 2 of 3 (1 judge failed, 0 unanswered)"),
        "{index}"
    );
    assert!(
        index.contains(
            "20 of 24 planned questions written (3 dropped by the gates, 1 judge failed)"
        ),
        "{index}"
    );
    assert!(index.contains("<a href=\"/runs/refs\">refs</a>"), "{index}");
}

/// Issue 39, item 1: each stage run opens — its page and `/api/runs/NAME` show what ran and
/// its figures — and `serve` over a pipeline folder lists its stages as what they are.
#[tokio::test]
async fn issue_39_1_stage_runs_open_and_a_pipeline_s_stages_list_as_themselves() {
    let dir = s3_fixture();
    let app = crate::server(dir.path(), None);
    let listing = get(&app, "/api/runs").await.json();
    for entry in listing["runs"].as_array().unwrap() {
        assert_ne!(entry["status"], "unreadable", "{entry}");
    }
    for (name, figure) in [
        ("refs", "references written 2 of 3"),
        ("questions", "20 of 24 planned questions written"),
        ("ranked", "3 questions ranked, 1 left out"),
    ] {
        let page = get(&app, &format!("/runs/{name}")).await;
        assert_eq!(page.status, StatusCode::OK, "{name}: {}", page.body);
        assert!(page.body.contains(figure), "{name}: {}", page.body);
        let api = get(&app, &format!("/api/runs/{name}")).await;
        assert_eq!(api.status, StatusCode::OK, "{name}: {}", api.body);
        assert_eq!(api.json()["summary"]["command"], api.json()["kind"]);
    }
    assert!(
        get(&app, "/runs/questions")
            .await
            .body
            .contains("<td>dropped: self_contained</td><td>2</td>")
    );

    let stages = RunsRoot::open(&dir.path().join("runs/pipeA")).unwrap();
    let entries = stages.list().unwrap();
    let kinds: Vec<(&str, &str)> = entries
        .iter()
        .map(|entry| (entry.name.as_str(), entry.kind.as_str()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("eval", "eval"),
            ("rank", "rank"),
            ("reference", "reference")
        ]
    );
    for entry in &entries {
        assert!(
            !matches!(entry.state, RunState::Unreadable(_) | RunState::Running),
            "{}: {:?}",
            entry.name,
            entry.state
        );
    }
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
    // A rank run has no samples to page: the answer says what it is.
    let refused = get(&app, "/api/runs/ranked/samples").await;
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
