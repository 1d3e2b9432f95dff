//! The versions `pairwise` compares, read from what the user names — a run directory (its
//! dataset re-read), a collected dataset file, or a pipeline folder (its eval run's
//! dataset) — and their questions paired as `compare` pairs runs' (by id, then by
//! question text) into [`PairedQuestion`]s every version answered.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use rageval_core::Sample;
use rageval_core::dataset::{self, FieldMap, Format, ReadOptions};
use rageval_report::{PairwiseVersion, any_file, locate_run, pair_datasets, read_dataset_of};

use crate::engine::error::{Result, RunError};

/// How dataset files given as versions are read.
#[derive(Debug, Clone, Default)]
pub struct DatasetReading {
    pub format: Option<Format>,
    pub field_map: Vec<String>,
    pub sheet: Option<String>,
}

/// One version: its name, where it came from and its samples.
#[derive(Debug, Clone)]
pub struct Version {
    pub name: String,
    pub source: PathBuf,
    /// The dataset the samples came from (for the run's identity).
    pub dataset: PathBuf,
    pub samples: Vec<Sample>,
}

impl Version {
    /// As the summary names it.
    pub fn described(&self) -> PairwiseVersion {
        PairwiseVersion {
            name: self.name.clone(),
            source: self.source.display().to_string(),
        }
    }
}

/// A question every version answered: each version's sample, in version order.
#[derive(Debug, Clone)]
pub struct PairedQuestion {
    pub samples: Vec<Sample>,
}

impl PairedQuestion {
    /// The first version's sample, which names the question.
    pub fn first(&self) -> &Sample {
        &self.samples[0]
    }
}

/// Reads every version at `paths`, named by `names` (in order; the rest by their folder or
/// file name, made unique).
pub fn read_versions(
    paths: &[PathBuf],
    names: &[String],
    reading: &DatasetReading,
) -> Result<Vec<Version>> {
    if paths.len() < 2 {
        return Err(RunError::Usage(format!(
            "pairwise needs at least two versions (run directories, datasets or pipeline \
             folders), got {}",
            paths.len()
        )));
    }
    if names.len() > paths.len() {
        return Err(RunError::Usage(format!(
            "{} --name for {} versions: give at most one per version, in their order",
            names.len(),
            paths.len()
        )));
    }
    let mut versions = Vec::with_capacity(paths.len());
    let mut taken = HashSet::new();
    for (index, path) in paths.iter().enumerate() {
        let (dataset, samples) = read_version(path, reading)?;
        let mut name = names.get(index).cloned().unwrap_or_else(|| stem(path));
        if !taken.insert(name.clone()) {
            name = format!("{name}#{}", index + 1);
            taken.insert(name.clone());
        }
        versions.push(Version {
            name,
            source: path.clone(),
            dataset,
            samples,
        });
    }
    Ok(versions)
}

/// The file or folder name of `path`.
fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// The dataset of one version, and its samples.
fn read_version(path: &Path, reading: &DatasetReading) -> Result<(PathBuf, Vec<Sample>)> {
    if path.is_dir() {
        let run = locate_run(path)?;
        let dir = run.run_dir();
        let manifest = rageval_report::read_manifest(dir, &any_file)?;
        let dataset = rageval_report::locate_dataset(&manifest, dir)?;
        let samples = read_dataset_of(&manifest, dir)?;
        return Ok((dataset, unique(samples, path)?));
    }
    let options = ReadOptions {
        format: reading.format,
        field_map: FieldMap::parse(&reading.field_map)?,
        sheet: reading.sheet.clone(),
    };
    let samples = dataset::open(path, &options)?.collect::<std::result::Result<Vec<_>, _>>()?;
    Ok((path.to_path_buf(), unique(samples, path)?))
}

/// `samples`, refused when two share an id or there are none.
fn unique(samples: Vec<Sample>, path: &Path) -> Result<Vec<Sample>> {
    if samples.is_empty() {
        return Err(RunError::Usage(format!(
            "{} has no questions",
            path.display()
        )));
    }
    let mut ids = HashSet::new();
    if let Some(twice) = samples.iter().find(|s| !ids.insert(s.id.as_str())) {
        return Err(RunError::DuplicateId(twice.id.clone()));
    }
    Ok(samples)
}

/// The questions every version answered, in the first version's order (at most `limit`):
/// each later version paired with the first by id, then by question text. Also how many of
/// the first version's questions were left out because some version lacks them.
pub fn paired_questions(
    versions: &[Version],
    limit: Option<usize>,
) -> Result<(Vec<PairedQuestion>, usize)> {
    let first = &versions[0].samples;
    let partners: Vec<HashMap<String, String>> = versions[1..]
        .iter()
        .map(|version| {
            pair_datasets(first, &version.samples)
                .pairs()
                .iter()
                .cloned()
                .collect()
        })
        .collect();
    let by_id: Vec<HashMap<&str, &Sample>> = versions
        .iter()
        .map(|v| v.samples.iter().map(|s| (s.id.as_str(), s)).collect())
        .collect();
    let mut questions = Vec::new();
    let mut left_out = 0;
    for sample in first {
        let others: Option<Vec<Sample>> = partners
            .iter()
            .zip(&by_id[1..])
            .map(|(pairs, samples)| {
                let id = pairs.get(&sample.id)?;
                samples.get(id.as_str()).map(|s| (*s).clone())
            })
            .collect();
        let Some(others) = others else {
            left_out += 1;
            continue;
        };
        let mut samples = vec![sample.clone()];
        samples.extend(others);
        questions.push(PairedQuestion { samples });
    }
    if let Some(limit) = limit {
        questions.truncate(limit);
    }
    if questions.is_empty() {
        let names: Vec<&str> = versions.iter().map(|v| v.name.as_str()).collect();
        return Err(RunError::Report(
            rageval_report::ReportError::NoCommonQuestions {
                runs: names.join(", "),
            },
        ));
    }
    Ok((questions, left_out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(id: &str, question: &str, answer: &str) -> Sample {
        Sample {
            id: id.into(),
            question: question.into(),
            answer: Some(answer.into()),
            ..Sample::default()
        }
    }

    fn version(name: &str, samples: Vec<Sample>) -> Version {
        Version {
            name: name.into(),
            source: PathBuf::from(name),
            dataset: PathBuf::from(name),
            samples,
        }
    }

    #[test]
    fn questions_pair_by_id_then_by_text_and_only_those_all_versions_hold_are_kept() {
        let a = version(
            "a",
            vec![
                sample("1", "q one", "a1"),
                sample("2", "q two", "a2"),
                sample("3", "q three", "a3"),
            ],
        );
        let b = version(
            "b",
            vec![sample("1", "q one", "b1"), sample("x", "q two", "b2")],
        );
        let (questions, left_out) = paired_questions(&[a, b], None).unwrap();
        assert_eq!(left_out, 1);
        let ids: Vec<(&str, &str)> = questions
            .iter()
            .map(|q| (q.samples[0].id.as_str(), q.samples[1].id.as_str()))
            .collect();
        assert_eq!(ids, [("1", "1"), ("2", "x")]);
    }

    #[test]
    fn versions_without_a_common_question_are_refused() {
        let a = version("a", vec![sample("1", "q one", "a1")]);
        let b = version("b", vec![sample("2", "q two", "b2")]);
        let error = paired_questions(&[a, b], None).unwrap_err();
        assert!(error.to_string().contains("no question"), "{error}");
    }
}
