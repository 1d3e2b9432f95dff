//! The part of OpenTelemetry's OTLP data model an evaluation needs — a resource, a scope,
//! log records (events) and spans with span events, attributes of four scalar types — and
//! its OTLP/JSON encoding: field names in lowerCamelCase, trace and span ids as lowercase
//! hex, 64-bit integers as decimal strings, enums as numbers (the OTLP specification's
//! "JSON Protobuf Encoding"). [`super::protobuf`] writes the same values as protobuf.

use serde_json::{Map, Value, json};

/// An attribute's value.
#[derive(Debug, Clone, PartialEq)]
pub enum AnyValue {
    Str(String),
    Double(f64),
    Int(i64),
    Bool(bool),
}

/// One attribute.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyValue {
    pub key: String,
    pub value: AnyValue,
}

impl KeyValue {
    pub fn str(key: &str, value: impl Into<String>) -> Self {
        KeyValue {
            key: key.to_owned(),
            value: AnyValue::Str(value.into()),
        }
    }

    pub fn double(key: &str, value: f64) -> Self {
        KeyValue {
            key: key.to_owned(),
            value: AnyValue::Double(value),
        }
    }
}

/// What produced the telemetry: the resource's attributes and the instrumentation scope.
#[derive(Debug, Clone, PartialEq)]
pub struct Origin {
    pub resource: Vec<KeyValue>,
    pub scope_name: String,
    pub scope_version: String,
}

/// A log record that is an event (it has an event name).
#[derive(Debug, Clone, PartialEq)]
pub struct LogRecord {
    pub time_unix_nano: u64,
    pub event_name: String,
    /// OpenTelemetry's INFO is 9.
    pub severity_number: i32,
    pub trace_id: Option<[u8; 16]>,
    pub span_id: Option<[u8; 8]>,
    pub attributes: Vec<KeyValue>,
}

/// An event inside a span.
#[derive(Debug, Clone, PartialEq)]
pub struct SpanEvent {
    pub time_unix_nano: u64,
    pub name: String,
    pub attributes: Vec<KeyValue>,
}

/// A span.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    pub parent_span_id: Option<[u8; 8]>,
    pub name: String,
    /// OpenTelemetry's SPAN_KIND_INTERNAL is 1.
    pub kind: i32,
    pub start_time_unix_nano: u64,
    pub end_time_unix_nano: u64,
    pub attributes: Vec<KeyValue>,
    pub events: Vec<SpanEvent>,
}

/// One OTLP export request: logs (`/v1/logs`) or traces (`/v1/traces`).
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    Logs {
        origin: Origin,
        records: Vec<LogRecord>,
    },
    Traces {
        origin: Origin,
        spans: Vec<Span>,
    },
}

impl Request {
    /// The request as protobuf (`application/x-protobuf`).
    pub fn to_protobuf(&self) -> Vec<u8> {
        super::protobuf::encode(self)
    }

    /// The request in OTLP/JSON (`ExportLogsServiceRequest` / `ExportTraceServiceRequest`).
    pub fn to_json(&self) -> Value {
        match self {
            Request::Logs { origin, records } => json!({"resourceLogs": [{
                "resource": {"attributes": attributes(&origin.resource)},
                "scopeLogs": [{
                    "scope": scope(origin),
                    "logRecords": records.iter().map(log_record).collect::<Vec<_>>(),
                }],
            }]}),
            Request::Traces { origin, spans } => json!({"resourceSpans": [{
                "resource": {"attributes": attributes(&origin.resource)},
                "scopeSpans": [{
                    "scope": scope(origin),
                    "spans": spans.iter().map(span).collect::<Vec<_>>(),
                }],
            }]}),
        }
    }
}

/// Lowercase hex, as OTLP/JSON writes ids.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The bytes of a hex id of exactly `N` bytes that is not all zeros (an invalid id).
pub fn from_hex<const N: usize>(text: &str) -> Option<[u8; N]> {
    let text = text.trim();
    if text.len() != 2 * N || !text.is_ascii() {
        return None;
    }
    let mut out = [0u8; N];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
    }
    out.iter().any(|b| *b != 0).then_some(out)
}

fn scope(origin: &Origin) -> Value {
    json!({"name": origin.scope_name, "version": origin.scope_version})
}

