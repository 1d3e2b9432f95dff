//! Where a request may come from: the one check every server of this crate (`serve`, the
//! labelling page, the review page) makes before anything else.
//!
//! A server on loopback answers only requests whose `Host` is a loopback name —
//! `localhost`, `127.0.0.1` (any of 127.0.0.0/8), `[::1]` — at its own port. A page on
//! another site whose name the attacker points at 127.0.0.1 (DNS rebinding) sends its own
//! name as `Host` and is refused with 403, so it cannot read a run or post a label. A
//! request that may write (any method but `GET`, `HEAD` and `OPTIONS`) that carries an
//! `Origin` must name one of those hosts there too (a browser sends it with every such
//! request). A server beyond loopback needs a token (`check_exposure`), which is what
//! defends it: its names are the machine's, which it cannot know, so any `Host` passes.

use std::net::{IpAddr, Ipv6Addr, SocketAddr};

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::{Next, from_fn};
use axum::response::Response;

/// Which hosts a server answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostRule {
    /// Loopback names only, at `port` when it is known (`None`: any port, for a router not
    /// yet bound to a socket).
    Loopback { port: Option<u16> },
    /// Any host: a server beyond loopback, where the token is required.
    Any,
}

impl HostRule {
    /// The rule of a server bound to `addr` (its real port, once bound).
    pub fn for_address(addr: SocketAddr) -> Self {
        if addr.ip().is_loopback() {
            Self::Loopback {
                port: Some(addr.port()),
            }
        } else {
            Self::Any
        }
    }

    /// Whether a request whose `Host` is `host` (`name[:port]`) is answered.
    pub fn allows_host(self, host: &str) -> bool {
        let Self::Loopback { port } = self else {
            return true;
        };
        let Some((name, given_port)) = split_host(host) else {
            return false;
        };
        // A `Host` without a port names HTTP's default one.
        let port_matches = port.is_none_or(|own| given_port.unwrap_or(80) == own);
        port_matches && is_loopback_name(name)
    }

    /// Whether a request from a page at `origin` (`scheme://host[:port]`, or `null`) may
    /// write.
    pub fn allows_origin(self, origin: &str) -> bool {
        if self == Self::Any {
            return true;
        }
        origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"))
            .is_some_and(|host| self.allows_host(host))
    }

    /// Why a request with `headers` and `method` is refused, if it is. The `Host` is the
    /// header, else the authority of an HTTP/2 request's URI (`authority`).
    fn refusal(
        self,
        method: &Method,
        headers: &HeaderMap,
        authority: Option<&str>,
    ) -> Option<&'static str> {
        if self == Self::Any {
            return None;
        }
        let host = headers
            .get(header::HOST)
            .and_then(|value| value.to_str().ok())
            .or(authority);
        if !host.is_some_and(|host| self.allows_host(host)) {
            return Some(
                "this server answers only at a loopback address (localhost, 127.0.0.1, [::1]) \
                 and its own port: the request named another host",
            );
        }
        let reads = matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS);
        let origin = headers
            .get(header::ORIGIN)
            .map(|value| value.to_str().unwrap_or_default());
        if !reads && origin.is_some_and(|origin| !self.allows_origin(origin)) {
            return Some(
                "this server answers only at a loopback address, and takes writes only from \
                 its own pages: the request came from a page of another origin",
            );
        }
        None
    }
}

/// `routes` behind `rule`: a refused request gets 403 and a JSON error, before any route
/// (or the token check) sees it.
pub(crate) fn guard_hosts(routes: Router, rule: HostRule) -> Router {
    routes.layer(from_fn(move |request: Request, next: Next| async move {
        let authority = request.uri().authority().map(|a| a.as_str().to_owned());
        match rule.refusal(request.method(), request.headers(), authority.as_deref()) {
            None => next.run(request).await,
            Some(why) => refused(why),
        }
    }))
}

fn refused(why: &str) -> Response {
    let mut response = crate::api::json_response(&serde_json::json!({ "error": why }));
    *response.status_mut() = StatusCode::FORBIDDEN;
    response
}

/// `name[:port]` split, the brackets of an IPv6 address kept off the name; `None` when the
/// port is not a number or the brackets do not close.
fn split_host(host: &str) -> Option<(&str, Option<u16>)> {
    let (name, port) = if let Some(rest) = host.strip_prefix('[') {
        let (name, after) = rest.split_once(']')?;
        match after {
            "" => (name, None),
            _ => (name, Some(after.strip_prefix(':')?)),
        }
    } else {
        match host.rsplit_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (host, None),
        }
    };
    let port = port.map(str::parse).transpose().ok()?;
    Some((name, port))
}

/// `localhost` (any case, with or without the root's dot) or a loopback address.
fn is_loopback_name(name: &str) -> bool {
    let name = name.strip_suffix('.').unwrap_or(name);
    name.eq_ignore_ascii_case("localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
        || name.parse::<Ipv6Addr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names_at_the_own_port_pass_and_nothing_else() {
        let rule = HostRule::for_address("127.0.0.1:8321".parse().unwrap());
        for host in [
            "127.0.0.1:8321",
            "localhost:8321",
            "LocalHost:8321",
            "localhost.:8321",
            "[::1]:8321",
            "127.1.2.3:8321",
        ] {
            assert!(rule.allows_host(host), "{host}");
        }
        for host in [
            "evil.example",
            "evil.example:8321",
            "localhost.evil.example:8321",
            "127.0.0.1.nip.io:8321",
            "127.0.0.1:8322",
            "127.0.0.1",
            "[::1",
            "[::1]x",
            "localhost:port",
            "10.0.0.1:8321",
            "",
        ] {
            assert!(!rule.allows_host(host), "{host}");
        }
        let unbound = HostRule::Loopback { port: None };
        assert!(unbound.allows_host("localhost") && unbound.allows_host("[::1]:1"));
        assert!(HostRule::for_address("0.0.0.0:8321".parse().unwrap()).allows_host("anything"));
    }

    #[test]
    fn writes_from_another_origin_are_refused() {
        let rule = HostRule::for_address("127.0.0.1:8321".parse().unwrap());
        let headers = |host: &str, origin: Option<&str>| {
            let mut headers = HeaderMap::new();
            headers.insert(header::HOST, host.parse().unwrap());
            if let Some(origin) = origin {
                headers.insert(header::ORIGIN, origin.parse().unwrap());
            }
            headers
        };
        let own = "127.0.0.1:8321";
        for (method, origin, refused) in [
            (Method::POST, Some("http://127.0.0.1:8321"), false),
            (Method::POST, Some("http://localhost:8321"), false),
            (Method::POST, None, false),
            (Method::POST, Some("http://evil.example"), true),
            (Method::POST, Some("null"), true),
            (Method::PUT, Some("http://127.0.0.1:9999"), true),
            // Reads carry no Origin check: their Host is what is checked.
            (Method::GET, Some("http://evil.example"), false),
        ] {
            let why = rule.refusal(&method, &headers(own, origin), None);
            assert_eq!(why.is_some(), refused, "{method} from {origin:?}");
        }
        // HTTP/2 names the host in the URI's authority instead of a header.
        assert!(
            rule.refusal(&Method::GET, &HeaderMap::new(), Some(own))
                .is_none()
        );
        assert!(
            rule.refusal(&Method::GET, &HeaderMap::new(), None)
                .is_some()
        );
    }
}
