//! Two versions' answers judged head to head over the same questions: the rule that joins
//! a question's two verdicts (one per seat order) into one result, and the figures over
//! the questions ([`HeadToHead`]).
//!
//! **The rule.** Each question is asked twice, version A in the first seat, then version B.
//! Each verdict is mapped back to a version. Two verdicts naming the same version make it
//! the question's winner; two ties make a tie; anything else is a tie, and two verdicts
//! naming opposite versions are a *position flip* (the judge followed the seat, not the
//! answer).
//!
//! **The figures**, for A against B over the `n` questions both verdicts came back for:
//! - win rate `(wins + ties/2) / n`, its percentile-bootstrap interval (questions
//!   resampled, seeded) and a two-sided exact sign test of "neither is preferred" over the
//!   questions that did not tie; read "A better" or "B better" only where the interval
//!   excludes ½ and p < 1 − level ([`PreferenceReading`]);
//! - position bias ([`PositionBias`]): flips over the questions whose two verdicts both
//!   named a version, and over all; the share of version-naming verdicts that named the
//!   first seat;
//! - length bias ([`LengthBias`]): A's win rate where A's answer is longer, where B's is,
//!   the longer answer's win rate, and A's win rate with length held equal — a logistic fit
//!   of A's outcome on `ln((len_A + 1) / (len_B + 1))` read at a ratio of 1, with a
//!   bootstrap interval ([`super::logistic`]).
//!
//! Nothing here is NaN: a figure with nothing to stand on is `None` (with a reason where a
//! reader needs one).

use serde::{Deserialize, Serialize};

use super::logistic::{NoFit, fit_logistic};
use crate::stats::{SplitMix64, bootstrap_mean_ci, mean, quantile_sorted};

/// Which seat a verdict preferred.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Seat {
    First,
    Second,
    Tie,
}

/// A question's result for the pair (A, B).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Duel {
    /// A was preferred.
    A,
    /// B was preferred.
    B,
    Tie,
}

impl Duel {
    /// What A scored: 1, ½ or 0.
    pub fn score_a(self) -> f64 {
        match self {
            Duel::A => 1.0,
            Duel::Tie => 0.5,
            Duel::B => 0.0,
        }
    }

    /// The same result seen from B's side.
    pub fn swapped(self) -> Duel {
        match self {
            Duel::A => Duel::B,
            Duel::B => Duel::A,
            Duel::Tie => Duel::Tie,
        }
    }
}

/// A question's two verdicts on the pair (A, B): with A in the first seat, and with B.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BothOrders {
    pub a_first: Seat,
    pub b_first: Seat,
}

impl BothOrders {
    /// Each verdict as the version it named: `[with A first, with B first]`.
    pub fn choices(self) -> [Duel; 2] {
        let with_a_first = match self.a_first {
            Seat::First => Duel::A,
            Seat::Second => Duel::B,
            Seat::Tie => Duel::Tie,
        };
        let with_b_first = match self.b_first {
            Seat::First => Duel::B,
            Seat::Second => Duel::A,
            Seat::Tie => Duel::Tie,
        };
        [with_a_first, with_b_first]
    }

    /// The question's result: the version both verdicts named, else a tie.
    pub fn result(self) -> Duel {
        match self.choices() {
            [x, y] if x == y => x,
            _ => Duel::Tie,
        }
    }

    /// Whether the two verdicts named opposite versions.
    pub fn flipped(self) -> bool {
        matches!(self.choices(), [Duel::A, Duel::B] | [Duel::B, Duel::A])
    }
}

/// One question as the figures read it: both verdicts and the two answers' lengths (in
/// tokens).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JudgedQuestion {
    pub orders: BothOrders,
    pub a_length: usize,
    pub b_length: usize,
}

impl JudgedQuestion {
    /// `ln((len_A + 1) / (len_B + 1))`: 0 at equal lengths, and defined for empty answers.
    pub fn log_length_ratio(&self) -> f64 {
        ((self.a_length as f64 + 1.0) / (self.b_length as f64 + 1.0)).ln()
    }
}

/// How the intervals are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Resampling {
    pub resamples: usize,
    pub seed: u64,
    /// The intervals' confidence level (0.95); a preference is read only where p < 1 −
    /// level too.
    pub level: f64,
}

