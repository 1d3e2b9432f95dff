//! Judge ordering of one question's retrieved contexts (seed S3, ranking.md §3).
//!
//! Round 0 grades every context 0–3 concurrently, several contexts per call by default
//! (module `grading`); grade 0 is the seed's "bad" list. The useful ones are then ordered by one
//! of three [`Algorithm`]s:
//! - [`Algorithm::Listwise`] (default): windows of contexts put in order by the judge, each
//!   window asked in two orders, two rounds; every answer becomes pairwise games for a
//!   Bradley–Terry fit ([`listwise`]);
//! - [`Algorithm::BradleyTerry`]: pairwise comparisons asked in both orders, a few rounds of
//!   concurrent calls, strengths fitted by Bradley–Terry ([`tournament`]);
//! - [`Algorithm::Insertion`]: the seed's binary insertion sort, one comparison at a time
//!   ([`insertion`]), kept to measure against.
//!
//! The result, [`Ranking`], keeps every judge answer (the grades, the comparisons and the
//! ordered windows), so a ranking can be re-aggregated later without a model
//! ([`Ranking::games`]). A failed judge call is recorded and counted, never retried here and
//! never turned into a verdict.

pub mod comparison;
mod grading;
pub mod insertion;
pub mod listwise;
pub mod tournament;

use rageval_core::stats::SplitMix64;
use serde::{Deserialize, Serialize};

use crate::concurrency::DEFAULT_MAX_IN_FLIGHT;
use crate::error::{RankError, require_positive};
use crate::judges::{CallRecord, Grade, RankJudge};
use comparison::{Comparison, PairAsker, inconsistency_counts};
use listwise::{ListwiseSettings, WindowOrder, window_disagreement};

/// Seed of the random draws (batches, pairs, windows) unless the user gives one.
pub const DEFAULT_SEED: u64 = 20_240_601;

/// Contexts graded in one call unless settings say otherwise.
pub const DEFAULT_GRADE_BATCH: usize = 10;

/// Tokens of the judge's window a caller keeps free for the answer to a call that shows
/// several contexts (ten grades with a sentence of reason each, or an order with its
/// reason), when it sets [`RankSettings::max_prompt_tokens`] from a context window.
pub const LIST_ANSWER_TOKENS: usize = 1_024;

/// How the useful contexts are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Algorithm {
    /// Windows of contexts ordered by the judge, each asked in two orders, in ≤ 2 rounds
    /// (random partitions, then partitions of the head); every answer read as pairwise
    /// games and aggregated by Bradley–Terry.
    #[default]
    Listwise,
    /// Both-order comparisons in ≤ 2 rounds (all pairs when few are useful; otherwise
    /// random pairs, then all pairs among the head), aggregated by Bradley–Terry.
    BradleyTerry,
    /// The seed's binary insertion sort: each useful context, in retriever order, is
    /// inserted by comparing it with the middle of the sorted list; one round per comparison.
    Insertion,
}

impl Algorithm {
    /// The name used in settings and outputs.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Listwise => "listwise",
            Algorithm::BradleyTerry => "bradley-terry",
            Algorithm::Insertion => "insertion",
        }
    }
}

/// Everything that decides which calls a ranking makes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankSettings {
    /// How the useful contexts are ordered.
    pub algorithm: Algorithm,
    /// Seed of the random draws (the same seed and answers give the same ranking).
    pub seed: u64,
    /// Calls in flight at once within a round.
    pub max_in_flight: usize,
    /// Contexts graded in one call, at most (1: one call per context, the single-context
    /// task).
    #[serde(default = "one")]
    pub grade_batch: usize,
    /// Prompt tokens a call that shows several contexts (a grading batch, a window) may
    /// take; batches and windows shrink to fit. `None`: no limit.
    #[serde(default)]
    pub max_prompt_tokens: Option<usize>,
    /// Listwise: windows, partitions and head.
    #[serde(default)]
    pub listwise: ListwiseSettings,
    /// Bradley–Terry: with at most this many useful contexts, compare all pairs in one round.
    pub all_pairs_up_to: usize,
    /// Bradley–Terry: distinct random opponents per useful context in the sparse round.
    pub opponents: usize,
    /// Bradley–Terry: size of the head compared all-pairs after the sparse round.
    pub head: usize,
    /// Insertion: ask each comparison in both orders (the seed asks one, the new context
    /// first).
    pub insertion_both_orders: bool,
}

