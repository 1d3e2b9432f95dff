//! Choosing a run's samples by one metric's outcome: a score range (`min ≤ score ≤ max`,
//! both ends inclusive, either may be left open) or a status (`score`, `undefined`,
//! `failed`). The run page and the API filter the same way, from the same query
//! parameters: `metric`, `min`, `max`, `status`.

use rageval_core::Outcome;
use rageval_report::RunData;
use serde::Serialize;

use crate::ServerError;
use crate::query::QueryParams;

/// The status a filter asks for, named as in `results.jsonl`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StatusFilter {
    Score,
    Undefined,
    Failed,
}

impl StatusFilter {
    pub const ALL: [StatusFilter; 3] = [Self::Score, Self::Undefined, Self::Failed];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Score => "score",
            Self::Undefined => "undefined",
            Self::Failed => "failed",
        }
    }
}

/// Which samples to show. Without a metric every sample passes.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SampleFilter {
    pub metric: Option<String>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub status: Option<StatusFilter>,
}

impl SampleFilter {
    pub(crate) fn from_query(query: &QueryParams) -> Result<Self, ServerError> {
        let bound = |name: &str| -> Result<Option<f64>, ServerError> {
            let value = query.parsed::<f64>(name, "a number")?;
            match value {
                Some(v) if !v.is_finite() => Err(ServerError::bad_query(
                    name,
                    &v.to_string(),
                    "expected a finite number",
                )),
                _ => Ok(value),
            }
        };
        let (min, max) = (bound("min")?, bound("max")?);
        let status = query
            .get("status")
            .map(|value| {
                StatusFilter::ALL
                    .into_iter()
                    .find(|s| s.as_str() == value)
                    .ok_or_else(|| {
                        ServerError::bad_query(
                            "status",
                            value,
                            "expected score, undefined or failed",
                        )
                    })
            })
            .transpose()?;
        let filter = Self {
            metric: query.get("metric").map(String::from),
            min,
            max,
            status,
        };
        let bounded = min.is_some() || max.is_some();
        if filter.metric.is_none() && (bounded || status.is_some()) {
            return Err(ServerError::bad_query(
                "metric",
                "",
                "min, max and status filter one metric: name it",
            ));
        }
        if let (Some(low), Some(high)) = (min, max)
            && low > high
        {
            return Err(ServerError::bad_query(
                "min",
                &low.to_string(),
                format!("greater than max ({high})"),
            ));
        }
        if bounded && status.is_some_and(|s| s != StatusFilter::Score) {
            return Err(ServerError::bad_query(
                "status",
                status.map_or("", StatusFilter::as_str),
                "min and max select scores; undefined and failed samples have none",
            ));
        }
        Ok(filter)
    }

    /// Whether any condition is set.
    pub fn is_active(&self) -> bool {
        self.min.is_some() || self.max.is_some() || self.status.is_some()
    }

    /// The indices (in journal order, as in [`RunData::sample_ids`]) of the samples that
    /// pass; an error when the run has no such metric.
    pub fn select(&self, run: &RunData) -> Result<Vec<usize>, ServerError> {
        let ids = run.sample_ids();
        let Some(metric) = &self.metric else {
            return Ok((0..ids.len()).collect());
        };
        let metrics = run.metric_names();
        if !metrics.contains(metric) {
            return Err(ServerError::bad_query(
                "metric",
                metric,
                format!(
                    "the run has no such metric (it has: {})",
                    metrics.join(", ")
                ),
            ));
        }
        let outcomes = run.outcomes();
        Ok(ids
            .iter()
            .enumerate()
            .filter(|(_, id)| self.passes(outcomes.get(&(**id, metric.as_str())).copied()))
            .map(|(index, _)| index)
            .collect())
    }

    fn passes(&self, outcome: Option<&Outcome>) -> bool {
        if !self.is_active() {
            return true;
        }
        let status = match outcome {
            None => return false,
            Some(Outcome::Score { .. }) => StatusFilter::Score,
            Some(Outcome::Undefined { .. }) => StatusFilter::Undefined,
            Some(Outcome::Failed { .. }) => StatusFilter::Failed,
        };
        let value = outcome.and_then(Outcome::value);
        let wanted = self.status.unwrap_or(StatusFilter::Score);
        status == wanted
            && self.min.is_none_or(|low| value.is_some_and(|v| v >= low))
            && self.max.is_none_or(|high| value.is_some_and(|v| v <= high))
    }

    /// The filter in words, for a page: `faithfulness from 0.2 to 0.6`.
    pub fn describe(&self) -> String {
        let Some(metric) = self.metric.as_ref().filter(|_| self.is_active()) else {
            return "every sample".into();
        };
        let range = match (self.min, self.max) {
            (Some(low), Some(high)) => format!(" from {low} to {high}"),
            (Some(low), None) => format!(" at least {low}"),
            (None, Some(high)) => format!(" at most {high}"),
            (None, None) => format!(" {}", self.status.map_or("", StatusFilter::as_str)),
        };
        format!("{metric}{range}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rageval_report::testing::write_run;

    fn filter(query: &str) -> Result<SampleFilter, ServerError> {
        SampleFilter::from_query(&QueryParams::parse(Some(query)))
    }

    #[test]
    fn ranges_are_inclusive_and_statuses_exact() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run");
        write_run(
            &path,
            "d",
            &[
                ("a", "m", Outcome::bare(0.2)),
                ("b", "m", Outcome::bare(0.5)),
                ("c", "m", Outcome::undefined("no answer")),
                ("d", "m", Outcome::failed("judge said nonsense")),
                ("e", "m", Outcome::bare(0.9)),
                ("e", "k", Outcome::bare(0.1)),
            ],
        );
        let run = RunData::load(&path).unwrap();
        let select = |query: &str| filter(query).unwrap().select(&run).unwrap();
        assert_eq!(select(""), vec![0, 1, 2, 3, 4]);
        assert_eq!(select("metric=m"), vec![0, 1, 2, 3, 4]);
        assert_eq!(select("metric=m&min=0.2&max=0.5"), vec![0, 1]);
        assert_eq!(select("metric=m&min=0.5"), vec![1, 4]);
        assert_eq!(select("metric=m&max=0.2"), vec![0]);
        assert_eq!(select("metric=m&status=undefined"), vec![2]);
        assert_eq!(select("metric=m&status=failed"), vec![3]);
        assert_eq!(select("metric=m&status=score"), vec![0, 1, 4]);
        // A sample the metric never ran on passes no condition on it.
        assert_eq!(select("metric=k&status=score"), vec![4]);
        assert_eq!(
            filter("metric=m&min=0.2&max=0.5").unwrap().describe(),
            "m from 0.2 to 0.5"
        );
        let error = filter("metric=x&min=0").unwrap().select(&run).unwrap_err();
        assert!(error.to_string().contains("(it has: m, k)"), "{error}");
    }

    #[test]
    fn contradictions_are_refused() {
        for (query, message) in [
            ("min=0.1", "name it"),
            ("metric=m&min=0.6&max=0.5", "greater than max (0.5)"),
            ("metric=m&min=abc", "expected a number"),
            ("metric=m&min=inf", "expected a finite number"),
            ("metric=m&status=odd", "expected score, undefined or failed"),
            (
                "metric=m&status=failed&max=1",
                "undefined and failed samples have none",
            ),
        ] {
            let error = filter(query).unwrap_err();
            assert!(error.to_string().contains(message), "{query}: {error}");
            assert_eq!(error.status(), axum::http::StatusCode::BAD_REQUEST);
        }
    }
}
