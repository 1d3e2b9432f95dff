//! A simulated judge whose true order is known, to measure ranking algorithms without a
//! model (ranking.md §3.5). It is a measuring instrument, not a judge: nothing in the
//! product ranks with it.
//!
//! The model (ranking.md §3.5 for the pairwise part; the grading noise is ours, since that
//! simulation graded nothing):
//! - each of `n` contexts has a true utility `u ~ N(0, 1)`; the `useful` highest are the
//!   useful ones, graded 3 (the top sixth), 2 (the next third) and 1 (the rest); the others
//!   are graded 0. The true order is the useful ones by utility, then the rest as one block;
//! - the retriever's order is by `u + N(0, 1)`: related to the truth, far from it;
//! - grading returns the grade of `u + N(0, σ_g)` against the true grade boundaries (the
//!   midpoints between the utilities on either side), so contexts near a boundary, the
//!   useful/not-useful one included, are sometimes misgraded;
//! - asked to compare `x` shown first with `y`, the judge answers "first" with probability
//!   `σ((u_x − u_y)/τ + β)`: `τ` scales the noise, `β > 0` favours the first position.
//!   [`NoiseModel::MODERATE`] (τ = 0.35, β = 0.6: an equal pair is called "first" 65% of the
//!   time) and [`NoiseModel::HEAVY`] (τ = 0.7, β = 1.0) are ranking.md's two settings;
//! - asked to order a window of `k` contexts, the judge sorts them by the perceived
//!   `u/τ_list + G + β·(k−1−p)/(k−1)`, with `G` a standard Gumbel draw per context and `p`
//!   its position (0 first): the same model, since the difference of two Gumbel draws is
//!   logistic. A window of two answers exactly like a comparison (with `τ_list = τ`), and a
//!   longer one is a Plackett–Luce draw whose first position is favoured by `β`, fading
//!   linearly to nothing at the last;
//! - grading a batch of `k`, each context's grade is read from
//!   `u + N(0, σ_g) + τ·β·(k−1−p)/(k−1)`: the grading noise plus the same position bias in
//!   utility units.
//!
//! Every answer is a pure function of the seed and what was asked, like a cached judge: the
//! same question gets the same answer, whatever the order or concurrency of the calls.

use rageval_core::rank::{Gain, kendall_tau_b, ndcg_at_k};
use rageval_core::stats::SplitMix64;
use serde::{Deserialize, Serialize};

use crate::judges::{
    BatchGrader, CallError, Comparator, Grade, Grader, ListCall, ListOrderer, Preference,
    PromptSize,
};
use crate::ranking::{RankSettings, Ranking, rank};

/// How noisy and position-biased the simulated judge is.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct NoiseModel {
    /// τ: the utility difference that moves the log-odds of a pairwise answer by 1.
    pub pairwise_scale: f64,
    /// β: log-odds added in favour of the context shown first.
    pub position_bias: f64,
    /// σ_g: standard deviation of the noise on the utility before grading.
    pub grade_noise: f64,
    /// τ_list: the noise scale of an ordered window, as `τ` for a comparison (equal to it
    /// in both named settings; larger values model a judge worse at long lists).
    pub list_scale: f64,
}

impl NoiseModel {
    /// ranking.md's moderate setting, with σ_g = 0.2.
    pub const MODERATE: NoiseModel = NoiseModel {
        pairwise_scale: 0.35,
        position_bias: 0.6,
        grade_noise: 0.2,
        list_scale: 0.35,
    };
    /// ranking.md's heavy setting, with σ_g = 0.4.
    pub const HEAVY: NoiseModel = NoiseModel {
        pairwise_scale: 0.7,
        position_bias: 1.0,
        grade_noise: 0.4,
        list_scale: 0.7,
    };
}

/// One simulated question: the truth, and the judge that answers about it.
#[derive(Debug, Clone)]
pub struct SimulatedQuestion {
    /// True utility of each context, in retriever order.
    pub utilities: Vec<f64>,
    /// True grade of each context.
    pub grades: Vec<u8>,
    /// Utilities separating grades 0|1, 1|2, 2|3.
    boundaries: [f64; 3],
    noise: NoiseModel,
    seed: u64,
}

