//! Scores where the traces are, against a real Phoenix started by the test: OpenInference
//! traces (with retriever spans) logged to it over OTLP, read back through its REST API by
//! `eval phoenix://HOST:PORT/PROJECT`, scored through the mock judge, and written back as
//! span annotations on the traces' root spans (read back through Phoenix's API); a second
//! run writes no duplicates; the scores equal those of an `eval` of the same traces exported
//! to a file by Phoenix's own client; evaluation events pushed to Phoenix's OTLP endpoint
//! are accepted; an unknown project, an unreachable server and a refused key exit 2 with the
//! URL and a hint; a Phoenix that dies mid-run leaves the run whole, the failed writes
//! counted.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use rageval_export::otlp::{KeyValue, Origin, Request, Span, from_hex, now_unix_nano};
use rageval_sources::rest::{Body, Method};
use rageval_testkit::MockConfig;
use serde_json::Value;

use crate::judged::{checked_cells, endpoint};
use crate::trace_servers::{TraceServer, block_on, rest_client};
use crate::{command, rageval, stderr, stdout};

const PROJECT: &str = "rag-test";
const METRICS: &str = "faithfulness,context_relevance";

/// (question, contexts, answer) of the traced RAG calls.
const CALLS: &[(&str, &[&str], &str)] = &[
    (
        "Which river flows through Lyon?",
        &[
            "Lyon lies where the Rhône meets the Saône.",
            "Paris is crossed by the Seine.",
        ],
        "The Rhône and the Saône meet in Lyon.",
    ),
    (
        "How many moons does Mars have?",
        &["Mars has two small moons, Phobos and Deimos."],
        "Mars has two moons.",
    ),
    (
        "What is the boiling point of water at sea level?",
        &["At sea level water boils at 100 degrees Celsius."],
        "It boils at 100 °C.",
    ),
    (
        "Who wrote Hamlet?",
        &[
            "Hamlet is a tragedy by William Shakespeare.",
            "Macbeth is set in Scotland.",
        ],
        "William Shakespeare wrote Hamlet.",
    ),
    (
        "What is the capital of Japan?",
        &["Tokyo is the capital of Japan."],
        "Tokyo.",
    ),
];

fn trace_id(i: usize) -> String {
    format!("{:032x}", 0x5eed_0000_u64 + i as u64)
}

fn root_span_id(i: usize) -> String {
    format!("{:016x}", 0x1000 + i as u64)
}

fn child_span_id(i: usize, child: u64) -> [u8; 8] {
    from_hex(&format!("{:016x}", 0x1000 + i as u64 + (child << 32))).unwrap()
}

