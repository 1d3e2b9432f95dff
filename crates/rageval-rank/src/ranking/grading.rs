//! Round 0: every context graded 0–3, concurrently, one context per call or several.
//!
//! Batched (`grade_batch` ≥ 2), the contexts are shuffled (seeded) so that a batch mixes the
//! retriever's head and tail, then packed into batches of at most `grade_batch`, made as
//! equal as possible and each within the prompt window when one is set. A batch whose call
//! fails, or answers with the wrong number of grades, leaves exactly its contexts ungraded.
//! A context too long for the window even alone is not sent; it is ungraded with the reason.

use rageval_core::stats::SplitMix64;

use super::RankSettings;
use crate::concurrency::run_round;
use crate::judges::{CallRecord, Grade, ListCall, RankJudge};
use crate::packing::{balanced_size, pack};
use crate::seeded::shuffle;

/// Mixed into the seed for the batches' shuffle, so that batching does not change the draws
/// of the ordering rounds.
const BATCH_SALT: u64 = 0x6772_6164_6573; // "grades"

/// The grading round's answers.
pub(crate) struct Graded {
    /// Per context.
    pub grades: Vec<CallRecord<Grade>>,
    /// The contexts of each batch call, in the order shown; empty when graded one by one.
    pub batches: Vec<Vec<usize>>,
    /// Calls made.
    pub calls: usize,
    /// Calls that failed.
    pub failed: usize,
}

/// Grades every one of `contexts` for `question`.
pub(crate) async fn grade_all<J: RankJudge>(
    judge: &J,
    question: &str,
    contexts: &[&str],
    settings: &RankSettings,
) -> Graded {
    let n = contexts.len();
    if settings.grade_batch <= 1 {
        let grades = run_round(
            (0..n).collect(),
            settings.max_in_flight,
            |index: usize| async move { record(judge.grade(question, contexts[index]).await) },
        )
        .await;
        let failed = grades.iter().filter(|g| g.answer().is_none()).count();
        return Graded {
            grades,
            batches: Vec::new(),
            calls: n,
            failed,
        };
    }
    let mut order: Vec<usize> = (0..n).collect();
    shuffle(&mut order, &mut SplitMix64::new(settings.seed ^ BATCH_SALT));
    let budget = PromptBudget::new(judge, ListCall::GradeBatch, question, contexts, settings);
    let batches: Vec<Vec<usize>> = pack(
        &order,
        balanced_size(n, settings.grade_batch),
        |batch: &[usize]| budget.fits(batch),
    )
    .into_iter()
    .map(|range| order[range].to_vec())
    .collect();
    let answers = run_round(
        batches.clone(),
        settings.max_in_flight,
        |batch: Vec<usize>| {
            let budget = &budget;
            async move {
                if !budget.fits(&batch) {
                    return (CallRecord::Failed(budget.too_long(&batch)), false);
                }
                let texts: Vec<&str> = batch.iter().map(|&i| contexts[i]).collect();
                let answer = match judge.grade_batch(question, &texts).await {
                    Ok(grades) if grades.len() == batch.len() => CallRecord::Answer(grades),
                    Ok(grades) => CallRecord::Failed(format!(
                        "the judge returned {} grades for {} contexts",
                        grades.len(),
                        batch.len()
                    )),
                    Err(error) => CallRecord::Failed(error.to_string()),
                };
                (answer, true)
            }
        },
    )
    .await;
    let mut grades = vec![CallRecord::Failed("not graded".into()); n];
    let (mut calls, mut failed) = (0, 0);
    for (batch, (answer, sent)) in batches.iter().zip(answers) {
        calls += usize::from(sent);
        match answer {
            CallRecord::Answer(values) => {
                for (&index, grade) in batch.iter().zip(values) {
                    grades[index] = CallRecord::Answer(grade);
                }
            }
            CallRecord::Failed(error) => {
                failed += usize::from(sent);
                for &index in batch {
                    grades[index] = CallRecord::Failed(error.clone());
                }
            }
        }
    }
    Graded {
        grades,
        batches,
        calls,
        failed,
    }
}

fn record<T>(result: Result<T, crate::judges::CallError>) -> CallRecord<T> {
    match result {
        Ok(value) => CallRecord::Answer(value),
        Err(error) => CallRecord::Failed(error.to_string()),
    }
}

/// The prompt window of one kind of list call for one question: the fixed part counted once,
/// each context's share once.
pub(crate) struct PromptBudget {
    fixed: usize,
    per_context: Vec<usize>,
    limit: Option<usize>,
}

impl PromptBudget {
    pub fn new<J: RankJudge>(
        judge: &J,
        call: ListCall,
        question: &str,
        contexts: &[&str],
        settings: &RankSettings,
    ) -> Self {
        let limit = settings.max_prompt_tokens;
        PromptBudget {
            fixed: limit.map_or(0, |_| judge.fixed_prompt_tokens(call, question)),
            per_context: match limit {
                Some(_) => contexts
                    .iter()
                    .map(|c| judge.context_prompt_tokens(c))
                    .collect(),
                None => Vec::new(),
            },
            limit,
        }
    }

    /// Prompt tokens of a call showing `contexts` (0 when no window is set).
    pub fn tokens(&self, contexts: &[usize]) -> usize {
        contexts
            .iter()
            .filter_map(|&i| self.per_context.get(i))
            .fold(self.fixed, |sum, &t| sum.saturating_add(t))
    }

    /// Whether a call showing `contexts` fits the window.
    pub fn fits(&self, contexts: &[usize]) -> bool {
        self.limit
            .is_none_or(|limit| self.tokens(contexts) <= limit)
    }

    /// Why a call showing `contexts` is not sent.
    pub fn too_long(&self, contexts: &[usize]) -> String {
        format!(
            "not sent: the prompt would need {} tokens, over the window of {}",
            self.tokens(contexts),
            self.limit.unwrap_or(0)
        )
    }
}
