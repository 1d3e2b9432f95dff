//! The review page of a generated test set (`rageval label TESTSET.jsonl`), its routes and
//! its server, on loopback under the labelling page's rules (loopback `Host` and `Origin`
//! at its own port only, decisions posted as JSON, the same content policy):
//!
//! - `GET /`: the page (`review_page`); `GET /review.js`: its script;
//! - `GET /api/state`: the items in the set's order with their decisions, and `start`, the
//!   first item without one;
//! - `POST /api/decisions` (`{"id", "decision": "accept" | "edit" | "reject", "reference",
//!   "question", "reason"}`): saves a decision to the review file.
//!
//! It writes the review file and nothing else.

use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use crate::api::json_response;
use crate::host::HostRule;
use crate::label::LabelError;
use crate::label_app::{bind_loopback, error, json_body, loopback_page};
use crate::review::{Decision, ReviewFile, Testset};
use crate::runs::error_chain;
use crate::{ServerError, review_page};

/// The page's script, served from this server (the policy allows no inline script).
const SCRIPT: &str = include_str!("review_page.js");

/// A test set under review and its decisions so far.
#[derive(Debug)]
pub(crate) struct ReviewSession {
    pub set: Testset,
    pub file: ReviewFile,
    pub reviewer: String,
}

impl ReviewSession {
    /// The first item without a decision (the number of items when all have one).
    pub(crate) fn resume_at(&self) -> usize {
        self.set
            .items
            .iter()
            .position(|item| self.file.get(&item.id).is_none())
            .unwrap_or(self.set.items.len())
    }

    /// The command that reads the review back.
    pub(crate) fn summary_command(&self) -> String {
        format!(
            "rageval label {} --labeller {} --labels {} --summary",
            self.set.path.display(),
            self.reviewer,
            self.file.path().display()
        )
    }
}

#[derive(Debug, Clone)]
struct ReviewState {
    session: Arc<Mutex<ReviewSession>>,
    hosts: HostRule,
}

impl ReviewState {
    fn session(&self) -> MutexGuard<'_, ReviewSession> {
        // The file is replaced by rename, so a handler that panicked mid-save left it whole.
        self.session
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// What a review session is, for the terminal.
#[derive(Debug, Clone)]
pub struct ReviewSessionInfo {
    pub url: String,
    pub items: usize,
    /// Items that already have a decision (a resumed session).
    pub decided: usize,
    pub review_file: PathBuf,
    pub summary_command: String,
}

/// The review page, bound to its socket.
#[derive(Debug)]
pub struct ReviewServer {
    listener: TcpListener,
    state: ReviewState,
    addr: SocketAddr,
}

/// Binds `bind`, a loopback address, for `reviewer`'s review of `set` into `file`.
pub fn review_server(
    set: Testset,
    file: ReviewFile,
    reviewer: &str,
    bind: SocketAddr,
) -> Result<ReviewServer, LabelError> {
    if !bind.ip().is_loopback() {
        return Err(LabelError::NotLoopback { addr: bind });
    }
    let (listener, addr) = bind_loopback(bind)?;
    let session = ReviewSession {
        set,
        file,
        reviewer: reviewer.to_owned(),
    };
    Ok(ReviewServer {
        listener,
        addr,
        state: ReviewState {
            session: Arc::new(Mutex::new(session)),
            hosts: HostRule::for_address(addr),
        },
    })
}

impl ReviewServer {
    pub fn info(&self) -> ReviewSessionInfo {
        let session = self.state.session();
        ReviewSessionInfo {
            url: format!("http://{}/", self.addr),
            items: session.set.items.len(),
            decided: session.file.len(),
            review_file: session.file.path().to_path_buf(),
            summary_command: session.summary_command(),
        }
    }

    /// Serves until the process ends.
    pub fn run(self) -> Result<(), ServerError> {
        crate::app::serve_forever(self.listener, router(self.state))
    }
}

fn router(state: ReviewState) -> Router {
    let hosts = state.hosts;
    let routes = Router::new()
        .route("/", get(page))
        .route("/review.js", get(script))
        .route("/api/state", get(api_state))
        .route("/api/decisions", post(save_decision))
        .with_state(state);
    loopback_page(routes, hosts)
}

async fn page(State(state): State<ReviewState>) -> Html<String> {
    Html(review_page::render(&state.session()))
}

async fn script() -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        SCRIPT,
    )
        .into_response()
}

async fn api_state(State(state): State<ReviewState>) -> Response {
    let session = state.session();
    let items: Vec<Value> = session
        .set
        .items
        .iter()
        .map(|item| json!({"item": item, "decision": session.file.get(&item.id)}))
        .collect();
    json_response(&json!({
        "testset": session.set.path.display().to_string(),
        "review_file": session.file.path().display().to_string(),
        "reviewer": session.reviewer,
        "summary_command": session.summary_command(),
        "start": session.resume_at(),
        "items": items,
    }))
}

