//! The router and the listening server. [`app`] is a plain `Router`, so tests drive it with
//! `oneshot` and no socket; [`Server`] binds a socket and runs it on a small runtime of its
//! own, so the binary needs no async code.

use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::sync::Arc;

use axum::Router;
use axum::http::{HeaderValue, header};
use axum::middleware::{from_fn_with_state, map_response};
use axum::response::Response;
use axum::routing::get;
use tokio::sync::Semaphore;

use crate::auth::{Token, check_exposure, require_token};
use crate::host::{HostRule, guard_hosts};
use crate::limits::READS_AT_ONCE;
use crate::{RunsRoot, ServerError, api, pages};

/// What every request handler shares: the runs directory, the token if any, the hosts
/// answered, and the slots of requests that read files at once.
#[derive(Debug, Clone)]
pub struct AppState {
    runs: Arc<RunsRoot>,
    token: Option<Token>,
    hosts: HostRule,
    reads: Arc<Semaphore>,
}

impl AppState {
    /// The state of a server of `runs` that answers loopback hosts at any port (a socket
    /// bound by [`Server::bind`] narrows it to its own port, or opens it to any host beyond
    /// loopback, where the token is required).
    pub fn new(runs: RunsRoot, token: Option<Token>) -> Self {
        Self {
            runs: Arc::new(runs),
            token,
            hosts: HostRule::Loopback { port: None },
            reads: Arc::new(Semaphore::new(READS_AT_ONCE)),
        }
    }

    /// The same state answering the hosts `rule` allows.
    #[must_use]
    pub fn with_hosts(mut self, rule: HostRule) -> Self {
        self.hosts = rule;
        self
    }

    pub fn runs(&self) -> &RunsRoot {
        &self.runs
    }

    pub fn token(&self) -> Option<&Token> {
        self.token.as_ref()
    }

    /// Runs `work` on the blocking pool (it reads files) and waits for it, in one of
    /// [`READS_AT_ONCE`] slots; with every slot taken the request is refused at once
    /// ([`ServerError::Busy`], 503 with `Retry-After`), never queued. The slot is held by
    /// the work itself, so a client that hangs up does not free it before the work ends.
    pub(crate) async fn read<T, F>(&self, work: F) -> Result<T, ServerError>
    where
        T: Send + 'static,
        F: FnOnce(&RunsRoot) -> Result<T, ServerError> + Send + 'static,
    {
        let slot = Arc::clone(&self.reads)
            .try_acquire_owned()
            .map_err(|_| ServerError::Busy {
                at_once: READS_AT_ONCE,
            })?;
        let runs = Arc::clone(&self.runs);
        tokio::task::spawn_blocking(move || {
            let _slot = slot;
            work(&runs)
        })
        .await
        .map_err(|error| ServerError::Internal(error.to_string()))?
    }
}

/// Every route, behind the host check (`host`), then the token check, with the security
/// headers on every answer. Only `GET` (and `HEAD`) routes exist: the server never changes
/// a file.
pub fn app(state: AppState) -> Router {
    let hosts = state.hosts;
    let routes = Router::new()
        .route("/", get(pages::index))
        .route("/runs/{name}", get(pages::run))
        .route("/runs/{name}/report", get(pages::report))
        .route("/compare", get(pages::compare))
        .route("/api/runs", get(api::runs))
        .route("/api/runs/{name}", get(api::run))
        .route("/api/runs/{name}/samples", get(api::samples))
        .route("/api/compare", get(api::compare))
        .fallback(pages::not_found)
        .layer(from_fn_with_state(state.clone(), require_token))
        .with_state(state);
    guard_hosts(routes, hosts).layer(map_response(security_headers))
}

/// Pages hold no script and load nothing from elsewhere; the policy makes the browser hold
/// them to that even if a report were ever to carry markup from data.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; \
     img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

async fn security_headers(response: Response) -> Response {
    with_security_headers(response, CONTENT_SECURITY_POLICY)
}

