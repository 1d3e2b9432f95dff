//! `results.jsonl`: one line per sample × metric, appended and flushed as each result
//! arrives, so a crash loses at most the line being written.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use rageval_core::Outcome;
use serde::{Deserialize, Serialize};

use crate::ReportError;

/// One line of the journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultRecord {
    pub sample_id: String,
    pub metric: String,
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// The range every metric's score lies in: cosines reach −1, every other metric scores in
/// [0, 1]. A journal line outside it was not written by a metric.
pub const SCORE_RANGE: std::ops::RangeInclusive<f64> = -1.0..=1.0;

/// How far a score may stray past its range's ends by rounding (a sum of shares that
/// comes to 1.0000000000000002).
pub const SCORE_ROUNDING: f64 = 1e-9;

/// Whether `value` lies in `range`, give or take `SCORE_ROUNDING`.
pub fn in_score_range(value: f64, range: &std::ops::RangeInclusive<f64>) -> bool {
    value.is_finite()
        && value >= range.start() - SCORE_ROUNDING
        && value <= range.end() + SCORE_ROUNDING
}

/// A score as a refusal shows it: exponent notation when it is huge or tiny (`1e308`, not
/// 309 digits).
pub fn shown_score(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude >= 1e6 || (magnitude > 0.0 && magnitude < 1e-6) {
        format!("{value:e}")
    } else {
        format!("{value}")
    }
}

impl ResultRecord {
    /// Why this line cannot be a metric's result, if it cannot: an empty sample id or
    /// metric, or a score that is not a finite number in [`SCORE_RANGE`]. Checked on every
    /// read of a journal, so an edited or damaged line is refused by name instead of
    /// turning into a summary or a comparison no command can read.
    pub fn fault(&self) -> Option<String> {
        if self.sample_id.is_empty() {
            return Some("the sample id is empty".into());
        }
        if self.metric.is_empty() {
            return Some("the metric is empty".into());
        }
        match self.outcome {
            Outcome::Score { value, .. } if !in_score_range(value, &SCORE_RANGE) => Some(format!(
                "metric `{}` of sample `{}` has the score {}, outside [{}, {}] where every \
                 metric scores",
                self.metric,
                self.sample_id,
                shown_score(value),
                SCORE_RANGE.start(),
                SCORE_RANGE.end()
            )),
            _ => None,
        }
    }
}

/// Appends records to a run's journal.
pub struct JournalWriter {
    path: PathBuf,
    out: BufWriter<File>,
}

impl JournalWriter {
    pub(crate) fn append_to(path: &Path) -> Result<Self, ReportError> {
        let file = File::options()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|source| ReportError::Write {
                path: path.to_path_buf(),
                source,
            })?;
        Ok(Self {
            path: path.to_path_buf(),
            out: BufWriter::new(file),
        })
    }

    /// Writes one record (a [`ResultRecord`], or a line of another journal of the run) as
    /// one line.
    pub fn append(&mut self, record: &impl Serialize) -> Result<(), ReportError> {
        let line = serde_json::to_string(record).map_err(|source| ReportError::Encode {
            what: "a journal line",
            source,
        })?;
        writeln!(self.out, "{line}").map_err(|source| self.write_error(source))
    }

    /// Pushes buffered lines to the file; called after each sample.
    pub fn flush(&mut self) -> Result<(), ReportError> {
        self.out.flush().map_err(|source| self.write_error(source))
    }

    fn write_error(&self, source: std::io::Error) -> ReportError {
        ReportError::Write {
            path: self.path.clone(),
            source,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rageval_core::stats::SplitMix64;

    /// Regression: serde_json's default float parser may land one ulp off (a served
    /// comparison read back gave Δ = 0.10000000000000003 for 0.10000000000000005). With
    /// `float_roundtrip` every score read from the journal is the score written.
    #[test]
    fn scores_read_back_bit_for_bit() {
        let mut rng = SplitMix64::new(7);
        for i in 0..20_000 {
            let value = match i % 3 {
                0 => rng.unit(),
                1 => rng.unit() - rng.unit(),
                _ => rng.unit() * 1e-3 + 0.1,
            };
            let record = ResultRecord {
                sample_id: i.to_string(),
                metric: "m".into(),
                outcome: Outcome::bare(value),
            };
            let line = serde_json::to_string(&record).unwrap();
            let back: ResultRecord = serde_json::from_str(&line).unwrap();
            assert_eq!(
                back.outcome.value().map(f64::to_bits),
                Some(value.to_bits()),
                "{line}"
            );
        }
    }
}
