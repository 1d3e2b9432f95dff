//! Sending a run's evaluation events to an OTLP/HTTP endpoint: a Collector (`/v1/logs`,
//! the conventions' form) or a backend that takes only traces (`/v1/traces`; Phoenix takes
//! protobuf only). A base URL gets the signal's path appended, as OpenTelemetry's
//! `OTEL_EXPORTER_OTLP_ENDPOINT` does; a URL that already ends in `/v1/logs` or `/v1/traces`
//! is used as it is and says which signal to send.

use std::fmt;
use std::str::FromStr;

use rageval_judge::{ApiKey, RetryPolicy};
use rageval_sources::rest::{Body, DEFAULT_REST_TIMEOUT};
use rageval_sources::{RestAuth, RestClient};
use reqwest::Method;

use super::{Request, logs_requests, now_unix_nano, protobuf, traces_requests};
use crate::writes::{Sent, Writes, send_batches};
use crate::{ExportError, ExportRun};

/// Log records (or spans) per request.
const PER_REQUEST: usize = 512;

/// Which OTLP signal carries the events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// Log records with the event name (`/v1/logs`).
    Logs,
    /// An evaluation span per sample with span events (`/v1/traces`).
    Traces,
}

impl Signal {
    fn path(self) -> &'static str {
        match self {
            Signal::Logs => "v1/logs",
            Signal::Traces => "v1/traces",
        }
    }
}

impl FromStr for Signal {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "logs" => Ok(Signal::Logs),
            "traces" => Ok(Signal::Traces),
            other => Err(format!("`{other}` is not an OTLP signal: logs or traces")),
        }
    }
}

impl fmt::Display for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Signal::Logs => "logs",
            Signal::Traces => "traces",
        })
    }
}

/// The OTLP/HTTP encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    /// `application/x-protobuf` (OpenTelemetry's default; the one Phoenix takes).
    #[default]
    HttpProtobuf,
    /// `application/json` (OTLP/JSON).
    HttpJson,
}

impl FromStr for Protocol {
    type Err = String;

    /// The values of `OTEL_EXPORTER_OTLP_PROTOCOL`: `http/protobuf`, `http/json`.
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "http/protobuf" => Ok(Protocol::HttpProtobuf),
            "http/json" => Ok(Protocol::HttpJson),
            other => Err(format!(
                "`{other}` is not an OTLP/HTTP protocol: http/protobuf or http/json"
            )),
        }
    }
}

/// Where to send the events, and how.
#[derive(Debug, Clone)]
pub struct OtlpEndpoint {
    client: RestClient,
    path: String,
    pub signal: Signal,
    pub protocol: Protocol,
}

impl OtlpEndpoint {
    /// The endpoint at `url`: a signal's URL (`…/v1/traces`), or a base URL to which
    /// `signal`'s path (logs unless named) is appended. `header` is a credential header
    /// (`name`, key) the collector asks for.
    pub fn new(
        url: &str,
        signal: Option<Signal>,
        protocol: Protocol,
        header: Option<(String, ApiKey)>,
    ) -> Result<Self, ExportError> {
        let url = url.trim().trim_end_matches('/');
        let named = [Signal::Traces, Signal::Logs]
            .into_iter()
            .find(|signal| url.ends_with(&format!("/{}", signal.path())));
        if let (Some(named), Some(asked)) = (named, signal) {
            if named != asked {
                return Err(ExportError::Config {
                    what: rageval_judge::settings::display_endpoint(url),
                    detail: format!("the url is the {named} endpoint, but {asked} were asked for"),
                });
            }
        }
        let signal = named.or(signal).unwrap_or(Signal::Logs);
        let base = match named {
            Some(named) => &url[..url.len() - named.path().len() - 1],
            None => url,
        };
        let path = signal.path();
        let auth = match header {
            Some((name, key)) => RestAuth::Header { name, key },
            None => RestAuth::None,
        };
        let client = RestClient::new(base, auth, DEFAULT_REST_TIMEOUT, writer_retry())?;
        Ok(OtlpEndpoint {
            client,
            path: path.to_owned(),
            signal,
            protocol,
        })
    }

    /// The endpoint's URL as messages name it.
    pub fn url(&self) -> String {
        format!("{}/{}", self.client.endpoint(), self.path)
    }

    async fn send(&self, request: &Request) -> Result<(), rageval_sources::SourceError> {
        let json;
        let bytes;
        let body = match self.protocol {
            Protocol::HttpJson => {
                json = request.to_json();
                Body::Json(&json)
            }
            Protocol::HttpProtobuf => {
                bytes = protobuf::encode(request);
                Body::Bytes {
                    content_type: "application/x-protobuf",
                    bytes: &bytes,
                }
            }
        };
        self.client
            .send(Method::POST, &self.path, &[], body)
            .await?;
        Ok(())
    }
}

/// Retries of a writer: fewer than the judge's, since a writer that cannot write only
/// counts the failure and the run goes on.
pub(crate) fn writer_retry() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 3,
        ..RetryPolicy::default()
    }
}

/// Sends every event of `run` to `endpoint`.
pub async fn push(run: &ExportRun, endpoint: &OtlpEndpoint) -> Writes {
    let time = now_unix_nano();
    let requests = match endpoint.signal {
        Signal::Logs => logs_requests(run, time, PER_REQUEST),
        Signal::Traces => traces_requests(run, time, PER_REQUEST),
    };
    let batches: Vec<(usize, Request)> = requests
        .into_iter()
        .map(|request| (events_in(&request), request))
        .collect();
    send_batches(batches, |request| async move {
        match endpoint.send(&request).await {
            Ok(()) => Sent::All,
            Err(error) => Sent::Failed(error),
        }
    })
    .await
}

/// The number of events a request carries.
fn events_in(request: &Request) -> usize {
    match request {
        Request::Logs { records, .. } => records.len(),
        Request::Traces { spans, .. } => spans.iter().map(|span| span.events.len()).sum(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_url_names_the_signal_and_a_base_url_gets_its_path() {
        let phoenix = OtlpEndpoint::new(
            "http://127.0.0.1:6006/v1/traces",
            None,
            Protocol::HttpProtobuf,
            None,
        )
        .unwrap();
        assert_eq!(phoenix.signal, Signal::Traces);
        assert_eq!(phoenix.url(), "http://127.0.0.1:6006/v1/traces");
        let collector =
            OtlpEndpoint::new("http://127.0.0.1:4318/", None, Protocol::HttpJson, None).unwrap();
        assert_eq!(collector.url(), "http://127.0.0.1:4318/v1/logs");
        assert!("grpc".parse::<Protocol>().is_err());
        assert!(
            OtlpEndpoint::new(
                "http://h:1/v1/traces",
                Some(Signal::Logs),
                Protocol::HttpJson,
                None
            )
            .is_err()
        );
        assert_eq!("traces".parse::<Signal>(), Ok(Signal::Traces));
    }
}
