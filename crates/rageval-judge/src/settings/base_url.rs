//! What a base URL may carry besides where to go, and what may be shown of it.
//!
//! A base URL can hold credentials in two places: user info (`http://user:pass@host/v1`,
//! sent as HTTP Basic authentication) and the query string (`…/v1?api-key=K`, which some
//! gateways want on every request). [`display_endpoint`] is the one redaction every display
//! of an endpoint goes through (messages, the manifest, settings, the cache's origin hash):
//! no user info, each query value `****`. [`request_url`] joins a path onto a base URL
//! before its query, which it keeps; [`credentials`] and [`url_secrets`] give the backend
//! what it sends and what it must redact from any body it quotes.

use crate::secret::REDACTED;

/// A base URL's parts: scheme (with `://`, or empty), user info, host and port, path, and
/// query (without `?`); a fragment is dropped.
struct Parts<'a> {
    scheme: &'a str,
    userinfo: Option<&'a str>,
    authority: &'a str,
    path: &'a str,
    query: Option<&'a str>,
}

fn parts(url: &str) -> Parts<'_> {
    let url = url.split('#').next().unwrap_or(url);
    let (scheme, rest) = match url.find("://") {
        Some(at) => url.split_at(at + 3),
        None => ("", url),
    };
    let (before_query, query) = match rest.split_once('?') {
        Some((before, query)) => (before, Some(query)),
        None => (rest, None),
    };
    let (authority, path) = match before_query.find('/') {
        Some(at) => before_query.split_at(at),
        None => (before_query, ""),
    };
    let (userinfo, authority) = match authority.rsplit_once('@') {
        Some((userinfo, host)) => (Some(userinfo), host),
        None => (None, authority),
    };
    Parts {
        scheme,
        userinfo,
        authority,
        path,
        query,
    }
}

/// The URL as it may be shown or stored: without user info, each query value replaced by
/// `****` (a name alone, `?token`, is replaced whole), without a fragment.
pub fn display_endpoint(url: &str) -> String {
    let parts = parts(url);
    let mut shown = format!("{}{}{}", parts.scheme, parts.authority, parts.path);
    if let Some(query) = parts.query {
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((name, _)) => format!("{name}={REDACTED}"),
                None if pair.is_empty() => String::new(),
                None => REDACTED.to_owned(),
            })
            .collect();
        shown.push('?');
        shown.push_str(&pairs.join("&"));
    }
    shown
}

/// The URL a request for `path` under `base_url` goes to: the path joined onto the base
/// URL's own, before its query string, which is kept; without user info (the backend sends
/// it as a header, [`credentials`]).
pub(crate) fn request_url(base_url: &str, path: &str) -> String {
    let parts = parts(base_url);
    let base_path = parts.path.trim_end_matches('/');
    let mut url = format!(
        "{}{}{base_path}/{}",
        parts.scheme,
        parts.authority,
        path.trim_start_matches('/')
    );
    if let Some(query) = parts.query.filter(|q| !q.is_empty()) {
        url.push('?');
        url.push_str(query);
    }
    url
}

/// The user and password of a base URL's user info, percent-decoded; `None` without one.
pub(crate) fn credentials(base_url: &str) -> Option<(String, String)> {
    let userinfo = parts(base_url).userinfo?;
    let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
    let decoded = |text: &str| percent_decoded(text).unwrap_or_else(|| text.to_owned());
    Some((decoded(user), decoded(password)))
}

/// The `Authorization` value of HTTP Basic authentication for `user` and `password`.
pub(crate) fn basic_authorization(user: &str, password: &str) -> String {
    format!("Basic {}", base64(format!("{user}:{password}").as_bytes()))
}

/// What a URL may carry that is a credential, for redaction from bodies a server sends
/// back: the user and password of its user info, as written and decoded, and their Basic
/// encoding; the values of its query string, as written and decoded. Longest first, so a
/// secret that holds another is redacted whole.
pub(crate) fn url_secrets(url: &str) -> Vec<String> {
    let parts = parts(url);
    let mut secrets = Vec::new();
    if let Some(userinfo) = parts.userinfo {
        secrets.extend(userinfo.split(':').map(str::to_owned));
    }
    if let Some((user, password)) = credentials(url) {
        let basic = basic_authorization(&user, &password);
        if let Some(encoded) = basic.strip_prefix("Basic ") {
            secrets.push(encoded.to_owned());
        }
        secrets.push(basic);
    }
    secrets.extend(
        parts
            .query
            .unwrap_or("")
            .split('&')
            .filter_map(|pair| pair.split_once('=').map(|(_, value)| value.to_owned())),
    );
    let decoded: Vec<String> = secrets
        .iter()
        .filter_map(|s| percent_decoded(s).filter(|d| d != s))
        .collect();
    secrets.extend(decoded);
    secrets.retain(|s| !s.is_empty());
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    secrets.dedup();
    secrets
}

/// `%XX` sequences decoded; `None` when the result is not UTF-8.
fn percent_decoded(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// Standard base64 with padding (RFC 4648), as HTTP Basic authentication writes it.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let group = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, &b)| acc | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                let index = (group >> (18 - 6 * i)) & 0x3f;
                out.push(char::from(ALPHABET[index as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648() {
        // RFC 4648, section 10.
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), encoded, "{plain}");
        }
        // RFC 7617's example.
        assert_eq!(
            basic_authorization("Aladdin", "open sesame"),
            "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="
        );
    }

    #[test]
    fn issue_40_10_a_path_goes_before_the_query_which_is_kept() {
        assert_eq!(
            request_url("http://h:8/v1?key=K&x=1", "chat/completions"),
            "http://h:8/v1/chat/completions?key=K&x=1"
        );
        assert_eq!(
            request_url("https://u:p@h/v1/", "embeddings"),
            "https://h/v1/embeddings"
        );
        assert_eq!(request_url("http://h", "files"), "http://h/files");
        assert_eq!(
            request_url("http://h/v1#frag", "chat/completions"),
            "http://h/v1/chat/completions"
        );
    }

    #[test]
    fn issue_40_10_displays_hold_no_user_info_and_no_query_value() {
        assert_eq!(
            display_endpoint("https://me:pw@host:8443/v1?api-key=K&x=1#f"),
            "https://host:8443/v1?api-key=****&x=****"
        );
        assert_eq!(display_endpoint("http://h/v1?token"), "http://h/v1?****");
        assert_eq!(display_endpoint("http://a@b@h/v1"), "http://h/v1");
        assert_eq!(
            display_endpoint("http://127.0.0.1:8/v1"),
            "http://127.0.0.1:8/v1"
        );
    }

    #[test]
    fn url_secrets_are_the_user_info_its_basic_form_and_query_values() {
        let secrets = url_secrets("https://me:s%40cret@host:8443/v1?key=abcd&x=1");
        for secret in [
            "me",
            "s%40cret",
            "s@cret",
            "abcd",
            "1",
            "Basic bWU6c0BjcmV0",
            "bWU6c0BjcmV0",
        ] {
            assert!(
                secrets.contains(&secret.to_owned()),
                "{secret}: {secrets:?}"
            );
        }
        assert_eq!(secrets[0], "Basic bWU6c0BjcmV0", "longest first");
        assert_eq!(
            credentials("http://me:s%40cret@h/v1"),
            Some(("me".into(), "s@cret".into()))
        );
        assert!(url_secrets("http://127.0.0.1:8080/v1").is_empty());
    }
}