/// What the figures say of the pair, in words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PreferenceReading {
    /// The win rate's interval is above ½ and p < 1 − level.
    ABetter,
    /// The win rate's interval is below ½ and p < 1 − level.
    BBetter,
    NoClearDifference,
    NoJudgedQuestions,
}

impl PreferenceReading {
    /// The reading in words, naming the versions.
    pub fn words(self, a: &str, b: &str) -> String {
        match self {
            Self::ABetter => format!("{a} better"),
            Self::BBetter => format!("{b} better"),
            Self::NoClearDifference => "no clear difference".into(),
            Self::NoJudgedQuestions => "no judged questions".into(),
        }
    }

    /// The same reading seen from B's side.
    pub fn swapped(self) -> Self {
        match self {
            Self::ABetter => Self::BBetter,
            Self::BBetter => Self::ABetter,
            other => other,
        }
    }
}

/// How far the judge follows the seat instead of the answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PositionBias {
    /// Questions whose two verdicts named opposite versions.
    pub flips: usize,
    /// Questions whose two verdicts both named a version (no tie).
    pub decisive: usize,
    /// `flips / decisive`.
    pub flip_rate: Option<f64>,
    /// `flips / n`.
    pub flip_rate_all: Option<f64>,
    /// Verdicts that named the first seat.
    pub first_seat_picks: usize,
    /// Verdicts that named a seat (not a tie), of the `2n`.
    pub picks: usize,
    /// `first_seat_picks / picks`: ½ for a judge without seat bias.
    pub first_seat_share: Option<f64>,
}

/// A's win rate over the questions of one length relation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LengthSplit {
    pub questions: usize,
    pub win_rate: Option<f64>,
}

/// A's win rate with the answers' length held equal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeldEqual {
    /// The fitted probability at a length ratio of 1.
    pub win_rate: Option<f64>,
    pub ci95: Option<[f64; 2]>,
    /// The fit's slope on the log length ratio (positive: the longer answer is favoured).
    pub slope: Option<f64>,
    /// Why there is no figure, when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undefined: Option<String>,
}

/// How far the judge follows the length instead of the content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LengthBias {
    /// Questions where A's answer has more tokens.
    pub a_longer: LengthSplit,
    /// Questions where B's answer has more tokens.
    pub b_longer: LengthSplit,
    /// Questions where both have as many.
    pub same_length: usize,
    /// The longer answer's win rate over the questions of different lengths.
    pub longer_win_rate: Option<f64>,
    pub held_equal: HeldEqual,
}

/// A against B over the judged questions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeadToHead {
    /// Questions both verdicts came back for.
    pub n: usize,
    /// A preferred.
    pub wins: usize,
    pub ties: usize,
    /// B preferred.
    pub losses: usize,
    /// `(wins + ties/2) / n`.
    pub win_rate: Option<f64>,
    /// Percentile-bootstrap interval of the win rate, questions resampled.
    pub win_rate_ci95: Option<[f64; 2]>,
    /// Two-sided exact sign test over the questions that did not tie.
    pub p_value: Option<f64>,
    pub reading: PreferenceReading,
    pub position: PositionBias,
    pub length: LengthBias,
}

impl HeadToHead {
    /// The figures over `questions`. The win rate's interval uses `resampling.seed`, the
    /// held-equal fit's `seed + 1`.
    pub fn of(questions: &[JudgedQuestion], resampling: Resampling) -> Self {
        let results: Vec<Duel> = questions.iter().map(|q| q.orders.result()).collect();
        let count = |duel: Duel| results.iter().filter(|&&r| r == duel).count();
        let (wins, ties, losses) = (count(Duel::A), count(Duel::Tie), count(Duel::B));
        let scores: Vec<f64> = results.iter().map(|r| r.score_a()).collect();
        let win_rate = mean(&scores);
        let win_rate_ci95 = bootstrap_mean_ci(
            &scores,
            resampling.level,
            resampling.resamples,
            resampling.seed,
        )
        .map(|i| [i.low, i.high]);
        let p_value = sign_test_p_value(wins, losses);
        HeadToHead {
            n: questions.len(),
            wins,
            ties,
            losses,
            win_rate,
            win_rate_ci95,
            p_value,
            reading: reading(win_rate_ci95, p_value, resampling.level),
            position: position_bias(questions),
            length: length_bias(questions, &scores, resampling),
        }
    }