/// The text of context `index` the simulated judge is shown (it reads the index back).
pub fn context_text(index: usize) -> String {
    format!("context {index}")
}

/// The index in a text made by [`context_text`].
pub fn context_index(text: &str) -> Option<usize> {
    text.strip_prefix("context ")?.parse().ok()
}

/// One SplitMix64 step as a mixing function.
fn mix(value: u64) -> u64 {
    SplitMix64::new(value).next_u64()
}

/// A uniform draw in `[0, 1)` fixed by `seed` and the call's identity.
fn uniform(seed: u64, tag: u64, a: usize, b: usize) -> f64 {
    let key = mix(mix(mix(seed ^ tag) ^ a as u64) ^ b as u64);
    SplitMix64::new(key).unit()
}

/// A standard normal draw (Box–Muller).
fn normal(rng: &mut SplitMix64) -> f64 {
    let radius = (-2.0 * (1.0 - rng.unit()).ln()).sqrt();
    radius * (std::f64::consts::TAU * rng.unit()).cos()
}

impl SimulatedQuestion {
    /// `contexts` contexts of which `useful` are useful, drawn from `seed`.
    pub fn new(contexts: usize, useful: usize, noise: NoiseModel, seed: u64) -> Self {
        let useful = useful.min(contexts);
        let mut rng = SplitMix64::new(seed);
        let truth: Vec<f64> = (0..contexts).map(|_| normal(&mut rng)).collect();
        // The retriever sees the utility through heavy noise.
        let mut retrieved: Vec<usize> = (0..contexts).collect();
        let retriever_score: Vec<f64> = truth.iter().map(|u| u + normal(&mut rng)).collect();
        retrieved.sort_by(|&a, &b| retriever_score[b].total_cmp(&retriever_score[a]));
        let utilities: Vec<f64> = retrieved.iter().map(|&item| truth[item]).collect();

        let mut by_utility: Vec<usize> = (0..contexts).collect();
        by_utility.sort_by(|&a, &b| utilities[b].total_cmp(&utilities[a]));
        let cuts = [useful, useful / 2, useful / 6]; // ranks below which grade ≥ 1, 2, 3
        let mut grades = vec![0u8; contexts];
        for (rank, &index) in by_utility.iter().enumerate() {
            grades[index] = cuts.iter().filter(|&&cut| rank < cut).count() as u8;
        }
        let boundary = |cut: usize| match (
            cut.checked_sub(1).and_then(|c| by_utility.get(c)),
            by_utility.get(cut),
        ) {
            (Some(&above), Some(&below)) => (utilities[above] + utilities[below]) / 2.0,
            (Some(&above), None) => utilities[above] - 1.0,
            (None, _) => f64::INFINITY,
        };
        Self {
            boundaries: [boundary(cuts[0]), boundary(cuts[1]), boundary(cuts[2])],
            utilities,
            grades,
            noise,
            seed,
        }
    }

    /// The contexts' texts, in retriever order.
    pub fn contexts(&self) -> Vec<String> {
        (0..self.utilities.len()).map(context_text).collect()
    }

    /// The log-odds favouring position `p` of `k` shown: β first, fading linearly to 0.
    fn position_lift(&self, p: usize, k: usize) -> f64 {
        if k < 2 {
            return 0.0;
        }
        self.noise.position_bias * (k - 1 - p) as f64 / (k - 1) as f64
    }

    /// The indices and utilities of `texts`, and a draw source fixed by the call's identity
    /// (its kind and the contexts in the order shown).
    fn shown(&self, tag: u64, texts: &[&str]) -> Result<(Vec<f64>, SplitMix64), CallError> {
        let mut key = mix(self.seed ^ tag);
        let mut utilities = Vec::with_capacity(texts.len());
        for text in texts {
            let (index, utility) = self.utility(text)?;
            key = mix(key ^ index as u64);
            utilities.push(utility);
        }
        Ok((utilities, SplitMix64::new(key)))
    }