impl Default for RankSettings {
    fn default() -> Self {
        Self {
            algorithm: Algorithm::default(),
            seed: DEFAULT_SEED,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            grade_batch: DEFAULT_GRADE_BATCH,
            max_prompt_tokens: None,
            listwise: ListwiseSettings::default(),
            all_pairs_up_to: tournament::DEFAULT_ALL_PAIRS_UP_TO,
            opponents: tournament::DEFAULT_OPPONENTS,
            head: tournament::DEFAULT_HEAD,
            insertion_both_orders: false,
        }
    }
}

/// What settings written before batched grading meant: one context per call.
fn one() -> usize {
    1
}

impl RankSettings {
    fn validate(&self) -> Result<(), RankError> {
        require_positive("max_in_flight", self.max_in_flight)?;
        require_positive("grade_batch", self.grade_batch)?;
        require_positive("opponents", self.opponents)?;
        require_positive("listwise.partitions", self.listwise.partitions)?;
        for (name, head) in [("head", self.head), ("listwise.head", self.listwise.head)] {
            if head == 1 {
                return Err(RankError::InvalidSetting {
                    name,
                    value: "1".to_owned(),
                    reason: "must be 0 (no head round) or at least 2",
                });
            }
        }
        if self.listwise.window < 2 {
            return Err(RankError::InvalidSetting {
                name: "listwise.window",
                value: self.listwise.window.to_string(),
                reason: "must be at least 2",
            });
        }
        Ok(())
    }
}

/// Judge calls made, by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallCounts {
    /// Grading calls (one per context, or one per batch).
    pub grade: usize,
    /// Comparison calls (two per comparison asked in both orders).
    pub compare: usize,
    /// Window-ordering calls (two per window).
    #[serde(default)]
    pub order: usize,
    /// Calls of any kind that failed.
    pub failed: usize,
}

impl CallCounts {
    /// All calls.
    pub fn total(&self) -> usize {
        self.grade + self.compare + self.order
    }
}

/// One game between two contexts for the Bradley–Terry fit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ContextGame {
    /// One context (an index into the question's contexts).
    pub a: usize,
    /// The other.
    pub b: usize,
    /// What `a` scored: 1 a win, 0.5 a tie, 0 a loss.
    pub score_a: f64,
}

/// The judge's ordering of one question's contexts, with every answer it rests on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ranking {
    /// The settings it ran with (algorithm and seed included).
    pub settings: RankSettings,
    /// Every context index 0..n−1 once: `good`, then `bad`, then `ungraded`.
    pub indices: Vec<usize>,
    /// Contexts graded 1–3, in the judge's order, best first.
    pub good: Vec<usize>,
    /// Contexts graded 0, in retriever order.
    pub bad: Vec<usize>,
    /// Contexts whose grading call failed, in retriever order.
    pub ungraded: Vec<usize>,
    /// The grading answer of each context, by index.
    pub grades: Vec<CallRecord<Grade>>,
    /// The contexts of each grading call that graded several, in the order shown; empty
    /// when each context was graded alone.
    #[serde(default)]
    pub grade_batches: Vec<Vec<usize>>,
    /// Bradley–Terry log-strength of each context that was compared (`null` otherwise and
    /// for the insertion algorithm).
    pub scores: Vec<Option<f64>>,
    /// Every pairwise comparison asked, in the order asked.
    pub comparisons: Vec<Comparison>,
    /// Every window ordered (listwise), in the order asked.
    #[serde(default)]
    pub windows: Vec<WindowOrder>,
    /// Share of the pairs judged in both orders (a comparison, or a pair within a window)
    /// that the two answers put differently; `null` when none was.
    pub position_inconsistency: Option<f64>,
    /// Judge calls made.
    pub calls: CallCounts,
    /// Sequential rounds: the grading round plus each round of comparisons. Wall time is
    /// about rounds × call latency when the concurrency bound is not reached.
    pub rounds: u32,
}

impl Ranking {
    /// The grade of context `index`, if it was graded.
    pub fn grade(&self, index: usize) -> Option<Grade> {
        self.grades.get(index).and_then(CallRecord::answer)
    }

