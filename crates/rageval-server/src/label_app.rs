//! The labelling page's routes and its server.
//!
//! - `GET /`: the page (`label_page`); `GET /label.js`: its script;
//! - `GET /api/state`: the items in labelling order, the labels saved, and the judge's
//!   outcome for labelled items only; `start`, the first item without a label;
//! - `POST /api/labels` (`{"id", "label"}`, JSON): saves a label and answers with the
//!   judge's outcome for that item.
//!
//! Requests must name a loopback host at this server's port (`host`: a page on another
//! site cannot reach it through a DNS name that points at 127.0.0.1, nor post from its own
//! origin), and a label must be posted as JSON (which a form on another site cannot send
//! without the browser asking first).

use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::map_response;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use rageval_core::Sample;
use rageval_report::RunData;
use serde_json::{Value, json};

use crate::api::json_response;
use crate::host::{HostRule, guard_hosts};
use crate::label::{LabelError, LabelOptions, LabelScale, LabelValue, Session, prepare};
use crate::runs::error_chain;
use crate::{ServerError, label_page};

/// The page's script, served from this server (the policy allows no inline script).
const SCRIPT: &str = include_str!("label_page.js");

const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     connect-src 'self'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; \
     form-action 'none'; frame-ancestors 'none'";

#[derive(Debug, Clone)]
struct LabelState {
    session: Arc<Mutex<Session>>,
    /// The hosts this server answers: loopback names at its own port.
    hosts: HostRule,
}

impl LabelState {
    fn session(&self) -> MutexGuard<'_, Session> {
        // A handler that panicked mid-save left the file whole (it is replaced by rename),
        // so the session is still usable.
        self.session
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// What a labelling session is, for the terminal.
#[derive(Debug, Clone)]
pub struct LabelSessionInfo {
    pub url: String,
    pub metric: String,
    pub scale: LabelScale,
    pub items: usize,
    /// Items that already have a label (a resumed session).
    pub labelled: usize,
    pub labels_file: PathBuf,
    /// The commands that read the labels file (calibrate, judge-check).
    pub next_commands: Vec<String>,
}

/// The labelling page, bound to its socket.
#[derive(Debug)]
pub struct LabelServer {
    listener: TcpListener,
    state: LabelState,
    addr: SocketAddr,
}

/// Prepares a labelling session over the finished `run` (with its dataset's `samples`)
/// and binds `options.bind`, a loopback address.
pub fn label_server(
    run: &RunData,
    samples: &[Sample],
    options: &LabelOptions,
) -> Result<LabelServer, LabelError> {
    if !options.bind.ip().is_loopback() {
        return Err(LabelError::NotLoopback { addr: options.bind });
    }
    let session = prepare(run, samples, options)?;
    if let Some(parent) = session.file.path().parent() {
        std::fs::create_dir_all(parent).map_err(|source| LabelError::Write {
            path: session.file.path().to_path_buf(),
            source,
        })?;
    }
    let (listener, addr) = bind_loopback(options.bind)?;
    Ok(LabelServer {
        listener,
        addr,
        state: LabelState {
            session: Arc::new(Mutex::new(session)),
            hosts: HostRule::for_address(addr),
        },
    })
}

/// Binds `bind` (a loopback address) for a page, not blocking, with the address it got.
pub(crate) fn bind_loopback(bind: SocketAddr) -> Result<(TcpListener, SocketAddr), ServerError> {
    let bind_error = |source| ServerError::Bind { addr: bind, source };
    let listener = TcpListener::bind(bind).map_err(bind_error)?;
    listener.set_nonblocking(true).map_err(bind_error)?;
    let addr = listener.local_addr().map_err(ServerError::Serve)?;
    Ok((listener, addr))
}

/// `routes` as every loopback page serves them: a JSON answer for an unknown path, only
/// requests `hosts` allows, and the security headers.
pub(crate) fn loopback_page(routes: Router, hosts: HostRule) -> Router {
    let routes = routes.fallback(|| async { error(StatusCode::NOT_FOUND, "no such page".into()) });
    guard_hosts(routes, hosts).layer(map_response(security_headers))
}

/// A posted body as JSON, refused (with the status to answer) unless sent as
/// `application/json`.
pub(crate) fn json_body(
    headers: &HeaderMap,
    body: &Bytes,
    what: &str,
) -> Result<Value, (StatusCode, String)> {
    let is_json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !is_json {
        return Err((
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!("{what} is posted as application/json"),
        ));
    }
    serde_json::from_slice(body)
        .map_err(|why| (StatusCode::BAD_REQUEST, format!("not JSON: {why}")))
}

impl LabelServer {
    pub fn info(&self) -> LabelSessionInfo {
        let session = self.state.session();
        LabelSessionInfo {
            url: format!("http://{}/", self.addr),
            metric: session.metric.clone(),
            scale: session.scale,
            items: session.items.len(),
            labelled: (0..session.items.len())
                .filter(|&i| session.label(i).is_some())
                .count(),
            labels_file: session.file.path().to_path_buf(),
            next_commands: session.next_commands(),
        }
    }

