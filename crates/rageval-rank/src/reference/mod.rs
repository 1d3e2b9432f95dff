//! Reference-answer ("ground truth") generation from all of a question's contexts (seed S3),
//! planned so that no prompt over the judge's window is ever sent.
//!
//! - [`ReferenceMode::Slow`]: one answer call per context ("unknown" when it does not
//!   answer), then merge rounds.
//! - [`ReferenceMode::Fast`]: shuffle the contexts (seeded), answer from groups of up to 20,
//!   then merge rounds.
//!
//! Every prompt is counted with the [`Answerer`]'s own token counts before it is sent: a
//! context too long for the window alone is split into pieces answered separately, a group
//! takes only as many contexts as fit, and each merge round packs as many answers into one
//! merge call as fit; an answer left alone in its group passes to the next round unsent.
//! Calls within a round run concurrently. [`files`] names and shapes the `GT_` / `FULL_`
//! files; writing them is the caller's job.

pub mod files;

use rageval_core::stats::SplitMix64;
use serde::{Deserialize, Serialize};

use crate::concurrency::{DEFAULT_MAX_IN_FLIGHT, run_round};
use crate::error::{RankError, require_positive};
use crate::judges::{Answerer, CallRecord, ContextAnswer};
use crate::packing::{pack, split_to_fit};
use crate::ranking::DEFAULT_SEED;
use crate::seeded::shuffle;

/// Contexts per answer call in fast mode (seed S3).
pub const DEFAULT_GROUP_SIZE: usize = 20;

/// How the first answers are drawn from the contexts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReferenceMode {
    /// One answer per context, then merge.
    Slow,
    /// Shuffle, one answer per group of contexts, then merge.
    Fast,
}

/// Everything that decides which calls a reference generation makes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReferenceSettings {
    /// Slow or fast.
    pub mode: ReferenceMode,
    /// The most prompt tokens one call may send: the judge's context window less what its
    /// answer needs.
    pub max_prompt_tokens: usize,
    /// Fast mode: contexts per answer call at most.
    pub group_size: usize,
    /// Fast mode: seed of the shuffle.
    pub seed: u64,
    /// Calls in flight at once within a round.
    pub max_in_flight: usize,
}

impl ReferenceSettings {
    /// Settings for `mode` and a window, the rest at their defaults.
    pub fn new(mode: ReferenceMode, max_prompt_tokens: usize) -> Self {
        Self {
            mode,
            max_prompt_tokens,
            group_size: DEFAULT_GROUP_SIZE,
            seed: DEFAULT_SEED,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
        }
    }
}

/// A piece of a context: the whole of it (`part` 0 of 1) or one of the parts it was split
/// into because it did not fit the window alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PieceRef {
    /// The context's index.
    pub context: usize,
    /// 0-based part.
    pub part: usize,
    /// Parts the context was split into.
    pub parts: usize,
}

/// One first-stage answer call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartialAnswer {
    /// What was sent, in prompt order.
    pub pieces: Vec<PieceRef>,
    /// Counted prompt tokens.
    pub prompt_tokens: usize,
    /// The judge's answer.
    pub answer: CallRecord<ContextAnswer>,
}

/// Calls made, by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReferenceCalls {
    /// Answer calls.
    pub answer: usize,
    /// Merge calls.
    pub merge: usize,
    /// Answer calls that failed (a failed merge fails the whole reference).
    pub failed: usize,
}

/// A generated reference answer and how it was made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reference {
    /// The settings it ran with.
    pub settings: ReferenceSettings,
    /// The merged answer; `None` when no context answered the question.
    pub ground_truth: Option<String>,
    /// Every first-stage call.
    pub partial_answers: Vec<PartialAnswer>,
    /// Contexts left out because they are empty or blank.
    pub empty_contexts: Vec<usize>,
    /// Contexts with a piece in a failed answer call: the reference may lack what they say.
    pub failed_contexts: Vec<usize>,
    /// Calls made.
    pub calls: ReferenceCalls,
    /// Sequential rounds: the answer round plus the merge rounds.
    pub rounds: u32,
    /// Counted prompt tokens of every call sent.
    pub prompt_tokens: u64,
    /// The largest prompt sent, in tokens (never above `max_prompt_tokens`).
    pub largest_prompt_tokens: usize,
}

/// Prompt tokens sent so far.
#[derive(Default)]
struct Sent {
    total: u64,
    largest: usize,
}

impl Sent {
    fn add(&mut self, tokens: usize) {
        self.total += tokens as u64;
        self.largest = self.largest.max(tokens);
    }
}