    fn utility(&self, text: &str) -> Result<(usize, f64), CallError> {
        let index = context_index(text)
            .ok_or_else(|| format!("simulated judge cannot read context {text:?}"))?;
        let utility = self
            .utilities
            .get(index)
            .copied()
            .ok_or_else(|| format!("simulated judge has no context {index}"))?;
        Ok((index, utility))
    }
}

const GRADE_TAG: u64 = 1;
const COMPARE_TAG: u64 = 2;
const BATCH_TAG: u64 = 3;
const ORDER_TAG: u64 = 4;

/// A standard Gumbel draw.
fn gumbel(rng: &mut SplitMix64) -> f64 {
    let u = rng.unit().clamp(1e-12, 1.0 - 1e-12);
    -(-u.ln()).ln()
}

impl Grader for SimulatedQuestion {
    async fn grade(&self, _question: &str, context: &str) -> Result<Grade, CallError> {
        let (index, utility) = self.utility(context)?;
        let mut rng = SplitMix64::new(mix(uniform(self.seed, GRADE_TAG, index, 0).to_bits()));
        let seen = utility + self.noise.grade_noise * normal(&mut rng);
        Ok(self.grade_of(seen))
    }
}

impl SimulatedQuestion {
    /// The grade of a perceived utility.
    fn grade_of(&self, seen: f64) -> Grade {
        let value = self.boundaries.iter().filter(|&&b| seen > b).count() as u8;
        Grade::new(value).unwrap_or(Grade::ANSWERS)
    }
}

impl BatchGrader for SimulatedQuestion {
    async fn grade_batch(
        &self,
        _question: &str,
        contexts: &[&str],
    ) -> Result<Vec<Grade>, CallError> {
        let (utilities, mut rng) = self.shown(BATCH_TAG, contexts)?;
        let k = utilities.len();
        Ok(utilities
            .iter()
            .enumerate()
            .map(|(p, &u)| {
                let bias = self.noise.pairwise_scale * self.position_lift(p, k);
                self.grade_of(u + self.noise.grade_noise * normal(&mut rng) + bias)
            })
            .collect())
    }
}

impl ListOrderer for SimulatedQuestion {
    async fn order(&self, _question: &str, contexts: &[&str]) -> Result<Vec<usize>, CallError> {
        let (utilities, mut rng) = self.shown(ORDER_TAG, contexts)?;
        let k = utilities.len();
        let perceived: Vec<f64> = utilities
            .iter()
            .enumerate()
            .map(|(p, &u)| u / self.noise.list_scale + gumbel(&mut rng) + self.position_lift(p, k))
            .collect();
        let mut order: Vec<usize> = (0..k).collect();
        order.sort_by(|&a, &b| perceived[b].total_cmp(&perceived[a]));
        Ok(order)
    }
}

/// The simulated judge has no prompt: every batch and window fits.
impl PromptSize for SimulatedQuestion {
    fn fixed_prompt_tokens(&self, _call: ListCall, _question: &str) -> usize {
        0
    }

    fn context_prompt_tokens(&self, _context: &str) -> usize {
        0
    }
}

impl Comparator for SimulatedQuestion {
    async fn compare(
        &self,
        _question: &str,
        first: &str,
        second: &str,
    ) -> Result<Preference, CallError> {
        let (x, u_x) = self.utility(first)?;
        let (y, u_y) = self.utility(second)?;
        let logit = (u_x - u_y) / self.noise.pairwise_scale + self.noise.position_bias;
        let p_first = 1.0 / (1.0 + (-logit).exp());
        Ok(if uniform(self.seed, COMPARE_TAG, x, y) < p_first {
            Preference::First
        } else {
            Preference::Second
        })
    }
}