fn log_record(record: &LogRecord) -> Value {
    let mut out = Map::new();
    out.insert(
        "timeUnixNano".into(),
        json!(record.time_unix_nano.to_string()),
    );
    out.insert(
        "observedTimeUnixNano".into(),
        json!(record.time_unix_nano.to_string()),
    );
    out.insert("severityNumber".into(), json!(record.severity_number));
    out.insert("eventName".into(), json!(record.event_name));
    if let Some(trace) = record.trace_id {
        out.insert("traceId".into(), json!(hex(&trace)));
    }
    if let Some(span) = record.span_id {
        out.insert("spanId".into(), json!(hex(&span)));
    }
    out.insert("attributes".into(), attributes(&record.attributes));
    Value::Object(out)
}

fn span(span: &Span) -> Value {
    let mut out = Map::new();
    out.insert("traceId".into(), json!(hex(&span.trace_id)));
    out.insert("spanId".into(), json!(hex(&span.span_id)));
    if let Some(parent) = span.parent_span_id {
        out.insert("parentSpanId".into(), json!(hex(&parent)));
    }
    out.insert("name".into(), json!(span.name));
    out.insert("kind".into(), json!(span.kind));
    out.insert(
        "startTimeUnixNano".into(),
        json!(span.start_time_unix_nano.to_string()),
    );
    out.insert(
        "endTimeUnixNano".into(),
        json!(span.end_time_unix_nano.to_string()),
    );
    out.insert("attributes".into(), attributes(&span.attributes));
    let events: Vec<Value> = span
        .events
        .iter()
        .map(|event| {
            json!({
                "timeUnixNano": event.time_unix_nano.to_string(),
                "name": event.name,
                "attributes": attributes(&event.attributes),
            })
        })
        .collect();
    out.insert("events".into(), Value::Array(events));
    Value::Object(out)
}

fn attributes(list: &[KeyValue]) -> Value {
    Value::Array(
        list.iter()
            .map(|kv| json!({"key": kv.key, "value": any_value(&kv.value)}))
            .collect(),
    )
}

fn any_value(value: &AnyValue) -> Value {
    match value {
        AnyValue::Str(text) => json!({"stringValue": text}),
        AnyValue::Double(number) => json!({"doubleValue": number}),
        AnyValue::Int(number) => json!({"intValue": number.to_string()}),
        AnyValue::Bool(flag) => json!({"boolValue": flag}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_hex_of_the_right_length_and_not_zero() {
        let trace: [u8; 16] = from_hex("7f3a0c11e2b94d0a8c5e6b2f1d4a9e01").unwrap();
        assert_eq!(hex(&trace), "7f3a0c11e2b94d0a8c5e6b2f1d4a9e01");
        assert_eq!(
            from_hex::<8>("A1B2C3D4E5F60001").map(|b| hex(&b)).unwrap(),
            "a1b2c3d4e5f60001"
        );
        assert!(from_hex::<8>("a1b2").is_none());
        assert!(from_hex::<8>("zzb2c3d4e5f60001").is_none());
        assert!(from_hex::<8>("0000000000000000").is_none());
    }

    #[test]
    fn json_follows_the_otlp_json_rules() {
        let origin = Origin {
            resource: vec![KeyValue::str("service.name", "rageval")],
            scope_name: "rageval".into(),
            scope_version: "1".into(),
        };
        let request = Request::Logs {
            origin,
            records: vec![LogRecord {
                time_unix_nano: 1_700_000_000_000_000_000,
                event_name: "e".into(),
                severity_number: 9,
                trace_id: None,
                span_id: Some([1, 2, 3, 4, 5, 6, 7, 8]),
                attributes: vec![
                    KeyValue::double("d", 0.5),
                    KeyValue {
                        key: "i".into(),
                        value: AnyValue::Int(3),
                    },
                ],
            }],
        };
        let json = request.to_json();
        let record = &json["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0];
        assert_eq!(record["timeUnixNano"], "1700000000000000000");
        assert_eq!(record["spanId"], "0102030405060708");
        assert!(record.get("traceId").is_none());
        assert_eq!(record["attributes"][0]["value"]["doubleValue"], 0.5);
        assert_eq!(record["attributes"][1]["value"]["intValue"], "3");
    }
}
