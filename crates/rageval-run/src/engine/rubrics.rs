//! Which rubric files a run reads, and the [`MetricCatalogue`] they make: every
//! `--metric-file` given (`metric_files=[...]` from Python), else the configuration file
//! the judge reads (`--config`, else `RAGEVAL_CONFIG`, else `./rageval.toml` when it
//! exists).
//!
//! Decided here, beside the judge settings, because the default is the judge's file and
//! every front (the CLI, Python's `evaluate`) resolves the judge through this crate: one
//! rule, so both fronts see the same rubrics. Parsing is `rageval_metrics::rubric::file`'s.
//! This module keeps nothing between runs: each run makes its own catalogue.

use std::path::PathBuf;

use rageval_judge::config::{DEFAULT_CONFIG_FILE, ENV_CONFIG, JudgeFlags};
use rageval_metrics::MetricCatalogue;

use crate::engine::error::{Result, RunError};
use crate::engine::judges::Env;

/// The rubric files of a run: `metric_files` when any is given, else the judge's
/// configuration file when it exists.
pub fn rubric_files(metric_files: &[PathBuf], judge: &JudgeFlags, env: Env<'_>) -> Vec<PathBuf> {
    if !metric_files.is_empty() {
        return metric_files.to_vec();
    }
    let named = judge.config.clone().or_else(|| {
        env(ENV_CONFIG)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
    });
    let file = named.unwrap_or_else(|| PathBuf::from(DEFAULT_CONFIG_FILE));
    // A named file that is missing is the judge settings' error to report, with its hint;
    // rubrics read only a file that is there.
    if file.is_file() {
        vec![file]
    } else {
        Vec::new()
    }
}

/// The metrics a run can build: the built-in table and the rubrics of its files
/// ([`rubric_files`]).
pub fn catalogue(
    metric_files: &[PathBuf],
    judge: &JudgeFlags,
    env: Env<'_>,
) -> Result<MetricCatalogue> {
    MetricCatalogue::from_rubric_files(&rubric_files(metric_files, judge, env))
        .map_err(RunError::Rubric)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn metric_files_come_before_the_judges_config_and_a_missing_config_gives_none() {
        let dir = std::env::temp_dir().join(format!("rageval-rubric-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        let config = dir.join("judge.toml");
        std::fs::write(&config, "[judge]\nmodel = \"m\"\n").unwrap_or_else(|e| panic!("{e}"));
        let flags = JudgeFlags {
            config: Some(config.clone()),
            ..JudgeFlags::default()
        };
        let given = vec![dir.join("rubrics.toml")];
        assert_eq!(rubric_files(&given, &flags, &no_env), given);
        assert_eq!(
            rubric_files(&[], &flags, &no_env),
            std::slice::from_ref(&config)
        );
        let by_env = move |name: &str| {
            (name == ENV_CONFIG).then(|| dir.join("judge.toml").display().to_string())
        };
        assert_eq!(rubric_files(&[], &JudgeFlags::default(), &by_env), [config]);
        let missing = JudgeFlags {
            config: Some(PathBuf::from("no-such-rageval.toml")),
            ..JudgeFlags::default()
        };
        assert!(rubric_files(&[], &missing, &no_env).is_empty());
    }
}
