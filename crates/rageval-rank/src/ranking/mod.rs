//! Judge ordering of one question's retrieved contexts (seed S3, ranking.md §3).
//!
//! Round 0 grades every context 0–3 concurrently; grade 0 is the seed's "bad" list. The
//! useful ones are then ordered by pairwise comparisons, by one of two [`Algorithm`]s:
//! - [`Algorithm::BradleyTerry`] (default): comparisons asked in both orders, a few rounds
//!   of concurrent calls, strengths fitted by Bradley–Terry ([`tournament`]);
//! - [`Algorithm::Insertion`]: the seed's binary insertion sort, one comparison at a time
//!   ([`insertion`]), kept to measure against.
//!
//! The result, [`Ranking`], keeps every judge answer (the grades and the full comparison
//! graph), so a ranking can be re-aggregated later without a model. A failed judge call is
//! recorded and counted, never retried here and never turned into a verdict.

pub mod bradley_terry;
pub mod comparison;
pub mod insertion;
pub mod tournament;

use rageval_core::stats::SplitMix64;
use serde::{Deserialize, Serialize};

use crate::concurrency::{DEFAULT_MAX_IN_FLIGHT, run_round};
use crate::error::{RankError, require_positive};
use crate::judges::{CallRecord, Comparator, Grade, Grader};
use comparison::{Comparison, PairAsker, position_inconsistency};

/// Seed of the random pair draws unless the user gives one.
pub const DEFAULT_SEED: u64 = 20_240_601;

/// How the useful contexts are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Algorithm {
    /// Both-order comparisons in ≤ 2 rounds (all pairs when few are useful; otherwise
    /// random pairs, then all pairs among the head), aggregated by Bradley–Terry.
    #[default]
    BradleyTerry,
    /// The seed's binary insertion sort: each useful context, in retriever order, is
    /// inserted by comparing it with the middle of the sorted list; one round per comparison.
    Insertion,
}

impl Algorithm {
    /// The name used in settings and outputs.
    pub fn name(self) -> &'static str {
        match self {
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
    /// Seed of the random pair draws (the same seed and answers give the same ranking).
    pub seed: u64,
    /// Calls in flight at once within a round.
    pub max_in_flight: usize,
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
            algorithm: Algorithm::BradleyTerry,
            seed: DEFAULT_SEED,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            all_pairs_up_to: tournament::DEFAULT_ALL_PAIRS_UP_TO,
            opponents: tournament::DEFAULT_OPPONENTS,
            head: tournament::DEFAULT_HEAD,
            insertion_both_orders: false,
        }
    }
}

impl RankSettings {
    fn validate(&self) -> Result<(), RankError> {
        require_positive("max_in_flight", self.max_in_flight)?;
        require_positive("opponents", self.opponents)?;
        if self.head == 1 {
            return Err(RankError::InvalidSetting {
                name: "head",
                value: "1".to_owned(),
                reason: "must be 0 (no head round) or at least 2",
            });
        }
        Ok(())
    }
}

/// Judge calls made, by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallCounts {
    /// Grading calls (one per context).
    pub grade: usize,
    /// Comparison calls (two per comparison asked in both orders).
    pub compare: usize,
    /// Calls of either kind that failed.
    pub failed: usize,
}

impl CallCounts {
    /// All calls.
    pub fn total(&self) -> usize {
        self.grade + self.compare
    }
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
    /// Bradley–Terry log-strength of each context that was compared (`null` otherwise and
    /// for the insertion algorithm).
    pub scores: Vec<Option<f64>>,
    /// Every comparison asked, in the order asked.
    pub comparisons: Vec<Comparison>,
    /// Share of comparisons answered in both orders whose answers disagree; `null` when
    /// none was.
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
}

/// Useful contexts put in order by an algorithm.
pub(crate) struct Ordered {
    pub good: Vec<usize>,
    pub scores: Vec<(usize, f64)>,
    pub comparisons: Vec<Comparison>,
    pub rounds: u32,
}

/// Ranks `contexts` (in retriever order) for `question` with `judge`.
///
/// Errors only on invalid settings; failed judge calls are recorded in the result.
pub async fn rank<J: Grader + Comparator>(
    judge: &J,
    question: &str,
    contexts: &[&str],
    settings: &RankSettings,
) -> Result<Ranking, RankError> {
    settings.validate()?;
    let n = contexts.len();
    let grades = run_round(
        (0..n).collect(),
        settings.max_in_flight,
        |index: usize| async move {
            match judge.grade(question, contexts[index]).await {
                Ok(grade) => CallRecord::Answer(grade),
                Err(error) => CallRecord::Failed(error.to_string()),
            }
        },
    )
    .await;
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
    let ordered = match settings.algorithm {
        Algorithm::BradleyTerry => {
            let mut rng = SplitMix64::new(settings.seed);
            let grade_of = |index: usize| grades[index].answer().map_or(0, Grade::value);
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
    let grading_failed = ungraded.len();
    let compare_calls: usize = ordered
        .comparisons
        .iter()
        .map(|c| 1 + usize::from(c.b_first.is_some()))
        .sum();
    let compare_failed: usize = ordered
        .comparisons
        .iter()
        .flat_map(|c| std::iter::once(&c.a_first).chain(c.b_first.as_ref()))
        .filter(|record| record.answer().is_none())
        .count();
    let indices = good.iter().chain(&bad).chain(&ungraded).copied().collect();
    Ok(Ranking {
        settings: settings.clone(),
        indices,
        good,
        bad,
        ungraded,
        grades,
        scores,
        position_inconsistency: position_inconsistency(&ordered.comparisons),
        comparisons: ordered.comparisons,
        calls: CallCounts {
            grade: n,
            compare: compare_calls,
            failed: grading_failed + compare_failed,
        },
        rounds: u32::from(n > 0) + ordered.rounds,
    })
}
