//! Reading a finished run directory back: its manifest, summary and journal, and the views
//! every writer needs (sample ids in journal order, one outcome per sample × metric).
//!
//! [`RunInfo`] is a run without its journal (what a report needs beside a streamed pass
//! over `results.jsonl`, [`crate::JournalIndex`]); [`RunData`] adds the journal's records,
//! held whole, for the readers that page or compare (`rageval serve`, `compare`).

use std::collections::HashMap;
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use rageval_core::Outcome;
use serde::de::DeserializeOwned;

use crate::rank_agreement::read_rank_agreement;
use crate::run_folder::{RunFolder, RunKind, locate_run, pipeline_of_eval, stage_run_error};
use crate::{
    AGREEMENT_FILE, Agreement, JournalIndex, MANIFEST_FILE, Manifest, RANK_AGREEMENT_FILE,
    RESULTS_FILE, RankAgreementRow, ReportError, ResultRecord, RunStatus, SUMMARY_FILE, Summary,
};

/// A complete run's files except its journal, loaded from its directory.
#[derive(Debug, Clone)]
pub struct RunInfo {
    /// The directory it was read from (reports are written beside its files).
    pub path: PathBuf,
    /// What tables and titles call it: the directory's name, or for a pipeline's `eval`
    /// stage the pipeline folder's (two pipelines' evals are both `eval/`).
    pub name: String,
    pub manifest: Manifest,
    pub summary: Summary,
    /// A `judge-check` run's agreement with the human labels (`agreement.json`).
    pub agreement: Option<Agreement>,
    /// The retriever's order against the judge's, per question (`rank_agreement.jsonl`),
    /// for a run that came from `rank` or `pipeline`.
    pub rank_agreement: Option<Vec<RankAgreementRow>>,
}

/// A complete run with its journal held whole.
#[derive(Debug, Clone)]
pub struct RunData {
    /// The directory it was read from (reports are written beside its files).
    pub path: PathBuf,
    /// What tables and titles call it (as [`RunInfo::name`]).
    pub name: String,
    pub manifest: Manifest,
    pub summary: Summary,
    /// The journal's lines in file order.
    pub records: Vec<ResultRecord>,
    /// A `judge-check` run's agreement with the human labels (`agreement.json`).
    pub agreement: Option<Agreement>,
    /// The retriever's order against the judge's, per question (`rank_agreement.jsonl`),
    /// for a run that came from `rank` or `pipeline`.
    pub rank_agreement: Option<Vec<RankAgreementRow>>,
}

/// Asked before a reader opens a file of a run: an error keeps the file closed and is the
/// reader's answer. The command line opens any file ([`any_file`]); `rageval serve` passes
/// its root rule, so no file a link points out of its runs directory is read.
pub type OpenCheck<'a> = &'a dyn Fn(&Path) -> Result<(), ReportError>;

/// The [`OpenCheck`] that lets every file be opened.
pub fn any_file(_: &Path) -> Result<(), ReportError> {
    Ok(())
}

/// `dir/name`, once `check` lets it be opened.
pub(crate) fn checked_file(
    dir: &Path,
    name: &str,
    check: OpenCheck<'_>,
) -> Result<PathBuf, ReportError> {
    let path = dir.join(name);
    check(&path)?;
    Ok(path)
}

/// The manifest of the run directory `dir`, whatever the run's status, asking `check`
/// before opening it; a folder without one is not a run (a pipeline folder is named as
/// one).
pub fn read_manifest(dir: &Path, check: OpenCheck<'_>) -> Result<Manifest, ReportError> {
    let manifest_path = dir.join(MANIFEST_FILE);
    if !manifest_path.is_file() {
        return Err(match locate_run(dir) {
            Ok(RunFolder::Pipeline { .. }) => ReportError::PipelineFolder {
                path: dir.to_path_buf(),
            },
            _ => ReportError::NotARun {
                path: dir.to_path_buf(),
            },
        });
    }
    read_json(&checked_file(dir, MANIFEST_FILE, check)?)
}

