//! Secrets that must never reach a log, an error message, a cache file or a report.
//!
//! [`ApiKey`] wraps the key string; its `Debug` and `Display` print `****`, it has no
//! `Serialize`, and the only way to read it is [`ApiKey::expose`], which the HTTP backend calls
//! when it builds the `Authorization` header. This module must not offer any other way out.

use std::fmt;

/// What every redacted value prints as.
pub const REDACTED: &str = "****";

/// An API key (or any bearer token). Printing it in any way shows `****`.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key; surrounding whitespace (a trailing newline from a file) is trimmed.
    pub fn new(key: impl Into<String>) -> Self {
        let key: String = key.into();
        ApiKey(key.trim().to_owned())
    }

    /// The key itself, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Replaces every occurrence of the key in `text` by `****` — for server error bodies,
    /// which sometimes echo the credential they rejected.
    pub fn redact_in(&self, text: &str) -> String {
        // A very short key would redact ordinary words; such a key is not a real credential.
        if self.0.len() < 4 {
            return text.to_owned();
        }
        text.replace(&self.0, REDACTED)
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_and_display_hide_the_key() {
        let key = ApiKey::new("sk-very-secret-123\n");
        assert_eq!(format!("{key:?}"), "****");
        assert_eq!(format!("{key}"), "****");
        assert_eq!(key.expose(), "sk-very-secret-123");
    }

    #[test]
    fn redact_in_replaces_every_occurrence() {
        let key = ApiKey::new("sk-abcdef");
        assert_eq!(
            key.redact_in("bad key sk-abcdef (sk-abcdef)"),
            "bad key **** (****)"
        );
    }
}
