//! Reference planning with a judge whose prompts are counted one token per character: the
//! window is never exceeded, nothing is lost on the way, failures surface.

use std::collections::BTreeSet;
use std::sync::Mutex;

use rageval_rank::reference::ReferenceMode::{Fast, Slow};
use rageval_rank::{
    Answerer, CallError, ContextAnswer, RankError, Reference, ReferenceSettings, generate_reference,
};

/// Tokens of the fixed template text around a prompt.
const TEMPLATE_TOKENS: usize = 20;

/// Answers with the ids (`#n` markers) found in the contexts it is shown, "unknown" when
/// there is none; merges by taking the union of ids. So the final answer lists exactly the
/// contexts whose information survived.
#[derive(Default)]
struct IdAnswerer {
    /// Every prompt sent: (kind, counted tokens of what was received).
    sent: Mutex<Vec<(&'static str, usize)>>,
    /// Answer calls whose contexts contain this marker fail.
    failing_marker: Option<&'static str>,
    merge_fails: bool,
    /// Pad every answer to this many characters.
    answer_padding: usize,
}

fn tokens(question: &str, items: &[&str]) -> usize {
    TEMPLATE_TOKENS
        + question.chars().count()
        + items.iter().map(|s| s.chars().count() + 1).sum::<usize>()
}

fn ids(text: &str) -> BTreeSet<u32> {
    text.split(|c: char| !c.is_ascii_alphanumeric() && c != '#')
        .filter_map(|word| word.strip_prefix('#')?.parse().ok())
        .collect()
}

fn join(ids: &BTreeSet<u32>) -> String {
    ids.iter()
        .map(|id| format!("#{id}"))
        .collect::<Vec<_>>()
        .join(" ")
}

impl IdAnswerer {
    fn record(&self, kind: &'static str, question: &str, items: &[&str]) -> Result<(), CallError> {
        self.sent
            .lock()
            .map_err(|_| "poisoned")?
            .push((kind, tokens(question, items)));
        Ok(())
    }
}

impl Answerer for IdAnswerer {
    fn answer_prompt_tokens(&self, question: &str, contexts: &[&str]) -> usize {
        tokens(question, contexts)
    }

    fn merge_prompt_tokens(&self, question: &str, answers: &[&str]) -> usize {
        tokens(question, answers)
    }

    async fn answer(&self, question: &str, contexts: &[&str]) -> Result<ContextAnswer, CallError> {
        self.record("answer", question, contexts)?;
        if self
            .failing_marker
            .is_some_and(|marker| contexts.iter().any(|c| c.contains(marker)))
        {
            return Err("answer call timed out".into());
        }
        let found: BTreeSet<u32> = contexts.iter().flat_map(|c| ids(c)).collect();
        Ok(if found.is_empty() {
            ContextAnswer::Unknown
        } else {
            ContextAnswer::Answer(format!(
                "{:<width$}",
                join(&found),
                width = self.answer_padding
            ))
        })
    }

