//! Real Phoenix and MLflow servers for the tests, started by `scripts/setup-trace-servers.sh
//! start` on a free loopback port with SQLite storage in a temporary directory, stopped when
//! the handle drops. The servers are installed by `scripts/setup-trace-servers.sh install`,
//! which takes minutes, so a test that needs them runs when RAGEVAL_TRACE_SERVERS_VENV names
//! the venv (scripts/test.sh and CI set it) and otherwise skips, saying why. A server that
//! is installed but does not start fails the test.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::repo_root;

/// The venv `scripts/setup-trace-servers.sh install` made.
pub const ENV_TRACE_SERVERS_VENV: &str = "RAGEVAL_TRACE_SERVERS_VENV";

/// How long a server may take to answer its health check (Phoenix took 49 s on two busy
/// cores).
const START_TIMEOUT: Duration = Duration::from_secs(240);

/// A running server.
pub struct TraceServer {
    pub url: String,
    child: Child,
    dir: tempfile::TempDir,
}

impl TraceServer {
    /// Starts `kind` (`phoenix` or `mlflow`), or says why `test` is skipped and returns
    /// `None` when the servers are not installed.
    #[allow(
        clippy::print_stderr,
        reason = "a skipped test says why in the test output"
    )]
    pub fn start(kind: &str, test: &str) -> Option<TraceServer> {
        let Some(venv) = std::env::var_os(ENV_TRACE_SERVERS_VENV) else {
            eprintln!(
                "skipped {test}: {ENV_TRACE_SERVERS_VENV} is not set (scripts/test.sh sets it \
                 after `scripts/setup-trace-servers.sh install`; CI runs this test)"
            );
            return None;
        };
        let dir = tempfile::tempdir().unwrap();
        // Its own process group: MLflow's server starts a uvicorn worker that
        // outlives a killed parent, so `kill` stops the whole group.
        let mut child = Command::new("bash")
            .process_group(0)
            .arg(repo_root().join("scripts/setup-trace-servers.sh"))
            .args(["start", kind])
            .arg(dir.path())
            .env(ENV_TRACE_SERVERS_VENV, &venv)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        let url = first.trim().to_owned();
        assert!(
            url.starts_with("http://127.0.0.1:"),
            "no url from the script: {first:?}"
        );
        let mut server = TraceServer { url, child, dir };
        server.wait_ready(if kind == "phoenix" {
            "healthz"
        } else {
            "health"
        });
        Some(server)
    }

    /// Waits until the server answers its health check.
    fn wait_ready(&mut self, path: &str) {
        let started = Instant::now();
        loop {
            if http_status(&self.url, path) == Some(200) {
                return;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "the server exited ({status}) before answering: {}",
                    self.log()
                );
            }
            assert!(
                started.elapsed() < START_TIMEOUT,
                "{}/{path} did not answer within {START_TIMEOUT:?}: {}",
                self.url,
                self.log()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// The host and port, for `phoenix://HOST:PORT/PROJECT`.
    pub fn authority(&self) -> &str {
        self.url.trim_start_matches("http://")
    }

    /// Stops the server (as one that dies would: at once).
    pub fn kill(&mut self) {
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill")
            .args(["-KILL", "--", &group])
            .stderr(Stdio::null())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }
}

impl Drop for TraceServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The status of `GET base/path`, or `None` when nothing answers.
pub fn http_status(base: &str, path: &str) -> Option<u16> {
    use rageval_sources::SourceError;
    use rageval_sources::rest::{Body, Method};
    block_on(async {
        match rest_client(base)
            .send(Method::GET, path, &[], Body::Empty)
            .await
        {
            Ok(_) => Some(200),
            Err(SourceError::Status { status, .. }) => Some(status),
            Err(_) => None,
        }
    })
}

/// Runs `future` on a runtime of its own.
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

/// A client of `url` that tries once.
pub fn rest_client(url: &str) -> rageval_sources::RestClient {
    rageval_sources::RestClient::new(
        url,
        rageval_sources::RestAuth::None,
        Duration::from_secs(30),
        rageval_judge::RetryPolicy {
            max_attempts: 1,
            ..rageval_judge::RetryPolicy::default()
        },
    )
    .unwrap()
}
