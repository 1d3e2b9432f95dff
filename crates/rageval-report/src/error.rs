//! Errors of reading and writing run directories, reports and comparisons.

use std::path::{Path, PathBuf};

/// Everything that can go wrong in this crate; each variant names the file or value at fault.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(
        "run directory {path} already holds a run (pass --overwrite to replace it, or choose another --out)"
    )]
    RunExists { path: PathBuf },
    /// Another process writes the run directory (its lock file says who: pid, host, start).
    #[error(
        "run directory {path} is being written by another rageval process ({holder}); one run directory takes one writer at a time"
    )]
    RunLocked { path: PathBuf, holder: String },
    #[error("{path} exists and is not a directory")]
    NotADirectory { path: PathBuf },
    #[error("cannot write {path}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {path} as parquet: {message}")]
    Parquet { path: PathBuf, message: String },
    #[error("cannot read {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot encode {what} as JSON")]
    Encode {
        what: &'static str,
        #[source]
        source: serde_json::Error,
    },
    #[error("{path}:{line}: not a result record")]
    DecodeLine {
        path: PathBuf,
        line: usize,
        #[source]
        source: serde_json::Error,
    },
    /// A journal line that parses but no metric wrote (an edit, a damaged disk).
    #[error("{path}:{line}: {why}")]
    BadRecord {
        path: PathBuf,
        line: usize,
        why: String,
    },
    #[error("{path} changed while its reports were written (a line moved or was rewritten)")]
    JournalChanged { path: PathBuf },
    #[error("{path}:{line}: not a rank agreement line")]
    DecodeRankAgreement {
        path: PathBuf,
        line: usize,
        #[source]
        source: serde_json::Error,
    },
    #[error("{path}:{line}: not a pairwise question line")]
    DecodePairwise {
        path: PathBuf,
        line: usize,
        #[source]
        source: serde_json::Error,
    },
    #[error("{path}:{line}: {why}")]
    BadRankAgreement {
        path: PathBuf,
        line: usize,
        why: String,
    },
    #[error("{path} is not valid JSON of the expected shape")]
    Decode {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{path} is not a run directory (it has no manifest.json)")]
    NotARun { path: PathBuf },
    #[error("run {path} is not complete (its manifest says status `running`)")]
    Incomplete { path: PathBuf },
    /// A pipeline folder given where a run directory is read.
    #[error("{path} is a pipeline folder, not a run directory: its eval run is {path}/eval")]
    PipelineFolder { path: PathBuf },
    /// A `rank` or `reference` run where a scored run is wanted; `eval` is its pipeline's
    /// `eval` run when it lies in a pipeline folder.
    #[error(
        "{path} is a `{command}` run: it has per-question figures, not per-sample scores to report or compare{}",
        eval.as_ref().map_or_else(String::new, |eval| format!("; its pipeline's eval run is {}", eval.display()))
    )]
    StageRun {
        path: PathBuf,
        command: String,
        eval: Option<PathBuf>,
    },
    #[error("cannot write the spreadsheet {path}")]
    Xlsx {
        path: PathBuf,
        #[source]
        source: rust_xlsxwriter::XlsxError,
    },
    #[error("bad quality gate `{spec}`: {why}")]
    BadGate { spec: String, why: String },
    #[error(
        "quality gate names metric `{metric}`, which the run does not have (it has: {available})"
    )]
    UnknownGateMetric { metric: String, available: String },
    #[error(
        "runs {runs} share {paired} of {union} questions, paired {how} (overlap {overlap:.2}, below the {required:.2} required){only}; hint: compare only the questions every run holds (--common), or accept a lower overlap (--min-overlap)"
    )]
    QuestionsDiffer {
        /// `A and B`, the two runs' names (one field keeps the error small).
        runs: String,
        paired: usize,
        union: usize,
        overlap: f64,
        required: f64,
        /// `: N only in A (examples); M only in B (examples)`, or empty.
        only: String,
        how: &'static str,
    },
    #[error("no question is in every run ({runs}): there is nothing to compare")]
    NoCommonQuestions { runs: String },
    #[error("cannot re-read the dataset {path} of the run: {why}")]
    DatasetUnavailable { path: PathBuf, why: String },
    /// A file a reader was not let open: a link out of the directory a server reads.
    #[error("{path} lies outside the runs directory (a link out of it): not read")]
    OutsideRoot { path: PathBuf },
    #[error("compare needs at least two runs, got {count}")]
    TooFewRuns { count: usize },
    #[error("--metrics names `{metric}`, which none of the runs scored (they scored: {known})")]
    UnknownCompareMetric { metric: String, known: String },
    /// `compare --gate`'s settings, as values or a file: where, which field, what is wrong.
    #[error("{}", located(source_name, *line, field, message))]
    GateSpec {
        /// The file, or `--gate` for values.
        source_name: String,
        line: Option<usize>,
        field: String,
        message: String,
    },
    /// `compare --gate` names something the two runs cannot be gated on.
    #[error("--gate names `{name}`, {why}")]
    UngatedName { name: String, why: String },
    /// `compare --gate-pairwise` names a run that is not baseline against candidate.
    #[error("--gate-pairwise: {why}")]
    GatePairwise { why: String },
    /// `compare --pairwise` (or `--gate-pairwise`) names a pairwise run that did not judge
    /// the compared runs.
    #[error("the pairwise run does not match the compared runs: {why}")]
    PairwiseRuns { why: String },
    /// `compare --gate` with other than two runs.
    #[error("--gate compares a baseline with a candidate: give two runs, not {count}")]
    GateRunCount { count: usize },
}