    async fn merge(&self, question: &str, answers: &[&str]) -> Result<String, CallError> {
        self.record("merge", question, answers)?;
        if self.merge_fails {
            return Err("merge call timed out".into());
        }
        Ok(join(&answers.iter().flat_map(|a| ids(a)).collect()))
    }
}

/// 40 contexts of ~100 characters (every fourth one without an id: it cannot answer), one of
/// 1,000 characters, and one blank: 5,200 characters against a 500-token window (10×).
fn contexts() -> Vec<String> {
    let mut contexts: Vec<String> = (0..40)
        .map(|i| {
            let filler = "资料内容，".repeat(18);
            if i % 4 == 3 {
                format!("no answer here. {filler}")
            } else {
                format!("fact #{i}. {filler}")
            }
        })
        .collect();
    contexts.push(format!("long document #40. {}", "很长的段落。".repeat(165)));
    contexts.push("   ".to_owned());
    contexts
}

const WINDOW: usize = 500;
const QUESTION: &str = "主营业务是什么？";

async fn generate(
    answerer: &IdAnswerer,
    settings: &ReferenceSettings,
) -> Result<Reference, RankError> {
    let texts = contexts();
    let contexts: Vec<&str> = texts.iter().map(String::as_str).collect();
    generate_reference(answerer, QUESTION, &contexts, settings).await
}

fn expected_ids() -> BTreeSet<u32> {
    (0..=40).filter(|i| i % 4 != 3 || *i == 40).collect()
}

#[tokio::test]
async fn ten_times_the_window_never_sends_an_over_long_prompt() {
    let total: usize = contexts().iter().map(|c| tokens(QUESTION, &[c])).sum();
    assert!(total >= 10 * WINDOW, "the contexts total {total} tokens");
    for mode in [Slow, Fast] {
        let answerer = IdAnswerer::default();
        let settings = ReferenceSettings::new(mode, WINDOW);
        let reference = generate(&answerer, &settings)
            .await
            .unwrap_or_else(|e| panic!("{mode:?}: {e}"));
        let sent = answerer.sent.lock().map(|s| s.clone()).unwrap_or_default();
        let largest = sent.iter().map(|&(_, t)| t).max().unwrap_or(0);
        assert!(
            largest <= WINDOW,
            "{mode:?} sent a prompt of {largest} tokens"
        );
        assert_eq!(reference.largest_prompt_tokens, largest);
        assert_eq!(
            reference.prompt_tokens,
            sent.iter().map(|&(_, t)| t as u64).sum::<u64>()
        );
        assert_eq!(reference.calls.answer + reference.calls.merge, sent.len());
        // Nothing lost: the final answer names every context that had an answer.
        assert_eq!(
            reference.ground_truth.as_deref().map(ids),
            Some(expected_ids()),
            "{mode:?}"
        );
        assert_eq!(reference.empty_contexts, vec![41]);
        // The long context was split into pieces that each fit.
        let long_parts: Vec<_> = reference
            .partial_answers
            .iter()
            .flat_map(|p| &p.pieces)
            .filter(|piece| piece.context == 40)
            .collect();
        assert!(long_parts.len() >= 2 && long_parts.iter().all(|p| p.parts == long_parts.len()));
        assert!(reference.rounds >= 2 && reference.calls.merge >= 1);
        match mode {
            Slow => assert!(
                reference
                    .partial_answers
                    .iter()
                    .all(|p| p.pieces.len() == 1)
            ),
            Fast => {
                assert!(
                    reference
                        .partial_answers
                        .iter()
                        .all(|p| p.pieces.len() <= 20)
                );
                assert!(
                    reference.calls.answer < 41,
                    "fast mode groups contexts: {}",
                    reference.calls.answer
                );
            }
        }
    }
}

#[tokio::test]
async fn fast_mode_groups_follow_the_seed() {
    let answerer = IdAnswerer::default();
    let settings = ReferenceSettings {
        seed: 5,
        ..ReferenceSettings::new(Fast, 10_000)
    };
    let first = generate(&answerer, &settings)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let again = generate(&answerer, &settings)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(first.partial_answers, again.partial_answers);
    // A window that holds everything: groups of 20, 20 and 1 of the 41 non-blank contexts.
    let sizes: Vec<usize> = first
        .partial_answers
        .iter()
        .map(|p| p.pieces.len())
        .collect();
    assert_eq!(sizes, vec![20, 20, 1]);
    let other = generate(
        &answerer,
        &ReferenceSettings {
            seed: 6,
            ..settings
        },
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert_ne!(first.partial_answers, other.partial_answers);
}

#[tokio::test]
async fn contexts_that_answer_nothing_give_no_reference_and_no_merge() {
    let answerer = IdAnswerer::default();
    let contexts = ["nothing", "still nothing"];
    let reference = generate_reference(
        &answerer,
        QUESTION,
        &contexts,
        &ReferenceSettings::new(Slow, WINDOW),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(reference.ground_truth, None);
    assert_eq!(
        (
            reference.calls.answer,
            reference.calls.merge,
            reference.rounds
        ),
        (2, 0, 1)
    );
}

#[tokio::test]
async fn a_failed_answer_call_is_named_and_the_rest_goes_on() {
    let answerer = IdAnswerer {
        failing_marker: Some("#5."),
        ..IdAnswerer::default()
    };
    let reference = generate(&answerer, &ReferenceSettings::new(Slow, WINDOW))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(reference.failed_contexts, vec![5]);
    assert_eq!(reference.calls.failed, 1);
    let mut expected = expected_ids();
    expected.remove(&5);
    assert_eq!(reference.ground_truth.as_deref().map(ids), Some(expected));
}

#[tokio::test]
async fn a_failed_merge_fails_the_reference() {
    let answerer = IdAnswerer {
        merge_fails: true,
        ..IdAnswerer::default()
    };
    let result = generate(&answerer, &ReferenceSettings::new(Slow, WINDOW)).await;
    assert!(
        matches!(result, Err(RankError::MergeFailed { round: 1, .. })),
        "{result:?}"
    );
}

#[tokio::test]
async fn answers_too_long_to_merge_are_an_error_not_an_over_long_prompt() {
    let answerer = IdAnswerer {
        answer_padding: 300,
        ..IdAnswerer::default()
    };
    let result = generate(&answerer, &ReferenceSettings::new(Slow, WINDOW)).await;
    assert!(
        matches!(
            result,
            Err(RankError::AnswersTooLong {
                max_prompt_tokens: WINDOW,
                ..
            })
        ),
        "{result:?}"
    );
    let sent = answerer.sent.lock().map(|s| s.clone()).unwrap_or_default();
    assert!(sent.iter().all(|&(_, t)| t <= WINDOW));
}

#[tokio::test]
async fn a_window_smaller_than_the_template_is_an_error() {
    let answerer = IdAnswerer::default();
    let result = generate(&answerer, &ReferenceSettings::new(Fast, 25)).await;
    assert!(
        matches!(
            result,
            Err(RankError::WindowTooSmall {
                max_prompt_tokens: 25,
                ..
            })
        ),
        "{result:?}"
    );
    assert!(answerer.sent.lock().map(|s| s.is_empty()).unwrap_or(false));
}
