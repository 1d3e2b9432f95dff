//! Knowledge retention: does the assistant's reply to a turn keep what the user established
//! earlier in the conversation — neither contradicting it nor asking for it again? One
//! judge call per turn with a history; a first turn is undefined. A conversation's figure is
//! the mean over its turns, as for every metric (`rageval-report`'s conversation figures).

use rageval_core::{Outcome, Sample};
use rageval_tasks::KnowledgeRetention;
use serde_json::json;

use super::evidence;
use crate::scoring::{Failure, ScoringContext, describe};

/// The cell of one turn: 1 when the reply kept what the user said before, else 0.
pub async fn knowledge_retention(
    sample: &Sample,
    scoring: &ScoringContext,
) -> Result<Outcome, Failure> {
    if sample.history.is_empty() {
        return Ok(Outcome::undefined(
            "a first turn has nothing earlier to keep (the sample has no history)",
        ));
    }
    let task = KnowledgeRetention {
        question: sample.question.clone(),
        answer: sample.answer.clone().unwrap_or_default(),
        history: sample.history.clone(),
    };
    let judged = scoring.tasks()?.knowledge_retention(&task).await?;
    let verdict = &judged.value;
    Ok(Outcome::score(
        if verdict.kept() { 1.0 } else { 0.0 },
        evidence::build(
            Vec::new(),
            [
                ("contradicts", json!(verdict.contradicts)),
                ("re_asks", json!(verdict.re_asks)),
                ("reason", json!(verdict.reason)),
                ("judged_by", json!(describe(&judged.by))),
            ],
        ),
    ))
}