/// The traces as one OTLP request: per call a root CHAIN span, a RETRIEVER span with the
/// documents and an LLM span with the answer; and one trace without a retriever.
fn traces() -> Request {
    let start = now_unix_nano() - 60_000_000_000;
    let ms = 1_000_000;
    let mut spans = Vec::new();
    let span = |i: usize,
                id: [u8; 8],
                parent: Option<[u8; 8]>,
                name: &str,
                from: u64,
                to: u64,
                attributes: Vec<KeyValue>| Span {
        trace_id: from_hex(&trace_id(i)).unwrap(),
        span_id: id,
        parent_span_id: parent,
        name: name.into(),
        kind: 1,
        start_time_unix_nano: from,
        end_time_unix_nano: to,
        attributes,
        events: Vec::new(),
    };
    for (i, (question, contexts, answer)) in CALLS.iter().enumerate() {
        let at = start + i as u64 * 10_000 * ms;
        let root = from_hex(&root_span_id(i)).unwrap();
        spans.push(span(
            i,
            root,
            None,
            "rag",
            at,
            at + 3000 * ms,
            vec![
                KeyValue::str("openinference.span.kind", "CHAIN"),
                KeyValue::str("input.value", *question),
                KeyValue::str("output.value", *answer),
            ],
        ));
        let mut documents = vec![
            KeyValue::str("openinference.span.kind", "RETRIEVER"),
            KeyValue::str("input.value", *question),
        ];
        for (d, text) in contexts.iter().enumerate() {
            let prefix = format!("retrieval.documents.{d}.document");
            documents.push(KeyValue::str(
                &format!("{prefix}.id"),
                format!("doc-{i}-{d}"),
            ));
            documents.push(KeyValue::str(&format!("{prefix}.content"), *text));
            documents.push(KeyValue::double(
                &format!("{prefix}.score"),
                0.9 - d as f64 * 0.3,
            ));
        }
        spans.push(span(
            i,
            child_span_id(i, 1),
            Some(root),
            "retrieve",
            at + 100 * ms,
            at + 900 * ms,
            documents,
        ));
        spans.push(span(
            i,
            child_span_id(i, 2),
            Some(root),
            "generate",
            at + 1000 * ms,
            at + 2900 * ms,
            vec![
                KeyValue::str("openinference.span.kind", "LLM"),
                KeyValue::str("llm.output_messages.0.message.role", "assistant"),
                KeyValue::str("llm.output_messages.0.message.content", *answer),
            ],
        ));
    }
    let lone = CALLS.len();
    let root = from_hex(&root_span_id(lone)).unwrap();
    spans.push(span(
        lone,
        root,
        None,
        "chat",
        start,
        start + 500 * ms,
        vec![
            KeyValue::str("openinference.span.kind", "CHAIN"),
            KeyValue::str("input.value", "Hello?"),
        ],
    ));
    Request::Traces {
        origin: Origin {
            resource: vec![
                KeyValue::str("service.name", "rag-under-test"),
                KeyValue::str("openinference.project.name", PROJECT),
            ],
            scope_name: "test".into(),
            scope_version: "1".into(),
        },
        spans,
    }
}

/// GET `path` of the server, as JSON.
fn get(server: &TraceServer, path: &str, query: &[(&str, String)]) -> Value {
    block_on(rest_client(&server.url).get_json(path, query)).unwrap()
}

/// Waits until `done` holds, polling (never a fixed sleep).
fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The project's spans (none while Phoenix has not made the project yet).
fn spans_of(server: &TraceServer, extra: &[(&str, String)]) -> Vec<Value> {
    let mut query = vec![("limit", "1000".to_owned())];
    query.extend(extra.iter().cloned());
    let path = format!("v1/projects/{PROJECT}/spans");
    match block_on(rest_client(&server.url).get_json(&path, &query)) {
        Ok(page) => page["data"].as_array().cloned().unwrap_or_default(),
        Err(_) => Vec::new(),
    }
}

fn annotations(server: &TraceServer) -> Vec<Value> {
    let mut query = vec![("limit", "1000".to_owned())];
    query.extend((0..CALLS.len()).map(|i| ("span_ids", root_span_id(i))));
    let page = get(
        server,
        &format!("v1/projects/{PROJECT}/span_annotations"),
        &query,
    );
    page["data"].as_array().cloned().unwrap()
}

/// (sample, metric) → the journal's value (None for an undefined or failed cell).
fn scores(run: &Path) -> BTreeMap<(String, String), Option<f64>> {
    checked_cells(run, CALLS.len(), 2)
        .into_iter()
        .map(|line| {
            let key = (
                line["sample_id"].as_str().unwrap().to_owned(),
                line["metric"].as_str().unwrap().to_owned(),
            );
            (key, line["value"].as_f64())
        })
        .collect()
}

/// Phoenix's own client exports the project's spans dataframe as JSON Lines.
const EXPORT: &str = r#"
import sys
from phoenix.client import Client
df = Client(base_url=sys.argv[1]).spans.get_spans_dataframe(project_identifier=sys.argv[2], limit=10000)
df.to_json(sys.argv[3], orient="records", lines=True, date_format="iso")
"#;

