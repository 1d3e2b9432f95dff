//! The `gen_ai.evaluation.result` events: the OTLP/JSON file's records against the semantic
//! conventions' attribute names (written out here, not taken from the crate's constants),
//! and the protobuf encoding decoded by opentelemetry-proto's generated Python code.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

use rageval_export::ExportRun;
use rageval_export::otlp::{self, Request};
use serde_json::Value;

use super::fixtures::write_run;

/// The attribute names of the conventions' `gen_ai.evaluation.result` event (semantic
/// conventions v1.39, `model/gen-ai/events.yaml`), and the two of rageval's own.
const ALLOWED: &[&str] = &[
    "gen_ai.evaluation.name",
    "gen_ai.evaluation.score.value",
    "gen_ai.evaluation.score.label",
    "gen_ai.evaluation.explanation",
    "gen_ai.response.id",
    "error.type",
    "rageval.sample.id",
];

fn attributes(record: &Value) -> Vec<(String, Value)> {
    record["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|kv| (kv["key"].as_str().unwrap().to_owned(), kv["value"].clone()))
        .collect()
}

#[test]
fn the_file_holds_one_event_per_cell_with_the_conventions_names() {
    let dir = tempfile::tempdir().unwrap();
    write_run(dir.path());
    let run = ExportRun::open(dir.path()).unwrap();
    let (path, events) = otlp::write_file(&run).unwrap();
    assert_eq!(path, dir.path().join("evaluations.otlp.jsonl"));
    assert_eq!(events, 8);
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4, "one request per sample");
    let mut seen = 0;
    for line in &lines {
        let scope = &line["resourceLogs"][0]["scopeLogs"][0];
        for record in scope["logRecords"].as_array().unwrap() {
            seen += 1;
            assert_eq!(record["eventName"], "gen_ai.evaluation.result");
            let attributes = attributes(record);
            let keys: BTreeSet<&str> = attributes.iter().map(|(k, _)| k.as_str()).collect();
            assert!(keys.contains("gen_ai.evaluation.name"), "{record}");
            for key in &keys {
                assert!(ALLOWED.contains(key), "unknown attribute {key} in {record}");
            }
            let value = |name: &str| {
                attributes
                    .iter()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.clone())
            };
            let sample = value("rageval.sample.id").unwrap()["stringValue"].clone();
            let metric = value("gen_ai.evaluation.name").unwrap()["stringValue"].clone();
            match (sample.as_str().unwrap(), metric.as_str().unwrap()) {
                ("t1", "faithfulness") => {
                    assert_eq!(record["traceId"], "7f3a0c11e2b94d0a8c5e6b2f1d4a9e01");
                    assert_eq!(record["spanId"], "a1b2c3d4e5f60001");
                    assert_eq!(
                        value("gen_ai.evaluation.score.value").unwrap()["doubleValue"],
                        1.0
                    );
                    assert_eq!(
                        value("gen_ai.evaluation.score.label").unwrap()["stringValue"],
                        "supported"
                    );
                    assert_eq!(
                        value("gen_ai.evaluation.explanation").unwrap()["stringValue"],
                        "1. supported: the context says so"
                    );
                }
                ("t2", _) => {
                    assert_eq!(
                        value("gen_ai.response.id").unwrap()["stringValue"],
                        "chatcmpl-2"
                    );
                }
                ("t3", "faithfulness") => {
                    assert!(value("gen_ai.evaluation.score.value").is_none());
                    assert_eq!(
                        value("error.type").unwrap()["stringValue"],
                        "rageval.evaluation_failed"
                    );
                }
                ("plain", _) => {
                    assert!(record.get("traceId").is_none() && record.get("spanId").is_none());
                }
                _ => {}
            }
        }
    }
    assert_eq!(seen, 8);
}

/// The venv `scripts/setup-trace-servers.sh install` made, when the variable names one.
fn trace_servers_python(test: &str) -> Option<PathBuf> {
    let Some(venv) = std::env::var_os("RAGEVAL_TRACE_SERVERS_VENV") else {
        #[allow(clippy::print_stderr, reason = "a skipped test says why")]
        {
            eprintln!(
                "skipped {test}: RAGEVAL_TRACE_SERVERS_VENV is not set (scripts/test.sh sets it \
                 after scripts/setup-trace-servers.sh install; CI runs this test)"
            );
        }
        return None;
    };
    Some(PathBuf::from(venv).join("bin/python"))
}

/// Decodes protobuf bytes with opentelemetry-proto and prints them as OTLP/JSON (ids as
/// hex, enums as numbers).
const DECODE: &str = r#"
import base64, json, sys
from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
kind, path = sys.argv[1], sys.argv[2]
message = ExportLogsServiceRequest() if kind == "logs" else ExportTraceServiceRequest()
data = open(path, "rb").read()
message.ParseFromString(data)
assert message.ByteSize() == len(data), "fields the decoder does not know"
def hexed(node):
    if isinstance(node, dict):
        return {k: (base64.b64decode(v).hex() if k in ("traceId", "spanId", "parentSpanId") else hexed(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [hexed(v) for v in node]
    return node
print(json.dumps(hexed(MessageToDict(message, use_integers_for_enums=True))))
"#;

/// Our JSON without what protobuf's JSON leaves out (empty lists).
fn without_empty_lists(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(_, v)| !matches!(v, Value::Array(a) if a.is_empty()))
                .map(|(k, v)| (k.clone(), without_empty_lists(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_empty_lists).collect()),
        other => other.clone(),
    }
}

#[test]
fn protobuf_decodes_with_opentelemetry_proto_to_the_json_we_write() {
    let Some(python) =
        trace_servers_python("protobuf_decodes_with_opentelemetry_proto_to_the_json_we_write")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    write_run(dir.path());
    let run = ExportRun::open(dir.path()).unwrap();
    let requests: Vec<(&str, Request)> = vec![
        (
            "logs",
            otlp::logs_requests(&run, 1_700_000_000_123_456_789, 100).remove(0),
        ),
        (
            "traces",
            otlp::traces_requests(&run, 1_700_000_000_123_456_789, 100).remove(0),
        ),
    ];
    for (kind, request) in requests {
        let path = dir.path().join(format!("{kind}.pb"));
        std::fs::write(&path, request.to_protobuf()).unwrap();
        let output = Command::new(&python)
            .args(["-c", DECODE, kind])
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let decoded: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(decoded, without_empty_lists(&request.to_json()), "{kind}");
    }
}
