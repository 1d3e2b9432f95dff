//! `eval --watch` on a JSONL dataset that grows while it runs: every new sample scored once,
//! a restart resumes, a planted drop in the later samples fires the webhook (a local server
//! records the POST), and a cost cap stops the spending with a warning and a webhook event.
//! No fixed sleeps: each step waits for the journal, the recorder or stderr to show it.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rageval_testkit::MockConfig;
use serde_json::{Value, json};

use crate::judged::endpoint;
use crate::{command, interrupt, stderr};

/// A local server that answers every request 200 and keeps each body.
struct Recorder {
    url: String,
    bodies: Arc<Mutex<Vec<Value>>>,
}

fn recorder() -> Recorder {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hooks/rageval", listener.local_addr().unwrap());
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let kept = bodies.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let mut request = Vec::new();
            let mut buffer = [0u8; 8192];
            // Headers, then as many body bytes as content-length says.
            loop {
                let n = stream.read(&mut buffer).unwrap_or(0);
                if n == 0 {
                    break;
                }
                request.extend_from_slice(&buffer[..n]);
                let text = String::from_utf8_lossy(&request);
                if let Some(end) = text.find("\r\n\r\n") {
                    let length = text[..end]
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                        })
                        .unwrap_or(0);
                    if request.len() >= end + 4 + length {
                        let body = &request[end + 4..end + 4 + length];
                        if let Ok(value) = serde_json::from_slice(body) {
                            kept.lock().unwrap().push(value);
                        }
                        break;
                    }
                }
            }
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
        }
    });
    Recorder { url, bodies }
}

impl Recorder {
    fn bodies(&self) -> Vec<Value> {
        self.bodies.lock().unwrap().clone()
    }
}

/// Waits until `done` holds, polling.
fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Sample id → journal lines for it.
fn journal(run: &Path) -> BTreeMap<String, usize> {
    let mut lines = BTreeMap::new();
    for line in std::fs::read_to_string(run.join("results.jsonl"))
        .unwrap_or_default()
        .lines()
    {
        let Ok(value) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        *lines
            .entry(value["sample_id"].as_str().unwrap().to_owned())
            .or_insert(0) += 1;
    }
    lines
}

fn append(path: &Path, samples: &[Value]) {
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    for sample in samples {
        writeln!(file, "{sample}").unwrap();
    }
}

/// A sample whose answer is its reference (`good`) or not.
fn sample(id: &str, good: bool) -> Value {
    json!({
        "id": id,
        "question": format!("What is the code of {id}?"),
        "contexts": [format!("The code of {id} is {id}-code.")],
        "answer": if good { format!("{id}-code") } else { "no idea".to_owned() },
        "reference": format!("{id}-code"),
    })
}

/// `eval live.jsonl --watch` polling every 100ms into `run`, alerts to `webhook`, and `extra`.
fn watch_args(webhook: &str, extra: &[&str]) -> Vec<String> {
    let mut args = vec![
        "eval",
        "live.jsonl",
        "--watch",
        "--interval",
        "100ms",
        "--out",
        "run",
        "--alert-webhook",
        webhook,
    ];
    args.extend(extra);
    args.into_iter().map(str::to_owned).collect()
}

fn start(dir: &Path, args: &[&str], log: &str) -> Child {
    command(dir, args)
        .stdout(Stdio::null())
        .stderr(File::create(dir.join(log)).unwrap())
        .spawn()
        .unwrap()
}