#[test]
fn phoenix_traces_are_scored_and_the_scores_written_back_once() {
    let Some(mut server) = TraceServer::start(
        "phoenix",
        "phoenix_traces_are_scored_and_the_scores_written_back_once",
    ) else {
        return;
    };
    let request = traces();
    let sent = block_on(rest_client(&server.url).send(
        Method::POST,
        "v1/traces",
        &[],
        Body::Bytes {
            content_type: "application/x-protobuf",
            bytes: &request.to_protobuf(),
        },
    ));
    assert!(sent.is_ok(), "{sent:?}");
    let Request::Traces { spans, .. } = &request else {
        unreachable!()
    };
    wait_for("Phoenix to store the spans", || {
        spans_of(&server, &[]).len() == spans.len()
    });

    let dir = tempfile::tempdir().unwrap();
    let mock = endpoint(MockConfig::default());
    let source = format!("phoenix://{}/{PROJECT}", server.authority());
    let eval = |out: &str, extra: &[&str]| {
        let mut args = vec![source.as_str(), "--metrics", METRICS, "--out", out];
        args.extend(extra);
        mock.eval(dir.path(), &args)
    };

    // Read, scored, annotated; the events written beside the journal.
    let first = eval("run", &["--annotate", "--otlp-json"]);
    let err = stderr(&first);
    assert!(first.status.success(), "{err}\n{}", server.log());
    assert!(
        err.contains(&format!(
            "read 6 traces from Phoenix at {}, project {PROJECT}",
            server.url
        )),
        "{err}"
    );
    let run = dir.path().join("run");
    let scores = scores(&run);
    let written = scores.len();
    assert!(
        err.contains(&format!(
            "wrote {written} annotations to Phoenix at {}",
            server.url
        )),
        "{err}"
    );
    assert!(run.join("evaluations.otlp.jsonl").is_file());

    // On the right spans: each trace's root span, one per metric, the journal's score.
    let found = annotations(&server);
    assert_eq!(found.len(), written, "{found:#?}");
    for annotation in &found {
        let span = annotation["span_id"].as_str().unwrap();
        let i = (0..CALLS.len()).find(|i| root_span_id(*i) == span).unwrap();
        let key = (trace_id(i), annotation["name"].as_str().unwrap().to_owned());
        let value = scores
            .get(&key)
            .unwrap_or_else(|| panic!("no cell for {key:?}"));
        assert_eq!(
            annotation["result"]["score"].as_f64(),
            *value,
            "{annotation}"
        );
        assert_eq!(annotation["annotator_kind"], "LLM");
        assert_eq!(annotation["identifier"], "rageval:run");
        assert!(
            annotation["metadata"]["judge"]
                .as_str()
                .unwrap()
                .contains("mock-chat"),
            "{annotation}"
        );
    }

    // A second run resumes, scores nothing and updates the same annotations.
    let second = eval("run", &["--annotate"]);
    assert!(second.status.success(), "{}", stderr(&second));
    assert_eq!(annotations(&server).len(), written, "no duplicates");

    // The same traces exported to a file by Phoenix's client score the same.
    let exported = dir.path().join("spans.jsonl");
    let venv = std::env::var_os(crate::trace_servers::ENV_TRACE_SERVERS_VENV).unwrap();
    let python = Path::new(&venv).join("bin/python");
    let export = std::process::Command::new(python)
        .args(["-c", EXPORT, &server.url, PROJECT])
        .arg(&exported)
        .output()
        .unwrap();
    assert!(
        export.status.success(),
        "{}",
        String::from_utf8_lossy(&export.stderr)
    );
    let from_file = mock.eval(
        dir.path(),
        &[
            exported.to_str().unwrap(),
            "--format",
            "openinference",
            "--metrics",
            METRICS,
            "--out",
            "run-file",
        ],
    );
    assert!(from_file.status.success(), "{}", stderr(&from_file));
    assert_eq!(crate::phoenix::scores(&dir.path().join("run-file")), scores);

    // `export` counts what it would write; the events go to Phoenix's OTLP endpoint.
    let planned = rageval(dir.path(), &["export", "phoenix", "run", "--dry-run"]);
    assert!(
        stdout(&planned).contains(&format!(
            "would write {written} annotations to Phoenix at {}",
            server.url
        )),
        "{}",
        stdout(&planned)
    );
    let pushed = rageval(
        dir.path(),
        &[
            "export",
            "otlp",
            "run",
            "--otlp-endpoint",
            &format!("{}/v1/traces", server.url),
        ],
    );
    assert!(pushed.status.success(), "{}", stderr(&pushed));
    assert!(
        stdout(&pushed).contains("wrote 10 events to"),
        "{}",
        stdout(&pushed)
    );
    let evaluation = || spans_of(&server, &[("name", "rageval evaluation".to_owned())]);
    wait_for("Phoenix to store the evaluation spans", || {
        evaluation().len() == CALLS.len()
    });
    for span in evaluation() {
        let i = (0..CALLS.len())
            .find(|i| span["context"]["trace_id"] == trace_id(*i))
            .unwrap();
        assert_eq!(span["parent_id"], root_span_id(i));
        let events = span["events"].as_array().unwrap();
        assert_eq!(events.len(), 2);
        for event in events {
            assert_eq!(event["name"], "gen_ai.evaluation.result");
            assert!(
                event["attributes"]["gen_ai.evaluation.name"].is_string(),
                "{event}"
            );
        }
    }

    // An unknown project: exit 2, the URL, and the projects there.
    let unknown = mock.eval(
        dir.path(),
        &[
            &format!("phoenix://{}/nope", server.authority()),
            "--metrics",
            METRICS,
        ],
    );
    let err = stderr(&unknown);
    assert_eq!(unknown.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("project `nope` does not exist at {}", server.url)),
        "{err}"
    );
    assert!(
        err.contains("hint: the projects there:") && err.contains(PROJECT),
        "{err}"
    );

    // Phoenix dies while the run scores: the run finishes whole, the writes are counted.
    // One sample at a time, each call 300 ms and none from the cache (the runs above filled
    // it with these very calls): after the first sample is journaled the rest take seconds,
    // so the server is gone before the annotations are written at the end.
    let slow = endpoint(MockConfig {
        latency: Duration::from_millis(300),
        ..MockConfig::default()
    });
    let mut args: Vec<String> = [
        "eval",
        &source,
        "--metrics",
        METRICS,
        "--out",
        "run-dies",
        "--annotate",
        "--concurrency",
        "1",
        "--no-cache",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(slow.flags());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let child = command(dir.path(), &args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let journal = dir.path().join("run-dies/results.jsonl");
    wait_for("the first scored sample", || {
        std::fs::read_to_string(&journal).is_ok_and(|text| !text.is_empty())
    });
    server.kill();
    let dies = child.wait_with_output().unwrap();
    let err = stderr(&dies);
    assert!(dies.status.success(), "{err}");
    assert!(
        err.contains(&format!("warning: {written} annotations not written")),
        "{err}"
    );
    assert!(err.contains("`rageval export phoenix"), "{err}");
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("run-dies/manifest.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(manifest["status"], "complete");
    assert_eq!(crate::phoenix::scores(&dir.path().join("run-dies")), scores);
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn an_unreachable_phoenix_exits_2_with_its_url_and_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let port = closed_port();
    let output = rageval(
        dir.path(),
        &[
            "eval",
            &format!("phoenix://127.0.0.1:{port}/p"),
            "--judge",
            "heuristic",
        ],
    );
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "cannot read the traces of project `p` at http://127.0.0.1:{port}"
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "hint: nothing answers at http://127.0.0.1:{port}: start Phoenix"
        )),
        "{err}"
    );
}

#[test]
fn a_phoenix_that_refuses_the_key_exits_2_and_the_key_never_shows() {
    // A stand-in that answers 401 to everything, as Phoenix with authentication does.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let mut buffer = [0u8; 4096];
            let _ = stream.read(&mut buffer);
            let body = r#"{"detail": "Invalid token px-key-that-must-not-show"}"#;
            let _ = write!(
                stream,
                "HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let output = command(
        dir.path(),
        &[
            "eval",
            &format!("phoenix://127.0.0.1:{port}/p"),
            "--judge",
            "heuristic",
        ],
    )
    .env("PHOENIX_API_KEY", "px-key-that-must-not-show")
    .output()
    .unwrap();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("http://127.0.0.1:{port}")), "{err}");
    assert!(
        err.contains("hint: this Phoenix asks for an API key: set PHOENIX_API_KEY"),
        "{err}"
    );
    assert!(!err.contains("px-key-that-must-not-show"), "{err}");
}
