//! A scripted judge for the ranking tests: a fixed utility and grade per context, optional
//! failures, position bias and latency, and counters of what it was asked.

use std::collections::HashSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rageval_rank::simulation::{context_index, context_text};
use rageval_rank::{CallError, Comparator, Grade, Grader, Preference};

#[derive(Default)]
pub struct ScriptedJudge {
    /// Higher is better; compared exactly (no noise).
    pub utilities: Vec<f64>,
    pub grades: Vec<u8>,
    /// Always answer "first", whatever the contexts.
    pub prefers_first: bool,
    pub failing_grades: HashSet<usize>,
    /// Comparison calls involving this context fail.
    pub failing_context: Option<usize>,
    pub latency: Option<Duration>,
    pub in_flight: AtomicUsize,
    pub peak_in_flight: AtomicUsize,
    pub asked: Mutex<Vec<(usize, usize)>>,
}

pub fn texts(n: usize) -> Vec<String> {
    (0..n).map(context_text).collect()
}

fn index(text: &str) -> usize {
    context_index(text).unwrap_or(usize::MAX)
}

impl ScriptedJudge {
    /// `n` contexts; the utility of context `i` is `utility(i)`; grade 0 below `useful_above`,
    /// else 1–3 by utility thirds of the useful range.
    pub fn new(utilities: Vec<f64>, useful_above: f64) -> Self {
        let grades = utilities
            .iter()
            .map(|&u| {
                if u <= useful_above {
                    0
                } else {
                    1 + u8::from(u > useful_above + 10.0) + u8::from(u > useful_above + 20.0)
                }
            })
            .collect();
        Self {
            utilities,
            grades,
            ..Self::default()
        }
    }

    async fn call(&self) {
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak_in_flight.fetch_max(now, Ordering::SeqCst);
        if let Some(latency) = self.latency {
            tokio::time::sleep(latency).await;
        }
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Grader for ScriptedJudge {
    async fn grade(&self, _question: &str, context: &str) -> Result<Grade, CallError> {
        self.call().await;
        let i = index(context);
        if self.failing_grades.contains(&i) {
            return Err("grading timed out".into());
        }
        Grade::new(self.grades[i]).ok_or_else(|| "bad grade".into())
    }
}

impl Comparator for ScriptedJudge {
    async fn compare(
        &self,
        _question: &str,
        first: &str,
        second: &str,
    ) -> Result<Preference, CallError> {
        self.call().await;
        let (a, b) = (index(first), index(second));
        self.asked.lock().map_err(|_| "poisoned")?.push((a, b));
        if self.failing_context.is_some_and(|f| f == a || f == b) {
            return Err("comparison timed out".into());
        }
        if self.prefers_first {
            return Ok(Preference::First);
        }
        Ok(match self.utilities[a].total_cmp(&self.utilities[b]) {
            std::cmp::Ordering::Greater => Preference::First,
            std::cmp::Ordering::Less => Preference::Second,
            std::cmp::Ordering::Equal => Preference::Tie,
        })
    }
}
