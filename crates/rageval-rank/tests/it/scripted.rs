//! A scripted judge for the ranking tests: a fixed utility and grade per context, optional
//! failures, position bias, garbage and latency, prompt sizes, and counters of what it was
//! asked.

use std::collections::HashSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rageval_rank::simulation::{context_index, context_text};
use rageval_rank::{
    BatchGrader, CallError, Comparator, Grade, Grader, ListCall, ListOrderer, Preference,
    PromptSize,
};

/// Prompt tokens of the fixed part of every list call, and of each context in it.
pub const FIXED_TOKENS: usize = 20;
pub const CONTEXT_TOKENS: usize = 10;

#[derive(Default)]
pub struct ScriptedJudge {
    /// Higher is better; compared exactly (no noise).
    pub utilities: Vec<f64>,
    pub grades: Vec<u8>,
    /// Always answer "first" (or, ordering, the order shown), whatever the contexts.
    pub prefers_first: bool,
    /// Answer every window with something that is not a permutation.
    pub garbage_orders: bool,
    /// This context's prompt share is 1,000 tokens, not [`CONTEXT_TOKENS`].
    pub long_context: Option<usize>,
    pub failing_grades: HashSet<usize>,
    /// Comparison calls involving this context fail.
    pub failing_context: Option<usize>,
    pub latency: Option<Duration>,
    pub in_flight: AtomicUsize,
    pub peak_in_flight: AtomicUsize,
    pub asked: Mutex<Vec<(usize, usize)>>,
    /// Every batch graded and window ordered, as shown.
    pub shown: Mutex<Vec<Vec<usize>>>,
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

impl ScriptedJudge {
    fn record(&self, contexts: &[&str]) -> Result<Vec<usize>, CallError> {
        let indices: Vec<usize> = contexts.iter().map(|c| index(c)).collect();
        self.shown
            .lock()
            .map_err(|_| "poisoned")?
            .push(indices.clone());
        Ok(indices)
    }
}

impl BatchGrader for ScriptedJudge {
    async fn grade_batch(
        &self,
        _question: &str,
        contexts: &[&str],
    ) -> Result<Vec<Grade>, CallError> {
        self.call().await;
        let indices = self.record(contexts)?;
        if indices.iter().any(|i| self.failing_grades.contains(i)) {
            return Err("grading timed out".into());
        }
        indices
            .iter()
            .map(|&i| Grade::new(self.grades[i]).ok_or_else(|| "bad grade".into()))
            .collect()
    }
}

impl ListOrderer for ScriptedJudge {
    async fn order(&self, _question: &str, contexts: &[&str]) -> Result<Vec<usize>, CallError> {
        self.call().await;
        let indices = self.record(contexts)?;
        if self.failing_context.is_some_and(|f| indices.contains(&f)) {
            return Err("ordering timed out".into());
        }
        if self.garbage_orders {
            return Ok(vec![0; indices.len()]);
        }
        let mut order: Vec<usize> = (0..indices.len()).collect();
        if !self.prefers_first {
            order.sort_by(|&a, &b| {
                self.utilities[indices[b]].total_cmp(&self.utilities[indices[a]])
            });
        }
        Ok(order)
    }
}

impl PromptSize for ScriptedJudge {
    fn fixed_prompt_tokens(&self, _call: ListCall, _question: &str) -> usize {
        FIXED_TOKENS
    }

    fn context_prompt_tokens(&self, context: &str) -> usize {
        if self.long_context == Some(index(context)) {
            1_000
        } else {
            CONTEXT_TOKENS
        }
    }
}
