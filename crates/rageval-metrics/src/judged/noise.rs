//! ragas noise sensitivity: how often the answer states something wrong (not supported by
//! the reference) that a retrieved context nonetheless supports. Lower is better.
//!
//! With `R2GT[g][j]` (reference statement g supported by context j), `R2A[a][j]` (answer
//! statement a supported by context j) and `GT2A[a]` (answer statement a supported by the
//! reference): context j is relevant when it supports some reference statement; an answer
//! statement is "relevant-faithful" when a relevant context supports it, "irrelevant-faithful"
//! when only irrelevant ones do; the score is the share of answer statements that are both
//! incorrect and (ir)relevant-faithful. All 2K per-context calls and the reference call run
//! concurrently.

use futures_util::future::{join, join_all};
use rageval_core::{Outcome, Sample, Verdict, VerdictTarget};
use serde_json::json;

use super::Noise;
use super::evidence::{self, share};
use rageval_tasks::{Judged, Premise, SupportVerdict};

use crate::scoring::{Failure, ScoringContext, Shared, describe};

pub async fn sensitivity(
    sample: &Sample,
    scoring: &ScoringContext,
    mode: Noise,
) -> Result<Outcome, Failure> {
    let (answer, reference) = join(
        scoring.answer_statements(sample),
        scoring.reference_statements(sample),
    )
    .await;
    let (answer, reference) = (answer?, reference?);
    if answer.items.is_empty() {
        return Ok(Outcome::undefined("the answer states no claims"));
    }
    if reference.items.is_empty() {
        return Ok(Outcome::undefined("the reference states nothing"));
    }
    let per_context = |statements: &[String]| {
        join_all(sample.contexts.iter().map(|context| {
            let statements = statements.to_vec();
            async move {
                scoring
                    .support(&statements, vec![context.text.clone()], Premise::Contexts)
                    .await
            }
        }))
    };
    let ((reference_by_context, answer_by_context), by_reference) = join(
        join(per_context(&reference.items), per_context(&answer.items)),
        scoring.answer_by_reference(sample),
    )
    .await;
    let by_reference = by_reference?;
    // Indexed [context][statement].
    let r2gt = support_matrix(reference_by_context)?;
    let r2a = support_matrix(answer_by_context)?;
    let relevant_context: Vec<bool> = r2gt.iter().map(|row| row.iter().any(|&s| s)).collect();
    let mut counted = 0;
    let mut verdicts = Vec::with_capacity(answer.items.len());
    for (a, statement) in answer.items.iter().enumerate() {
        let incorrect = !by_reference
            .value
            .get(a)
            .is_some_and(|v| v.support.is_supported());
        let supporting: Vec<usize> = (0..r2a.len()).filter(|&j| r2a[j][a]).collect();
        let by_relevant = supporting.iter().any(|&j| relevant_context[j]);
        let by_irrelevant = supporting.iter().any(|&j| !relevant_context[j]);
        let blamed = incorrect
            && match mode {
                Noise::Relevant => by_relevant,
                Noise::Irrelevant => by_irrelevant && !by_relevant,
            };
        counted += usize::from(blamed);
        verdicts.push(Verdict {
            target: VerdictTarget::Statement(a),
            value: if blamed { 1.0 } else { 0.0 },
            label: Some(if incorrect { "incorrect" } else { "correct" }.to_owned()),
            text: Some(statement.clone()),
            reason: Some(match (incorrect, supporting.is_empty()) {
                (_, true) => "no context supports it".to_owned(),
                (true, false) => "not supported by the reference, yet a context supports it".into(),
                (false, false) => "supported by the reference".into(),
            }),
            supporting_contexts: supporting,
        });
    }
    let relevant: Vec<usize> = (0..relevant_context.len())
        .filter(|&j| relevant_context[j])
        .collect();
    Ok(Outcome::score(
        share(counted, answer.items.len()),
        evidence::build(
            verdicts,
            [
                ("answer_statements", json!(answer.items.len())),
                ("reference_statements", json!(reference.items.len())),
                ("relevant_contexts", json!(relevant)),
                ("blamed", json!(counted)),
                ("judged_by", json!(describe(&by_reference.by))),
            ],
        ),
    ))
}

/// Per context, per statement: fully supported? The first failing context stops it.
fn support_matrix(
    results: Vec<Shared<Judged<Vec<SupportVerdict>>>>,
) -> Result<Vec<Vec<bool>>, Failure> {
    results
        .into_iter()
        .enumerate()
        .map(|(j, result)| {
            result
                .map(|judged| {
                    judged
                        .value
                        .iter()
                        .map(|v| v.support.is_supported())
                        .collect()
                })
                .map_err(|failure| Failure::new(format!("context {}: {failure}", j + 1)))
        })
        .collect()
}
