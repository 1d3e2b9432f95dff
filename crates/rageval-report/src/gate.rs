//! Quality gates for CI: `--fail-under faithfulness=0.8,context_recall=0.7` fails a run whose
//! metric means fall below their thresholds, and a JUnit XML file names the failing metrics
//! and the samples that pulled them down, so a CI server shows them as failed tests.

use std::fmt::Write as _;

use rageval_core::Outcome;

use crate::escape::escape_html;
use crate::{JournalIndex, ReportError, RunData, RunInfo};

/// One `metric=minimum` pair.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    pub metric: String,
    /// The metric's mean must be at least this.
    pub minimum: f64,
}

/// The thresholds a run must meet.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Gate {
    pub thresholds: Vec<Threshold>,
}

/// A sample that scored below a threshold, or failed to score.
#[derive(Debug, Clone, PartialEq)]
pub struct FailingSample {
    pub sample_id: String,
    /// `0.4200`, or `failed: <error>`.
    pub why: String,
}

/// One threshold checked against a run.
#[derive(Debug, Clone, PartialEq)]
pub struct GateCheck {
    pub metric: String,
    pub minimum: f64,
    /// The run's mean; `None` when no sample was scored (which fails the gate).
    pub mean: Option<f64>,
    pub passed: bool,
    /// Samples below the threshold (lowest first) and samples whose metric failed.
    /// Undefined samples are not listed: the metric does not apply to them.
    pub failing_samples: Vec<FailingSample>,
}

/// Every threshold checked.
#[derive(Debug, Clone, PartialEq)]
pub struct GateOutcome {
    pub checks: Vec<GateCheck>,
}

impl GateOutcome {
    /// Whether every threshold is met (true for an empty gate).
    pub fn passed(&self) -> bool {
        self.checks.iter().all(|c| c.passed)
    }

    /// The checks that failed.
    pub fn failures(&self) -> impl Iterator<Item = &GateCheck> {
        self.checks.iter().filter(|c| !c.passed)
    }
}

impl Gate {
    /// Parses `metric=minimum` items (the CLI splits its flag on commas).
    pub fn parse<S: AsRef<str>>(items: &[S]) -> Result<Self, ReportError> {
        let mut thresholds: Vec<Threshold> = Vec::new();
        for item in items
            .iter()
            .map(AsRef::as_ref)
            .filter(|s| !s.trim().is_empty())
        {
            let bad = |why: &str| ReportError::BadGate {
                spec: item.to_string(),
                why: why.to_string(),
            };
            let (metric, minimum) = item
                .split_once('=')
                .ok_or_else(|| bad("expected METRIC=MINIMUM, e.g. faithfulness=0.8"))?;
            let metric = metric.trim();
            if metric.is_empty() {
                return Err(bad("the metric name is empty"));
            }
            let minimum: f64 = minimum
                .trim()
                .parse()
                .map_err(|_| bad("the minimum is not a number"))?;
            if !minimum.is_finite() {
                return Err(bad("the minimum is not a finite number"));
            }
            if thresholds.iter().any(|t| t.metric == metric) {
                return Err(bad("the metric has two thresholds"));
            }
            thresholds.push(Threshold {
                metric: metric.to_string(),
                minimum,
            });
        }
        Ok(Self { thresholds })
    }

    pub fn is_empty(&self) -> bool {
        self.thresholds.is_empty()
    }

    /// Checks every threshold against `run`; a threshold on a metric the run lacks is an
    /// error rather than a pass, so a typo cannot open the gate.
    pub fn check(&self, run: &RunData) -> Result<GateOutcome, ReportError> {
        self.check_journal(&run.info(), &JournalIndex::of_records(&run.records))
    }

    /// [`Gate::check`] against a run's journal index, whose records are streamed once per
    /// threshold.
    pub fn check_journal(
        &self,
        run: &RunInfo,
        journal: &JournalIndex,
    ) -> Result<GateOutcome, ReportError> {
        let mut checks = Vec::new();
        for threshold in &self.thresholds {
            let Some(summary) = run.summary.metrics.get(&threshold.metric) else {
                return Err(ReportError::UnknownGateMetric {
                    metric: threshold.metric.clone(),
                    available: journal.metric_names(&run.summary.metric_order).join(", "),
                });
            };
            let mut below: Vec<(f64, String)> = Vec::new();
            let mut failed = Vec::new();
            journal.for_each_record(|record| {
                if record.metric != threshold.metric {
                    return Ok(());
                }
                match &record.outcome {
                    Outcome::Score { value, .. } if *value < threshold.minimum => {
                        below.push((*value, record.sample_id.clone()))
                    }
                    Outcome::Failed { error } => failed.push(FailingSample {
                        sample_id: record.sample_id.clone(),
                        why: format!("failed: {error}"),
                    }),
                    _ => {}
                }
                Ok(())
            })?;
            below.sort_by(|a, b| a.0.total_cmp(&b.0));
            let mut failing_samples: Vec<FailingSample> = below
                .into_iter()
                .map(|(value, sample_id)| FailingSample {
                    sample_id,
                    why: format!("{value:.4}"),
                })
                .collect();
            failing_samples.extend(failed);
            checks.push(GateCheck {
                metric: threshold.metric.clone(),
                minimum: threshold.minimum,
                mean: summary.mean,
                passed: summary.mean.is_some_and(|m| m >= threshold.minimum),
                failing_samples,
            });
        }
        Ok(GateOutcome { checks })
    }
}

