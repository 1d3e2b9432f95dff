//! Metrics about the generated answer: faithfulness to the contexts, relevance to the
//! question, correctness against the reference, and embedding similarity to it.

use rageval_core::conversation::TURN_LAPSE;
use rageval_core::{Evidence, Outcome, Sample, Verdict, VerdictTarget};
use rageval_tasks::heuristic::cosine;
use rageval_tasks::{AnswerRubric, QuestionSimilarity, SupportCredit, SupportVerdict};
use serde_json::{Value, json};

use super::evidence::{self, share};
use super::{Correctness, Relevance};
use crate::scoring::{Failure, ScoringContext, describe};

/// ragas's weights of factuality and semantic similarity in answer correctness.
pub const RAGAS_CORRECTNESS_WEIGHTS: [f64; 2] = [0.75, 0.25];

/// ragas's β of the factuality F-score.
pub const RAGAS_CORRECTNESS_BETA: f64 = 1.0;

/// Faithfulness: the mean credit of the answer's claims by the contexts under `credit`
/// (by default full support counted by its degree; `FullOnly` is S1's, S4's and ragas's
/// fully supported ÷ claims), every claim checked in one call; partial and contradicted
/// counts in the evidence.
pub async fn faithfulness(
    sample: &Sample,
    scoring: &ScoringContext,
    credit: SupportCredit,
) -> Result<Outcome, Failure> {
    let supported = scoring.answer_by_contexts(sample).await?;
    if supported.statements.items.is_empty() {
        return Ok(Outcome::undefined("the answer states no claims"));
    }
    let mut outcome = evidence::supported_share(
        &supported.statements,
        &supported.verdicts,
        ("claims", "claims_from"),
        credit,
    );
    if sample.conversation_id.is_some() {
        // A turn lapses when a claim is backed by neither its contexts nor the conversation.
        let lapse = supported
            .verdicts
            .value
            .iter()
            .any(|v| !v.support.is_supported());
        if let Outcome::Score { evidence, .. } = &mut outcome {
            evidence.details.insert(TURN_LAPSE.into(), json!(lapse));
        }
    }
    Ok(outcome)
}

/// Answer relevance in one of its modes, against the question made standalone from the
/// history for a turn of a conversation (recorded in the evidence).
pub async fn relevance(
    sample: &Sample,
    scoring: &ScoringContext,
    mode: Relevance,
) -> Result<Outcome, Failure> {
    let question = scoring.question(sample).await?;
    let outcome = match mode {
        Relevance::Rubric => rubric(sample, &question.text, scoring).await,
        Relevance::SimulatedQuestions => simulated_questions(sample, &question.text, scoring).await,
        Relevance::Embedding => embedded_questions(sample, &question.text, scoring).await,
    }?;
    Ok(question.recorded_in(outcome))
}

async fn rubric(
    sample: &Sample,
    question: &str,
    scoring: &ScoringContext,
) -> Result<Outcome, Failure> {
    let task = AnswerRubric {
        question: question.to_owned(),
        answer: sample.answer.clone().unwrap_or_default(),
    };
    let judged = scoring.tasks()?.answer_rubric(&task).await?;
    Ok(Outcome::score(
        judged.value.normalised(),
        evidence::build(
            Vec::new(),
            [
                ("rubric_score", json!(judged.value.score)),
                ("reason", json!(judged.value.reason)),
                ("judged_by", json!(describe(&judged.by))),
            ],
        ),
    ))
}

/// S4: similar generated questions ÷ generated questions.
async fn simulated_questions(
    sample: &Sample,
    question: &str,
    scoring: &ScoringContext,
) -> Result<Outcome, Failure> {
    let questions = scoring.generated_questions(sample).await?;
    let candidates: Vec<String> = non_blank(&questions.items);
    if candidates.is_empty() {
        return Ok(Outcome::undefined(
            "no questions were generated from the answer",
        ));
    }
    let task = QuestionSimilarity {
        question: question.to_owned(),
        candidates: candidates.clone(),
    };
    let judged = scoring.tasks()?.question_similarity(&task).await?;
    let similar = judged.value.iter().filter(|v| v.similar).count();
    let verdicts = candidates
        .iter()
        .zip(&judged.value)
        .enumerate()
        .map(|(index, (candidate, verdict))| {
            evidence::binary(
                VerdictTarget::Question(index),
                verdict.similar,
                ("similar", "not_similar"),
                Some(candidate.clone()),
                &verdict.reason,
            )
        })
        .collect();
    Ok(Outcome::score(
        share(similar, candidates.len()),
        evidence::build(
            verdicts,
            [
                ("similar", json!(similar)),
                ("questions", json!(candidates.len())),
                ("noncommittal", json!(questions.noncommittal)),
                ("questions_from", json!(questions.from)),
                ("judged_by", json!(describe(&judged.by))),
            ],
        ),
    ))
}

