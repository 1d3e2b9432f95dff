//! The human files of a finished run (report.html, report.md, results.xlsx), its quality
//! gate and JUnit file — what `eval`, `judge-check` and `rageval report` end with.

use std::path::{Path, PathBuf};

use rageval_core::Sample;
use rageval_core::dataset;
use rageval_report::{
    Gate, GateOutcome, JournalIndex, Manifest, ReportTexts, RunInfo, open_run_dataset,
    read_dataset_of, render_junit, write_reports,
};

use crate::engine::error::Result;
use crate::engine::observe::Observer;

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

/// Writes the run's human files with `texts` for the drill-down and the workbook's rows,
/// checks `gate`, and writes the JUnit file to `junit` when given. The journal is indexed
/// in one streamed pass and read again for what the files show, never held whole.
pub fn finish_reports(
    run: &RunInfo,
    texts: &ReportTexts,
    gate: &Gate,
    junit: Option<&Path>,
) -> Result<Finished> {
    let journal = JournalIndex::read(&run.results_path())?;
    let written = write_reports(run, &journal, texts)?;
    check_gate(run, &journal, gate, junit, written)
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
    let run = RunInfo::load(path)?;
    let journal = JournalIndex::read(&run.results_path())?;
    check_gate(&run, &journal, gate, junit, Vec::new())
}

/// Checks `gate` on `run` and writes the JUnit file to `junit` when given, after `written`.
fn check_gate(
    run: &RunInfo,
    journal: &JournalIndex,
    gate: &Gate,
    junit: Option<&Path>,
    mut written: Vec<PathBuf>,
) -> Result<Finished> {
    let outcome = gate.check_journal(run, journal)?;
    if let Some(path) = junit {
        crate::engine::files::write_atomically(path, render_junit(&run.name(), &outcome))?;
        written.push(path.to_path_buf());
    }
    Ok(Finished {
        written,
        gate: outcome,
        gated: !gate.is_empty(),
    })
}

/// The samples of the run in `run_dir` (`rageval_report::read_dataset_of`), re-read from
/// its dataset when the file is still there (as recorded, or moved with the run directory)
/// with the same hash; otherwise none, with a note saying why (the caller says what it
/// does without them). For pages that need every sample at hand (the labelling page);
/// reports stream them instead ([`texts_of`]).
pub fn samples_of(manifest: &Manifest, run_dir: &Path, observer: &dyn Observer) -> Vec<Sample> {
    read_dataset_of(manifest, run_dir).unwrap_or_else(|error| {
        observer.note(error.to_string());
        Vec::new()
    })
}

/// The texts of the run in `run_dir` for its reports: its dataset, streamed as the reports
/// need it, when the file is still there (as recorded, or moved with the run directory)
/// with the same hash; otherwise none, with a note saying why.
pub fn texts_of(
    manifest: &Manifest,
    run_dir: &Path,
    observer: &dyn Observer,
) -> ReportTexts<'static> {
    ReportTexts::dataset(manifest, run_dir).unwrap_or_else(|error| {
        observer.note(format!(
            "{error}: the report shows verdicts without texts, in the journal's order"
        ));
        ReportTexts::Absent
    })
}

/// Streams the dataset at `path` with the options the run of `manifest` used.
pub(crate) fn open_dataset(
    manifest: &Manifest,
    path: &Path,
) -> Result<impl Iterator<Item = std::result::Result<Sample, dataset::DatasetError>> + use<>> {
    Ok(open_run_dataset(manifest, path)?)
}
