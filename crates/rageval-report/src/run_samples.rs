//! A finished run's dataset, read back for the reports and comparisons that show texts:
//! the file its manifest names, read with the options the run used (`field_map`, `sheet`,
//! `samples` in the manifest's settings), and only when its bytes still hash to the
//! manifest's sha256 — a changed file would put other texts beside the scores.
//!
//! The path is tried as recorded, then as a file of the same name inside the run directory
//! (a `judge-check` run keeps its items there, and run directories get moved). Only regular
//! files and directories are read. Parsing is `rageval_core::dataset`'s.

use std::path::{Path, PathBuf};

use rageval_core::Sample;
use rageval_core::dataset::{self, DatasetError, FieldMap, Format, ReadOptions};

use crate::{Manifest, ReportError, RunData, error_chain, sha256_file};

/// The run's samples as its dataset holds them, in the dataset's order.
pub fn read_run_samples(run: &RunData) -> Result<Vec<Sample>, ReportError> {
    read_dataset_of(&run.manifest, &run.path)
}

/// The samples of the dataset `manifest` names, for the run in `run_dir`.
pub fn read_dataset_of(manifest: &Manifest, run_dir: &Path) -> Result<Vec<Sample>, ReportError> {
    let path = locate_dataset(manifest, run_dir)?;
    read_dataset(manifest, &path).map_err(|why| ReportError::DatasetUnavailable {
        path: PathBuf::from(&manifest.dataset.path),
        why,
    })
}

/// Where the dataset `manifest` names is now, for the run in `run_dir`: the recorded path,
/// or a file of that name in the run directory, whichever still hashes as recorded.
pub fn locate_dataset(manifest: &Manifest, run_dir: &Path) -> Result<PathBuf, ReportError> {
    let recorded = PathBuf::from(&manifest.dataset.path);
    let mut candidates = vec![recorded.clone()];
    if let Some(name) = recorded.file_name() {
        candidates.push(run_dir.join(name));
    }
    let mut why = "it is not there".to_string();
    for path in candidates {
        let Ok(metadata) = std::fs::metadata(&path) else {
            continue;
        };
        if !metadata.is_file() && !metadata.is_dir() {
            why = "it is not a regular file or directory".into();
            continue;
        }
        match sha256_file(&path) {
            Ok(sha) if sha == manifest.dataset.sha256 => return Ok(path),
            Ok(_) => why = "it changed since the run (its sha256 differs)".into(),
            Err(error) => why = error_chain(&error),
        }
    }
    Err(ReportError::DatasetUnavailable {
        path: recorded,
        why,
    })
}

/// Reads the dataset at `path` with the options the run used.
fn read_dataset(manifest: &Manifest, path: &Path) -> Result<Vec<Sample>, String> {
    open_run_dataset(manifest, path)
        .map_err(|e| e.to_string())?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())
}

/// Streams the dataset at `path` with the options the run of `manifest` used (format,
/// field map, sheet, sample limit), without checking its hash.
pub fn open_run_dataset(
    manifest: &Manifest,
    path: &Path,
) -> Result<impl Iterator<Item = Result<Sample, DatasetError>> + use<>, DatasetError> {
    let settings = &manifest.settings;
    let field_map: Vec<String> = settings["field_map"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    let format = Format::from_name(manifest.dataset.format.as_str());
    let options = ReadOptions {
        format,
        field_map: FieldMap::parse(&field_map)?,
        sheet: settings["sheet"].as_str().map(String::from),
    };
    let limit = settings["samples"]
        .as_u64()
        .map_or(usize::MAX, |n| usize::try_from(n).unwrap_or(usize::MAX));
    Ok(dataset::open(path, &options)?.take(limit))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::write_run;
    use rageval_core::Outcome;

    #[test]
    fn reads_the_dataset_only_while_it_hashes_as_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data.jsonl");
        let text = "{\"id\": \"a\", \"question\": \"first?\"}\n{\"id\": \"b\", \"question\": \"second?\"}\n";
        std::fs::write(&data, text).unwrap();
        let path = dir.path().join("run");
        write_run(
            &path,
            &crate::sha256_bytes(text.as_bytes()),
            &[("b", "m", Outcome::bare(1.0))],
        );
        let mut run = RunData::load(&path).unwrap();
        run.manifest.dataset.path = data.display().to_string();
        let samples = read_run_samples(&run).unwrap();
        let questions: Vec<&str> = samples.iter().map(|s| s.question.as_str()).collect();
        assert_eq!(questions, vec!["first?", "second?"]);

        // The run's `samples` setting limits what is read, as it limited the run.
        run.manifest.settings = serde_json::json!({"samples": 1});
        assert_eq!(read_run_samples(&run).unwrap().len(), 1);

        std::fs::write(&data, "{\"id\": \"a\", \"question\": \"edited?\"}\n").unwrap();
        let error = read_run_samples(&run).unwrap_err().to_string();
        assert!(
            error.ends_with("it changed since the run (its sha256 differs)"),
            "{error}"
        );
        run.manifest.dataset.path = dir.path().join("gone.jsonl").display().to_string();
        let error = read_run_samples(&run).unwrap_err().to_string();
        assert!(
            error.ends_with("gone.jsonl of the run: it is not there"),
            "{error}"
        );
    }
}
