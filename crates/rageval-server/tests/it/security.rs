//! What a request must not reach: files outside the runs directory (by `..`, encoded `..`,
//! absolute paths or symlinks), any route without the token when one is set, any method
//! that could write.

use axum::body::Body;
use axum::http::{Request, StatusCode, header};

use crate::{LOOPBACK_HOST, SECRET, fixture, get, get_request, send, server};

#[tokio::test]
async fn path_traversal_is_refused() {
    let dir = fixture();
    let app = server(dir.path(), None);
    for (uri, status) in [
        ("/runs/..", StatusCode::BAD_REQUEST),
        ("/runs/%2e%2e", StatusCode::BAD_REQUEST),
        ("/runs/%2E%2E/report", StatusCode::BAD_REQUEST),
        ("/runs/..%2Fsecret.txt", StatusCode::BAD_REQUEST),
        (
            "/runs/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
            StatusCode::BAD_REQUEST,
        ),
        ("/api/runs/%2e%2e%2foutside", StatusCode::BAD_REQUEST),
        ("/api/runs/..%2Foutside/samples", StatusCode::BAD_REQUEST),
        ("/runs/%2Fetc%2Fpasswd", StatusCode::BAD_REQUEST),
        ("/api/runs/%2Ftmp", StatusCode::BAD_REQUEST),
        ("/runs/.hidden", StatusCode::BAD_REQUEST),
        (
            "/api/compare?run=base&run=../outside",
            StatusCode::BAD_REQUEST,
        ),
        ("/compare?run=base&run=%2Fetc", StatusCode::BAD_REQUEST),
        // Not one path segment: no route matches.
        ("/runs/../secret.txt", StatusCode::NOT_FOUND),
        ("/runs/base/../../secret.txt", StatusCode::NOT_FOUND),
        // Symlinks whose real paths leave the root: a run directory, and one run's journal.
        ("/runs/escape", StatusCode::NOT_FOUND),
        ("/api/runs/escape/samples", StatusCode::NOT_FOUND),
        ("/runs/escape/report", StatusCode::NOT_FOUND),
        ("/api/runs/leaky/samples", StatusCode::NOT_FOUND),
        ("/api/compare?run=base&run=leaky", StatusCode::NOT_FOUND),
    ] {
        let answer = get(&app, uri).await;
        assert_eq!(answer.status, status, "{uri}: {}", answer.body);
        assert!(
            !answer.body.contains(SECRET),
            "{uri} leaked the file outside"
        );
    }
    // A link that stays inside the root is a run like any other.
    assert_eq!(get(&app, "/api/runs/alias").await.status, StatusCode::OK);
}

#[tokio::test]
async fn with_a_token_every_request_needs_it() {
    let dir = fixture();
    let app = server(dir.path(), Some("s3cret"));
    for uri in [
        "/",
        "/runs/base",
        "/api/runs",
        "/api/runs/base/samples",
        "/nowhere",
    ] {
        let answer = get(&app, uri).await;
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{uri}");
        assert_eq!(
            answer.header("www-authenticate"),
            "Bearer realm=\"rageval\""
        );
        assert!(!answer.body.contains("faithfulness"));
    }
    let with = |value: &str, name: header::HeaderName| {
        get_request("/api/runs")
            .header(name, value)
            .body(Body::empty())
            .unwrap()
    };
    let wrong = send(&app, with("Bearer s3cre", header::AUTHORIZATION)).await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
    let right = send(&app, with("Bearer s3cret", header::AUTHORIZATION)).await;
    assert_eq!(right.status, StatusCode::OK);
    // Regression: the scheme is case-insensitive (RFC 9110), `bearer` was refused.
    let lower = send(&app, with("bearer s3cret", header::AUTHORIZATION)).await;
    assert_eq!(lower.status, StatusCode::OK);
    let basic = send(&app, with("Basic s3cret", header::AUTHORIZATION)).await;
    assert_eq!(basic.status, StatusCode::UNAUTHORIZED);
    let cookie = send(&app, with("a=b; rageval_token=s3cret", header::COOKIE)).await;
    assert_eq!(cookie.status, StatusCode::OK);
    assert_eq!(
        get(&app, "/api/runs?token=nope").await.status,
        StatusCode::UNAUTHORIZED
    );

    // A browser opens a page once with ?token=: it gets the cookie and a clean address.
    let first = get(&app, "/runs/base?metric=faithfulness&token=s3cret").await;
    assert_eq!(first.status, StatusCode::SEE_OTHER);
    assert_eq!(first.header("location"), "/runs/base?metric=faithfulness");
    assert_eq!(
        first.header("set-cookie"),
        "rageval_token=s3cret; HttpOnly; SameSite=Strict; Path=/"
    );
    // Scripts may pass it in the query of an API call.
    assert_eq!(
        get(&app, "/api/runs?token=s3cret").await.status,
        StatusCode::OK
    );
}

#[tokio::test]
async fn nothing_writes() {
    let dir = fixture();
    let app = server(dir.path(), None);
    for method in ["POST", "PUT", "DELETE", "PATCH"] {
        for uri in ["/", "/runs/base", "/api/runs/base"] {
            let request = Request::builder()
                .method(method)
                .uri(uri)
                .header(header::HOST, LOOPBACK_HOST)
                .body(Body::from("{}"))
                .unwrap();
            let answer = send(&app, request).await;
            assert_eq!(
                answer.status,
                StatusCode::METHOD_NOT_ALLOWED,
                "{method} {uri}"
            );
        }
    }
}