/// `response` with the headers every page of ours carries: the content security policy
/// `policy`, no MIME sniffing, no referrer, no caching.
pub(crate) fn with_security_headers(mut response: Response, policy: &'static str) -> Response {
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(policy),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// A bound socket with the app behind it.
#[derive(Debug)]
pub struct Server {
    listener: TcpListener,
    state: AppState,
}

impl Server {
    /// Binds `addr` (port 0 picks a free port); refuses an address beyond loopback when the
    /// state has no token. On loopback the server then answers only loopback hosts at the
    /// port it got.
    pub fn bind(addr: SocketAddr, state: AppState) -> Result<Self, ServerError> {
        check_exposure(addr, state.token())?;
        let bind_error = |source| ServerError::Bind { addr, source };
        let listener = TcpListener::bind(addr).map_err(bind_error)?;
        listener.set_nonblocking(true).map_err(bind_error)?;
        let bound = listener.local_addr().map_err(ServerError::Serve)?;
        let state = state.with_hosts(HostRule::for_address(bound));
        Ok(Self { listener, state })
    }

    /// Binds `spec`, `HOST:PORT` where HOST is an address or a name (`localhost:8321`,
    /// `[::1]:0`). A name is resolved by the system; without a token, every address it
    /// resolves to must be loopback. The first address that binds is kept.
    pub fn bind_spec(spec: &str, state: AppState) -> Result<Self, ServerError> {
        let addrs: Vec<SocketAddr> = spec
            .to_socket_addrs()
            .map_err(|source| ServerError::Resolve {
                spec: spec.into(),
                source,
            })?
            .collect();
        if addrs.is_empty() {
            return Err(ServerError::NoAddress { spec: spec.into() });
        }
        for &addr in &addrs {
            check_exposure(addr, state.token())?;
        }
        let mut last_error = None;
        for addr in addrs {
            match Self::bind(addr, state.clone()) {
                Ok(server) => return Ok(server),
                Err(error) => last_error = Some(error),
            }
        }
        Err(last_error.unwrap_or(ServerError::NoAddress { spec: spec.into() }))
    }

    /// The address actually bound.
    pub fn local_addr(&self) -> Result<SocketAddr, ServerError> {
        self.listener.local_addr().map_err(ServerError::Serve)
    }

    /// Serves until the process ends. Files are read on the runtime's blocking pool, so
    /// one thread answers requests while others read.
    pub fn run(self) -> Result<(), ServerError> {
        serve_forever(self.listener, app(self.state))
    }
}

/// Serves `router` on `listener` on a current-thread runtime of its own until the process
/// ends (the binary has no async code).
pub(crate) fn serve_forever(listener: TcpListener, router: Router) -> Result<(), ServerError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .map_err(ServerError::Serve)?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener).map_err(ServerError::Serve)?;
        axum::serve(listener, router)
            .await
            .map_err(ServerError::Serve)
    })
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::extract::Request;
    use axum::http::StatusCode;
    use rageval_report::testing::{scores, write_run};
    use tower::ServiceExt;

    use super::*;
    use crate::limits::RETRY_AFTER_SECONDS;

    /// Issue 40, item 4: three requests for 100,000 samples at once took 7.7 GiB, and any
    /// number more would have been read side by side. With every read slot taken, a request
    /// is refused at once with 503 and `Retry-After` (not queued), on pages and the API; a
    /// slot freed serves the next one.
    #[tokio::test]
    async fn issue_40_4_a_read_past_the_slots_is_refused_at_once_with_retry_after() {
        let dir = tempfile::tempdir().unwrap();
        write_run(&dir.path().join("base"), "d1", &scores(0.0));
        let state = AppState::new(RunsRoot::open(dir.path()).unwrap(), None);
        let ask = |uri: &str| {
            let request = Request::get(uri)
                .header(header::HOST, "127.0.0.1:8321")
                .body(Body::empty())
                .unwrap();
            app(state.clone()).oneshot(request)
        };
        let held = Arc::clone(&state.reads)
            .try_acquire_many_owned(u32::try_from(READS_AT_ONCE).unwrap())
            .unwrap();
        for uri in ["/api/runs/base", "/runs/base", "/api/runs", "/"] {
            let response = ask(uri).await.unwrap();
            assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE, "{uri}");
            let retry = response.headers()[header::RETRY_AFTER].to_str().unwrap();
            assert_eq!(retry, RETRY_AFTER_SECONDS.to_string());
            let body = axum::body::to_bytes(response.into_body(), usize::MAX)
                .await
                .unwrap();
            let text = String::from_utf8_lossy(&body);
            assert!(
                text.contains("reading for 4 requests already"),
                "{uri}: {text}"
            );
        }
        drop(held);
        assert_eq!(
            ask("/api/runs/base").await.unwrap().status(),
            StatusCode::OK
        );
        // The slot went back when the read ended.
        assert_eq!(state.reads.available_permits(), READS_AT_ONCE);
    }
}
