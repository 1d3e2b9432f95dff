//! A `pairwise` run read beside a comparison: which of its versions is which compared run
//! ([`PairwiseSummary::versions_of_runs`], the one rule `compare --pairwise` and `compare
//! --gate-pairwise` both follow), and each later version's head-to-head result against the
//! first on the version table ([`Comparison::add_head_to_head`], [`head_to_head_text`]).

use std::path::Path;

use crate::pairwise_render::{interval, number};
use crate::{Comparison, PairwiseSummary, ReportError, RunData, VersionPair, pipeline_of_eval};

impl PairwiseSummary {
    /// For each of `runs`, in order, the index of the version of this run that is it: a
    /// version read from the run's directory, or its pipeline folder — else, failing that,
    /// from the run's dataset file. Each version answers for one run at most.
    pub fn versions_of_runs(&self, runs: &[RunData]) -> Vec<Option<usize>> {
        let sources: Vec<Option<std::path::PathBuf>> = self
            .versions
            .iter()
            .map(|v| Path::new(&v.source).canonicalize().ok())
            .collect();
        let mut taken = vec![false; sources.len()];
        let mut find = |place: Option<std::path::PathBuf>| {
            let place = place?;
            let index =
                (0..sources.len()).find(|&i| !taken[i] && sources[i].as_ref() == Some(&place))?;
            taken[index] = true;
            Some(index)
        };
        let mut found: Vec<Option<usize>> = runs
            .iter()
            .map(|run| {
                find(run.path.canonicalize().ok()).or_else(|| {
                    let pipeline = pipeline_of_eval(&run.path)?;
                    find(pipeline.canonicalize().ok())
                })
            })
            .collect();
        for (run, slot) in runs.iter().zip(&mut found) {
            if slot.is_none() {
                *slot = find(Path::new(&run.manifest.dataset.path).canonicalize().ok());
            }
        }
        found
    }
}

impl Comparison {
    /// Sets each later run's head-to-head result against the first from `summary`, whose
    /// version `versions[i]` is run `i`; refuses when some run is none of its versions.
    pub fn add_head_to_head(
        &mut self,
        summary: &PairwiseSummary,
        versions: &[Option<usize>],
    ) -> Result<(), ReportError> {
        let missing: Vec<&str> = self
            .runs
            .iter()
            .zip(versions.iter().chain(std::iter::repeat(&None)))
            .filter(|(_, version)| version.is_none())
            .map(|(row, _)| row.path.as_str())
            .collect();
        if !missing.is_empty() {
            let sources: Vec<&str> = summary.versions.iter().map(|v| v.source.as_str()).collect();
            return Err(ReportError::PairwiseRuns {
                why: format!(
                    "{} is not a version of the pairwise run (its versions: {})",
                    missing.join(", "),
                    sources.join(", ")
                ),
            });
        }
        let first = versions.first().copied().flatten();
        for (row, version) in self.runs.iter_mut().zip(versions).skip(1) {
            // `summary.pair(a, b)` reads from `a`'s side: this version's.
            row.head_to_head = first
                .zip(*version)
                .and_then(|(first, this)| summary.pair(this, first));
        }
        Ok(())
    }

    /// Whether some row has a head-to-head result.
    fn has_head_to_head(&self) -> bool {
        self.runs.iter().any(|r| r.head_to_head.is_some())
    }
}

/// `5 wins, 1 tie, 0 losses; win rate 0.917 [0.750, 1.000]`: a version against the first.
pub fn head_to_head_text(pair: &VersionPair) -> String {
    let f = &pair.figures;
    format!(
        "{} wins, {} ties, {} losses; win rate {}{}",
        f.wins,
        f.ties,
        f.losses,
        number(f.win_rate),
        interval(f.win_rate_ci95)
    )
}

/// The version table's head-to-head column: its heading and each row's cell (`—` on the
/// first row), or `None` without `compare --pairwise`.
pub(crate) fn head_to_head_column(comparison: &Comparison) -> Option<(String, Vec<String>)> {
    if !comparison.has_head_to_head() {
        return None;
    }
    let heading = format!("head to head vs {}", comparison.version_of(0));
    let cells = comparison
        .runs
        .iter()
        .map(|row| {
            row.head_to_head
                .as_ref()
                .map_or_else(|| "—".into(), head_to_head_text)
        })
        .collect();
    Some((heading, cells))
}