/// What tables and titles call the run in `dir`: its directory's name, or for a pipeline's
/// `eval` stage the pipeline folder's.
pub(crate) fn run_name(dir: &Path) -> String {
    pipeline_of_eval(dir)
        .unwrap_or(dir)
        .file_name()
        .map_or_else(
            || dir.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
}

impl RunInfo {
    /// Loads a run directory but its journal; refuses one that has no manifest or is not
    /// complete, a `rank`, `reference` or `testset` run (no per-sample scores), and a
    /// pipeline folder (naming its `eval` run: [`crate::locate_run`] follows it).
    pub fn load(dir: &Path) -> Result<Self, ReportError> {
        Self::load_checked(dir, &any_file)
    }

    /// [`RunInfo::load`], asking `check` before each file it opens.
    pub fn load_checked(dir: &Path, check: OpenCheck<'_>) -> Result<Self, ReportError> {
        let manifest = read_manifest(dir, check)?;
        Self::of_manifest(dir, manifest, check)
    }

    /// The run in `dir` whose manifest is `manifest`: its other files but the journal.
    pub(crate) fn of_manifest(
        dir: &Path,
        manifest: Manifest,
        check: OpenCheck<'_>,
    ) -> Result<Self, ReportError> {
        if !RunKind::of_command(&manifest.command).is_scored() {
            return Err(stage_run_error(dir, manifest.command));
        }
        if manifest.status != RunStatus::Complete {
            return Err(ReportError::Incomplete {
                path: dir.to_path_buf(),
            });
        }
        let summary: Summary = read_json(&checked_file(dir, SUMMARY_FILE, check)?)?;
        checked_file(dir, AGREEMENT_FILE, check)?;
        let agreement = Agreement::read(dir)?;
        checked_file(dir, RANK_AGREEMENT_FILE, check)?;
        let rank_agreement = read_rank_agreement(dir)?;
        Ok(Self {
            path: dir.to_path_buf(),
            name: run_name(dir),
            manifest,
            summary,
            agreement,
            rank_agreement,
        })
    }

    /// A short name for titles: [`RunInfo::name`]'s field.
    pub fn name(&self) -> String {
        self.name.clone()
    }

    /// Where its journal is.
    pub fn results_path(&self) -> PathBuf {
        self.path.join(RESULTS_FILE)
    }
}

impl RunData {
    /// Loads a run directory with its journal; refuses what [`RunInfo::load`] refuses.
    pub fn load(dir: &Path) -> Result<Self, ReportError> {
        Self::load_checked(dir, &any_file)
    }

    /// [`RunData::load`], asking `check` before each file it opens.
    pub fn load_checked(dir: &Path, check: OpenCheck<'_>) -> Result<Self, ReportError> {
        Self::of_info(RunInfo::load_checked(dir, check)?, check)
    }

    /// `info` with its journal read.
    pub(crate) fn of_info(info: RunInfo, check: OpenCheck<'_>) -> Result<Self, ReportError> {
        check(&info.results_path())?;
        let records = read_results(&info.results_path())?;
        let RunInfo {
            path,
            name,
            manifest,
            summary,
            agreement,
            rank_agreement,
        } = info;
        Ok(Self {
            path,
            name,
            manifest,
            summary,
            records,
            agreement,
            rank_agreement,
        })
    }

    /// The run without its journal (a copy), for the writers that work from a
    /// [`JournalIndex`].
    pub fn info(&self) -> RunInfo {
        RunInfo {
            path: self.path.clone(),
            name: self.name.clone(),
            manifest: self.manifest.clone(),
            summary: self.summary.clone(),
            agreement: self.agreement.clone(),
            rank_agreement: self.rank_agreement.clone(),
        }
    }

    /// A short name for titles: [`RunData::name`]'s field.
    pub fn name(&self) -> String {
        self.name.clone()
    }

    /// The version this run measured, as version tables name it: the name `eval --name`
    /// gave it, else [`RunData::name`].
    pub fn version(&self) -> String {
        self.manifest
            .version_name
            .clone()
            .unwrap_or_else(|| self.name.clone())
    }

    /// Metric names in the run's order (the summary's), then any the journal adds.
    pub fn metric_names(&self) -> Vec<String> {
        merge_metric_names(
            &self.summary.metric_order,
            self.records.iter().map(|r| &r.metric),
        )
    }

    /// Each sample id's index in [`RunData::sample_ids`] (its drill-down anchor `#s{index}`).
    pub fn sample_index(&self) -> HashMap<&str, usize> {
        self.sample_ids()
            .into_iter()
            .enumerate()
            .map(|(index, id)| (id, index))
            .collect()
    }

    /// Sample ids in the order they first appear in the journal.
    pub fn sample_ids(&self) -> Vec<&str> {
        let mut seen = std::collections::HashSet::new();
        self.records
            .iter()
            .map(|r| r.sample_id.as_str())
            .filter(|id| seen.insert(*id))
            .collect()
    }

    /// Indices into [`RunData::sample_ids`] in the order of `dataset_ids` (the dataset's
    /// sample ids, in its order): the samples it names by their position there, then the
    /// rest in journal order (all of them in journal order when it is empty). Reports list
    /// rows this way; anchors keep the index.
    pub fn input_order<I>(&self, dataset_ids: I) -> Vec<usize>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        JournalIndex::of_records(&self.records).input_order(dataset_ids)
    }

    /// Each sample × metric's outcome; a later journal line for the same pair wins.
    pub fn outcomes(&self) -> HashMap<(&str, &str), &Outcome> {
        self.records
            .iter()
            .map(|r| ((r.sample_id.as_str(), r.metric.as_str()), &r.outcome))
            .collect()
    }

    /// One metric's scores by sample id (undefined and failed samples left out).
    pub fn scores(&self, metric: &str) -> HashMap<&str, f64> {
        self.records
            .iter()
            .filter(|r| r.metric == metric)
            .filter_map(|r| Some((r.sample_id.as_str(), r.outcome.value()?)))
            .collect()
    }
}