    /// Serves until the process ends.
    pub fn run(self) -> Result<(), ServerError> {
        crate::app::serve_forever(self.listener, router(self.state))
    }
}

fn router(state: LabelState) -> Router {
    let hosts = state.hosts;
    let routes = Router::new()
        .route("/", get(page))
        .route("/label.js", get(script))
        .route("/api/state", get(api_state))
        .route("/api/labels", post(save_label))
        .with_state(state);
    loopback_page(routes, hosts)
}

pub(crate) fn error(status: StatusCode, message: String) -> Response {
    let mut response = json_response(&json!({ "error": message }));
    *response.status_mut() = status;
    response
}

async fn security_headers(response: Response) -> Response {
    crate::app::with_security_headers(response, CONTENT_SECURITY_POLICY)
}

async fn page(State(state): State<LabelState>) -> Html<String> {
    Html(label_page::render(&state.session()))
}

async fn script() -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        SCRIPT,
    )
        .into_response()
}

async fn api_state(State(state): State<LabelState>) -> Response {
    let session = state.session();
    let items: Vec<Value> = session
        .items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let label = session.label(index);
            json!({
                "item": item,
                "label": label.map(LabelValue::to_json),
                // The judge's outcome only once the person has said theirs.
                "judge": label.map(|_| &session.judged[index]),
            })
        })
        .collect();
    json_response(&json!({
        "run": session.run,
        "metric": session.metric,
        "scale": session.scale,
        "top_grade": LabelScale::TOP_GRADE,
        "labeller": session.labeller,
        "language": session.language,
        "stratify": session.stratify,
        "labels_file": session.file.path().display().to_string(),
        "next_commands": session.next_commands(),
        "start": session.resume_at(),
        "items": items,
        "text": label_page::script_text(session.language),
    }))
}

