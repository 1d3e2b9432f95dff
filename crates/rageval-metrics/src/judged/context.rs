//! Metrics about the retrieved contexts: precision (were the useful ones ranked first?),
//! relevance (are they about the question?), recall (do they hold what the reference says?)
//! and entity recall (do they name what the reference names?).

use std::collections::BTreeSet;

use futures_util::future::join_all;
use rageval_core::rank::{average_precision, average_precision_ragas, average_precision_strict};
use rageval_core::{Outcome, Sample};
use rageval_tasks::{ContextRelevance, ExtractEntities, Judged, SupportCredit, UsefulnessVerdict};
use serde_json::json;

use super::Precision;
use super::evidence::{self, share};
use crate::scoring::{Failure, ScoringContext, collect_per_context, describe};

/// Context precision with usefulness judged for the reference (ragas, S1, S2).
pub async fn reference_precision(
    sample: &Sample,
    scoring: &ScoringContext,
    precision: Precision,
) -> Result<Outcome, Failure> {
    let verdicts = scoring.reference_usefulness(sample).await?;
    let question = scoring.question(sample).await?;
    Ok(question.recorded_in(precision_outcome(&verdicts, precision)))
}

/// S0's useful context precision: usefulness judged for the generated answer, exact AP.
pub async fn answer_precision(
    sample: &Sample,
    scoring: &ScoringContext,
) -> Result<Outcome, Failure> {
    let answer = sample.answer.clone().unwrap_or_default();
    let verdicts = scoring.usefulness(sample, &answer).await?;
    let question = scoring.question(sample).await?;
    Ok(question.recorded_in(precision_outcome(&verdicts, Precision::Exact)))
}

fn precision_outcome(verdicts: &[Judged<UsefulnessVerdict>], precision: Precision) -> Outcome {
    let flags: Vec<bool> = verdicts.iter().map(|v| v.value.useful).collect();
    let value = match precision {
        Precision::Exact => average_precision(&flags),
        Precision::Ragas => average_precision_ragas(&flags),
        Precision::Strict => average_precision_strict(&flags),
    };
    // The inputs check guarantees at least one context, so the AP exists.
    let Some(value) = value else {
        return Outcome::undefined("sample has no retrieved_contexts");
    };
    let verdicts: Vec<_> = verdicts
        .iter()
        .map(|v| (v.value.useful, v.value.reason.as_str(), &v.by))
        .collect();
    // The share of useful contexts and the evidence, with the AP as the value.
    match evidence::context_share(&verdicts, ("useful", "not_useful")) {
        Outcome::Score { evidence, .. } => Outcome::score(value, evidence),
        other => other,
    }
}

/// S4 context relevance: contexts judged relevant to the question (made standalone from the
/// history for a turn of a conversation) ÷ contexts.
pub async fn relevance(sample: &Sample, scoring: &ScoringContext) -> Result<Outcome, Failure> {
    let tasks = scoring.tasks()?;
    let question = scoring.question(sample).await?;
    let asks = sample.contexts.iter().map(|context| {
        let task = ContextRelevance {
            question: question.text.clone(),
            context: context.text.clone(),
        };
        async move { tasks.context_relevance(&task).await }
    });
    let verdicts = collect_per_context(join_all(asks).await)?;
    let verdicts: Vec<_> = verdicts
        .iter()
        .map(|v| (v.value.relevant, v.value.reason.as_str(), &v.by))
        .collect();
    Ok(question.recorded_in(evidence::context_share(
        &verdicts,
        ("relevant", "not_relevant"),
    )))
}

/// Context recall: the mean credit of the reference's statements by the contexts under
/// `credit` (graded by default; `FullOnly` is S4's and ragas's fully supported ÷ reference
/// statements). All statements are checked in one call.
pub async fn recall(
    sample: &Sample,
    scoring: &ScoringContext,
    credit: SupportCredit,
) -> Result<Outcome, Failure> {
    let supported = scoring.reference_by_contexts(sample).await?;
    if supported.statements.items.is_empty() {
        return Ok(Outcome::undefined("the reference states nothing"));
    }
    let outcome = evidence::supported_share(
        &supported.statements,
        &supported.verdicts,
        ("reference_statements", "statements_from"),
        credit,
    );
    // The resolved question is what the reference was split for (when the judge split it).
    match sample.reference_statements {
        Some(_) => Ok(outcome),
        None => Ok(scoring.question(sample).await?.recorded_in(outcome)),
    }
}

/// ragas context entity recall: entities of the reference also named in the contexts ÷
/// entities of the reference. Entities are compared case-folded with white space
/// collapsed, each once (ragas compares exact strings).
pub async fn entity_recall(sample: &Sample, scoring: &ScoringContext) -> Result<Outcome, Failure> {
    let tasks = scoring.tasks()?;
    let reference = ExtractEntities {
        text: sample.reference_text().unwrap_or_default(),
    };
    let contexts = ExtractEntities {
        text: sample
            .contexts
            .iter()
            .map(|c| c.text.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
    };
    let (in_reference, in_contexts) = futures_util::future::join(
        tasks.extract_entities(&reference),
        tasks.extract_entities(&contexts),
    )
    .await;
    let (in_reference, in_contexts) = (in_reference?, in_contexts?);
    let wanted: BTreeSet<String> = in_reference.value.iter().map(|e| normalise(e)).collect();
    if wanted.is_empty() {
        return Ok(Outcome::undefined("the reference names no entities"));
    }
    let named: BTreeSet<String> = in_contexts.value.iter().map(|e| normalise(e)).collect();
    let found: Vec<&String> = wanted.intersection(&named).collect();
    let missing: Vec<&String> = wanted.difference(&named).collect();
    Ok(Outcome::score(
        share(found.len(), wanted.len()),
        evidence::build(
            Vec::new(),
            [
                ("reference_entities", json!(wanted.len())),
                ("found", json!(found)),
                ("missing", json!(missing)),
                ("judged_by", json!(describe(&in_reference.by))),
            ],
        ),
    ))
}

fn normalise(entity: &str) -> String {
    entity
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}