/// ragas answer relevancy: mean cosine of the generated questions with the real question,
/// 0 when the judge found the answer noncommittal. One embedding request per sample.
async fn embedded_questions(
    sample: &Sample,
    question: &str,
    scoring: &ScoringContext,
) -> Result<Outcome, Failure> {
    let questions = scoring.generated_questions(sample).await?;
    let candidates = non_blank(&questions.items);
    if candidates.is_empty() {
        return Ok(Outcome::undefined(
            "no questions were generated from the answer",
        ));
    }
    let mut texts = vec![question.to_owned()];
    texts.extend(candidates.iter().cloned());
    let vectors = scoring.embed(texts).await?;
    let (question, generated) = vectors
        .split_first()
        .ok_or_else(|| Failure::new("embeddings: the embedding model returned no vectors"))?;
    let cosines: Vec<f64> = generated.iter().map(|g| cosine(g, question)).collect();
    let mean = cosines.iter().sum::<f64>() / cosines.len() as f64;
    let value = if questions.noncommittal { 0.0 } else { mean };
    let verdicts = candidates
        .iter()
        .zip(&cosines)
        .enumerate()
        .map(|(index, (candidate, &similarity))| Verdict {
            target: VerdictTarget::Question(index),
            value: similarity,
            label: Some("cosine".into()),
            text: Some(candidate.clone()),
            reason: None,
            supporting_contexts: Vec::new(),
        })
        .collect();
    Ok(Outcome::score(
        value,
        evidence::build(
            verdicts,
            [
                ("mean_cosine", json!(mean)),
                ("noncommittal", json!(questions.noncommittal)),
                ("questions_from", json!(questions.from)),
            ],
        ),
    ))
}