async fn save_decision(
    State(state): State<ReviewState>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let request = match json_body(&headers, &body, "a decision") {
        Ok(Value::Object(request)) => request,
        Ok(_) => {
            return error(
                StatusCode::BAD_REQUEST,
                "a decision is a JSON object".into(),
            );
        }
        Err((status, message)) => return error(status, message),
    };
    let saved = tokio::task::spawn_blocking(move || {
        let mut guard = state.session();
        let session = &mut *guard;
        let id = request
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let index = session.set.position(id).ok_or_else(|| {
            (
                StatusCode::NOT_FOUND,
                format!("no item `{id}` in this test set"),
            )
        })?;
        let decision = Decision::of_json(&request)
            .map_err(|(field, why)| (StatusCode::BAD_REQUEST, format!("field `{field}`: {why}")))?;
        session
            .file
            .set(&session.set, id, decision.clone())
            .map_err(|e| (StatusCode::INTERNAL_SERVER_ERROR, error_chain(&e)))?;
        Ok::<_, (StatusCode, String)>(json!({
            "index": index,
            "decision": decision,
            "decided": session.file.len(),
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
    use crate::review::tests::six_items;

    async fn ask(server: &ReviewServer, request: Request<Body>) -> (StatusCode, Value) {
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

    fn post(server: &ReviewServer, body: Value) -> Request<Body> {
        Request::post("/api/decisions")
            .header(header::HOST, server.addr.to_string())
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.to_string()))
            .unwrap()
    }

    fn get_state(server: &ReviewServer) -> Request<Body> {
        Request::get("/api/state")
            .header(header::HOST, server.addr.to_string())
            .body(Body::empty())
            .unwrap()
    }

    #[tokio::test]
    async fn decisions_are_saved_checked_and_a_new_session_resumes_after_them() {
        let dir = tempfile::tempdir().unwrap();
        let set = six_items(dir.path());
        let path = dir.path().join("review.jsonl");
        let bind = SocketAddr::from(([127, 0, 0, 1], 0));
        let open = || {
            let set = Testset::read(&set.path).unwrap();
            let file = ReviewFile::open(&path, &set, "lin").unwrap();
            review_server(set, file, "lin", bind).unwrap()
        };
        let server = open();
        let (status, state) = ask(&server, get_state(&server)).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(state["start"], 0);
        assert_eq!(state["items"][0]["item"]["key_points"], json!(["point f1"]));
        assert_eq!(state["items"][0]["item"]["contexts"], json!(["chunk f1"]));
        for body in [
            json!({"id": "f1", "decision": "accept"}),
            json!({"id": "f2", "decision": "reject", "reason": "not supported"}),
            json!({"id": "f3", "decision": "edit", "reference": "better", "question": "clearer?"}),
        ] {
            let (status, saved) = ask(&server, post(&server, body)).await;
            assert_eq!(status, StatusCode::OK, "{saved}");
        }
        for (body, expected) in [
            (
                json!({"id": "n1", "decision": "reject"}),
                StatusCode::BAD_REQUEST,
            ),
            (
                json!({"id": "zz", "decision": "accept"}),
                StatusCode::NOT_FOUND,
            ),
            (json!([1]), StatusCode::BAD_REQUEST),
        ] {
            assert_eq!(ask(&server, post(&server, body)).await.0, expected);
        }
        let form = Request::post("/api/decisions")
            .header(header::HOST, server.addr.to_string())
            .header(header::CONTENT_TYPE, "text/plain")
            .body(Body::from("{\"id\": \"n1\", \"decision\": \"accept\"}"))
            .unwrap();
        assert_eq!(
            ask(&server, form).await.0,
            StatusCode::UNSUPPORTED_MEDIA_TYPE
        );
        let elsewhere = Request::get("/api/state")
            .header(header::HOST, "attacker.example:80")
            .body(Body::empty())
            .unwrap();
        assert_eq!(ask(&server, elsewhere).await.0, StatusCode::FORBIDDEN);

        // A new session over the same file starts at the first undecided item.
        let again = open();
        assert_eq!(again.info().decided, 3);
        let (_, state) = ask(&again, get_state(&again)).await;
        assert_eq!(state["start"], 3);
        assert_eq!(
            state["items"][2]["decision"],
            json!({"decision": "edit", "reference": "better", "question": "clearer?"})
        );
        assert_eq!(state["items"][1]["decision"]["reason"], "not supported");
        let page = Request::get("/")
            .header(header::HOST, again.addr.to_string())
            .body(Body::empty())
            .unwrap();
        let response = router(again.state.clone()).oneshot(page).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
    }
}
