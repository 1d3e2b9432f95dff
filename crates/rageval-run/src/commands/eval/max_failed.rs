//! How many of a run's judged cells may fail before the run is not a success: `eval
//! --max-failed` and the Python package's `max_failed`, parsed by one rule ([`MaxFailed`]'s
//! `FromStr`). The count itself is `eval`'s business; this file only holds the limit.

use std::fmt;
use std::str::FromStr;

/// The largest share of judged cells that may fail, from 0 to 1; written and read as a
/// percentage (`10%`, or `10`).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct MaxFailed(f64);

impl MaxFailed {
    /// A judge that fails one cell in ten is broken, not unlucky, and its means are means of
    /// what remained.
    pub const DEFAULT: MaxFailed = MaxFailed(0.10);

    /// The limit of `percent` per cent, which must be from 0 to 100.
    pub fn percent(percent: f64) -> Result<MaxFailed, InvalidMaxFailed> {
        if (0.0..=100.0).contains(&percent) {
            Ok(MaxFailed(percent / 100.0))
        } else {
            Err(InvalidMaxFailed(format!("{percent}")))
        }
    }

    /// The share, from 0 to 1.
    pub fn share(self) -> f64 {
        self.0
    }
}

impl Default for MaxFailed {
    fn default() -> Self {
        MaxFailed::DEFAULT
    }
}

/// `10%` or `10`: a percentage from 0 to 100.
impl FromStr for MaxFailed {
    type Err = InvalidMaxFailed;

    fn from_str(text: &str) -> Result<MaxFailed, InvalidMaxFailed> {
        let number = text.trim().trim_end_matches('%').trim_end();
        number
            .parse::<f64>()
            .ok()
            .and_then(|percent| MaxFailed::percent(percent).ok())
            .ok_or_else(|| InvalidMaxFailed(text.to_owned()))
    }
}

impl fmt::Display for MaxFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}%", self.0 * 100.0)
    }
}

/// A limit that is not a percentage from 0 to 100 (the text is kept; the message, which a
/// flag's or an argument's own message quotes, says what was expected).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("expected a percentage from 0 to 100, e.g. 10%")]
pub struct InvalidMaxFailed(pub String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_percentage_with_or_without_its_sign() {
        assert_eq!("10%".parse::<MaxFailed>().unwrap().share(), 0.10);
        assert_eq!(" 2.5 % ".parse::<MaxFailed>().unwrap().share(), 0.025);
        assert_eq!("0".parse::<MaxFailed>().unwrap().share(), 0.0);
        assert_eq!("100%".parse::<MaxFailed>().unwrap().share(), 1.0);
        assert_eq!(MaxFailed::default().to_string(), "10%");
    }

    #[test]
    fn anything_else_is_refused_naming_what_was_given() {
        for text in ["101%", "-1", "nan", "inf%", "ten", "", "%"] {
            let error = text.parse::<MaxFailed>().unwrap_err();
            assert_eq!(error, InvalidMaxFailed(text.to_owned()));
            assert_eq!(
                error.to_string(),
                "expected a percentage from 0 to 100, e.g. 10%"
            );
        }
    }
}
