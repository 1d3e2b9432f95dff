//! An Elasticsearch-compatible server for the tests: noida-db, installed by
//! `scripts/setup-noida.sh` and started on a free loopback port with its own data directory;
//! stopped when the handle drops. A server that cannot be installed or started fails the
//! test with the reason: these tests never skip.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::fixtures::workspace;

/// How long the server may take to answer its first request.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// Installs the server once per test binary; returns the binary's path.
fn server_binary() -> PathBuf {
    static BINARY: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BINARY
        .get_or_init(|| {
            let script = workspace().join("scripts/setup-noida.sh");
            let output = Command::new("bash")
                .arg(&script)
                .output()
                .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
            if !output.status.success() {
                return Err(format!(
                    "{} failed ({}): {}",
                    script.display(),
                    output.status,
                    String::from_utf8_lossy(&output.stderr)
                ));
            }
            let stdout = String::from_utf8_lossy(&output.stdout);
            let path = stdout.lines().last().unwrap_or("").trim().to_owned();
            Ok(PathBuf::from(path))
        })
        .clone()
        .unwrap_or_else(|e| {
            panic!("the Elasticsearch-compatible test server is not available: {e}")
        })
}

/// A running server.
pub struct EsServer {
    pub url: String,
    child: Child,
    _data: tempfile::TempDir,
}

impl EsServer {
    pub async fn start() -> EsServer {
        let binary = server_binary();
        let data = tempfile::tempdir().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let log = data.path().join("server.log");
        let child = Command::new(&binary)
            .args(["start", "--only", "elasticsearch", "--host", "127.0.0.1"])
            .args(["--elasticsearch-port", &port.to_string()])
            .arg("--data-dir")
            .arg(data.path().join("db"))
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&log).unwrap())
            .stderr(std::fs::File::create(data.path().join("server.err")).unwrap())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
        let mut server = EsServer {
            url: format!("http://127.0.0.1:{port}"),
            child,
            _data: data,
        };
        server.wait_ready().await;
        server
    }

    async fn wait_ready(&mut self) {
        let client = crate::test_client();
        let started = Instant::now();
        loop {
            if let Ok(response) = client.get(&self.url).send().await {
                if response.status().is_success() {
                    return;
                }
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "the test server exited ({status}) before answering: {}",
                    self.logs()
                );
            }
            if started.elapsed() > START_TIMEOUT {
                panic!(
                    "the test server did not answer on {} within {START_TIMEOUT:?}: {}",
                    self.url,
                    self.logs()
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn logs(&self) -> String {
        let read =
            |name: &str| std::fs::read_to_string(self._data.path().join(name)).unwrap_or_default();
        format!(
            "stdout: {} stderr: {}",
            read("server.log"),
            read("server.err")
        )
    }

    /// Creates an index with a mapping, bulk-loads documents (`(id, source)`) and refreshes.
    pub async fn load(
        &self,
        index: &str,
        mapping: serde_json::Value,
        docs: &[(String, serde_json::Value)],
    ) {
        let client = crate::test_client();
        let created = client
            .put(format!("{}/{index}", self.url))
            .json(&serde_json::json!({"mappings": mapping}))
            .send()
            .await
            .unwrap();
        assert!(
            created.status().is_success(),
            "create {index}: {}",
            created.text().await.unwrap()
        );
        let mut body = String::new();
        for (id, source) in docs {
            body.push_str(&serde_json::json!({"index": {"_index": index, "_id": id}}).to_string());
            body.push('\n');
            body.push_str(&source.to_string());
            body.push('\n');
        }
        let bulk = client
            .post(format!("{}/_bulk?refresh=true", self.url))
            .header("content-type", "application/x-ndjson")
            .body(body)
            .send()
            .await
            .unwrap();
        let answer: serde_json::Value = bulk.json().await.unwrap();
        assert_eq!(answer["errors"], serde_json::json!(false), "bulk: {answer}");
        let count: serde_json::Value = client
            .get(format!("{}/{index}/_count", self.url))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(count["count"].as_u64(), Some(docs.len() as u64), "{count}");
    }
}

impl Drop for EsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
