//! Bradley–Terry strengths from pairwise outcomes: `rank` orders a question's contexts by
//! them, `pairwise` orders system versions by them.
//!
//! The model: player `i` beats `j` with probability `p_i / (p_i + p_j)`. Strengths are
//! fitted by Hunter's MM algorithm (Ann. Statist. 32(1), 2004): with `W_i` the games `i`
//! won (a tie is half a win for each side) and `n_ij` the games between `i` and `j`,
//! repeat `p_i ← W_i / Σ_j n_ij / (p_i + p_j)` for all `i` at once; every step raises the
//! likelihood.
//!
//! The plain maximum-likelihood estimate does not exist when a player never wins (its
//! strength runs to 0) or never loses (to infinity), which happens often with ~10 games per
//! context or a handful of versions. So [`fit`] has every player also play [`PRIOR_GAMES`]
//! virtual games against a fixed anchor of strength 1, half won and half lost. That is a
//! weak prior pulling strengths towards 1 (a posterior mode, not an MLE): it keeps every
//! strength finite and positive, leaves the order of well-separated players alone, and
//! weighs as much as one real game. [`maximum_likelihood`] is the plain estimate, for data
//! where it exists. [`bootstrap_strengths`] gives each strength a percentile interval by
//! resampling groups of games (a version comparison's questions).

use crate::stats::{Interval, SplitMix64, quantile_sorted};

/// Virtual games each player plays against the anchor (half won, half lost).
pub const PRIOR_GAMES: f64 = 1.0;

/// Stop when no log-strength moves more than this in one step.
const TOLERANCE: f64 = 1e-10;

/// MM steps at most; a sparse design of 200 contexts converges in a few hundred.
const MAX_STEPS: usize = 20_000;

/// One game between players `a` and `b`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Game {
    /// First player (0-based).
    pub a: usize,
    /// Second player.
    pub b: usize,
    /// What `a` scored: 1 for a win, 0.5 for a tie, 0 for a loss.
    pub score_a: f64,
}

/// Fitted natural-log strengths of `players` players with the anchor's prior (0 is the
/// anchor's level). Games that name a player out of range, a player against itself, or a
/// score outside [0, 1] are ignored.
pub fn fit(players: usize, games: &[Game]) -> Vec<f64> {
    mm(players, games, PRIOR_GAMES)
}

/// The plain maximum-likelihood log-strengths (Zermelo 1929; Bradley & Terry 1952), centred
/// on a mean of 0; `None` when the estimate does not exist (a player never won or never
/// lost, so its strength runs off to 0 or infinity).
pub fn maximum_likelihood(players: usize, games: &[Game]) -> Option<Vec<f64>> {
    let strengths = mm(players, games, 0.0);
    strengths.iter().all(|s| s.is_finite()).then_some(strengths)
}

/// The MM iteration with `prior` virtual games per player against the anchor; with no
/// prior, the strengths are centred on a log-mean of 0 after each step.
fn mm(players: usize, games: &[Game], prior: f64) -> Vec<f64> {
    let mut wins = vec![prior / 2.0; players];
    let mut opponents: Vec<Vec<usize>> = vec![Vec::new(); players];
    for game in games {
        let valid = game.a < players
            && game.b < players
            && game.a != game.b
            && (0.0..=1.0).contains(&game.score_a);
        if !valid {
            continue;
        }
        wins[game.a] += game.score_a;
        wins[game.b] += 1.0 - game.score_a;
        opponents[game.a].push(game.b);
        opponents[game.b].push(game.a);
    }
    let mut strength = vec![1.0_f64; players];
    for _ in 0..MAX_STEPS {
        let mut next: Vec<f64> = (0..players)
            .map(|i| {
                let p = strength[i];
                let denominator = prior / (p + 1.0)
                    + opponents[i]
                        .iter()
                        .map(|&j| 1.0 / (p + strength[j]))
                        .sum::<f64>();
                // A player without a game keeps its strength.
                if denominator > 0.0 {
                    wins[i] / denominator
                } else {
                    p
                }
            })
            .collect();
        if prior == 0.0 {
            let centre = next.iter().map(|p| p.ln()).sum::<f64>() / players.max(1) as f64;
            if !centre.is_finite() {
                return vec![f64::NEG_INFINITY; players];
            }
            next.iter_mut().for_each(|p| *p /= centre.exp());
        }
        let moved = next
            .iter()
            .zip(&strength)
            .map(|(new, old)| (new.ln() - old.ln()).abs())
            .fold(0.0, f64::max);
        strength = next;
        if moved < TOLERANCE {
            break;
        }
    }
    strength.into_iter().map(f64::ln).collect()
}

