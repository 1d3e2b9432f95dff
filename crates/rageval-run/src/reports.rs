//! The human files of a finished run (report.html, report.md, results.xlsx), its quality
//! gate and JUnit file — what `eval`, `judge-check` and `rageval report` end with.

use std::fs;
use std::path::{Path, PathBuf};

use rageval_core::Sample;
use rageval_core::dataset::{self, FieldMap, Format, ReadOptions};
use rageval_report::{
    Gate, GateOutcome, Manifest, RunData, render_junit, sha256_file, write_reports,
};

use crate::error::{Result, RunError};
use crate::observe::Observer;

/// What finishing a run's reports did.
#[derive(Debug)]
pub struct Finished {
    /// The files written (reports, then the JUnit file when asked).
    pub written: Vec<PathBuf>,
    /// The gate's checks (empty when no gate was set).
    pub gate: GateOutcome,
    /// Whether a gate was set.
    pub gated: bool,
}

impl Finished {
    /// Whether every gate passed (true without gates).
    pub fn passed(&self) -> bool {
        !self.gated || self.gate.passed()
    }
}

/// Writes the run's human files with `samples` for the drill-down, checks `gate`, and
/// writes the JUnit file to `junit` when given.
pub fn finish_reports(
    run: &RunData,
    samples: &[Sample],
    gate: &Gate,
    junit: Option<&Path>,
) -> Result<Finished> {
    let written = write_reports(run, samples)?;
    check_gate(run, gate, junit, written)
}

/// Without the human files: checks `gate` and writes the JUnit file when asked, reading the
/// run back only then (`eval --no-reports`). `rageval report` writes the files later.
pub fn finish_without_reports(path: &Path, gate: &Gate, junit: Option<&Path>) -> Result<Finished> {
    if gate.is_empty() && junit.is_none() {
        return Ok(Finished {
            written: Vec::new(),
            gate: GateOutcome { checks: Vec::new() },
            gated: false,
        });
    }
    check_gate(&RunData::load(path)?, gate, junit, Vec::new())
}

/// Checks `gate` on `run` and writes the JUnit file to `junit` when given, after `written`.
fn check_gate(
    run: &RunData,
    gate: &Gate,
    junit: Option<&Path>,
    mut written: Vec<PathBuf>,
) -> Result<Finished> {
    let outcome = gate.check(run)?;
    if let Some(path) = junit {
        fs::write(path, render_junit(&run.name(), &outcome)).map_err(RunError::write(path))?;
        written.push(path.to_path_buf());
    }
    Ok(Finished {
        written,
        gate: outcome,
        gated: !gate.is_empty(),
    })
}

/// The run's samples for the HTML drill-down, re-read from its dataset when the file is
/// still there with the same hash; otherwise none, with a note saying why.
pub fn samples_of(manifest: &Manifest, observer: &dyn Observer) -> Vec<Sample> {
    let path = Path::new(&manifest.dataset.path);
    let without = |why: String| {
        observer.note(format!(
            "{} {why}: the report shows verdicts without texts",
            path.display()
        ));
        Vec::new()
    };
    match sha256_file(path) {
        Ok(sha) if sha == manifest.dataset.sha256 => {}
        Ok(_) => return without("changed since the run".into()),
        Err(_) => return without("is not readable".into()),
    }
    match read_dataset(manifest, path) {
        Ok(samples) => samples,
        Err(error) => without(format!("cannot be read again ({error})")),
    }
}

/// Reads the dataset with the options the run used (from its manifest's settings).
fn read_dataset(manifest: &Manifest, path: &Path) -> Result<Vec<Sample>> {
    Ok(open_dataset(manifest, path)?.collect::<std::result::Result<Vec<_>, _>>()?)
}

/// Streams the dataset at `path` with the options the run of `manifest` used (format,
/// field map, sheet, sample limit).
pub(crate) fn open_dataset(
    manifest: &Manifest,
    path: &Path,
) -> Result<impl Iterator<Item = std::result::Result<Sample, dataset::DatasetError>> + use<>> {
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
