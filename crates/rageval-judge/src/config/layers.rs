//! The one precedence rule of the judge's layered settings: a command-line flag over an
//! environment variable over `rageval.toml` over the default, the first layer that holds a
//! value winning — uv's `Combine` (`flags.combine(env).combine(file)`), one field at a time.
//!
//! A variable is read only when no flag gives the setting, so a flag overrides a variable
//! that does not read. Its error names the variable and what it must be, never the value:
//! a misplaced value may be a key. Blank counts as unset.

use crate::error::JudgeError;

/// An environment variable that holds one layered setting: its name, how its text reads,
/// and what it must be (for the error).
pub(crate) struct Var<T> {
    /// The variable's name.
    pub(crate) name: &'static str,
    read: fn(&str) -> Option<T>,
    expected: &'static str,
}

impl<T> Var<T> {
    /// A variable whose text reads with `read`, else is refused as not `expected`.
    pub(crate) const fn new(
        name: &'static str,
        read: fn(&str) -> Option<T>,
        expected: &'static str,
    ) -> Self {
        Var {
            name,
            read,
            expected,
        }
    }
}

impl<T: std::str::FromStr> Var<T> {
    /// A variable read with `T`'s `FromStr`.
    pub(crate) const fn parsed(name: &'static str, expected: &'static str) -> Self {
        Var::new(name, |text| text.parse().ok(), expected)
    }
}

impl Var<String> {
    /// A variable whose text is the value (it always reads).
    pub(crate) const fn text(name: &'static str) -> Self {
        Var::new(name, |text| Some(text.to_owned()), "text")
    }
}

/// The environment, as the resolver sees it.
pub(crate) struct Environment<'a, L> {
    lookup: &'a L,
}

impl<'a, L: Fn(&str) -> Option<String>> Environment<'a, L> {
    pub(crate) fn new(lookup: &'a L) -> Self {
        Environment { lookup }
    }

    /// The variable `name` as it is set, untrimmed (for readers with rules of their own).
    pub(crate) fn raw(&self, name: &str) -> Option<String> {
        (self.lookup)(name)
    }

    /// The variable `name` as text, trimmed; `None` when unset or blank.
    pub(crate) fn text(&self, name: &str) -> Option<String> {
        non_empty(self.lookup, name)
    }

    /// The variable's value; `None` when unset or blank, an error naming it when it does
    /// not read.
    pub(crate) fn get<T>(&self, var: &Var<T>) -> Result<Option<T>, JudgeError> {
        match self.text(var.name) {
            None => Ok(None),
            Some(raw) => (var.read)(&raw).map(Some).ok_or_else(|| {
                JudgeError::Settings(format!("{}: expected {}", var.name, var.expected))
            }),
        }
    }

    /// The one rule: the flag when given, else the variable, else the file's value. The
    /// default is the caller's, applied to what this returns.
    pub(crate) fn layered<T>(
        &self,
        flag: Option<T>,
        var: &Var<T>,
        file: Option<T>,
    ) -> Result<Option<T>, JudgeError> {
        if flag.is_some() {
            return Ok(flag);
        }
        Ok(self.get(var)?.or(file))
    }
}

/// The variable `name` through `lookup`, trimmed; `None` when unset or blank.
pub(crate) fn non_empty(lookup: &impl Fn(&str) -> Option<String>, name: &str) -> Option<String> {
    lookup(name)
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    const RPM: Var<u32> = Var::parsed("RPM", "a whole number of requests per minute");

    fn layered(
        flag: Option<u32>,
        variable: Option<&str>,
        file: Option<u32>,
    ) -> Result<Option<u32>, JudgeError> {
        let vars: HashMap<&str, String> = variable
            .map(|value| ("RPM", value.to_owned()))
            .into_iter()
            .collect();
        let lookup = |name: &str| vars.get(name).cloned();
        Environment::new(&lookup).layered(flag, &RPM, file)
    }

    #[test]
    fn the_first_layer_that_holds_a_value_wins() {
        assert_eq!(layered(Some(1), Some("2"), Some(3)).unwrap(), Some(1));
        assert_eq!(layered(None, Some("2"), Some(3)).unwrap(), Some(2));
        assert_eq!(layered(None, None, Some(3)).unwrap(), Some(3));
        assert_eq!(layered(None, Some("  "), Some(3)).unwrap(), Some(3));
        assert_eq!(layered(None, None, None).unwrap(), None);
    }

    #[test]
    fn a_flag_overrides_a_variable_that_does_not_read() {
        assert_eq!(layered(Some(1), Some("lots"), None).unwrap(), Some(1));
    }

    #[test]
    fn a_variable_that_does_not_read_is_named_and_not_quoted() {
        let error = layered(None, Some("sk-misplaced-7731"), Some(3)).unwrap_err();
        assert_eq!(
            error.to_string(),
            "judge settings: RPM: expected a whole number of requests per minute"
        );
    }
}
