//! A ranking judge to benchmark `rageval rank` against (benches/rank/run.sh): the testkit
//! mock with a fixed latency, answering the grading, batch-grading, pairwise and ordering
//! tasks like a noisy, position-biased judge that knows each passage's true quality.
//!
//! Each passage carries its quality as `quality=0.1234`; a grade is the quality plus noise
//! cut at 0.7 / 0.8 / 0.9 (so about 30% of uniform qualities are useful), in a batch each
//! passage with its own noise; a comparison prefers the higher quality plus noise and a small
//! bias towards the first passage; an ordered window sorts the passages by quality plus
//! noise plus the same bias, largest for the first passage shown and fading linearly to none
//! for the last (a window of two answers like a comparison). The noise is a hash of the
//! request and the passage's position, so the same request gets the same answer.
//!
//! `cargo run --release -p rageval-testkit --example ranking_judge -- LATENCY_MS`; the first
//! line on stdout is `listening on http://127.0.0.1:PORT/v1`. Stop it with Ctrl-C.

#![allow(
    clippy::print_stdout,
    reason = "the example reports its address on stdout"
)]

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use rageval_testkit::{MockConfig, MockServer, Reply};
use serde_json::{Value, json};

/// Cut-offs of grades 1, 2 and 3.
const GRADE_CUTS: [f64; 3] = [0.7, 0.8, 0.9];
/// Standard deviation-like spread of the grading noise.
const GRADE_NOISE: f64 = 0.05;
/// Spread of the comparison noise.
const COMPARE_NOISE: f64 = 0.04;
/// How much the first passage shown is favoured.
const POSITION_BIAS: f64 = 0.01;

/// FNV-1a of `text`, mapped to [-1, 1).
fn noise(text: &str, salt: u8) -> f64 {
    let hash = text
        .bytes()
        .chain([salt])
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        });
    (hash >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
}

/// Every `quality=X` in the request's messages, in order.
fn qualities(body: &Value) -> Vec<f64> {
    let text: String = body["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .filter_map(|m| m["content"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    text.split("quality=")
        .skip(1)
        .filter_map(|rest| {
            let number: String = rest
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            // A sentence may end right after the number.
            number.trim_end_matches('.').parse().ok()
        })
        .collect()
}

/// The keys `p1..pn` of a list task.
fn keys(n: usize) -> impl Iterator<Item = String> {
    (1..=n).map(|i| format!("p{i}"))
}

fn grade(quality: f64, key: &str, salt: u8) -> usize {
    let seen = quality + GRADE_NOISE * noise(key, salt);
    GRADE_CUTS.iter().filter(|&&cut| seen >= cut).count()
}

fn answer(body: &Value) -> Reply {
    let key = body.to_string();
    let schema = body
        .pointer("/response_format/json_schema/schema/properties")
        .cloned()
        .unwrap_or(Value::Null);
    let found = qualities(body);
    let reply = if schema.get("grades").is_some() {
        let grades: serde_json::Map<String, Value> = keys(found.len())
            .zip(&found)
            .enumerate()
            .map(|(i, (name, &quality))| {
                let salt = 3u8.wrapping_add(i as u8);
                let value =
                    json!({"reason": "by quality", "relevance": grade(quality, &key, salt)});
                (name, value)
            })
            .collect();
        json!({ "grades": grades })
    } else if schema.get("order").is_some() {
        let last = found.len().saturating_sub(1).max(1) as f64;
        let seen: Vec<f64> = found
            .iter()
            .enumerate()
            .map(|(i, quality)| {
                let bias = POSITION_BIAS * (last - i as f64).max(0.0) / last;
                quality + bias + COMPARE_NOISE * noise(&key, 3u8.wrapping_add(i as u8))
            })
            .collect();
        let mut order: Vec<usize> = (0..found.len()).collect();
        order.sort_by(|&a, &b| seen[b].total_cmp(&seen[a]));
        let names: Vec<String> = order.iter().map(|i| format!("p{}", i + 1)).collect();
        json!({"reason": "by quality", "order": names})
    } else {
        match (found.as_slice(), schema.get("winner").is_some()) {
            ([first, second, ..], true) => {
                let margin = first - second + POSITION_BIAS + COMPARE_NOISE * noise(&key, 1);
                let winner = if margin > 0.005 {
                    "A"
                } else if margin < -0.005 {
                    "B"
                } else {
                    "tie"
                };
                json!({"reason": "by quality", "winner": winner})
            }
            ([quality, ..], false) => {
                json!({"reason": "by quality", "relevance": grade(*quality, &key, 2)})
            }
            _ => return Reply::Status(400, "no passage with quality=".into()),
        }
    };
    Reply::Content(reply.to_string())
}

fn main() -> std::io::Result<()> {
    let latency_ms: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let server = MockServer::start(MockConfig {
            latency: Duration::from_millis(latency_ms),
            script: Some(Arc::new(answer)),
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