/// `file:line: `field`: message`, each part only where known.
fn located(source_name: &str, line: Option<usize>, field: &str, message: &str) -> String {
    let line = line.map(|l| format!(":{l}")).unwrap_or_default();
    if field.is_empty() {
        format!("{source_name}{line}: {message}")
    } else {
        format!("{source_name}{line}: `{field}`: {message}")
    }
}

/// An error and its causes on one line, `outer: inner: innermost`.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        cause = inner.source();
    }
    text
}

impl ReportError {
    /// The same error naming its file relative to `base` when it lies under it, or by its
    /// file name when it is elsewhere and absolute: a server shows no absolute path.
    pub fn relative_to(mut self, base: &Path) -> Self {
        if let Some(path) = self.path_mut() {
            *path = shown_relative_to(path, base);
        }
        if let Self::StageRun {
            eval: Some(eval), ..
        } = &mut self
        {
            *eval = shown_relative_to(eval, base);
        }
        self
    }

    fn path_mut(&mut self) -> Option<&mut PathBuf> {
        match self {
            Self::RunExists { path }
            | Self::RunLocked { path, .. }
            | Self::NotADirectory { path }
            | Self::Write { path, .. }
            | Self::Read { path, .. }
            | Self::DecodeLine { path, .. }
            | Self::BadRecord { path, .. }
            | Self::JournalChanged { path }
            | Self::DecodeRankAgreement { path, .. }
            | Self::BadRankAgreement { path, .. }
            | Self::DecodePairwise { path, .. }
            | Self::Decode { path, .. }
            | Self::NotARun { path }
            | Self::Incomplete { path }
            | Self::StageRun { path, .. }
            | Self::PipelineFolder { path }
            | Self::Xlsx { path, .. }
            | Self::Parquet { path, .. }
            | Self::DatasetUnavailable { path, .. }
            | Self::OutsideRoot { path } => Some(path),
            Self::Encode { .. }
            | Self::BadGate { .. }
            | Self::UnknownGateMetric { .. }
            | Self::QuestionsDiffer { .. }
            | Self::NoCommonQuestions { .. }
            | Self::TooFewRuns { .. }
            | Self::UnknownCompareMetric { .. }
            | Self::GateSpec { .. }
            | Self::UngatedName { .. }
            | Self::GatePairwise { .. }
            | Self::PairwiseRuns { .. }
            | Self::GateRunCount { .. } => None,
        }
    }
}

/// `path` relative to `base` when it lies under it (`base`'s own name when it is `base`),
/// by its file name when it is elsewhere and absolute.
fn shown_relative_to(path: &Path, base: &Path) -> PathBuf {
    match path.strip_prefix(base) {
        Ok(rest) if rest.as_os_str().is_empty() => {
            base.file_name().map(PathBuf::from).unwrap_or_default()
        }
        Ok(rest) => rest.to_path_buf(),
        Err(_) if path.is_absolute() => path.file_name().map(PathBuf::from).unwrap_or_default(),
        Err(_) => path.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_read_relative_to_a_base() {
        let base = Path::new("/srv/runs");
        let inside = ReportError::NotARun {
            path: base.join("v1"),
        };
        assert_eq!(
            inside.relative_to(base).to_string(),
            "v1 is not a run directory (it has no manifest.json)"
        );
        let elsewhere = ReportError::DatasetUnavailable {
            path: "/home/me/data/kids.jsonl".into(),
            why: "it is not there".into(),
        };
        assert_eq!(
            elsewhere.relative_to(base).to_string(),
            "cannot re-read the dataset kids.jsonl of the run: it is not there"
        );
    }
}
