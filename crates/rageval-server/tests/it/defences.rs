//! Regressions of issue 40's `serve` items, each tried as a hostile web page or client
//! would: another `Host` (DNS rebinding, item 3), requests that ask for unbounded work
//! (item 4), a run file linked out of the runs directory and the machine's absolute paths
//! in answers (item 8), and a token login that redirects off the site (item 9).

use std::path::Path;

use axum::body::Body;
use axum::http::{Request, StatusCode, Uri, header};
use rageval_core::Outcome;
use rageval_report::testing::{scores, write_run};
use serde_json::{Value, json};

use crate::{ROUTES, SECRET, fixture, get, send, server};

fn with_host(method: &str, uri: &str, host: &str) -> Request<Body> {
    Request::builder()
        .method(method)
        .uri(uri)
        .header(header::HOST, host)
        .body(Body::empty())
        .unwrap()
}

/// Issue 40, item 3: a page on `evil.example`, whose name the attacker points at 127.0.0.1
/// (DNS rebinding), read every run of a loopback server without a token. Every route now
/// answers only requests that name a loopback host.
#[tokio::test]
async fn issue_40_3_every_route_refuses_a_host_that_is_not_loopback() {
    let dir = fixture();
    for token in [None, Some("s3cret")] {
        let app = server(dir.path(), token);
        for uri in ROUTES {
            for method in ["GET", "POST"] {
                for host in [
                    "evil.example",
                    "evil.example:8321",
                    "127.0.0.1.evil.example",
                ] {
                    let answer = send(&app, with_host(method, uri, host)).await;
                    assert_eq!(
                        answer.status,
                        StatusCode::FORBIDDEN,
                        "{method} {uri} with Host {host}: {}",
                        answer.body
                    );
                    assert!(
                        answer.body.contains("answers only at a loopback address"),
                        "{method} {uri}: {}",
                        answer.body
                    );
                    assert!(!answer.body.contains("faithfulness"), "{uri} leaked a run");
                }
            }
        }
    }
    let app = server(dir.path(), None);
    for host in [
        "127.0.0.1:8321",
        "localhost:8321",
        "LOCALHOST",
        "[::1]:8321",
        "127.0.0.2",
    ] {
        let answer = send(&app, with_host("GET", "/api/runs", host)).await;
        assert_eq!(
            answer.status,
            StatusCode::OK,
            "Host {host}: {}",
            answer.body
        );
    }
    // A request that names no host at all is no browser's: refused too.
    let bare = Request::get("/api/runs").body(Body::empty()).unwrap();
    assert_eq!(send(&app, bare).await.status, StatusCode::FORBIDDEN);
}

/// `root/name`: `samples` samples `s0`… with a score of `i / samples + shift` (at most 1)
/// for each of `metrics`.
fn big_run(root: &Path, name: &str, samples: usize, metrics: &[&'static str], shift: f64) {
    let mut results: Vec<(String, &str, Outcome)> = Vec::new();
    for i in 0..samples {
        let value = (i as f64 / samples as f64 + shift).min(1.0);
        for metric in metrics {
            results.push((format!("s{i}"), metric, Outcome::bare(value)));
        }
    }
    write_run(&root.join(name), "big", &results);
}

/// Issue 40, item 4: `/api/runs/NAME/samples` had no cap on `limit` (100,000 samples in
/// one answer took 2.3 GiB) and no default page. An answer now holds at most 1,000
/// samples (100 unless asked), says where the next page starts, and paging through it
/// with `offset` yields every sample once.
#[tokio::test]
async fn issue_40_4_samples_come_in_capped_pages() {
    let dir = fixture();
    big_run(&dir.path().join("runs"), "big", 2_500, &["m"], 0.0);
    let app = server(dir.path(), None);
    let refused = get(&app, "/api/runs/big/samples?limit=100000").await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.body);
    assert!(
        refused.json()["error"]
            .as_str()
            .unwrap()
            .contains("bad query parameter `limit=100000`: expected 1 to 1000"),
        "{}",
        refused.body
    );
    let first = get(&app, "/api/runs/big/samples").await.json();
    assert_eq!(first["samples"].as_array().unwrap().len(), 100, "{first}");
    assert_eq!(
        (first["total"].as_u64(), first["matched"].as_u64()),
        (Some(2_500), Some(2_500))
    );
    assert_eq!(
        (first["limit"].as_u64(), first["next_offset"].as_u64()),
        (Some(100), Some(100))
    );

    let mut seen = std::collections::HashSet::new();
    let mut offset = Some(0);
    let mut pages = 0;
    while let Some(at) = offset {
        let page = get(
            &app,
            &format!("/api/runs/big/samples?offset={at}&limit=1000"),
        )
        .await
        .json();
        for sample in page["samples"].as_array().unwrap() {
            assert!(seen.insert(sample["sample_id"].as_str().unwrap().to_owned()));
        }
        offset = page["next_offset"].as_u64();
        pages += 1;
    }
    assert_eq!((seen.len(), pages), (2_500, 3));
}

