//! `eval --mlflow URL` against a real MLflow tracking server started by the test (SQLite,
//! `--serve-artifacts`): the run appears with its params, per-metric means and interval
//! bounds and its artifacts, read back through MLflow's REST API (the server named by
//! `--mlflow`, then by the configuration file's `[mlflow]` table); logging the same run again
//! creates no second MLflow run; `compare` names the MLflow runs of the runs it compares;
//! an unreachable server leaves the run whole with the cause and a hint.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::trace_servers::{TraceServer, block_on, rest_client};
use crate::{rageval, repo_root, stderr, stdout};

fn eval(dir: &std::path::Path, out: &str, extra: &[&str]) -> std::process::Output {
    let data = repo_root().join("examples/fiqa-30.jsonl");
    let mut args = vec![
        "eval",
        data.to_str().unwrap(),
        "--judge",
        "heuristic",
        "--metrics",
        "faithfulness,context_precision",
        "--samples",
        "6",
        "--out",
        out,
    ];
    args.extend(extra);
    rageval(dir, &args)
}

fn api(server: &TraceServer, path: &str, query: &[(&str, String)]) -> Value {
    block_on(rest_client(&server.url).get_json(&format!("api/2.0/{path}"), query)).unwrap()
}

fn record(run: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(run.join("mlflow.json")).unwrap()).unwrap()
}

#[test]
fn a_run_is_logged_to_mlflow_with_params_metrics_and_artifacts() {
    let Some(server) = TraceServer::start(
        "mlflow",
        "a_run_is_logged_to_mlflow_with_params_metrics_and_artifacts",
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let logged = eval(
        dir.path(),
        "run-a",
        &["--mlflow", &server.url, "--name", "V1"],
    );
    let err = stderr(&logged);
    assert!(logged.status.success(), "{err}\n{}", server.log());
    let record_a = record(&dir.path().join("run-a"));
    let run_id = record_a["run_id"].as_str().unwrap().to_owned();
    assert!(
        err.contains(&format!("logged to MLflow at {}: experiment", server.url)),
        "{err}"
    );
    assert!(err.contains(&run_id), "{err}");

    let run = api(&server, "mlflow/runs/get", &[("run_id", run_id.clone())]);
    assert_eq!(run["run"]["info"]["status"], "FINISHED");
    assert_eq!(run["run"]["info"]["run_name"], "V1");
    let pairs = |list: &Value| -> BTreeMap<String, Value> {
        list.as_array()
            .unwrap()
            .iter()
            .map(|kv| (kv["key"].as_str().unwrap().to_owned(), kv["value"].clone()))
            .collect()
    };
    let params = pairs(&run["run"]["data"]["params"]);
    assert_eq!(params["metrics"], "faithfulness,context_precision");
    assert_eq!(params["judge"], "heuristic");
    assert_eq!(params["samples"], "6");
    let summary: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("run-a/summary.json")).unwrap(),
    )
    .unwrap();
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("run-a/manifest.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(params["dataset_sha256"], manifest["dataset"]["sha256"]);
    let metrics = pairs(&run["run"]["data"]["metrics"]);
    for (name, key) in [
        ("faithfulness", "faithfulness"),
        ("context_precision", "context_precision"),
    ] {
        let figures = &summary["metrics"][name];
        assert_eq!(metrics[key], figures["mean"], "{name}");
        assert_eq!(
            metrics[&format!("{key}.ci95_lower")],
            figures["ci95"][0],
            "{name}"
        );
        assert_eq!(
            metrics[&format!("{key}.ci95_upper")],
            figures["ci95"][1],
            "{name}"
        );
        assert_eq!(
            metrics[&format!("{key}.n_scored")],
            json!(figures["n_scored"].as_f64().unwrap())
        );
    }
    let listed = api(
        &server,
        "mlflow/artifacts/list",
        &[("run_id", run_id.clone())],
    );
    let files: Vec<&str> = listed["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    for name in [
        "summary.json",
        "manifest.json",
        "report.md",
        "report.html",
        "results.xlsx",
    ] {
        assert!(files.contains(&name), "{name} not in {files:?}");
    }
    let experiment = record_a["experiment_id"].as_str().unwrap();
    let downloaded = block_on(rest_client(&server.url).send(
        rageval_sources::rest::Method::GET,
        &format!("api/2.0/mlflow-artifacts/artifacts/{experiment}/{run_id}/artifacts/summary.json"),
        &[],
        rageval_sources::rest::Body::Empty,
    ))
    .unwrap();
    assert_eq!(
        downloaded,
        std::fs::read(dir.path().join("run-a/summary.json")).unwrap()
    );

    // The same run logged again: no second MLflow run.
    let again = eval(
        dir.path(),
        "run-a",
        &["--mlflow", &server.url, "--name", "V1"],
    );
    assert!(
        stderr(&again).contains("already logged to MLflow"),
        "{}",
        stderr(&again)
    );
    let again = rageval(
        dir.path(),
        &["export", "mlflow", "run-a", "--mlflow", &server.url],
    );
    assert!(again.status.success(), "{}", stderr(&again));
    let searched = block_on(rest_client(&server.url).json(
        rageval_sources::rest::Method::POST,
        "api/2.0/mlflow/runs/search",
        &[],
        rageval_sources::rest::Body::Json(&json!({"experiment_ids": [experiment]})),
    ))
    .unwrap();
    assert_eq!(searched["runs"].as_array().unwrap().len(), 1, "{searched}");

    // `compare` names the MLflow run of each run it compares. This run finds the server in
    // the `[mlflow]` table of the configuration file instead of a flag.
    std::fs::write(
        dir.path().join("rageval.toml"),
        format!("[mlflow]\ntracking_uri = \"{}\"\n", server.url),
    )
    .unwrap();
    let second = eval(dir.path(), "run-b", &["--name", "V2", "--top-k", "1"]);
    assert!(second.status.success(), "{}", stderr(&second));
    let run_b = record(&dir.path().join("run-b"))["run_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let compared = rageval(dir.path(), &["compare", "run-a", "run-b"]);
    let text = stdout(&compared);
    assert!(compared.status.success(), "{}", stderr(&compared));
    assert!(
        text.contains(&format!("V1: {run_id}")) && text.contains(&format!("V2: {run_b}")),
        "{text}"
    );
}

#[test]
fn an_unreachable_mlflow_leaves_the_run_whole_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let output = eval(dir.path(), "run", &["--mlflow", &url]);
    let err = stderr(&output);
    assert!(output.status.success(), "{err}");
    assert!(
        err.contains(&format!("cannot log the run to MLflow at {url}")),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "hint: nothing answers at {url}: start the tracking server"
        )),
        "{err}"
    );
    assert!(dir.path().join("run/summary.json").is_file());
    let failed = rageval(dir.path(), &["export", "mlflow", "run", "--mlflow", &url]);
    assert_eq!(failed.status.code(), Some(2), "{}", stderr(&failed));
}
