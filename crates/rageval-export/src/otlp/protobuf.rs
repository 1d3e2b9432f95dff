//! The OTLP model of [`super::model`] written as protobuf (`application/x-protobuf`, the
//! encoding every OTLP/HTTP receiver accepts, and the only one Phoenix's `/v1/traces` takes).
//!
//! Written by hand from the field numbers of opentelemetry-proto's `logs/v1`, `trace/v1`,
//! `common/v1` and `resource/v1` messages, so no protobuf compiler or generated code is
//! needed for the handful of messages an evaluation uses. Each message is encoded into its
//! own buffer and then written as a length-delimited field of its parent.

use super::model::{AnyValue, KeyValue, LogRecord, Origin, Request, Span, SpanEvent};

/// Protobuf wire types.
const VARINT: u64 = 0;
const FIXED64: u64 = 1;
const LENGTH_DELIMITED: u64 = 2;

/// A message being written.
#[derive(Default)]
struct Message(Vec<u8>);

impl Message {
    fn tag(&mut self, field: u64, wire: u64) {
        varint(&mut self.0, (field << 3) | wire);
    }

    fn bytes(&mut self, field: u64, bytes: &[u8]) {
        self.tag(field, LENGTH_DELIMITED);
        varint(&mut self.0, bytes.len() as u64);
        self.0.extend_from_slice(bytes);
    }

    fn string(&mut self, field: u64, text: &str) {
        if !text.is_empty() {
            self.bytes(field, text.as_bytes());
        }
    }

    fn message(&mut self, field: u64, message: Message) {
        self.bytes(field, &message.0);
    }

    fn fixed64(&mut self, field: u64, value: u64) {
        self.tag(field, FIXED64);
        self.0.extend_from_slice(&value.to_le_bytes());
    }

    fn double(&mut self, field: u64, value: f64) {
        self.fixed64(field, value.to_bits());
    }

    /// An int32/int64/enum/bool as a varint (negative numbers as their 64-bit two's
    /// complement, as protobuf writes int types).
    fn int(&mut self, field: u64, value: i64) {
        self.tag(field, VARINT);
        varint(&mut self.0, value as u64);
    }
}

fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8 & 0x7f) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// The request's protobuf bytes.
pub fn encode(request: &Request) -> Vec<u8> {
    let mut top = Message::default();
    match request {
        Request::Logs { origin, records } => {
            let mut scope_logs = Message::default();
            scope_logs.message(1, scope(origin));
            for record in records {
                scope_logs.message(2, log_record(record));
            }
            let mut resource_logs = Message::default();
            resource_logs.message(1, resource(origin));
            resource_logs.message(2, scope_logs);
            top.message(1, resource_logs);
        }
        Request::Traces { origin, spans } => {
            let mut scope_spans = Message::default();
            scope_spans.message(1, scope(origin));
            for one in spans {
                scope_spans.message(2, span(one));
            }
            let mut resource_spans = Message::default();
            resource_spans.message(1, resource(origin));
            resource_spans.message(2, scope_spans);
            top.message(1, resource_spans);
        }
    }
    top.0
}

fn resource(origin: &Origin) -> Message {
    let mut out = Message::default();
    attributes(&mut out, 1, &origin.resource);
    out
}

fn scope(origin: &Origin) -> Message {
    let mut out = Message::default();
    out.string(1, &origin.scope_name);
    out.string(2, &origin.scope_version);
    out
}

fn log_record(record: &LogRecord) -> Message {
    let mut out = Message::default();
    out.fixed64(1, record.time_unix_nano);
    out.int(2, i64::from(record.severity_number));
    attributes(&mut out, 6, &record.attributes);
    if let Some(trace) = record.trace_id {
        out.bytes(9, &trace);
    }
    if let Some(span) = record.span_id {
        out.bytes(10, &span);
    }
    out.fixed64(11, record.time_unix_nano);
    out.string(12, &record.event_name);
    out
}

fn span(span: &Span) -> Message {
    let mut out = Message::default();
    out.bytes(1, &span.trace_id);
    out.bytes(2, &span.span_id);
    if let Some(parent) = span.parent_span_id {
        out.bytes(4, &parent);
    }
    out.string(5, &span.name);
    out.int(6, i64::from(span.kind));
    out.fixed64(7, span.start_time_unix_nano);
    out.fixed64(8, span.end_time_unix_nano);
    attributes(&mut out, 9, &span.attributes);
    for event in &span.events {
        out.message(11, span_event(event));
    }
    out
}

fn span_event(event: &SpanEvent) -> Message {
    let mut out = Message::default();
    out.fixed64(1, event.time_unix_nano);
    out.string(2, &event.name);
    attributes(&mut out, 3, &event.attributes);
    out
}

fn attributes(out: &mut Message, field: u64, list: &[KeyValue]) {
    for kv in list {
        let mut pair = Message::default();
        pair.string(1, &kv.key);
        let mut value = Message::default();
        match &kv.value {
            // Written even when empty: an empty string is a value, not an absent one.
            AnyValue::Str(text) => value.bytes(1, text.as_bytes()),
            AnyValue::Bool(flag) => value.int(2, i64::from(*flag)),
            AnyValue::Int(number) => value.int(3, *number),
            AnyValue::Double(number) => value.double(4, *number),
        }
        pair.message(2, value);
        out.message(field, pair);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Golden bytes worked out by hand from the protobuf encoding rules: field 1 (key,
    /// length-delimited) = 0x0a, field 2 (value) = 0x12; AnyValue's double_value is field 4,
    /// wire type 1 = 0x21, little-endian IEEE 754.
    #[test]
    fn attributes_match_hand_encoded_bytes() {
        let mut out = Message::default();
        attributes(&mut out, 1, &[KeyValue::str("a", "b")]);
        assert_eq!(
            out.0,
            [0x0a, 0x08, 0x0a, 0x01, b'a', 0x12, 0x03, 0x0a, 0x01, b'b']
        );

        let mut out = Message::default();
        attributes(&mut out, 1, &[KeyValue::double("s", 0.5)]);
        let mut expected = vec![0x0a, 0x0e, 0x0a, 0x01, b's', 0x12, 0x09, 0x21];
        expected.extend_from_slice(&0.5f64.to_le_bytes());
        assert_eq!(out.0, expected);
    }

    #[test]
    fn varints_and_negative_ints_follow_protobuf() {
        let mut out = Vec::new();
        varint(&mut out, 300);
        assert_eq!(out, [0xac, 0x02]);
        let mut message = Message::default();
        message.int(1, -1);
        assert_eq!(message.0.len(), 1 + 10);
    }
}