/// Issue 40, item 4: `/api/compare` at the allowed 100,000 resamples and permutations ran
/// for 13 minutes of CPU. A comparison whose draws times samples passes the budget (here
/// 2 metrics × 3,000 samples × 200,000 draws = 1.2 billion) is refused before any is
/// drawn, naming the budget and what to lower.
#[tokio::test]
async fn issue_40_4_a_comparison_past_the_work_budget_is_refused_before_it_starts() {
    let dir = fixture();
    let root = dir.path().join("runs");
    let metrics = ["faithfulness", "answer_relevancy"];
    big_run(&root, "big", 3_000, &metrics, 0.0);
    big_run(&root, "big2", 3_000, &metrics, 0.1);
    let app = server(dir.path(), None);
    for uri in [
        "/api/compare?run=big&run=big2&resamples=100000&permutations=100000",
        "/compare?run=big&run=big2&resamples=100000&permutations=100000",
    ] {
        let answer = get(&app, uri).await;
        assert_eq!(
            answer.status,
            StatusCode::BAD_REQUEST,
            "{uri}: {}",
            answer.body
        );
        assert!(
            answer.body.contains("would draw 1200000000 samples")
                && answer
                    .body
                    .contains("past the budget of one request, 1000000000")
                && answer
                    .body
                    .contains("at most 166666 resamples and permutations together")
                && answer.body.contains("rageval compare"),
            "{uri}: {}",
            answer.body
        );
    }
    // The manifests' counts refuse it before a journal is read: one that does not parse is
    // never reached.
    big_run(&root, "unread", 3_000, &metrics, 0.0);
    std::fs::write(root.join("unread/results.jsonl"), "not a journal\n").unwrap();
    let early = get(
        &app,
        "/api/compare?run=big&run=unread&resamples=100000&permutations=100000",
    )
    .await;
    assert_eq!(early.status, StatusCode::BAD_REQUEST, "{}", early.body);
    assert!(early.body.contains("past the budget"), "{}", early.body);
    // Within the budget the same comparison runs (fewer draws than the defaults, to keep
    // the test short: 2 × 3,000 × 2,000 = 12 million).
    let fits = get(
        &app,
        "/api/compare?run=big&run=big2&resamples=1000&permutations=1000",
    )
    .await;
    assert_eq!(fits.status, StatusCode::OK, "{}", fits.body);
}

/// `runs/judged`: a complete run whose `agreement.json` is a link to a file outside the
/// runs directory holding [`SECRET`] in an agreement's shape.
#[cfg(unix)]
fn judged_run_linked_out(dir: &Path) {
    let outside = dir.join("agreement.json");
    let agreement = json!({
        "shape": "binary", "items": 1, "unscored": 0,
        "figures": {}, "counts": {}, "notes": {"warning": SECRET}, "verdicts": [],
    });
    std::fs::write(&outside, agreement.to_string()).unwrap();
    let run = dir.join("runs/judged");
    write_run(&run, "d1", &scores(0.0));
    std::os::unix::fs::symlink(&outside, run.join("agreement.json")).unwrap();
}

/// Issue 40, item 8: `serve` followed a symlinked `agreement.json` out of the runs folder
/// and served it; the docs promise a 404, as for every other run file linked out.
#[cfg(unix)]
#[tokio::test]
async fn issue_40_8_a_run_file_linked_out_of_the_root_is_not_served() {
    let dir = fixture();
    judged_run_linked_out(dir.path());
    let app = server(dir.path(), None);
    for uri in [
        "/api/runs/judged",
        "/api/runs/judged/samples",
        "/runs/judged",
        "/runs/judged/report",
        "/api/compare?run=base&run=judged",
    ] {
        let answer = get(&app, uri).await;
        assert_eq!(
            answer.status,
            StatusCode::NOT_FOUND,
            "{uri}: {}",
            answer.body
        );
        assert!(
            !answer.body.contains(SECRET),
            "{uri} served the file outside"
        );
    }
    let listing = get(&app, "/api/runs").await;
    assert!(!listing.body.contains(SECRET), "{}", listing.body);
}

