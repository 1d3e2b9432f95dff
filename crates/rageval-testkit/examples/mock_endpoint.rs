//! The testkit mock as a process, for benchmarks and manual runs against the binary
//! (BENCHMARKS.md, "eval at scale"): schema-driven answers, the files and batches
//! endpoints, and a fixed latency per chat or embedding request.
//!
//! `cargo run --release -p rageval-testkit --example mock_endpoint -- LATENCY_MS`; the
//! first line on stdout is `listening on http://127.0.0.1:PORT/v1`. Stop it with Ctrl-C.

#![allow(
    clippy::print_stdout,
    reason = "the example reports its address on stdout"
)]

use std::io::Write;
use std::time::Duration;

use rageval_testkit::{MockConfig, MockServer};

fn main() -> std::io::Result<()> {
    let latency_ms: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(0);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let server = MockServer::start(MockConfig {
            latency: Duration::from_millis(latency_ms),
            ..MockConfig::default()
        })
        .await?;
        let mut stdout = std::io::stdout();
        writeln!(stdout, "listening on {}", server.base_url)?;
        stdout.flush()?;
        std::future::pending::<()>().await;
        Ok(())
    })
}