    /// Calls made in each round (index 0 is the grading round). At a concurrency of `c`
    /// and a latency of `l` per call, a ranking takes about `Σ ⌈calls/c⌉ × l`.
    pub fn calls_by_round(&self) -> Vec<usize> {
        let mut calls = vec![0; self.rounds as usize];
        let mut add = |round: u32, count: usize| {
            if let Some(slot) = calls.get_mut(round as usize) {
                *slot += count;
            }
        };
        add(0, self.calls.grade);
        for c in &self.comparisons {
            add(c.round, 1 + usize::from(c.b_first.is_some()));
        }
        for w in &self.windows {
            add(w.round, 2);
        }
        calls
    }

    /// Every game the answers imply, from the comparisons and the windows: what the
    /// Bradley–Terry fit read, for re-aggregating without a model.
    pub fn games(&self) -> Vec<ContextGame> {
        self.comparisons
            .iter()
            .filter_map(Comparison::game)
            .chain(self.windows.iter().flat_map(WindowOrder::games))
            .collect()
    }
}

/// Useful contexts put in order by an algorithm.
pub(crate) struct Ordered {
    pub good: Vec<usize>,
    pub scores: Vec<(usize, f64)>,
    pub comparisons: Vec<Comparison>,
    pub windows: Vec<WindowOrder>,
    pub rounds: u32,
}

impl Ordered {
    /// Fewer than two contexts: their order, no call.
    pub fn unordered(useful: &[usize]) -> Self {
        Ordered {
            good: useful.to_vec(),
            scores: Vec::new(),
            comparisons: Vec::new(),
            windows: Vec::new(),
            rounds: 0,
        }
    }
}

/// Ranks `contexts` (in retriever order) for `question` with `judge`.
///
/// Errors only on invalid settings; failed judge calls are recorded in the result.
pub async fn rank<J: RankJudge>(
    judge: &J,
    question: &str,
    contexts: &[&str],
    settings: &RankSettings,
) -> Result<Ranking, RankError> {
    settings.validate()?;
    let n = contexts.len();
    let graded = grading::grade_all(judge, question, contexts, settings).await;
    let grades = graded.grades;
    let (mut useful, mut bad, mut ungraded): (Vec<usize>, _, _) =
        (Vec::new(), Vec::new(), Vec::new());
    for (index, record) in grades.iter().enumerate() {
        match record.answer() {
            Some(grade) if grade.is_useful() => useful.push(index),
            Some(_) => bad.push(index),
            None => ungraded.push(index),
        }
    }
    let asker = PairAsker {
        comparator: judge,
        question,
        contexts,
        max_in_flight: settings.max_in_flight,
    };
    let grade_of = |index: usize| grades[index].answer().map_or(0, Grade::value);
    let mut rng = SplitMix64::new(settings.seed);
    let ordered = match settings.algorithm {
        Algorithm::Listwise => {
            listwise::order(
                judge, question, contexts, &useful, grade_of, settings, &mut rng,
            )
            .await
        }
        Algorithm::BradleyTerry => {
            tournament::order(&asker, &useful, grade_of, settings, &mut rng).await
        }
        Algorithm::Insertion => {
            insertion::order(&asker, &useful, settings.insertion_both_orders).await
        }
    };
    let good = ordered.good;
    let mut scores = vec![None; n];
    for &(index, score) in &ordered.scores {
        scores[index] = Some(score);
    }
    let pair_records = ordered
        .comparisons
        .iter()
        .flat_map(|c| std::iter::once(&c.a_first).chain(c.b_first.as_ref()));
    let compare_calls = pair_records.clone().count();
    let compare_failed = pair_records.filter(|r| r.answer().is_none()).count();
    let window_records = ordered
        .windows
        .iter()
        .flat_map(|w| [&w.forward, &w.reversed]);
    let order_calls = window_records.clone().count();
    let order_failed = window_records.filter(|r| r.answer_ref().is_none()).count();
    let indices = good.iter().chain(&bad).chain(&ungraded).copied().collect();
    let disagreement =
        inconsistency_counts(&ordered.comparisons).plus(window_disagreement(&ordered.windows));
    Ok(Ranking {
        settings: settings.clone(),
        indices,
        good,
        bad,
        ungraded,
        grades,
        grade_batches: graded.batches,
        scores,
        position_inconsistency: disagreement.rate(),
        comparisons: ordered.comparisons,
        windows: ordered.windows,
        calls: CallCounts {
            grade: graded.calls,
            compare: compare_calls,
            order: order_calls,
            failed: graded.failed + compare_failed + order_failed,
        },
        rounds: u32::from(n > 0) + ordered.rounds,
    })
}