/// Every string in `value`, with where it is.
fn strings<'v>(value: &'v Value, at: String, out: &mut Vec<(String, &'v str)>) {
    match value {
        Value::String(text) => out.push((at, text)),
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                strings(item, format!("{at}[{index}]"), out);
            }
        }
        Value::Object(fields) => {
            for (key, item) in fields {
                strings(item, format!("{at}.{key}"), out);
            }
        }
        _ => {}
    }
}

/// Issue 40, item 8: `/api/runs/NAME` returned the machine's absolute paths (the answer
/// cache, the embedded models' folders, a GGUF judge's file). A run whose manifest, summary
/// and journal name such paths is served with none of them, on every JSON answer and page.
#[tokio::test]
async fn issue_40_8_no_answer_holds_an_absolute_path_of_the_machine() {
    let dir = fixture();
    let machine = dir.path().display().to_string();
    let models = dir.path().join("models");
    let gguf = models.join("qwen2.5-0.5b.gguf");
    let run = dir.path().join("runs/paths");
    let mut results = scores(0.0);
    results[2].2 = Outcome::failed(format!(
        "cannot load the embedding model: {}/config.json: No such file or directory",
        models.join("all-MiniLM-L6-v2").display()
    ));
    write_run(&run, "d1", &results);
    let manifest_path = run.join("manifest.json");
    let mut manifest: Value =
        serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
    manifest["dataset"]["path"] = json!(dir.path().join("data/kids.jsonl"));
    manifest["settings"] = json!({
        "out": run,
        "judge": {
            "kind": "local",
            "cache": dir.path().join(".cache/rageval/answers.sqlite"),
            "models": {
                "chat_model": gguf,
                "embedding_model": models.join("all-MiniLM-L6-v2"),
                "embedding_model_zh": models.join("multilingual-e5-small"),
                "missing": [],
            },
            "checker": {"model": models.join("minicheck")},
        },
    });
    manifest["metrics"][0]["judges"] = json!([{
        "task": "support_verdicts",
        "answered_by": format!("llm gguf:{}", gguf.display()),
        "measured": [],
    }]);
    std::fs::write(&manifest_path, manifest.to_string()).unwrap();
    let app = server(dir.path(), None);
    for uri in [
        "/api/runs",
        "/api/runs/paths",
        "/api/runs/paths/samples",
        "/api/runs/paths/samples?metric=faithfulness&status=failed",
        "/api/compare?run=paths&run=base",
    ] {
        let answer = get(&app, uri).await;
        assert_eq!(answer.status, StatusCode::OK, "{uri}: {}", answer.body);
        let json = answer.json();
        let mut found = Vec::new();
        strings(&json, String::new(), &mut found);
        for (at, text) in found {
            assert!(
                !text.contains(&machine) && !Path::new(text).is_absolute(),
                "{uri} {at}: {text}"
            );
        }
    }
    // What the paths were is still told, by their last name.
    let served = get(&app, "/api/runs/paths").await.json();
    assert_eq!(
        served["manifest"]["settings"]["judge"]["cache"],
        "answers.sqlite"
    );
    assert_eq!(
        served["manifest"]["metrics"][0]["judges"][0]["answered_by"],
        "llm gguf:qwen2.5-0.5b.gguf"
    );
    for uri in [
        "/",
        "/runs/paths",
        "/runs/paths/report",
        "/compare?run=paths&run=base",
    ] {
        let answer = get(&app, uri).await;
        assert_eq!(answer.status, StatusCode::OK, "{uri}: {}", answer.body);
        assert!(!answer.body.contains(&machine), "{uri} shows {machine}");
    }
}

/// Issue 40, item 9: `//evil.example/?token=T` answered 303 to `//evil.example/`, which a
/// browser reads as another site. The login redirect goes to a path on this server only.
#[tokio::test]
async fn issue_40_9_the_token_login_redirects_to_a_local_path_only() {
    let dir = fixture();
    let app = server(dir.path(), Some("s3cret"));
    for (path, expected) in [
        ("//evil.example/?token=s3cret", "/evil.example/"),
        (
            "///evil.example/x?token=s3cret&metric=m",
            "/evil.example/x?metric=m",
        ),
        ("/runs/base?token=s3cret", "/runs/base"),
    ] {
        let uri = Uri::builder().path_and_query(path).build().unwrap();
        let request = Request::get(uri)
            .header(header::HOST, "127.0.0.1:8321")
            .body(Body::empty())
            .unwrap();
        let answer = send(&app, request).await;
        assert_eq!(answer.status, StatusCode::SEE_OTHER, "{path}");
        let location = answer.header("location");
        assert_eq!(location, expected, "{path}");
        assert!(
            location.starts_with('/') && !location.starts_with("//"),
            "{location}"
        );
    }
}