/// `order`, then each of `names` it lacks, in their order, once.
pub(crate) fn merge_metric_names<'n>(
    order: &[String],
    names: impl Iterator<Item = &'n String>,
) -> Vec<String> {
    let mut merged = order.to_vec();
    for name in names {
        if !merged.contains(name) {
            merged.push(name.clone());
        }
    }
    merged
}

/// Reads `results.jsonl`; an error names the line that does not parse. Blank lines (a
/// trailing newline) are skipped. Read line by line: the file is never held whole beside
/// its records.
pub fn read_results(path: &Path) -> Result<Vec<ResultRecord>, ReportError> {
    let mut records = Vec::new();
    for_each_result(path, |_, record| {
        records.push(record);
        Ok(())
    })?;
    Ok(records)
}

/// Calls `visit` with each record of the journal at `path` and the byte offset its line
/// starts at, in file order, holding one line at a time; stops at the first error (a line
/// that does not parse is named by its number).
pub(crate) fn for_each_result(
    path: &Path,
    mut visit: impl FnMut(u64, ResultRecord) -> Result<(), ReportError>,
) -> Result<(), ReportError> {
    let unreadable = |source| ReportError::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut reader = BufReader::new(fs::File::open(path).map_err(unreadable)?);
    let mut line = String::new();
    let mut offset = 0u64;
    for number in 1.. {
        line.clear();
        let read = reader.read_line(&mut line).map_err(unreadable)?;
        if read == 0 {
            break;
        }
        let start = offset;
        offset += read as u64;
        if line.trim().is_empty() {
            continue;
        }
        visit(start, parse_record(path, number, &line)?)?;
    }
    Ok(())
}

/// Line `number` of the journal at `path`, read as a record and checked
/// ([`ResultRecord::fault`]); the error names the file and line.
pub(crate) fn parse_record(
    path: &Path,
    number: usize,
    line: &str,
) -> Result<ResultRecord, ReportError> {
    let record: ResultRecord =
        serde_json::from_str(line).map_err(|source| ReportError::DecodeLine {
            path: path.to_path_buf(),
            line: number,
            source,
        })?;
    match record.fault() {
        None => Ok(record),
        Some(why) => Err(ReportError::BadRecord {
            path: path.to_path_buf(),
            line: number,
            why,
        }),
    }
}

pub(crate) fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T, ReportError> {
    let bytes = fs::read(path).map_err(|source| ReportError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_slice(&bytes).map_err(|source| ReportError::Decode {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::write_run;

    #[test]
    fn loads_what_a_run_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run");
        write_run(
            &path,
            "abc",
            &[
                ("s1", "m", Outcome::bare(0.5)),
                ("s2", "m", Outcome::undefined("no answer")),
                ("s1", "k", Outcome::bare(1.0)),
            ],
        );
        let run = RunData::load(&path).unwrap();
        assert_eq!(run.name(), "run");
        assert_eq!(run.sample_ids(), vec!["s1", "s2"]);
        // The dataset's order wins; ids it does not hold follow in journal order.
        assert_eq!(run.input_order(["s2", "s1"]), vec![1, 0]);
        assert_eq!(run.input_order(["s2"]), vec![1, 0]);
        assert_eq!(run.input_order(["x", "s2", "s2"]), vec![1, 0]);
        assert_eq!(run.input_order(Vec::<String>::new()), vec![0, 1]);
        assert_eq!(run.metric_names(), vec!["m", "k"]);
        assert_eq!(run.scores("m").len(), 1);
        assert_eq!(
            run.outcomes()[&("s2", "m")],
            &Outcome::undefined("no answer")
        );
    }

    #[test]
    fn a_bad_journal_line_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run");
        write_run(&path, "abc", &[("s1", "m", Outcome::bare(0.5))]);
        fs::write(path.join(RESULTS_FILE), "{\"sample_id\":\"1\"}\n").unwrap();
        let error = RunData::load(&path).unwrap_err();
        assert!(
            error
                .to_string()
                .ends_with("results.jsonl:1: not a result record"),
            "{error}"
        );
        assert!(matches!(
            RunData::load(dir.path()),
            Err(ReportError::NotARun { .. })
        ));
    }
}
