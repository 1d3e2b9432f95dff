//! The journals of a judge-check run, so that it resumes like `eval`: the first pass's
//! outcomes go to `results.jsonl` (one line per sample, as `eval` writes them), the outcomes
//! of repeats 2..K to `repeats.jsonl` (the same lines with `"repeat": k`), each flushed as
//! its sample finishes, in sample order. A rerun into the same directory reads
//! both back and judges only the cells they lack; the figures are computed from the journals
//! alone, so a resumed run measures exactly what an uninterrupted one does.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use rageval_core::{Outcome, Sample};
use rageval_report::{RESULTS_FILE, ResultRecord, read_results};
use serde::{Deserialize, Serialize};

use crate::engine::error::{Result, RunError};
use crate::engine::resume::compact_lines;

/// The journal of the repeats (`--repeat K`), beside `results.jsonl`.
pub const REPEATS_FILE: &str = "repeats.jsonl";

/// One line of `repeats.jsonl`: a sample's outcome in repeat `repeat` (2..K).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepeatRecord {
    pub repeat: u32,
    #[serde(flatten)]
    pub record: ResultRecord,
}

/// The repeat cells already journaled, `(repeat, sample id)`, and how many failed ones were
/// dropped from the journal to be judged again (when `retry_failed`). Compacts the journal
/// (a torn last line, a cell written twice) the way `eval` compacts `results.jsonl`.
pub fn repeats_done(
    run: &Path,
    metric: &str,
    retry_failed: bool,
) -> Result<(HashSet<(u32, String)>, usize)> {
    let mut retried = 0;
    let kept = compact_lines(&run.join(REPEATS_FILE), |line: &RepeatRecord| {
        let failed = matches!(line.record.outcome, Outcome::Failed { .. });
        if retry_failed && failed && line.record.metric == metric {
            retried += 1;
            return None;
        }
        repeat_key(line, metric)
    })?;
    Ok((kept.into_iter().map(|(key, _)| key).collect(), retried))
}

/// A repeat line's key, `(repeat, sample id)`, when it is of `metric`.
fn repeat_key(line: &RepeatRecord, metric: &str) -> Option<(u32, String)> {
    (line.record.metric == metric).then(|| (line.repeat, line.record.sample_id.clone()))
}

/// `repeats.jsonl`'s lines of `metric`, one per cell, keyed by `(repeat, sample id)`.
fn repeat_lines(run: &Path, metric: &str) -> Result<Vec<((u32, String), RepeatRecord)>> {
    compact_lines(&run.join(REPEATS_FILE), |line: &RepeatRecord| {
        repeat_key(line, metric)
    })
}

/// Every pass as the journals hold it, each in `samples` order: the first from
/// `results.jsonl`, repeats 2..=`repeats` from `repeats.jsonl`. A cell missing is an error
/// (the run is not finished).
pub fn read_passes(
    run: &Path,
    metric: &str,
    samples: &[Sample],
    repeats: u32,
) -> Result<Vec<Vec<Outcome>>> {
    let first: HashMap<String, Outcome> = read_results(&run.join(RESULTS_FILE))?
        .into_iter()
        .filter(|record| record.metric == metric)
        .map(|record| (record.sample_id, record.outcome))
        .collect();
    let by_repeat: HashMap<(u32, String), Outcome> = repeat_lines(run, metric)?
        .into_iter()
        .map(|(key, line)| (key, line.record.outcome))
        .collect();
    let mut passes = Vec::with_capacity(repeats as usize);
    for k in 1..=repeats {
        let mut pass = Vec::with_capacity(samples.len());
        for sample in samples {
            let outcome = if k == 1 {
                first.get(&sample.id)
            } else {
                by_repeat.get(&(k, sample.id.clone()))
            };
            match outcome {
                Some(outcome) => pass.push(outcome.clone()),
                None => {
                    return Err(RunError::Usage(format!(
                        "{} has no outcome for sample `{}` in repeat {k}",
                        run.display(),
                        sample.id
                    )));
                }
            }
        }
        passes.push(pass);
    }
    Ok(passes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeat_lines_round_trip_and_a_torn_one_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let line = RepeatRecord {
            repeat: 2,
            record: ResultRecord {
                sample_id: "q1/a".into(),
                metric: "faithfulness".into(),
                outcome: Outcome::bare(0.5),
            },
        };
        let text = serde_json::to_string(&line).unwrap();
        assert!(
            text.starts_with("{\"repeat\":2,\"sample_id\":\"q1/a\""),
            "{text}"
        );
        std::fs::write(
            dir.path().join(REPEATS_FILE),
            format!("{text}\n{text}\n{{\"repeat\":3,\"sam"),
        )
        .unwrap();
        let (done, retried) = repeats_done(dir.path(), "faithfulness", true).unwrap();
        assert_eq!(retried, 0);
        assert_eq!(done, HashSet::from([(2, "q1/a".to_string())]));
        let kept = std::fs::read_to_string(dir.path().join(REPEATS_FILE)).unwrap();
        assert_eq!(kept, format!("{text}\n"));
    }

    #[test]
    fn failed_repeats_are_dropped_only_to_be_judged_again() {
        let dir = tempfile::tempdir().unwrap();
        let line = |id: &str, outcome: Outcome| {
            let record = RepeatRecord {
                repeat: 2,
                record: ResultRecord {
                    sample_id: id.into(),
                    metric: "faithfulness".into(),
                    outcome,
                },
            };
            serde_json::to_string(&record).unwrap() + "\n"
        };
        let scored = line("q1", Outcome::bare(1.0));
        let failed = line("q2", Outcome::failed("the answer never parsed"));
        let journal = dir.path().join(REPEATS_FILE);
        std::fs::write(&journal, format!("{scored}{failed}")).unwrap();

        let (done, retried) = repeats_done(dir.path(), "faithfulness", false).unwrap();
        assert_eq!((done.len(), retried), (2, 0));
        let (done, retried) = repeats_done(dir.path(), "faithfulness", true).unwrap();
        assert_eq!(done, HashSet::from([(2, "q1".to_string())]));
        assert_eq!(retried, 1);
        assert_eq!(std::fs::read_to_string(&journal).unwrap(), scored);
    }
}