/// JUnit XML for a gate: one test case per threshold; a failed one carries a message with
/// the mean and, as its text, the samples below the threshold.
pub fn render_junit(run_name: &str, outcome: &GateOutcome) -> String {
    let failures = outcome.failures().count();
    let tests = outcome.checks.len();
    let suite = escape_html(&format!("rageval quality gate: {run_name}"));
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        xml,
        r#"<testsuites name="rageval" tests="{tests}" failures="{failures}">"#
    );
    let _ = writeln!(
        xml,
        r#"  <testsuite name="{suite}" tests="{tests}" failures="{failures}" errors="0" skipped="0">"#
    );
    for check in &outcome.checks {
        let name = escape_html(&format!("{} >= {}", check.metric, check.minimum));
        let _ = write!(
            xml,
            r#"    <testcase classname="rageval.gate" name="{name}""#
        );
        if check.passed {
            xml.push_str("/>\n");
            continue;
        }
        let message = match check.mean {
            Some(mean) => format!("{} mean {mean:.4} is below {}", check.metric, check.minimum),
            None => format!("{} has no scored sample", check.metric),
        };
        let mut body = format!(
            "{} sample(s) below {} or failed:\n",
            check.failing_samples.len(),
            check.minimum
        );
        for sample in &check.failing_samples {
            let _ = writeln!(body, "{}: {}", sample.sample_id, sample.why);
        }
        let _ = writeln!(
            xml,
            ">\n      <failure type=\"below_threshold\" message=\"{}\">{}</failure>\n    </testcase>",
            escape_html(&message),
            escape_html(&body)
        );
    }
    xml.push_str("  </testsuite>\n</testsuites>\n");
    xml
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::write_run;

    fn run() -> (tempfile::TempDir, RunData) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run");
        write_run(
            &path,
            "abc",
            &[
                ("s1", "faithfulness", Outcome::bare(0.9)),
                ("s2", "faithfulness", Outcome::bare(0.5)),
                ("s<3>", "faithfulness", Outcome::failed("judge timed out")),
                ("s1", "context_recall", Outcome::bare(0.8)),
                ("s2", "context_recall", Outcome::bare(0.7)),
                ("s<3>", "context_recall", Outcome::undefined("no reference")),
            ],
        );
        let run = RunData::load(&path).unwrap();
        (dir, run)
    }

    #[test]
    fn parses_thresholds_and_refuses_nonsense() {
        let gate = Gate::parse(&["faithfulness=0.8", " context_recall = 0.7 "]).unwrap();
        assert_eq!(gate.thresholds[1].metric, "context_recall");
        assert_eq!(gate.thresholds[1].minimum, 0.7);
        for bad in ["faithfulness", "=0.5", "m=high", "m=NaN", "m=inf"] {
            assert!(Gate::parse(&[bad]).is_err(), "{bad}");
        }
        assert!(Gate::parse(&["m=0.1", "m=0.2"]).is_err());
    }

    #[test]
    fn fails_the_metrics_below_their_thresholds_and_names_the_samples() {
        let (_dir, run) = run();
        let gate = Gate::parse(&["faithfulness=0.8", "context_recall=0.7"]).unwrap();
        let outcome = gate.check(&run).unwrap();
        assert!(!outcome.passed());
        let failed: Vec<&str> = outcome.failures().map(|c| c.metric.as_str()).collect();
        assert_eq!(failed, vec!["faithfulness"]);
        let faithfulness = &outcome.checks[0];
        assert_eq!(faithfulness.mean, Some(0.7));
        let ids: Vec<&str> = faithfulness
            .failing_samples
            .iter()
            .map(|s| s.sample_id.as_str())
            .collect();
        assert_eq!(ids, vec!["s2", "s<3>"]);
        // context_recall's mean is 0.75 ≥ 0.7; its undefined sample is not a failure.
        assert!(outcome.checks[1].passed);

        let xml = render_junit("run", &outcome);
        assert!(xml.contains(r#"tests="2" failures="1""#));
        assert!(xml.contains(r#"message="faithfulness mean 0.7000 is below 0.8""#));
        assert!(xml.contains("s2: 0.5000\ns&lt;3&gt;: failed: judge timed out"));
        assert!(
            xml.contains(r#"<testcase classname="rageval.gate" name="context_recall &gt;= 0.7"/>"#)
        );
    }

    #[test]
    fn a_threshold_on_a_missing_metric_is_an_error() {
        let (_dir, run) = run();
        let error = Gate::parse(&["faithfullness=0.8"])
            .unwrap()
            .check(&run)
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "quality gate names metric `faithfullness`, which the run does not have \
             (it has: faithfulness, context_recall)"
        );
    }
}
