//! What the Elasticsearch retriever and the RAG-service client share: building a
//! `reqwest::Client` (ring as the TLS provider, as the judge does), the retry loop, and the
//! shortening and redaction of error bodies.
//!
//! Retries follow the judge's [`RetryPolicy`]: only retryable errors (timeouts, connection
//! failures, 429, 5xx) are tried again, with jittered exponential back-off that never waits
//! less than the server's `Retry-After`.

use std::future::Future;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rageval_judge::{ApiKey, RetryPolicy};
use reqwest::header::HeaderMap;

use crate::error::SourceError;

/// Longest a TCP/TLS connection may take to open.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Longest quoted error-body line, in characters.
const MAX_ERROR_LINE_CHARS: usize = 200;

/// A client with per-request and connect timeouts and default headers.
pub(crate) fn client(
    endpoint: &str,
    timeout: Duration,
    connect_timeout: Duration,
    headers: HeaderMap,
) -> Result<reqwest::Client, SourceError> {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Losing a race here means another thread installed a provider: equally fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
    reqwest::Client::builder()
        .default_headers(headers)
        .timeout(timeout)
        .connect_timeout(connect_timeout)
        .build()
        .map_err(|source| SourceError::Client {
            endpoint: endpoint.to_owned(),
            source: source.without_url(),
        })
}

/// The error for a failed `send` or body read.
pub(crate) fn transport_error(
    endpoint: &str,
    timeout: Duration,
    error: reqwest::Error,
) -> SourceError {
    if error.is_timeout() {
        SourceError::Timeout {
            endpoint: endpoint.to_owned(),
            timeout,
        }
    } else {
        // Without the URL: it may carry credentials in its user info or query string.
        SourceError::Transport {
            endpoint: endpoint.to_owned(),
            source: error.without_url(),
        }
    }
}

/// The first non-blank line of `body`, shortened, with every secret replaced by `****`.
pub(crate) fn first_line(body: &str, secrets: &[&ApiKey]) -> String {
    let line = body.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let mut line: String = line.trim().chars().take(MAX_ERROR_LINE_CHARS).collect();
    if line.is_empty() {
        return "(empty body)".into();
    }
    for secret in secrets {
        line = secret.redact_in(&line);
    }
    line
}

/// `Retry-After` in seconds (the HTTP-date form is ignored: back-off applies instead).
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let seconds = headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse::<f64>()
        .ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds))
}

/// Runs `attempt` until it succeeds, fails with an error that is not retryable, or has been
/// tried `policy.max_attempts` times (then [`SourceError::RetriesExhausted`]).
pub(crate) async fn with_retries<T, F, Fut>(
    policy: &RetryPolicy,
    attempt: F,
) -> Result<T, SourceError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, SourceError>>,
{
    with_retries_counted(policy, &mut 0, attempt).await
}

/// [`with_retries`], adding every attempt made (the first and each retry) to `requests`, so
/// that a caller making several such calls can say how many requests a result took.
pub(crate) async fn with_retries_counted<T, F, Fut>(
    policy: &RetryPolicy,
    requests: &mut u32,
    mut attempt: F,
) -> Result<T, SourceError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, SourceError>>,
{
    let mut made = 0;
    loop {
        made += 1;
        *requests += 1;
        match attempt().await {
            Ok(value) => return Ok(value),
            Err(error) if !error.is_retryable() => return Err(error),
            Err(error) if made >= policy.max_attempts.max(1) => {
                if made == 1 {
                    return Err(error);
                }
                return Err(SourceError::RetriesExhausted {
                    attempts: made,
                    last: Box::new(error),
                });
            }
            Err(error) => {
                let server = error
                    .retry_after()
                    .map(|d| d.min(policy.max_retry_after))
                    .unwrap_or_default();
                let wait = policy.backoff(made, jitter_unit()).max(server);
                tokio::time::sleep(wait).await;
            }
        }
    }
}

/// A uniform-ish draw in [0, 1) from the clock, to spread the waits of concurrent requests;
/// nothing observable depends on it.
fn jitter_unit() -> f64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    f64::from(nanos % 1_000_000) / 1_000_000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn policy(attempts: u32) -> RetryPolicy {
        RetryPolicy {
            max_attempts: attempts,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(2),
            ..RetryPolicy::default()
        }
    }

    fn status(code: u16) -> SourceError {
        SourceError::Status {
            endpoint: "e".into(),
            status: code,
            first_line: String::new(),
            retry_after: None,
        }
    }

    #[tokio::test]
    async fn retries_only_retryable_errors_and_stops_at_the_limit() {
        let calls = AtomicU32::new(0);
        let result: Result<(), _> = with_retries(&policy(3), || {
            calls.fetch_add(1, Ordering::Relaxed);
            async { Err(status(503)) }
        })
        .await;
        assert_eq!(calls.load(Ordering::Relaxed), 3);
        assert!(matches!(
            result,
            Err(SourceError::RetriesExhausted { attempts: 3, .. })
        ));

        calls.store(0, Ordering::Relaxed);
        let result: Result<(), _> = with_retries(&policy(3), || {
            calls.fetch_add(1, Ordering::Relaxed);
            async { Err(status(400)) }
        })
        .await;
        assert_eq!(calls.load(Ordering::Relaxed), 1);
        assert!(matches!(
            result,
            Err(SourceError::Status { status: 400, .. })
        ));
    }

    #[tokio::test]
    async fn a_later_success_is_returned() {
        let calls = AtomicU32::new(0);
        let result = with_retries(&policy(5), || {
            let n = calls.fetch_add(1, Ordering::Relaxed);
            async move { if n < 2 { Err(status(429)) } else { Ok(n) } }
        })
        .await;
        assert_eq!(result.unwrap(), 2);
    }

    #[test]
    fn first_line_redacts_and_shortens() {
        let key = ApiKey::new("sk-secret-123");
        assert_eq!(
            first_line("\n  bad key sk-secret-123\nmore", &[&key]),
            "bad key ****"
        );
        assert_eq!(first_line("", &[]), "(empty body)");
        assert_eq!(
            first_line(&"x".repeat(500), &[]).len(),
            MAX_ERROR_LINE_CHARS
        );
    }
}
