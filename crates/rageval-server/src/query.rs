//! A request's query string as name–value pairs, with repeated names kept (`run=a&run=b`)
//! and empty values treated as absent, as an HTML form sends an empty field.

use std::str::FromStr;

use crate::ServerError;

#[derive(Debug, Clone, Default)]
pub(crate) struct QueryParams(Vec<(String, String)>);

impl QueryParams {
    pub(crate) fn parse(query: Option<&str>) -> Self {
        Self(
            form_urlencoded::parse(query.unwrap_or_default().as_bytes())
                .into_owned()
                .filter(|(_, value)| !value.is_empty())
                .collect(),
        )
    }

    /// The last value given for `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// Every value given for `name`, in order.
    pub(crate) fn all(&self, name: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
            .collect()
    }

    /// `name` parsed as a `T`, or `None` when absent; `what` says what was expected.
    pub(crate) fn parsed<T: FromStr>(
        &self,
        name: &str,
        what: &str,
    ) -> Result<Option<T>, ServerError> {
        self.get(name)
            .map(|value| {
                value
                    .trim()
                    .parse()
                    .map_err(|_| ServerError::bad_query(name, value, format!("expected {what}")))
            })
            .transpose()
    }

    /// A whole number in `1..=max`, or `default` when absent.
    pub(crate) fn count(
        &self,
        name: &str,
        default: usize,
        max: usize,
    ) -> Result<usize, ServerError> {
        let value = self
            .parsed::<usize>(name, "a whole number")?
            .unwrap_or(default);
        if (1..=max).contains(&value) {
            Ok(value)
        } else {
            Err(ServerError::bad_query(
                name,
                &value.to_string(),
                format!("expected 1 to {max}"),
            ))
        }
    }

    /// The pairs without `name` (to rebuild a URL without the token).
    pub(crate) fn without(&self, name: &str) -> String {
        let mut serializer = form_urlencoded::Serializer::new(String::new());
        for (key, value) in self.0.iter().filter(|(key, _)| key != name) {
            serializer.append_pair(key, value);
        }
        serializer.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_names_and_empty_values() {
        let q = QueryParams::parse(Some("run=a&run=b%2Fc&min=&max=0.5&token=t"));
        assert_eq!(q.all("run"), vec!["a", "b/c"]);
        assert_eq!(q.get("min"), None);
        assert_eq!(q.parsed::<f64>("max", "a number").unwrap(), Some(0.5));
        assert_eq!(q.without("token"), "run=a&run=b%2Fc&max=0.5");
        let error = q.parsed::<f64>("run", "a number").unwrap_err();
        assert_eq!(
            error.to_string(),
            "bad query parameter `run=b/c`: expected a number"
        );
        assert!(q.count("top", 5, 100).is_ok());
        assert!(
            QueryParams::parse(Some("top=0"))
                .count("top", 5, 100)
                .is_err()
        );
    }
}