#[test]
fn watch_scores_each_new_sample_once_resumes_and_alerts_on_a_drop() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("live.jsonl");
    let hook = recorder();
    let good = |range: std::ops::Range<usize>| {
        range
            .map(|i| sample(&format!("g{i}"), true))
            .collect::<Vec<_>>()
    };
    append(&data, &good(0..4));
    let args = watch_args(
        &hook.url,
        &[
            "--metrics",
            "exact_match",
            "--judge",
            "heuristic",
            "--baseline-window",
            "4",
            "--alert-window",
            "4",
        ],
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = dir.path().join("run");
    let child = start(dir.path(), &args, "first.log");
    wait_for("the first samples", || journal(&run).len() == 4);
    append(&data, &good(4..7));
    wait_for("the new samples", || journal(&run).len() == 7);
    let stopped = interrupt(child);
    assert_eq!(stopped.status.code(), Some(130));
    let log = std::fs::read_to_string(dir.path().join("first.log")).unwrap();
    assert!(
        log.contains("watch: poll ") && log.contains(" seen, 7 chosen, 7 scored"),
        "{log}"
    );

    // Stopped, the source grows: a restart scores only the new samples, once each.
    let bad: Vec<Value> = (0..4).map(|i| sample(&format!("b{i}"), false)).collect();
    append(&data, &bad);
    let child = start(dir.path(), &args, "second.log");
    wait_for("the samples written while stopped", || {
        journal(&run).len() == 11
    });
    wait_for("the alert", || {
        hook.bodies().iter().any(|b| b["kind"] == "alert")
    });
    let stopped = interrupt(child);
    assert_eq!(stopped.status.code(), Some(130));
    assert!(
        journal(&run).values().all(|lines| *lines == 1),
        "{:?}",
        journal(&run)
    );

    let alert = hook
        .bodies()
        .into_iter()
        .find(|b| b["kind"] == "alert")
        .unwrap();
    assert_eq!(alert["metric"], "exact_match");
    assert_eq!(
        (
            alert["baseline"]["first"].as_str(),
            alert["baseline"]["n"].as_u64()
        ),
        (Some("g0"), Some(4))
    );
    assert_eq!(alert["baseline"]["mean"], 1.0);
    assert_eq!(
        (
            alert["latest"]["last"].as_str(),
            alert["latest"]["mean"].as_f64()
        ),
        (Some("b3"), Some(0.0))
    );
    assert!(alert["ci95"][1].as_f64().unwrap() < 0.0, "{alert}");
    let log = std::fs::read_to_string(dir.path().join("second.log")).unwrap();
    assert!(log.contains("alert: exact_match fell from 1.000"), "{log}");
}

#[test]
fn watch_stops_spending_at_the_cost_cap_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    // A price that makes every call cost about a dollar, and a cap of one dollar an hour.
    std::fs::write(
        dir.path().join("rageval.toml"),
        "[judge.prices.\"mock-chat\"]\nprompt_per_million = 5000.0\ncompletion_per_million = 5000.0\n",
    )
    .unwrap();
    let data = dir.path().join("live.jsonl");
    append(
        &data,
        &(0..6)
            .map(|i| sample(&format!("s{i}"), true))
            .collect::<Vec<_>>(),
    );
    let hook = recorder();
    let mock = endpoint(MockConfig::default());
    let mut args = watch_args(
        &hook.url,
        &["--metrics", "faithfulness", "--max-cost-per-hour", "1"],
    );
    args.extend(mock.flags());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let child = start(dir.path(), &args, "watch.log");
    let log = || std::fs::read_to_string(dir.path().join("watch.log")).unwrap_or_default();
    wait_for("the cap's warning", || {
        log().contains("warning: the judge's cost cap of $1 per hour is reached")
    });
    wait_for("the paused health line", || {
        log().contains("spending paused by the cost cap until")
    });
    wait_for("the cap's webhook event", || {
        hook.bodies().iter().any(|b| b["kind"] == "cost_cap")
    });
    let stopped = interrupt(child);
    assert_eq!(stopped.status.code(), Some(130), "{}", stderr(&stopped));
    let scored = journal(&dir.path().join("run")).len();
    assert!(
        scored < 6,
        "the cap let {scored} of 6 samples be scored:\n{}",
        log()
    );
    let event = hook
        .bodies()
        .into_iter()
        .find(|b| b["kind"] == "cost_cap")
        .unwrap();
    assert_eq!(
        (event["period"].as_str(), event["limit_usd"].as_f64()),
        (Some("hour"), Some(1.0))
    );
    assert!(event["waiting"].as_u64().unwrap() > 0, "{event}");
}