fn non_blank(items: &[String]) -> Vec<String> {
    items
        .iter()
        .map(|q| q.trim())
        .filter(|q| !q.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Answer correctness in one of its modes.
pub async fn correctness(
    sample: &Sample,
    scoring: &ScoringContext,
    mode: Correctness,
) -> Result<Outcome, Failure> {
    match mode {
        Correctness::StatementRecall(credit) => statement_recall(sample, scoring, credit).await,
        Correctness::Ragas => ragas_correctness(sample, scoring).await,
    }
}

/// S4's statement recall: the mean credit of the reference's statements by the answer
/// under `credit` (`FullOnly`: fully supported ÷ reference statements, as S4 counts).
async fn statement_recall(
    sample: &Sample,
    scoring: &ScoringContext,
    credit: SupportCredit,
) -> Result<Outcome, Failure> {
    let statements = scoring.reference_statements(sample).await?;
    if statements.items.is_empty() {
        return Ok(Outcome::undefined("the reference states nothing"));
    }
    let judged = scoring.reference_by_answer(sample).await?;
    Ok(evidence::supported_share(
        &statements,
        &judged,
        ("reference_statements", "statements_from"),
        credit,
    ))
}

/// ragas answer correctness: `w₀ · F_β(TP, FP, FN) + w₁ · cosine(answer, reference)`, TP/FP
/// the answer statements the reference does / does not support, FN the reference statements
/// the answer does not support. The two support calls and the embedding run concurrently.
async fn ragas_correctness(sample: &Sample, scoring: &ScoringContext) -> Result<Outcome, Failure> {
    let (answer, reference) = futures_util::future::join(
        scoring.answer_statements(sample),
        scoring.reference_statements(sample),
    )
    .await;
    let (answer, reference) = (answer?, reference?);
    if reference.items.is_empty() {
        return Ok(Outcome::undefined("the reference states nothing"));
    }
    let texts = vec![
        sample.answer.clone().unwrap_or_default(),
        sample.reference_text().unwrap_or_default(),
    ];
    let (by_reference, by_answer, vectors) = futures_util::future::join3(
        scoring.answer_by_reference(sample),
        scoring.reference_by_answer(sample),
        scoring.embed(texts),
    )
    .await;
    let (by_reference, by_answer, vectors) = (by_reference?, by_answer?, vectors?);
    let supported =
        |verdicts: &[SupportVerdict]| verdicts.iter().filter(|v| v.support.is_supported()).count();
    let tp = supported(&by_reference.value);
    let fp = answer.items.len() - tp;
    let fn_ = reference.items.len() - supported(&by_answer.value);
    let factuality = fbeta(tp, fp, fn_, RAGAS_CORRECTNESS_BETA);
    let similarity = match vectors.as_slice() {
        [a, b] => cosine(a, b),
        _ => return Err(Failure::new("embeddings: expected 2 vectors")),
    };
    let [wf, ws] = RAGAS_CORRECTNESS_WEIGHTS;
    let value = (wf * factuality + ws * similarity) / (wf + ws);
    // ragas counts statements: only full support is a true positive.
    let mut verdicts = relabel(
        evidence::support(&answer.items, &by_reference.value, SupportCredit::FullOnly),
        ("tp", "fp"),
    );
    let offset = verdicts.len();
    verdicts.extend(
        relabel(
            evidence::support(&reference.items, &by_answer.value, SupportCredit::FullOnly),
            ("covered", "fn"),
        )
        .into_iter()
        .map(|mut v| {
            // Reference statements follow the answer's in one index space.
            if let VerdictTarget::Statement(i) = v.target {
                v.target = VerdictTarget::Statement(offset + i);
            }
            v
        }),
    );
    Ok(Outcome::score(
        value,
        evidence::build(
            verdicts,
            [
                ("tp", json!(tp)),
                ("fp", json!(fp)),
                ("fn", json!(fn_)),
                ("factuality", json!(factuality)),
                ("similarity", json!(similarity)),
                ("weights", json!(RAGAS_CORRECTNESS_WEIGHTS)),
                ("answer_statements", json!(answer.items.len())),
                ("reference_statements", json!(reference.items.len())),
                ("judged_by", json!(describe(&by_reference.by))),
            ],
        ),
    ))
}

/// Labels a support verdict by its class, keeping the support label in the reason.
fn relabel(verdicts: Vec<Verdict>, labels: (&str, &str)) -> Vec<Verdict> {
    verdicts
        .into_iter()
        .map(|mut v| {
            let support = v.label.take().unwrap_or_default();
            v.label = Some(if v.value > 0.0 { labels.0 } else { labels.1 }.to_owned());
            v.reason = Some(format!("{support}: {}", v.reason.unwrap_or_default()));
            v
        })
        .collect()
}

/// ragas's `fbeta_score`: precision and recall are 0 when their denominators are, and the
/// score is 0 when both are.
pub fn fbeta(tp: usize, fp: usize, fn_: usize, beta: f64) -> f64 {
    let (tp, fp, fn_) = (tp as f64, fp as f64, fn_ as f64);
    let precision = if tp + fp > 0.0 { tp / (tp + fp) } else { 0.0 };
    let recall = if tp + fn_ > 0.0 { tp / (tp + fn_) } else { 0.0 };
    if precision == 0.0 && recall == 0.0 {
        return 0.0;
    }
    let b2 = beta * beta;
    (1.0 + b2) * precision * recall / (b2 * precision + recall)
}

/// ragas semantic similarity: cosine of the answer's and the reference's embeddings; the
/// evidence names the embedding model (Chinese text has its own where one is installed).
pub async fn similarity(sample: &Sample, scoring: &ScoringContext) -> Result<Outcome, Failure> {
    let texts = vec![
        sample.answer.clone().unwrap_or_default(),
        sample.reference_text().unwrap_or_default(),
    ];
    let (vectors, embedder) = scoring.embed_naming(texts).await?;
    let evidence = Evidence::details([("embedder", Value::String(embedder))]);
    match vectors.as_slice() {
        [a, b] => Ok(Outcome::score(cosine(a, b), evidence)),
        _ => Err(Failure::new("embeddings: expected 2 vectors")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fbeta_matches_ragas() {
        // Values checked against ragas.metrics.utils.fbeta_score (shared/research/ragas.md §5.1).
        assert_eq!(fbeta(0, 0, 0, 1.0), 0.0);
        assert_eq!(fbeta(1, 0, 0, 1.0), 1.0);
        assert!((fbeta(2, 1, 1, 1.0) - 0.6667).abs() < 1e-4);
        assert!((fbeta(3, 0, 2, 1.0) - 0.75).abs() < 1e-12);
    }
}
