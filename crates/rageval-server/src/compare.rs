//! A comparison of runs named in a query (`run=a&run=b…`), with the statistics' settings
//! from the query too (`seed`, `resamples`, `permutations`, `top`) and the question
//! check's (`min_overlap`, `common` as `rageval compare --min-overlap`, `--common`). The
//! numbers are `rageval compare`'s. One request cannot ask for hours of resampling: each
//! count is bounded, and so is the comparison's whole work ([`COMPARE_WORK_BUDGET`]),
//! checked once the runs are read and before anything is drawn.

use std::collections::HashSet;

use rageval_report::{CompareSettings, Comparison, Manifest, RunData};

use crate::limits::COMPARE_WORK_BUDGET;
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
        // What the manifests record first, so a comparison past the budget is refused
        // before any journal is read; then what the journals hold.
        let manifests = self
            .names
            .iter()
            .map(|name| runs.manifest(name))
            .collect::<Result<Vec<_>, _>>()?;
        Work::of_manifests(&manifests).check(&self.settings)?;
        let loaded = self
            .names
            .iter()
            .map(|name| runs.load(name))
            .collect::<Result<Vec<_>, _>>()?;
        Work::of_runs(&loaded).check(&self.settings)?;
        let samples: Vec<_> = loaded.iter().map(|run| runs.run_samples(run)).collect();
        let mut comparison = Comparison::build_with_samples(&loaded, &samples, self.settings)?;
        for row in &mut comparison.runs {
            row.path = row.name.clone();
            row.dataset = shown_path(&row.dataset);
        }
        Ok(comparison)
    }
}

/// The size of a comparison: how many runs, metrics (over all runs) and samples (the
/// largest run's).
struct Work {
    runs: usize,
    metrics: usize,
    samples: usize,
}

impl Work {
    /// As the runs' manifests record it (a manifest without a sample count counts none).
    fn of_manifests(manifests: &[Manifest]) -> Self {
        Self {
            runs: manifests.len(),
            metrics: manifests
                .iter()
                .flat_map(|m| m.metrics.iter().map(|metric| metric.name.as_str()))
                .collect::<HashSet<_>>()
                .len(),
            samples: manifests
                .iter()
                .filter_map(|m| m.dataset.samples)
                .max()
                .unwrap_or(0),
        }
    }

    /// As the runs' journals hold it.
    fn of_runs(runs: &[RunData]) -> Self {
        Self {
            runs: runs.len(),
            metrics: runs
                .iter()
                .flat_map(RunData::metric_names)
                .collect::<HashSet<_>>()
                .len(),
            samples: runs
                .iter()
                .map(|run| run.sample_ids().len())
                .max()
                .unwrap_or(0),
        }
    }

    /// Refuses a comparison that would draw more than [`COMPARE_WORK_BUDGET`] samples: per
    /// pair and metric, `resamples + permutations` draws of up to the larger run's samples
    /// each, and with `common` each run's metrics resampled again over the questions kept.
    /// The count is an upper bound (a pair holds at most the larger run's samples).
    fn check(&self, settings: &CompareSettings) -> Result<(), ServerError> {
        let count = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
        let pairs = self.runs * self.runs.saturating_sub(1) / 2;
        let paired = count(pairs)
            .saturating_mul(count(self.metrics))
            .saturating_mul(count(self.samples));
        let resummed = if settings.common {
            count(self.runs)
                .saturating_mul(count(self.metrics))
                .saturating_mul(count(self.samples))
        } else {
            0
        };
        let draws = count(settings.resamples).saturating_add(count(settings.permutations));
        let work = paired
            .saturating_mul(draws)
            .saturating_add(resummed.saturating_mul(count(settings.resamples)));
        if work <= COMPARE_WORK_BUDGET {
            return Ok(());
        }
        Err(ServerError::CompareTooBig {
            work,
            budget: COMPARE_WORK_BUDGET,
            pairs,
            metrics: self.metrics,
            fits: COMPARE_WORK_BUDGET / paired.saturating_add(resummed).max(1),
        })
    }
}
