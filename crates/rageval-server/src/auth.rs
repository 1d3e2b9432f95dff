//! Bearer-token access. Without a token every request is answered (the server refuses to
//! start that way anywhere but loopback; see [`check_exposure`]). With one, each request
//! must carry it: as `Authorization: Bearer TOKEN` (scripts), as the `rageval_token` cookie,
//! or as `?token=TOKEN`. A browser opens a page once with `?token=`; the answer sets the
//! cookie and redirects to the same address without the token, so it leaves the address bar
//! — always to a path of this server ([`local_target`]), never to another site.

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::query::QueryParams;
use crate::{AppState, ServerError};

/// The environment variable `rageval serve` reads its token from when `--token` is absent.
pub const ENV_SERVE_TOKEN: &str = "RAGEVAL_SERVE_TOKEN";
/// The cookie a browser keeps the token in.
const COOKIE: &str = "rageval_token";
/// The query parameter that carries a token.
const TOKEN_PARAMETER: &str = "token";

/// The shared secret. Its `Debug` prints `****`, so it never reaches a log.
#[derive(Clone)]
pub struct Token(Arc<str>);

impl Token {
    /// A token of visible ASCII without quotes, commas, semicolons or backslashes (what a
    /// cookie and a header hold unquoted).
    pub fn new(secret: &str) -> Result<Self, ServerError> {
        if secret.is_empty() {
            return Err(ServerError::EmptyToken);
        }
        let cookie_safe = |b: u8| b.is_ascii_graphic() && !matches!(b, b'"' | b',' | b';' | b'\\');
        if !secret.bytes().all(cookie_safe) {
            return Err(ServerError::BadToken);
        }
        Ok(Self(secret.into()))
    }

    /// Compares in time independent of where the first difference is.
    fn matches(&self, candidate: &str) -> bool {
        let (a, b) = (self.0.as_bytes(), candidate.as_bytes());
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(****)")
    }
}

/// Refuses to serve beyond loopback without a token: every run would be readable by anyone
/// who can reach the address.
pub fn check_exposure(addr: SocketAddr, token: Option<&Token>) -> Result<(), ServerError> {
    if addr.ip().is_loopback() || token.is_some() {
        Ok(())
    } else {
        Err(ServerError::TokenRequired { addr })
    }
}

/// The middleware: passes requests that carry the token, answers the rest with 401.
pub(crate) async fn require_token(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let Some(token) = state.token() else {
        return next.run(request).await;
    };
    let bearer = header_value(&request, header::AUTHORIZATION)
        .and_then(bearer_credentials)
        .is_some_and(|given| token.matches(given));
    let cookie = header_value(&request, header::COOKIE).is_some_and(|cookies| {
        cookies
            .split(';')
            .filter_map(|pair| pair.trim().split_once('='))
            .any(|(name, value)| name == COOKIE && token.matches(value))
    });
    if bearer || cookie {
        return next.run(request).await;
    }
    let query = QueryParams::parse(request.uri().query());
    if !query
        .get(TOKEN_PARAMETER)
        .is_some_and(|given| token.matches(given))
    {
        return unauthorized();
    }
    let cookie = format!("{COOKIE}={}; HttpOnly; SameSite=Strict; Path=/", token.0);
    let path = request.uri().path();
    let for_a_browser = request.method() == Method::GET && !path.starts_with("/api/");
    let mut response = if for_a_browser {
        let target = local_target(path, &query.without(TOKEN_PARAMETER));
        let mut redirect = StatusCode::SEE_OTHER.into_response();
        if let Ok(location) = HeaderValue::from_str(&target) {
            redirect.headers_mut().insert(header::LOCATION, location);
        }
        redirect
    } else {
        next.run(request).await
    };
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

/// Where the login redirect goes: `path` (with `query`) on this server. A path that opens
/// with `//` or `/\` would read as another site's address (`//evil.example/`), so its
/// leading slashes and backslashes become one `/`.
fn local_target(path: &str, query: &str) -> String {
    let path = format!("/{}", path.trim_start_matches(['/', '\\']));
    if query.is_empty() {
        path
    } else {
        format!("{path}?{query}")
    }
}

/// The credentials of an `Authorization: Bearer …` value. The scheme is matched without
/// regard to case, as RFC 9110 §11.1 has it (`bearer`, `BEARER`); one or more spaces or tabs
/// separate it from the token.
fn bearer_credentials(value: &str) -> Option<&str> {
    let (scheme, rest) = value.trim().split_once([' ', '\t'])?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| rest.trim_start_matches([' ', '\t']))
}

fn header_value(request: &Request, name: header::HeaderName) -> Option<&str> {
    request.headers().get(name).and_then(|v| v.to_str().ok())
}

fn unauthorized() -> Response {
    let mut response = (
        StatusCode::UNAUTHORIZED,
        "this server needs its token: send `Authorization: Bearer TOKEN`, or open \
         /?token=TOKEN once in a browser\n",
    )
        .into_response();
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"rageval\""),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_checked_whole_and_never_printed() {
        let token = Token::new("s3cret-Token_1").unwrap();
        assert!(token.matches("s3cret-Token_1"));
        assert!(!token.matches("s3cret-Token_2"));
        assert!(!token.matches("s3cret"));
        assert_eq!(format!("{token:?}"), "Token(****)");
        assert!(matches!(Token::new(""), Err(ServerError::EmptyToken)));
        assert!(matches!(Token::new("a;b"), Err(ServerError::BadToken)));
        assert!(matches!(Token::new("a b"), Err(ServerError::BadToken)));
    }

    /// Regression: `Authorization: bearer TOKEN` was refused; auth schemes are
    /// case-insensitive.
    #[test]
    fn the_bearer_scheme_is_matched_without_case() {
        for value in [
            "Bearer t0k",
            "bearer t0k",
            "BEARER  t0k",
            "beaRer\tt0k ",
            " Bearer t0k",
        ] {
            assert_eq!(bearer_credentials(value), Some("t0k"), "{value:?}");
        }
        for value in ["Basic t0k", "Bearert0k", "Bearer", "t0k"] {
            assert_eq!(bearer_credentials(value), None, "{value:?}");
        }
    }

    #[test]
    fn the_login_redirect_stays_on_this_server() {
        for (path, query, target) in [
            ("/runs/a", "", "/runs/a"),
            ("/runs/a", "metric=m", "/runs/a?metric=m"),
            ("//evil.example/", "", "/evil.example/"),
            ("/\\evil.example", "x=1", "/evil.example?x=1"),
            ("", "", "/"),
        ] {
            assert_eq!(local_target(path, query), target, "{path:?}");
        }
    }

    #[test]
    fn only_loopback_may_go_without_a_token() {
        let token = Token::new("t").unwrap();
        let loopback: SocketAddr = "127.0.0.1:8321".parse().unwrap();
        let loopback6: SocketAddr = "[::1]:8321".parse().unwrap();
        let anywhere: SocketAddr = "0.0.0.0:8321".parse().unwrap();
        assert!(check_exposure(loopback, None).is_ok());
        assert!(check_exposure(loopback6, None).is_ok());
        assert!(check_exposure(anywhere, Some(&token)).is_ok());
        let error = check_exposure(anywhere, None).unwrap_err();
        assert!(error.to_string().contains("RAGEVAL_SERVE_TOKEN"), "{error}");
    }
}
