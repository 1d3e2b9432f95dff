//! A comparison of runs named in a query (`run=a&run=b…`), with the statistics' settings
//! from the query too (`seed`, `resamples`, `permutations`, `top`), bounded so one request
//! cannot ask for hours of resampling. The numbers are `rageval compare`'s.

use rageval_report::{CompareSettings, Comparison};

use crate::query::QueryParams;
use crate::{RunsRoot, ServerError};

/// Runs one comparison may hold (every pair is compared: 10 runs are 45 pairs).
const MAX_RUNS: usize = 10;
/// The most bootstrap resamples or permutations one request may ask for.
const MAX_DRAWS: usize = 100_000;
/// The most samples listed per metric as moving most.
const MAX_TOP: usize = 100;

/// What a comparison request asks for, read from its query before any file is.
#[derive(Debug, Clone)]
pub(crate) struct CompareRequest {
    pub(crate) names: Vec<String>,
    pub(crate) settings: CompareSettings,
}

impl CompareRequest {
    pub(crate) fn from_query(query: &QueryParams) -> Result<Self, ServerError> {
        let names: Vec<String> = query.all("run").into_iter().map(String::from).collect();
        if names.len() > MAX_RUNS {
            return Err(ServerError::bad_query(
                "run",
                &names.len().to_string(),
                format!("compare at most {MAX_RUNS} runs at once"),
            ));
        }
        let defaults = CompareSettings::default();
        let settings = CompareSettings {
            seed: query
                .parsed("seed", "a whole number")?
                .unwrap_or(defaults.seed),
            resamples: query.count("resamples", defaults.resamples, MAX_DRAWS)?,
            permutations: query.count("permutations", defaults.permutations, MAX_DRAWS)?,
            top_flips: query.count("top", defaults.top_flips, MAX_TOP)?,
            ..defaults
        };
        Ok(Self { names, settings })
    }

    /// Loads the named runs and compares them (blocking: reads every journal).
    pub(crate) fn compare(self, runs: &RunsRoot) -> Result<Comparison, ServerError> {
        let loaded = self
            .names
            .iter()
            .map(|name| runs.load(name))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Comparison::build(&loaded, self.settings)?)
    }
}
