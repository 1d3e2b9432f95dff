//! The server driven in-process with `oneshot` (axum's testing pattern: a `Router` is a
//! tower service) over real run directories, plus one test over a real socket.

#![allow(clippy::unwrap_used)]

mod api;
mod defences;
mod pages;
mod positions;
mod s3_runs;
mod security;
mod socket;

use std::path::Path;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use rageval_report::testing::{scores, write_run};
use rageval_report::{DatasetInfo, Manifest, RunDir};
use rageval_server::{AppState, RunsRoot, Token, app};
use tempfile::TempDir;
use tower::ServiceExt;

/// A request to each route of the app over [`fixture`] (and to a path no route has), so a
/// test can ask every one: pages, the API, and the fallback.
pub const ROUTES: [&str; 9] = [
    "/",
    "/runs/base",
    "/runs/base/report",
    "/compare?run=base&run=shifted",
    "/api/runs",
    "/api/runs/base",
    "/api/runs/base/samples",
    "/api/compare?run=base&run=shifted",
    "/nowhere",
];

/// What a file outside the runs directory holds; no answer may ever contain it.
pub const SECRET: &str = "the secret outside the root";

/// A temporary directory holding `runs/` (the root) and, beside it, `secret.txt` and
/// `outside/` (a complete run outside the root). In `runs/`:
/// - `base`, `shifted` (base + 0.1 on faithfulness), over dataset `d1`;
/// - `other-data`, over dataset `d2`;
/// - `running`, a run that never finished; `broken`, whose manifest is not JSON;
/// - `.hidden`, a run in a hidden directory; `not-a-run`, a directory without manifest;
/// - `escape` → `../outside` and `leaky` (its journal → `../../outside/results.jsonl`):
///   symlinks out of the root; `alias` → `base`, a symlink that stays inside.
pub fn fixture() -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("runs");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(dir.path().join("secret.txt"), SECRET).unwrap();
    write_run(&root.join("base"), "d1", &scores(0.0));
    write_run(&root.join("shifted"), "d1", &scores(0.1));
    write_run(&root.join("other-data"), "d2", &scores(0.0));
    write_run(&root.join(".hidden"), "d1", &scores(0.0));
    write_run(&dir.path().join("outside"), "d1", &scores(0.0));
    std::fs::write(
        dir.path().join("outside").join("results.jsonl"),
        format!(
            "{{\"sample_id\":\"{SECRET}\",\"metric\":\"m\",\"status\":\"score\",\"value\":1}}\n"
        ),
    )
    .unwrap();
    let running = RunDir::create(&root.join("running"), false).unwrap();
    running.write_manifest(&manifest()).unwrap();
    std::fs::create_dir(root.join("broken")).unwrap();
    std::fs::write(root.join("broken").join("manifest.json"), "{not json").unwrap();
    std::fs::create_dir(root.join("not-a-run")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::symlink;
        symlink(dir.path().join("outside"), root.join("escape")).unwrap();
        symlink(root.join("base"), root.join("alias")).unwrap();
        write_run(&root.join("leaky"), "d1", &scores(0.0));
        std::fs::remove_file(root.join("leaky").join("results.jsonl")).unwrap();
        symlink(
            dir.path().join("outside").join("results.jsonl"),
            root.join("leaky").join("results.jsonl"),
        )
        .unwrap();
    }
    dir
}

fn manifest() -> Manifest {
    Manifest::start(
        "eval",
        DatasetInfo {
            path: "data.jsonl".into(),
            sha256: "d1".into(),
            format: "jsonl".into(),
            samples: None,
        },
        Vec::new(),
        serde_json::json!({}),
    )
}

/// The app over `fixture`'s runs, with an optional token.
pub fn server(fixture: &Path, token: Option<&str>) -> Router {
    let runs = RunsRoot::open(&fixture.join("runs")).unwrap();
    app(AppState::new(runs, token.map(|t| Token::new(t).unwrap())))
}

/// A response's status, headers and body as text.
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: String,
}

impl Answer {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }

    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .map_or("", |v| v.to_str().unwrap_or(""))
    }
}

/// Sends `request` through the app, as a server would.
pub async fn send(app: &Router, request: Request<Body>) -> Answer {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    Answer {
        status,
        headers,
        body: String::from_utf8(bytes.to_vec()).unwrap(),
    }
}

/// The `Host` a browser on this machine sends (every route refuses other hosts).
pub const LOOPBACK_HOST: &str = "127.0.0.1:8321";

/// `GET uri` as a browser on this machine sends it.
pub fn get_request(uri: &str) -> axum::http::request::Builder {
    Request::get(uri).header(axum::http::header::HOST, LOOPBACK_HOST)
}

/// `GET uri`, from this machine.
pub async fn get(app: &Router, uri: &str) -> Answer {
    send(app, get_request(uri).body(Body::empty()).unwrap()).await
}