/// Percentile intervals at `level` of each player's [`fit`] log-strength, from `resamples`
/// bootstrap draws of `groups` (each group, e.g. one question's games, is drawn whole; a
/// seeded SplitMix64 draws them). `None` for every player when there are no groups.
pub fn bootstrap_strengths(
    players: usize,
    groups: &[Vec<Game>],
    level: f64,
    resamples: usize,
    seed: u64,
) -> Vec<Option<Interval>> {
    if groups.is_empty() || resamples == 0 {
        return vec![None; players];
    }
    let mut rng = SplitMix64::new(seed);
    let mut draws: Vec<Vec<f64>> = vec![Vec::with_capacity(resamples); players];
    let mut games = Vec::new();
    for _ in 0..resamples {
        games.clear();
        for _ in 0..groups.len() {
            games.extend_from_slice(&groups[rng.below(groups.len())]);
        }
        for (player, strength) in fit(players, &games).into_iter().enumerate() {
            draws[player].push(strength);
        }
    }
    let alpha = (1.0 - level) / 2.0;
    draws
        .into_iter()
        .map(|mut values| {
            values.sort_by(f64::total_cmp);
            Some(Interval {
                low: quantile_sorted(&values, alpha),
                high: quantile_sorted(&values, 1.0 - alpha),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(a: usize, b: usize, score_a: f64) -> Game {
        Game { a, b, score_a }
    }

    #[test]
    fn a_player_that_never_wins_stays_finite_and_last() {
        let games = [game(0, 1, 1.0), game(1, 2, 1.0), game(0, 2, 1.0)];
        let scores = fit(3, &games);
        assert!(scores.iter().all(|s| s.is_finite()), "{scores:?}");
        assert!(scores[0] > scores[1] && scores[1] > scores[2], "{scores:?}");
        // Without the prior the estimate does not exist.
        assert_eq!(maximum_likelihood(3, &games), None);
    }

    #[test]
    fn matches_the_closed_form_for_two_players() {
        // Two players, a wins 3 of 4 against b, plus the prior: the fit must satisfy the
        // score equations W_i = Σ games p_i/(p_i+p_j) + prior p_i/(p_i+1) for both players.
        let games = [
            game(0, 1, 1.0),
            game(0, 1, 1.0),
            game(0, 1, 1.0),
            game(0, 1, 0.0),
        ];
        let scores = fit(2, &games);
        let (p0, p1) = (scores[0].exp(), scores[1].exp());
        let expected0 = 4.0 * p0 / (p0 + p1) + PRIOR_GAMES * p0 / (p0 + 1.0);
        let expected1 = 4.0 * p1 / (p0 + p1) + PRIOR_GAMES * p1 / (p1 + 1.0);
        assert!((expected0 - (3.0 + PRIOR_GAMES / 2.0)).abs() < 1e-8);
        assert!((expected1 - (1.0 + PRIOR_GAMES / 2.0)).abs() < 1e-8);
        // The plain estimate: p0 / p1 = 3, so the log-strengths are ±ln(3)/2.
        let plain = maximum_likelihood(2, &games).unwrap();
        assert!((plain[0] - 3f64.ln() / 2.0).abs() < 1e-8, "{plain:?}");
        assert!((plain[1] + 3f64.ln() / 2.0).abs() < 1e-8, "{plain:?}");
    }

    /// The worked example of the Wikipedia article "Bradley–Terry model" (section "Worked
    /// example of iterated procedure"): four teams, 22 games; A beat B twice and lost to it
    /// three times, beat D once and lost four times; B beat C five times and lost three; C
    /// beat D once and lost three. Its iteration converges to p = (0.640, 1.043, 0.660,
    /// 2.270), normalised to a geometric mean of 1 — our centred log-strengths exponentiated.
    #[test]
    fn matches_the_worked_example_of_the_named_reference() {
        let mut games = Vec::new();
        let mut played = |a: usize, b: usize, a_won: usize, b_won: usize| {
            games.extend(std::iter::repeat_n(game(a, b, 1.0), a_won));
            games.extend(std::iter::repeat_n(game(a, b, 0.0), b_won));
        };
        played(0, 1, 2, 3);
        played(0, 3, 1, 4);
        played(1, 2, 5, 3);
        played(2, 3, 1, 3);
        let p: Vec<f64> = maximum_likelihood(4, &games)
            .unwrap()
            .into_iter()
            .map(f64::exp)
            .collect();
        let expected = [0.640, 1.043, 0.660, 2.270];
        for (got, want) in p.iter().zip(expected) {
            assert!((got - want).abs() < 5e-4, "{p:?}");
        }
    }

    #[test]
    fn ties_and_an_unplayed_player_sit_at_the_anchor() {
        let scores = fit(3, &[game(0, 1, 0.5), game(0, 1, 0.5)]);
        assert!(scores.iter().all(|s| s.abs() < 1e-9), "{scores:?}");
    }

    #[test]
    fn invalid_games_are_ignored() {
        let scores = fit(2, &[game(0, 0, 1.0), game(0, 5, 1.0), game(0, 1, 2.0)]);
        assert_eq!(scores, vec![0.0, 0.0]);
    }

    #[test]
    fn bootstrap_intervals_bracket_the_fit_and_are_seeded() {
        // Player 0 wins 8 of 10 questions against player 1.
        let groups: Vec<Vec<Game>> = (0..10)
            .map(|i| vec![game(0, 1, if i < 8 { 1.0 } else { 0.0 })])
            .collect();
        let all: Vec<Game> = groups.concat();
        let fitted = fit(2, &all);
        let intervals = bootstrap_strengths(2, &groups, 0.95, 500, 3);
        assert_eq!(intervals, bootstrap_strengths(2, &groups, 0.95, 500, 3));
        for (strength, interval) in fitted.iter().zip(&intervals) {
            let interval = interval.unwrap();
            assert!(
                interval.low <= *strength && *strength <= interval.high,
                "{strength} {interval:?}"
            );
        }
        assert_eq!(bootstrap_strengths(2, &[], 0.95, 500, 3), vec![None, None]);
    }
}