/// Generates the reference answer to `question` from `contexts`.
///
/// Errors on invalid settings, a window too small for the question, answers that cannot be
/// merged within the window, or a failed merge call. A failed answer call is recorded in
/// [`Reference::failed_contexts`] and the rest goes on.
pub async fn generate_reference<A: Answerer>(
    answerer: &A,
    question: &str,
    contexts: &[&str],
    settings: &ReferenceSettings,
) -> Result<Reference, RankError> {
    require_positive("group_size", settings.group_size)?;
    require_positive("max_in_flight", settings.max_in_flight)?;
    let (mut order, empty_contexts): (Vec<usize>, Vec<usize>) =
        (0..contexts.len()).partition(|&i| !contexts[i].trim().is_empty());
    if settings.mode == ReferenceMode::Fast {
        shuffle(&mut order, &mut SplitMix64::new(settings.seed));
    }
    let mut sent = Sent::default();
    let partial_answers =
        answer_round(answerer, question, contexts, &order, settings, &mut sent).await?;

    let answer_failed = |p: &&PartialAnswer| matches!(p.answer, CallRecord::Failed(_));
    let mut failed_contexts: Vec<usize> = partial_answers
        .iter()
        .filter(answer_failed)
        .flat_map(|p| p.pieces.iter().map(|piece| piece.context))
        .collect();
    failed_contexts.sort_unstable();
    failed_contexts.dedup();
    let answers: Vec<String> = partial_answers
        .iter()
        .filter_map(|p| match &p.answer {
            CallRecord::Answer(ContextAnswer::Answer(text)) if !text.trim().is_empty() => {
                Some(text.clone())
            }
            _ => None,
        })
        .collect();
    let (ground_truth, merge_calls, merge_rounds) =
        merge_rounds(answerer, question, answers, settings, &mut sent).await?;
    Ok(Reference {
        settings: settings.clone(),
        ground_truth,
        calls: ReferenceCalls {
            answer: partial_answers.len(),
            merge: merge_calls,
            failed: partial_answers.iter().filter(answer_failed).count(),
        },
        rounds: u32::from(!partial_answers.is_empty()) + merge_rounds,
        partial_answers,
        empty_contexts,
        failed_contexts,
        prompt_tokens: sent.total,
        largest_prompt_tokens: sent.largest,
    })
}

/// The first round: the contexts of `order`, split where one alone is over the window, in
/// groups of one (slow) or up to `group_size` (fast) that fit; one concurrent call each.
async fn answer_round<A: Answerer>(
    answerer: &A,
    question: &str,
    contexts: &[&str],
    order: &[usize],
    settings: &ReferenceSettings,
    sent: &mut Sent,
) -> Result<Vec<PartialAnswer>, RankError> {
    let window = settings.max_prompt_tokens;
    let fits = |group: &[&str]| answerer.answer_prompt_tokens(question, group) <= window;
    let mut pieces: Vec<(PieceRef, &str)> = Vec::new();
    for &context in order {
        let parts = split_to_fit(contexts[context], |text| fits(&[text])).ok_or_else(|| {
            RankError::WindowTooSmall {
                max_prompt_tokens: window,
                needed: answerer.answer_prompt_tokens(question, &["."]),
            }
        })?;
        let count = parts.len();
        pieces.extend(parts.into_iter().enumerate().map(|(part, text)| {
            let piece = PieceRef {
                context,
                part,
                parts: count,
            };
            (piece, text)
        }));
    }
    let texts: Vec<&str> = pieces.iter().map(|(_, text)| *text).collect();
    let per_call = match settings.mode {
        ReferenceMode::Slow => 1,
        ReferenceMode::Fast => settings.group_size,
    };
    let mut jobs = Vec::new();
    for group in pack(&texts, per_call, fits) {
        let tokens = answerer.answer_prompt_tokens(question, &texts[group.clone()]);
        if tokens > window {
            return Err(RankError::WindowTooSmall {
                max_prompt_tokens: window,
                needed: tokens,
            });
        }
        sent.add(tokens);
        jobs.push((group, tokens));
    }
    Ok(run_round(jobs, settings.max_in_flight, |(group, tokens)| {
        let inputs = &texts[group.clone()];
        let refs = pieces[group].iter().map(|(piece, _)| *piece).collect();
        async move {
            let answer = match answerer.answer(question, inputs).await {
                Ok(answer) => CallRecord::Answer(answer),
                Err(error) => CallRecord::Failed(error.to_string()),
            };
            PartialAnswer {
                pieces: refs,
                prompt_tokens: tokens,
                answer,
            }
        }
    })
    .await)
}

/// Merge rounds until one answer is left: each packs as many answers into one merge call as
/// fit the window. Returns the answer, the merge calls and the rounds.
async fn merge_rounds<A: Answerer>(
    answerer: &A,
    question: &str,
    mut answers: Vec<String>,
    settings: &ReferenceSettings,
    sent: &mut Sent,
) -> Result<(Option<String>, usize, u32), RankError> {
    let window = settings.max_prompt_tokens;
    let (mut calls, mut round) = (0, 0u32);
    while answers.len() > 1 {
        round += 1;
        let refs: Vec<&str> = answers.iter().map(String::as_str).collect();
        let fits = |group: &[&str]| answerer.merge_prompt_tokens(question, group) <= window;
        let groups = pack(&refs, usize::MAX, fits);
        if groups.len() == answers.len() {
            return Err(RankError::AnswersTooLong {
                max_prompt_tokens: window,
                answers: answers.len(),
            });
        }
        let jobs: Vec<&[&str]> = groups.into_iter().map(|group| &refs[group]).collect();
        for inputs in jobs.iter().filter(|inputs| inputs.len() > 1) {
            sent.add(answerer.merge_prompt_tokens(question, inputs));
            calls += 1;
        }
        let merged = run_round(jobs, settings.max_in_flight, |inputs| async move {
            match inputs {
                [alone] => Ok((*alone).to_owned()),
                _ => answerer.merge(question, inputs).await,
            }
        })
        .await;
        answers = merged
            .into_iter()
            .collect::<Result<_, _>>()
            .map_err(|source| RankError::MergeFailed { round, source })?;
    }
    Ok((answers.pop(), calls, round))
}
