//! Integration tests of rageval-export: run directories written as `eval` writes them, read
//! as cells and sent to stand-in servers (a Phoenix that refuses the key, one that dies
//! mid-export, one missing some spans), and the OTLP encodings checked against
//! opentelemetry-proto's own decoder (Python, from the trace servers' venv). The real
//! Phoenix and MLflow servers are exercised end to end by the binary's tests.

#![allow(clippy::unwrap_used)]

mod fixtures;
mod otlp;
mod phoenix;
