//! `watch.jsonl` in a rolling run's directory: one line per poll (what it saw, chose,
//! scored and spent), per cost cap reached, per alert fired and per metric that recovered.
//! The cost caps are sums over its polls in the last hour or day, and whether a metric is
//! already alerting is its last alert or recovery — so both survive a restart.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::engine::error::{Result, RunError};

/// The file in the run directory.
pub const LEDGER_FILE: &str = "watch.jsonl";

/// A stretch of a run's scored samples, by position in the journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Window {
    /// The first sample's id.
    pub first: String,
    /// The last sample's id.
    pub last: String,
    /// Scores in it.
    pub n: usize,
    pub mean: f64,
}

/// One line of the ledger.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LedgerLine {
    /// A poll: samples seen in the source, new to the watch, chosen (in the sample) and
    /// skipped (out of it), cells scored, calls and dollars spent.
    Poll {
        at: u64,
        seen: usize,
        new: usize,
        chosen: usize,
        skipped: usize,
        cells: usize,
        failed: usize,
        calls: u64,
        cost_usd: f64,
    },
    /// A cost cap stopped the spending until `until` (Unix seconds).
    Capped {
        at: u64,
        /// `hour` or `day`.
        period: String,
        limit_usd: f64,
        spent_usd: f64,
        until: u64,
    },
    /// A metric's latest window fell significantly below its baseline.
    Alert {
        at: u64,
        metric: String,
        baseline: Window,
        latest: Window,
        difference: f64,
        ci95: [f64; 2],
    },
    /// A metric that was alerting no longer is.
    Recovered { at: u64, metric: String },
}

/// The ledger, read and appended to.
#[derive(Debug)]
pub struct Ledger {
    path: PathBuf,
    lines: Vec<LedgerLine>,
}

impl Ledger {
    /// The ledger in `dir` (empty when there is none yet; lines it cannot read are left out).
    pub fn open(dir: &Path) -> Result<Self> {
        let path = dir.join(LEDGER_FILE);
        let lines = match std::fs::read_to_string(&path) {
            Ok(text) => text
                .lines()
                .filter_map(|line| serde_json::from_str(line).ok())
                .collect(),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(source) => return Err(RunError::Read { path, source }),
        };
        Ok(Ledger { path, lines })
    }

    /// Appends a line (flushed before this returns).
    pub fn append(&mut self, line: LedgerLine) -> Result<()> {
        let io = |source| RunError::Write {
            path: self.path.clone(),
            source,
        };
        let text = serde_json::to_string(&line).map_err(RunError::encode("a watch ledger line"))?;
        let mut file = File::options()
            .create(true)
            .append(true)
            .open(&self.path)
            .map_err(io)?;
        writeln!(file, "{text}").map_err(io)?;
        file.flush().map_err(io)?;
        self.lines.push(line);
        Ok(())
    }

    /// Dollars spent by the polls at or after `since` (Unix seconds).
    pub fn spent_since(&self, since: u64) -> f64 {
        self.lines
            .iter()
            .filter_map(|line| match line {
                LedgerLine::Poll { at, cost_usd, .. } if *at >= since => Some(*cost_usd),
                _ => None,
            })
            .sum()
    }

    /// When the earliest poll at or after `since` that spent anything leaves the window
    /// that starts at `since` (its time plus `period` seconds): when spending may resume.
    pub fn frees_at(&self, since: u64, period: u64) -> Option<u64> {
        self.lines.iter().find_map(|line| match line {
            LedgerLine::Poll { at, cost_usd, .. } if *at >= since && *cost_usd > 0.0 => {
                Some(at + period)
            }
            _ => None,
        })
    }

    /// Whether `metric`'s last alert has not been followed by its recovery.
    pub fn alerting(&self, metric: &str) -> bool {
        self.lines
            .iter()
            .rev()
            .find_map(|line| match line {
                LedgerLine::Alert { metric: m, .. } if m == metric => Some(true),
                LedgerLine::Recovered { metric: m, .. } if m == metric => Some(false),
                _ => None,
            })
            .unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn poll(at: u64, cost_usd: f64) -> LedgerLine {
        LedgerLine::Poll {
            at,
            seen: 1,
            new: 1,
            chosen: 1,
            skipped: 0,
            cells: 1,
            failed: 0,
            calls: 1,
            cost_usd,
        }
    }

    #[test]
    fn spending_and_alerts_survive_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let mut ledger = Ledger::open(dir.path()).unwrap();
        ledger.append(poll(100, 0.5)).unwrap();
        ledger.append(poll(200, 0.25)).unwrap();
        let window = Window {
            first: "a".into(),
            last: "b".into(),
            n: 2,
            mean: 0.5,
        };
        ledger
            .append(LedgerLine::Alert {
                at: 210,
                metric: "m".into(),
                baseline: window.clone(),
                latest: window,
                difference: -0.5,
                ci95: [-0.7, -0.3],
            })
            .unwrap();
        let ledger = Ledger::open(dir.path()).unwrap();
        assert_eq!(ledger.spent_since(0), 0.75);
        assert_eq!(ledger.spent_since(150), 0.25);
        assert_eq!(ledger.frees_at(150, 3600), Some(3800));
        assert!(ledger.alerting("m") && !ledger.alerting("other"));
    }
}