    /// The same figures seen from B's side (B against A).
    pub fn swapped(&self) -> Self {
        let flip = |split: &LengthSplit| LengthSplit {
            questions: split.questions,
            win_rate: split.win_rate.map(|r| 1.0 - r),
        };
        let held = &self.length.held_equal;
        HeadToHead {
            n: self.n,
            wins: self.losses,
            ties: self.ties,
            losses: self.wins,
            win_rate: self.win_rate.map(|r| 1.0 - r),
            win_rate_ci95: self.win_rate_ci95.map(|[l, h]| [1.0 - h, 1.0 - l]),
            p_value: self.p_value,
            reading: self.reading.swapped(),
            position: self.position.clone(),
            length: LengthBias {
                a_longer: flip(&self.length.b_longer),
                b_longer: flip(&self.length.a_longer),
                same_length: self.length.same_length,
                longer_win_rate: self.length.longer_win_rate,
                held_equal: HeldEqual {
                    win_rate: held.win_rate.map(|r| 1.0 - r),
                    ci95: held.ci95.map(|[l, h]| [1.0 - h, 1.0 - l]),
                    slope: held.slope.map(|s| -s),
                    undefined: held.undefined.clone(),
                },
            },
        }
    }
}

/// Two-sided exact sign test: `min(1, 2·P(X ≤ min(wins, losses)))` with `X ~ Bin(wins +
/// losses, ½)`; `None` when every question tied.
pub fn sign_test_p_value(wins: usize, losses: usize) -> Option<f64> {
    let n = wins + losses;
    if n == 0 {
        return None;
    }
    let smaller = wins.min(losses);
    let log_half_to_n = n as f64 * std::f64::consts::LN_2;
    // ln C(n, i), built up term by term so that large n neither overflows nor underflows.
    let mut log_choose = 0.0_f64;
    let mut tail = 0.0_f64;
    for i in 0..=smaller {
        if i > 0 {
            log_choose += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        tail += (log_choose - log_half_to_n).exp();
    }
    Some((2.0 * tail).min(1.0))
}

/// "A better" / "B better" only where the interval excludes ½ and the test agrees.
fn reading(ci: Option<[f64; 2]>, p: Option<f64>, level: f64) -> PreferenceReading {
    let Some([low, high]) = ci else {
        return PreferenceReading::NoJudgedQuestions;
    };
    let significant = p.is_some_and(|p| p < 1.0 - level);
    if significant && low > 0.5 {
        PreferenceReading::ABetter
    } else if significant && high < 0.5 {
        PreferenceReading::BBetter
    } else {
        PreferenceReading::NoClearDifference
    }
}

fn share(part: usize, whole: usize) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

fn position_bias(questions: &[JudgedQuestion]) -> PositionBias {
    let flips = questions.iter().filter(|q| q.orders.flipped()).count();
    let decisive = questions
        .iter()
        .filter(|q| q.orders.a_first != Seat::Tie && q.orders.b_first != Seat::Tie)
        .count();
    let seats = questions
        .iter()
        .flat_map(|q| [q.orders.a_first, q.orders.b_first]);
    let (mut first_seat_picks, mut picks) = (0, 0);
    for seat in seats {
        first_seat_picks += usize::from(seat == Seat::First);
        picks += usize::from(seat != Seat::Tie);
    }
    PositionBias {
        flips,
        decisive,
        flip_rate: share(flips, decisive),
        flip_rate_all: share(flips, questions.len()),
        first_seat_picks,
        picks,
        first_seat_share: share(first_seat_picks, picks),
    }
}

fn length_bias(questions: &[JudgedQuestion], scores: &[f64], resampling: Resampling) -> LengthBias {
    let split = |keep: fn(&JudgedQuestion) -> bool| {
        let chosen: Vec<f64> = questions
            .iter()
            .zip(scores)
            .filter(|(q, _)| keep(q))
            .map(|(_, s)| *s)
            .collect();
        LengthSplit {
            questions: chosen.len(),
            win_rate: mean(&chosen),
        }
    };
    let a_longer = split(|q| q.a_length > q.b_length);
    let b_longer = split(|q| q.a_length < q.b_length);
    let longer_scores: Vec<f64> = questions
        .iter()
        .zip(scores)
        .filter(|(q, _)| q.a_length != q.b_length)
        .map(|(q, s)| if q.a_length > q.b_length { *s } else { 1.0 - s })
        .collect();
    LengthBias {
        same_length: questions.len() - a_longer.questions - b_longer.questions,
        a_longer,
        b_longer,
        longer_win_rate: mean(&longer_scores),
        held_equal: held_equal(questions, scores, resampling),
    }
}

/// A's win rate at equal lengths: the logistic fit at a log ratio of 0, or — where it
/// needs no fit — the outcome every question had, or the plain win rate when every pair of
/// answers is of equal length.
fn held_equal_rate(ratios: &[f64], scores: &[f64]) -> Result<(f64, Option<f64>), NoFit> {
    let Some(&first) = scores.first() else {
        return Err(NoFit::Empty);
    };
    if scores.iter().all(|&s| s == first) {
        return Ok((first, None));
    }
    if ratios.iter().all(|&r| r == 0.0) {
        return Ok((mean(scores).unwrap_or(first), None));
    }
    let fit = fit_logistic(ratios, scores)?;
    Ok((fit.probability(0.0), Some(fit.slope)))
}

fn held_equal(questions: &[JudgedQuestion], scores: &[f64], resampling: Resampling) -> HeldEqual {
    let ratios: Vec<f64> = questions
        .iter()
        .map(JudgedQuestion::log_length_ratio)
        .collect();
    let (win_rate, slope) = match held_equal_rate(&ratios, scores) {
        Ok(fitted) => fitted,
        Err(why) => {
            return HeldEqual {
                win_rate: None,
                ci95: None,
                slope: None,
                undefined: Some(why.words().into()),
            };
        }
    };
    let n = scores.len();
    let mut rng = SplitMix64::new(resampling.seed.wrapping_add(1));
    let mut draws = Vec::with_capacity(resampling.resamples);
    let (mut x, mut y) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..resampling.resamples {
        x.clear();
        y.clear();
        for _ in 0..n {
            let i = rng.below(n);
            x.push(ratios[i]);
            y.push(scores[i]);
        }
        if let Ok((rate, _)) = held_equal_rate(&x, &y) {
            draws.push(rate);
        }
    }
    // A resample without a finite fit (its outcomes separated by length) is left out; when
    // most are, the interval would describe the few that fit, so there is none.
    let ci95 = (draws.len() * 2 > resampling.resamples).then(|| {
        draws.sort_by(f64::total_cmp);
        let alpha = (1.0 - resampling.level) / 2.0;
        [
            quantile_sorted(&draws, alpha),
            quantile_sorted(&draws, 1.0 - alpha),
        ]
    });
    HeldEqual {
        win_rate: Some(win_rate),
        ci95,
        slope,
        undefined: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RESAMPLING: Resampling = Resampling {
        resamples: 2000,
        seed: 7,
        level: 0.95,
    };

    fn question(a_first: Seat, b_first: Seat, a_length: usize, b_length: usize) -> JudgedQuestion {
        JudgedQuestion {
            orders: BothOrders { a_first, b_first },
            a_length,
            b_length,
        }
    }

    /// A wins the question when A wins in both seats.
    fn a_wins(a_length: usize, b_length: usize) -> JudgedQuestion {
        question(Seat::First, Seat::Second, a_length, b_length)
    }

    fn b_wins(a_length: usize, b_length: usize) -> JudgedQuestion {
        question(Seat::Second, Seat::First, a_length, b_length)
    }

    #[test]
    fn two_verdicts_join_by_the_rule() {
        use Seat::*;
        let cases = [
            (First, Second, Duel::A, false),
            (Second, First, Duel::B, false),
            (Tie, Tie, Duel::Tie, false),
            // The seat, not the answer: opposite versions.
            (First, First, Duel::Tie, true),
            (Second, Second, Duel::Tie, true),
            // One tie: a tie, not a flip.
            (First, Tie, Duel::Tie, false),
            (Tie, First, Duel::Tie, false),
        ];
        for (a_first, b_first, result, flipped) in cases {
            let orders = BothOrders { a_first, b_first };
            assert_eq!(orders.result(), result, "{orders:?}");
            assert_eq!(orders.flipped(), flipped, "{orders:?}");
        }
    }

    /// Worked by hand: 8 wins and 2 losses give P(X ≤ 2) = (1 + 10 + 45) / 1024 for
    /// X ~ Bin(10, ½), so p = 112/1024 = 0.109375; 5 and 0 give 2/32 = 0.0625; equal
    /// counts give 1.
    #[test]
    fn the_sign_test_matches_the_binomial_tail() {
        assert!((sign_test_p_value(8, 2).unwrap() - 0.109_375).abs() < 1e-12);
        assert!((sign_test_p_value(2, 8).unwrap() - 0.109_375).abs() < 1e-12);
        assert!((sign_test_p_value(5, 0).unwrap() - 0.0625).abs() < 1e-12);
        assert_eq!(sign_test_p_value(3, 3), Some(1.0));
        assert_eq!(sign_test_p_value(0, 0), None);
        // Large counts stay finite: 600 against 400 is far from chance.
        let p = sign_test_p_value(600, 400).unwrap();
        assert!(p > 0.0 && p < 1e-9, "{p}");
    }

    /// Worked by hand: one win and one loss. A resample of two draws holds two wins (mean
    /// 1), two losses (0) or one of each (½), with probabilities ¼, ¼, ½; with 2,000 draws
    /// both ends occur, so the 2.5% and 97.5% quantiles are 0 and 1.
    #[test]
    fn the_win_rate_interval_is_the_bootstrap_of_the_scores() {
        let figures = HeadToHead::of(&[a_wins(5, 5), b_wins(5, 5)], RESAMPLING);
        assert_eq!((figures.wins, figures.ties, figures.losses), (1, 0, 1));
        assert_eq!(figures.win_rate, Some(0.5));
        assert_eq!(figures.win_rate_ci95, Some([0.0, 1.0]));
        assert_eq!(figures.p_value, Some(1.0));
        assert_eq!(figures.reading, PreferenceReading::NoClearDifference);
        // Every question won: the interval is the point.
        let all = HeadToHead::of(&[a_wins(5, 5); 6], RESAMPLING);
        assert_eq!(all.win_rate_ci95, Some([1.0, 1.0]));
        // 6 of 6 decisive: p = 2/64 < 0.05, and the interval excludes ½.
        assert!((all.p_value.unwrap() - 2.0 / 64.0).abs() < 1e-12);
        assert_eq!(all.reading, PreferenceReading::ABetter);
        assert_eq!(all.swapped().reading, PreferenceReading::BBetter);
        assert_eq!(all.swapped().win_rate_ci95, Some([0.0, 0.0]));
    }

    /// A judge that always names the first seat: every question a flip, every result a
    /// tie, the win rate ½ with an interval of ½, no test and no preference.
    #[test]
    fn a_judge_that_always_prefers_the_first_seat_is_all_flips_and_ties() {
        let questions = vec![question(Seat::First, Seat::First, 10, 30); 12];
        let figures = HeadToHead::of(&questions, RESAMPLING);
        assert_eq!((figures.wins, figures.ties, figures.losses), (0, 12, 0));
        assert_eq!(figures.win_rate_ci95, Some([0.5, 0.5]));
        assert_eq!(figures.p_value, None);
        assert_eq!(figures.reading, PreferenceReading::NoClearDifference);
        assert_eq!(figures.position.flip_rate, Some(1.0));
        assert_eq!(figures.position.flip_rate_all, Some(1.0));
        assert_eq!(figures.position.first_seat_share, Some(1.0));
        // Every outcome is a tie: held equal, still ½.
        assert_eq!(figures.length.held_equal.win_rate, Some(0.5));
    }

    #[test]
    fn position_figures_count_flips_over_decisive_questions_and_over_all() {
        let questions = [
            question(Seat::First, Seat::First, 1, 1),  // flip
            question(Seat::First, Seat::Second, 1, 1), // A both times
            question(Seat::Tie, Seat::First, 1, 1),    // one tie
            question(Seat::Tie, Seat::Tie, 1, 1),
        ];
        let p = HeadToHead::of(&questions, RESAMPLING).position;
        assert_eq!((p.flips, p.decisive), (1, 2));
        assert_eq!(p.flip_rate, Some(0.5));
        assert_eq!(p.flip_rate_all, Some(0.25));
        // Verdicts naming a seat: F, F, F, S, F → 4 of 5 name the first.
        assert_eq!((p.first_seat_picks, p.picks), (4, 5));
    }

    /// Worked by hand: A's answer is longer on three questions (won 2, tied 1: 5/6) and
    /// shorter on two (lost both: 0); the longer answer won (1 + 1 + ½ + 1 + 1)/5 = 0.9.
    #[test]
    fn the_length_split_and_the_longer_answers_win_rate() {
        let questions = [
            a_wins(20, 10),
            a_wins(30, 10),
            question(Seat::Tie, Seat::Tie, 40, 10),
            b_wins(10, 20),
            b_wins(10, 30),
            a_wins(10, 10),
        ];
        let length = HeadToHead::of(&questions, RESAMPLING).length;
        assert_eq!(length.a_longer.questions, 3);
        assert!((length.a_longer.win_rate.unwrap() - 5.0 / 6.0).abs() < 1e-12);
        assert_eq!(length.b_longer.questions, 2);
        assert_eq!(length.b_longer.win_rate, Some(0.0));
        assert_eq!(length.same_length, 1);
        assert!((length.longer_win_rate.unwrap() - 0.9).abs() < 1e-12);
    }

    /// Worked by hand: with lengths 0 (ratio 1) and 1 (ratio 2, the log ratio ln 2) the
    /// saturated logistic fit reproduces the share at equal length: there A won 2 of 3, so
    /// the held-equal win rate is 2/3 whatever happens at ratio 2.
    #[test]
    fn the_held_equal_win_rate_is_the_fit_at_a_ratio_of_one() {
        let questions = [
            a_wins(9, 9),
            b_wins(9, 9),
            a_wins(9, 9),
            a_wins(19, 9),
            a_wins(19, 9),
            a_wins(19, 9),
            b_wins(19, 9),
        ];
        let held = HeadToHead::of(&questions, RESAMPLING).length.held_equal;
        assert!(
            (held.win_rate.unwrap() - 2.0 / 3.0).abs() < 1e-9,
            "{held:?}"
        );
        // b₁ = ln(3/2) / ln 2, the slope per unit of log ratio.
        let slope = 1.5f64.ln() / 2f64.ln();
        assert!((held.slope.unwrap() - slope).abs() < 1e-9, "{held:?}");
        // Seven questions are few: most resamples leave one length group all won or all
        // lost, whose fit has no finite maximum, so there is no interval. Five times as
        // many questions have one around the same figure.
        assert_eq!(held.ci95, None);
        let more: Vec<JudgedQuestion> = questions.iter().copied().cycle().take(35).collect();
        let held = HeadToHead::of(&more, RESAMPLING).length.held_equal;
        assert!(
            (held.win_rate.unwrap() - 2.0 / 3.0).abs() < 1e-9,
            "{held:?}"
        );
        let [low, high] = held.ci95.unwrap();
        assert!(low < 2.0 / 3.0 && 2.0 / 3.0 < high, "{held:?}");
        // Separated by length: no figure, and the reason.
        let separated = [a_wins(20, 10), a_wins(30, 10), b_wins(10, 20)];
        let held = HeadToHead::of(&separated, RESAMPLING).length.held_equal;
        assert_eq!(held.win_rate, None);
        assert_eq!(held.undefined.as_deref(), Some(NoFit::Separated.words()));
    }

    #[test]
    fn no_questions_no_figures() {
        let figures = HeadToHead::of(&[], RESAMPLING);
        assert_eq!(figures.win_rate, None);
        assert_eq!(figures.reading, PreferenceReading::NoJudgedQuestions);
        assert_eq!(figures.position.flip_rate, None);
        assert!(figures.length.held_equal.undefined.is_some());
    }
}
