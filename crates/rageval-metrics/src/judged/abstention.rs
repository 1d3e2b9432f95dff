//! Abstention: did the system answer when its contexts supported an answer, and decline
//! when they did not? One judge call gives the verdict pair; the sample's cell is 1 when
//! the behaviour was right and names its quadrant, which the run's summary counts into a
//! 2×2 table (`rageval-report`'s abstention table). This module does not count the table.

use rageval_core::{ABSTENTION_QUADRANT, Outcome, Quadrant, Sample};
use rageval_tasks::Abstention;
use serde_json::json;

use super::evidence;
use crate::scoring::{Failure, ScoringContext, describe};

/// The cell of one sample: 1 in the right quadrants, 0 in the wrong ones; undefined when
/// the judge cannot tell whether the contexts support an answer.
pub async fn abstention(sample: &Sample, scoring: &ScoringContext) -> Result<Outcome, Failure> {
    let task = Abstention {
        question: sample.question.clone(),
        contexts: sample.contexts.iter().map(|c| c.text.clone()).collect(),
        answer: sample.answer.clone().unwrap_or_default(),
    };
    let judged = scoring.tasks()?.abstention(&task).await?;
    let verdict = &judged.value;
    let Some(supported) = verdict.supported else {
        return Ok(Outcome::undefined(format!(
            "{} (the answer {})",
            rageval_tasks::heuristic::UNDECIDED_SUPPORT,
            if verdict.refused {
                "declines"
            } else {
                "answers"
            }
        )));
    };
    let quadrant = Quadrant::of(supported, verdict.refused);
    Ok(Outcome::score(
        if quadrant.is_right() { 1.0 } else { 0.0 },
        evidence::build(
            Vec::new(),
            [
                (ABSTENTION_QUADRANT, json!(quadrant.name())),
                ("supported", json!(supported)),
                ("refused", json!(verdict.refused)),
                ("reason", json!(verdict.reason)),
                ("judged_by", json!(describe(&judged.by))),
            ],
        ),
    ))
}
