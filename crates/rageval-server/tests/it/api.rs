//! The JSON API: the same numbers as the run's files and as `rageval compare`.

use axum::http::StatusCode;
use rageval_report::{CompareSettings, Comparison, RunData, Summary};

use crate::{fixture, get, server};

#[tokio::test]
async fn lists_runs_with_their_status_and_summary() {
    let dir = fixture();
    let app = server(dir.path(), None);
    let answer = get(&app, "/api/runs").await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.header("content-type"), "application/json");
    let json = answer.json();
    let runs = json["runs"].as_array().unwrap();
    let names: Vec<&str> = runs.iter().map(|r| r["name"].as_str().unwrap()).collect();
    // Sorted; no hidden directory, no directory without a manifest, no link out of the root.
    assert_eq!(
        names,
        vec![
            "alias",
            "base",
            "broken",
            "leaky",
            "other-data",
            "running",
            "shifted"
        ]
    );
    let status = |name: &str| {
        runs.iter().find(|r| r["name"] == name).unwrap()["status"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(status("base"), "complete");
    assert_eq!(status("running"), "running");
    assert_eq!(status("broken"), "unreadable");
    let broken = runs.iter().find(|r| r["name"] == "broken").unwrap();
    assert!(
        broken["error"].as_str().unwrap().contains("manifest.json"),
        "{broken}"
    );

    // The summary is summary.json's, field for field.
    let on_disk: Summary =
        serde_json::from_slice(&std::fs::read(dir.path().join("runs/base/summary.json")).unwrap())
            .unwrap();
    let base = runs.iter().find(|r| r["name"] == "base").unwrap();
    let served: Summary = serde_json::from_value(base["summary"].clone()).unwrap();
    assert_eq!(served, on_disk);
    assert_eq!(base["dataset"]["sha256"], "d1");
}

#[tokio::test]
async fn a_run_and_its_samples_filtered_by_a_metric_range() {
    let dir = fixture();
    let app = server(dir.path(), None);
    let run = get(&app, "/api/runs/base").await.json();
    assert_eq!(run["name"], "base");
    assert_eq!(run["manifest"]["status"], "complete");
    assert_eq!(run["summary"]["metrics"]["faithfulness"]["n_scored"], 40);

    let answer = get(
        &app,
        "/api/runs/base/samples?metric=faithfulness&min=0.58&max=0.72",
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    let json = answer.json();
    // Scores 0.6, 0.65 and 0.7: three of every five samples.
    assert_eq!(
        (json["total"].as_u64(), json["matched"].as_u64()),
        (Some(40), Some(24))
    );
    let samples = json["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 24);
    for sample in samples {
        let score = &sample["results"]["faithfulness"];
        assert_eq!(score["status"], "score");
        let value = score["value"].as_f64().unwrap();
        assert!((0.58..=0.72).contains(&value), "{value}");
        assert!(sample["results"]["context_recall"].is_object());
    }
    assert_eq!(samples[0]["sample_id"], "q2");
    assert_eq!(samples[0]["index"], 2);

    let page = get(
        &app,
        "/api/runs/base/samples?metric=faithfulness&min=0.58&max=0.72&offset=20&limit=10",
    )
    .await
    .json();
    assert_eq!(page["samples"].as_array().unwrap().len(), 4);

    let undefined = get(
        &app,
        "/api/runs/base/samples?metric=context_recall&status=undefined",
    )
    .await
    .json();
    assert_eq!(undefined["matched"], 1);
    assert_eq!(
        undefined["samples"][0]["results"]["context_recall"]["reason"],
        "no reference contexts"
    );
}

#[tokio::test]
async fn the_comparison_is_rageval_compare_s() {
    let dir = fixture();
    let app = server(dir.path(), None);
    let answer = get(&app, "/api/compare?run=base&run=shifted&permutations=999").await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    let served = answer.json();
    let runs =
        ["base", "shifted"].map(|name| RunData::load(&dir.path().join("runs").join(name)).unwrap());
    let settings = CompareSettings {
        permutations: 999,
        ..CompareSettings::default()
    };
    let direct = serde_json::to_value(Comparison::build(&runs, settings).unwrap()).unwrap();
    assert_eq!(served["pairs"], direct["pairs"]);
    let delta = &served["pairs"][0]["deltas"][0];
    assert_eq!(delta["metric"], "faithfulness");
    assert!(delta["ci95"][0].as_f64().unwrap() > 0.0);
}

#[tokio::test]
async fn bad_requests_get_a_json_error_naming_the_problem() {
    let dir = fixture();
    let app = server(dir.path(), None);
    for (uri, status, message) in [
        (
            "/api/compare?run=base&run=shifted&min_overlap=2",
            StatusCode::BAD_REQUEST,
            "a share between 0 and 1",
        ),
        (
            "/api/compare?run=base&run=shifted&common=maybe",
            StatusCode::BAD_REQUEST,
            "bad query parameter `common=maybe`",
        ),
        (
            "/api/compare?run=base",
            StatusCode::BAD_REQUEST,
            "at least two runs",
        ),
        (
            "/api/compare?run=base&run=shifted&permutations=100000000",
            StatusCode::BAD_REQUEST,
            "expected 1 to 100000",
        ),
        (
            "/api/runs/nope",
            StatusCode::NOT_FOUND,
            "no run named `nope`",
        ),
        ("/api/runs/running", StatusCode::CONFLICT, "is not complete"),
        (
            "/api/runs/base/samples?metric=bleu&min=0",
            StatusCode::BAD_REQUEST,
            "the run has no such metric (it has: faithfulness, context_recall)",
        ),
        (
            "/api/runs/base/samples?metric=faithfulness&max=x",
            StatusCode::BAD_REQUEST,
            "bad query parameter `max=x`: expected a number",
        ),
    ] {
        let answer = get(&app, uri).await;
        assert_eq!(answer.status, status, "{uri}: {}", answer.body);
        let error = answer.json()["error"].as_str().unwrap().to_string();
        assert!(error.contains(message), "{uri}: {error}");
    }
}