async fn save_label(State(state): State<LabelState>, headers: HeaderMap, body: Bytes) -> Response {
    let request = match json_body(&headers, &body, "a label") {
        Ok(value) => value,
        Err((status, message)) => return error(status, message),
    };
    let saved = tokio::task::spawn_blocking(move || {
        let mut session = state.session();
        let id = request["id"].as_str().unwrap_or_default();
        let index = session
            .items
            .iter()
            .position(|item| item.id == id)
            .ok_or_else(|| {
                (
                    StatusCode::NOT_FOUND,
                    format!("no item `{id}` in this session"),
                )
            })?;
        let label = LabelValue::of_json(&request["label"], session.scale).ok_or_else(|| {
            (
                StatusCode::BAD_REQUEST,
                format!(
                    "field `label`: `{}` is not a {} label",
                    request["label"],
                    session.scale.name()
                ),
            )
        })?;
        let line = session.items[index].line(&session, label);
        session
            .file
            .set(id, line)
            .map_err(|e| (StatusCode::INTERNAL_SERVER_ERROR, error_chain(&e)))?;
        Ok::<_, (StatusCode, String)>(json!({
            "index": index,
            "label": label.to_json(),
            "judge": session.judged[index],
            "labelled": session.file.len(),
        }))
    })
    .await;
    match saved {
        Ok(Ok(body)) => json_response(&body),
        Ok(Err((status, message))) => error(status, message),
        Err(join) => error(StatusCode::INTERNAL_SERVER_ERROR, join.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::extract::Request;
    use tower::ServiceExt;

    use super::*;
    use crate::label::tests::run_and_samples;

    async fn ask(
        server: &LabelServer,
        request: axum::http::request::Builder,
        body: &str,
    ) -> (StatusCode, Value) {
        let request = request
            .header(header::HOST, server.addr.to_string())
            .body(Body::from(body.to_owned()))
            .unwrap();
        let response = router(server.state.clone()).oneshot(request).await.unwrap();
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        (
            status,
            serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        )
    }

    fn post(label: Value, id: &str) -> (axum::http::request::Builder, String) {
        (
            Request::post("/api/labels").header(header::CONTENT_TYPE, "application/json"),
            json!({"id": id, "label": label}).to_string(),
        )
    }

    #[tokio::test]
    async fn the_judge_is_sent_only_for_labelled_items_and_labels_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let (run, samples) = run_and_samples(dir.path());
        let mut options = LabelOptions::new("lin");
        options.bind = SocketAddr::from(([127, 0, 0, 1], 0));
        let server = label_server(&run, &samples, &options).unwrap();
        let (status, state) = ask(&server, Request::get("/api/state"), "").await;
        assert_eq!(status, StatusCode::OK);
        let items = state["items"].as_array().unwrap();
        assert!(
            items
                .iter()
                .all(|i| i["judge"].is_null() && i["label"].is_null())
        );
        let first = items[0]["item"]["id"].as_str().unwrap().to_owned();

        let (request, body) = post(json!(4), &first);
        let (status, saved) = ask(&server, request, &body).await;
        assert_eq!(status, StatusCode::OK, "{saved}");
        assert_eq!(saved["judge"]["status"], "score");
        let (_, state) = ask(&server, Request::get("/api/state"), "").await;
        assert_eq!(state["start"], 1);
        assert_eq!(state["items"][0]["label"], 4);
        assert_eq!(state["items"][0]["judge"]["status"], "score");
        assert!(state["items"][1]["judge"].is_null());

        for (label, id, expected) in [
            (json!(6), first.as_str(), StatusCode::BAD_REQUEST),
            (json!(true), first.as_str(), StatusCode::BAD_REQUEST),
            (json!(3), "not-an-item", StatusCode::NOT_FOUND),
        ] {
            let (request, body) = post(label, id);
            assert_eq!(ask(&server, request, &body).await.0, expected);
        }
        // Not JSON (a form another site could send), or another Host: refused.
        let form = Request::post("/api/labels").header(header::CONTENT_TYPE, "text/plain");
        let (_, body) = post(json!(3), &first);
        assert_eq!(
            ask(&server, form, &body).await.0,
            StatusCode::UNSUPPORTED_MEDIA_TYPE
        );
        let request = Request::get("/api/state")
            .header(header::HOST, "attacker.example:80")
            .body(Body::empty())
            .unwrap();
        let response = router(server.state.clone()).oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::FORBIDDEN);
        // A label posted from a page of another origin: refused before it is read.
        let (request, body) = post(json!(2), &first);
        let elsewhere = request.header(header::ORIGIN, "http://attacker.example");
        assert_eq!(
            ask(&server, elsewhere, &body).await.0,
            StatusCode::FORBIDDEN
        );
        assert_eq!(server.info().labelled, 1);
    }
}
