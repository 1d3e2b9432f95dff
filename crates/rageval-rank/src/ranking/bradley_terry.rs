//! Bradley–Terry strengths from pairwise outcomes.
//!
//! The model: context `i` beats `j` with probability `p_i / (p_i + p_j)`. Strengths are
//! fitted by Hunter's MM algorithm (Ann. Statist. 32(1), 2004): with `W_i` the games `i`
//! won (a tie is half a win for each side) and `n_ij` the games between `i` and `j`,
//! repeat `p_i ← W_i / Σ_j n_ij / (p_i + p_j)` for all `i` at once; every step raises the
//! likelihood.
//!
//! The plain maximum-likelihood estimate does not exist when a context never wins (its
//! strength runs to 0) or never loses (to infinity), which happens often with ~10 games per
//! context. So every context also plays [`PRIOR_GAMES`] virtual games against a fixed anchor
//! of strength 1, half won and half lost. That is a weak prior pulling strengths towards 1
//! (a posterior mode, not an MLE): it keeps every strength finite and positive, leaves the
//! order of well-separated contexts alone, and weighs as much as one real game.

/// Virtual games each context plays against the anchor (half won, half lost).
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

/// Fitted natural-log strengths of `players` players (0 is the anchor's level). Games that
/// name a player out of range, a player against itself, or a score outside [0, 1] are
/// ignored.
pub fn fit(players: usize, games: &[Game]) -> Vec<f64> {
    let mut wins = vec![PRIOR_GAMES / 2.0; players];
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
        let next: Vec<f64> = (0..players)
            .map(|i| {
                let p = strength[i];
                let denominator = PRIOR_GAMES / (p + 1.0)
                    + opponents[i]
                        .iter()
                        .map(|&j| 1.0 / (p + strength[j]))
                        .sum::<f64>();
                wins[i] / denominator
            })
            .collect();
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
}
