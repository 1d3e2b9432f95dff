//! A comparison of runs named in a query (`run=a&run=b…`), with the statistics' settings
//! from the query too (`seed`, `resamples`, `permutations`, `top`, bounded so one request
//! cannot ask for hours of resampling) and the question check's (`min_overlap`, `common`
//! as `rageval compare --min-overlap`, `--common`). The numbers are `rageval compare`'s.

use rageval_report::{CompareSettings, Comparison, read_run_samples};

use crate::public::shown_path;
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
        let min_overlap = query.parsed::<f64>("min_overlap", "a share between 0 and 1")?;
        if let Some(share) = min_overlap.filter(|share| !(0.0..=1.0).contains(share)) {
            return Err(ServerError::bad_query(
                "min_overlap",
                &share.to_string(),
                "a share between 0 and 1",
            ));
        }
        let common = match query.get("common") {
            None | Some("" | "0" | "false") => false,
            Some("1" | "true" | "on") => true,
            Some(other) => {
                return Err(ServerError::bad_query("common", other, "1 or 0"));
            }
        };
        let settings = CompareSettings {
            seed: query
                .parsed("seed", "a whole number")?
                .unwrap_or(defaults.seed),
            resamples: query.count("resamples", defaults.resamples, MAX_DRAWS)?,
            permutations: query.count("permutations", defaults.permutations, MAX_DRAWS)?,
            top_flips: query.count("top", defaults.top_flips, MAX_TOP)?,
            min_overlap,
            common,
            ..defaults
        };
        Ok(Self { names, settings })
    }

    /// Loads the named runs and compares them (blocking: reads every journal, and each
    /// run's dataset when it still hashes as recorded, to pair samples by question). The
    /// comparison names runs by name and datasets as [`shown_path`] shows them.
    pub(crate) fn compare(self, runs: &RunsRoot) -> Result<Comparison, ServerError> {
        let loaded = self
            .names
            .iter()
            .map(|name| runs.load(name))
            .collect::<Result<Vec<_>, _>>()?;
        // A dataset that cannot be re-read leaves its run's samples paired by id alone.
        let samples: Vec<_> = loaded
            .iter()
            .map(|run| read_run_samples(run).unwrap_or_default())
            .collect();
        let mut comparison = Comparison::build_with_samples(&loaded, &samples, self.settings)?;
        for row in &mut comparison.runs {
            row.path = row.name.clone();
            row.dataset = shown_path(&row.dataset);
        }
        Ok(comparison)
    }
}