/// How close a ranking is to the simulated truth.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TruthAgreement {
    /// nDCG@10 of the judge's order with the true grades as gains (linear).
    pub ndcg_at_10: Option<f64>,
    /// Kendall's τ-b over the truly useful contexts: true utility against the judge's
    /// position (contexts the judge put in its bad block share the last position).
    pub kendall_tau_b_useful: Option<f64>,
    /// Kendall's τ-b over all contexts against the true weak order (useful by utility, the
    /// rest tied); the useful/not-useful split dominates it, so it reads higher.
    pub kendall_tau_b_all: Option<f64>,
    /// Truly useful contexts the judge graded 0.
    pub useful_graded_bad: usize,
    /// Truly not-useful contexts the judge graded 1 or more.
    pub bad_graded_useful: usize,
}

/// Compares `ranking` with the truth of `question`.
pub fn against_truth(ranking: &Ranking, question: &SimulatedQuestion) -> TruthAgreement {
    let n = question.utilities.len();
    let gains: Vec<f64> = ranking
        .indices
        .iter()
        .map(|&i| f64::from(question.grades[i]))
        .collect();
    let ideal: Vec<f64> = question.grades.iter().map(|&g| f64::from(g)).collect();
    let mut judged = vec![ranking.good.len() as f64; n];
    for (position, &index) in ranking.good.iter().enumerate() {
        judged[index] = position as f64;
    }
    let truly_useful: Vec<usize> = (0..n).filter(|&i| question.grades[i] > 0).collect();
    let negated = |indices: &[usize], values: &dyn Fn(usize) -> f64| -> Vec<f64> {
        indices.iter().map(|&i| -values(i)).collect()
    };
    let all: Vec<usize> = (0..n).collect();
    let floor = question
        .utilities
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min)
        - 1.0;
    let true_weak = |i: usize| {
        if question.grades[i] > 0 {
            question.utilities[i]
        } else {
            floor
        }
    };
    let useful_set: std::collections::HashSet<usize> = ranking.good.iter().copied().collect();
    TruthAgreement {
        ndcg_at_10: ndcg_at_k(&gains, &ideal, Some(10), Gain::Linear),
        kendall_tau_b_useful: kendall_tau_b(
            &truly_useful
                .iter()
                .map(|&i| question.utilities[i])
                .collect::<Vec<_>>(),
            &negated(&truly_useful, &|i| judged[i]),
        ),
        kendall_tau_b_all: kendall_tau_b(
            &all.iter().map(|&i| true_weak(i)).collect::<Vec<_>>(),
            &negated(&all, &|i| judged[i]),
        ),
        useful_graded_bad: truly_useful
            .iter()
            .filter(|i| !useful_set.contains(i))
            .count(),
        bad_graded_useful: ranking
            .good
            .iter()
            .filter(|&&i| question.grades[i] == 0)
            .count(),
    }
}

/// The figures of one simulated ranking.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimulationFigures {
    /// Judge calls made.
    pub calls: usize,
    /// Sequential rounds.
    pub rounds: u32,
    /// Calls in each round (0 is the grading round).
    pub calls_by_round: Vec<usize>,
    /// Position-inconsistency rate of the comparisons.
    pub position_inconsistency: Option<f64>,
    /// Agreement with the truth.
    pub truth: TruthAgreement,
}

impl SimulationFigures {
    /// Waves of calls at `concurrency` calls in flight: `Σ ⌈calls/concurrency⌉` over rounds.
    /// Times a call's latency, this is the wall time when the judge is the bottleneck.
    pub fn waves(&self, concurrency: usize) -> usize {
        self.calls_by_round
            .iter()
            .map(|&calls| calls.div_ceil(concurrency.max(1)))
            .sum()
    }
}

/// Ranks one simulated question with `settings` and scores the result against the truth.
pub async fn simulate(
    question: &SimulatedQuestion,
    settings: &RankSettings,
) -> Result<SimulationFigures, crate::RankError> {
    let texts = question.contexts();
    let contexts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let ranking = rank(question, "simulated question", &contexts, settings).await?;
    Ok(SimulationFigures {
        calls: ranking.calls.total(),
        rounds: ranking.rounds,
        calls_by_round: ranking.calls_by_round(),
        position_inconsistency: ranking.position_inconsistency,
        truth: against_truth(&ranking, question),
    })
}
