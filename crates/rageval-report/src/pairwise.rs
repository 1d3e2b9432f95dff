//! A `pairwise` run's files: versions' answers judged head to head.
//!
//! - `pairwise.jsonl`, the journal: one [`PairwiseQuestion`] per question — for every pair
//!   of versions both verdicts (one per seat order) with their reasons, the combined
//!   result, and the lengths of every version's answer;
//! - `summary.json`: a [`PairwiseSummary`] — per pair of versions wins, ties, losses,
//!   failed, the win rate with its interval, the sign test, position and length bias
//!   ([`HeadToHead`]); with more than two versions, Bradley–Terry strengths with intervals.
//!
//! A pair whose calls failed on a question is counted as failed with its error, never as
//! a tie. The figures themselves are `rageval-core`'s ([`rageval_core::preference`]).

use std::fs;
use std::path::Path;

use rageval_core::preference::bradley_terry::{Game, bootstrap_strengths, fit};
use rageval_core::preference::{BothOrders, Duel, HeadToHead, JudgedQuestion, Resampling, Seat};
use serde::{Deserialize, Serialize};

use crate::{JudgeAccount, ReportError, SUMMARY_FILE};

/// The journal of a `pairwise` run.
pub const PAIRWISE_FILE: &str = "pairwise.jsonl";
/// The command a `pairwise` run's manifest names.
pub const PAIRWISE_COMMAND: &str = "pairwise";

/// An answer's length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnswerLength {
    /// Unicode characters.
    pub chars: usize,
    /// Tokens in the judge model's encoding (o200k when it has none).
    pub tokens: usize,
}

/// One verdict: the seat the judge preferred and why, or the error its call ended with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum SeatVerdict {
    Answered {
        preferred: Seat,
        reason: String,
        /// Decided by rule without a call (the same answer twice).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        by_rule: bool,
    },
    Failed {
        error: String,
    },
}

impl SeatVerdict {
    fn seat(&self) -> Option<Seat> {
        match self {
            Self::Answered { preferred, .. } => Some(*preferred),
            Self::Failed { .. } => None,
        }
    }

    fn error(&self) -> Option<&str> {
        match self {
            Self::Answered { .. } => None,
            Self::Failed { error } => Some(error),
        }
    }

    /// The reason, or the error.
    pub fn words(&self) -> &str {
        match self {
            Self::Answered { reason, .. } => reason,
            Self::Failed { error } => error,
        }
    }
}

/// Versions `a` and `b` (indices into [`PairwiseSummary::versions`]) on one question: the
/// verdict with `a`'s answer in the first seat, and with `b`'s.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairVerdicts {
    pub a: usize,
    pub b: usize,
    pub a_first: SeatVerdict,
    pub b_first: SeatVerdict,
    /// The combined result (`None` when a call failed).
    pub result: Option<Duel>,
    /// Whether the two verdicts named opposite versions.
    pub flipped: bool,
}

impl PairVerdicts {
    /// Joins the two verdicts by the both-orders rule.
    pub fn new(a: usize, b: usize, a_first: SeatVerdict, b_first: SeatVerdict) -> Self {
        let orders = a_first
            .seat()
            .zip(b_first.seat())
            .map(|(a_first, b_first)| BothOrders { a_first, b_first });
        PairVerdicts {
            a,
            b,
            a_first,
            b_first,
            result: orders.map(BothOrders::result),
            flipped: orders.is_some_and(BothOrders::flipped),
        }
    }

    /// Both seats' verdicts, when both came back.
    pub fn orders(&self) -> Option<BothOrders> {
        let (a_first, b_first) = (self.a_first.seat()?, self.b_first.seat()?);
        Some(BothOrders { a_first, b_first })
    }

    /// The first error of its calls.
    pub fn error(&self) -> Option<&str> {
        self.a_first.error().or_else(|| self.b_first.error())
    }
}

/// One question of a `pairwise` run: a line of `pairwise.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairwiseQuestion {
    /// The first version's sample id (the journal's key).
    pub question_id: String,
    /// Each version's sample id, in version order.
    pub sample_ids: Vec<String>,
    pub question: String,
    /// Whether the judge saw a reference answer.
    pub has_reference: bool,
    /// Each version's answer length, in version order.
    pub lengths: Vec<AnswerLength>,
    pub pairs: Vec<PairVerdicts>,
}

impl PairwiseQuestion {
    /// Whether some call failed (done again with `--retry-failed`).
    pub fn failed(&self) -> bool {
        self.pairs.iter().any(|pair| pair.error().is_some())
    }
}

/// A version of the system: one input of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairwiseVersion {
    pub name: String,
    /// The run directory, dataset or pipeline folder it was read from.
    pub source: String,
}

/// Version `a` against version `b` over the questions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VersionPair {
    pub a: String,
    pub b: String,
    pub a_index: usize,
    pub b_index: usize,
    /// Questions whose calls for this pair failed (left out of `n`).
    pub failed: usize,
    /// The first of their errors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
    /// `n`, wins, ties, losses (from `a`'s side), the win rate with its interval, the sign
    /// test, position and length bias.
    #[serde(flatten)]
    pub figures: HeadToHead,
}

/// A version's Bradley–Terry strength over every pair's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VersionStrength {
    pub name: String,
    /// Natural-log strength (0 is the prior's anchor); higher is preferred more.
    pub strength: f64,
    /// Percentile-bootstrap interval, questions resampled.
    pub ci95: Option<[f64; 2]>,
}

/// A `pairwise` run's `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairwiseSummary {
    /// Always `pairwise`.
    pub command: String,
    pub versions: Vec<PairwiseVersion>,
    /// Questions every version answered.
    pub questions: usize,
    /// Of those, questions with a reference answer the judge saw.
    pub with_reference: usize,
    /// `rag` (the built-in criterion) or the rubric metric's name.
    pub criterion: String,
    pub resampling: Resampling,
    /// Every pair of versions, each earlier version against each later one.
    pub pairs: Vec<VersionPair>,
    /// More than two versions: Bradley–Terry strengths, in version order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub strengths: Vec<VersionStrength>,
    /// What the judge was asked, over every session.
    pub judge: JudgeAccount,
}

impl PairwiseSummary {
    /// The figures over `questions` (the journal, in question order).
    pub fn of(
        versions: Vec<PairwiseVersion>,
        questions: &[PairwiseQuestion],
        criterion: &str,
        resampling: Resampling,
        judge: JudgeAccount,
    ) -> Self {
        let count = versions.len();
        let mut pairs = Vec::new();
        for a in 0..count {
            for b in a + 1..count {
                pairs.push(version_pair(&versions, questions, a, b, resampling));
            }
        }
        let strengths = if count > 2 {
            strengths(&versions, questions, resampling)
        } else {
            Vec::new()
        };
        PairwiseSummary {
            command: PAIRWISE_COMMAND.into(),
            versions,
            questions: questions.len(),
            with_reference: questions.iter().filter(|q| q.has_reference).count(),
            criterion: criterion.into(),
            resampling,
            pairs,
            strengths,
            judge,
        }
    }

    /// The `summary.json` of the `pairwise` run in `dir`.
    pub fn load(dir: &Path) -> Result<Self, ReportError> {
        let path = dir.join(SUMMARY_FILE);
        let text = fs::read_to_string(&path).map_err(|source| ReportError::Read {
            path: path.clone(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|source| ReportError::Decode { path, source })
    }

    /// Version `a` against version `b`, from `a`'s side, whichever order they were paired in.
    pub fn pair(&self, a: usize, b: usize) -> Option<VersionPair> {
        self.pairs.iter().find_map(|pair| {
            if (pair.a_index, pair.b_index) == (a, b) {
                Some(pair.clone())
            } else if (pair.a_index, pair.b_index) == (b, a) {
                Some(VersionPair {
                    a: pair.b.clone(),
                    b: pair.a.clone(),
                    a_index: b,
                    b_index: a,
                    failed: pair.failed,
                    first_error: pair.first_error.clone(),
                    figures: pair.figures.swapped(),
                })
            } else {
                None
            }
        })
    }
}

/// The journal of the `pairwise` run in `dir`, in its order.
pub fn read_pairwise_questions(dir: &Path) -> Result<Vec<PairwiseQuestion>, ReportError> {
    let path = dir.join(PAIRWISE_FILE);
    let text = fs::read_to_string(&path).map_err(|source| ReportError::Read {
        path: path.clone(),
        source,
    })?;
    let mut questions = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let question =
            serde_json::from_str(line).map_err(|source| ReportError::DecodePairwise {
                path: path.clone(),
                line: index + 1,
                source,
            })?;
        questions.push(question);
    }
    Ok(questions)
}

fn version_pair(
    versions: &[PairwiseVersion],
    questions: &[PairwiseQuestion],
    a: usize,
    b: usize,
    resampling: Resampling,
) -> VersionPair {
    let mut judged = Vec::new();
    let (mut failed, mut first_error) = (0, None);
    for question in questions {
        let Some(pair) = question.pairs.iter().find(|p| (p.a, p.b) == (a, b)) else {
            continue;
        };
        match pair.orders() {
            Some(orders) => judged.push(JudgedQuestion {
                orders,
                a_length: question.lengths.get(a).map_or(0, |l| l.tokens),
                b_length: question.lengths.get(b).map_or(0, |l| l.tokens),
            }),
            None => {
                failed += 1;
                if first_error.is_none() {
                    first_error = pair.error().map(str::to_owned);
                }
            }
        }
    }
    VersionPair {
        a: versions[a].name.clone(),
        b: versions[b].name.clone(),
        a_index: a,
        b_index: b,
        failed,
        first_error,
        figures: HeadToHead::of(&judged, resampling),
    }
}

/// Bradley–Terry over every pair's results, a question's games drawn together.
fn strengths(
    versions: &[PairwiseVersion],
    questions: &[PairwiseQuestion],
    resampling: Resampling,
) -> Vec<VersionStrength> {
    let groups: Vec<Vec<Game>> = questions
        .iter()
        .map(|question| {
            question
                .pairs
                .iter()
                .filter_map(|pair| {
                    Some(Game {
                        a: pair.a,
                        b: pair.b,
                        score_a: pair.result?.score_a(),
                    })
                })
                .collect()
        })
        .filter(|games: &Vec<Game>| !games.is_empty())
        .collect();
    let fitted = fit(versions.len(), &groups.concat());
    let intervals = bootstrap_strengths(
        versions.len(),
        &groups,
        resampling.level,
        resampling.resamples,
        resampling.seed,
    );
    versions
        .iter()
        .zip(fitted)
        .zip(intervals)
        .map(|((version, strength), interval)| VersionStrength {
            name: version.name.clone(),
            strength,
            ci95: interval.map(|i| [i.low, i.high]),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const RESAMPLING: Resampling = Resampling {
        resamples: 500,
        seed: 1,
        level: 0.95,
    };

    fn answered(preferred: Seat) -> SeatVerdict {
        SeatVerdict::Answered {
            preferred,
            reason: format!("{preferred:?}"),
            by_rule: false,
        }
    }

    fn question(id: &str, pairs: Vec<PairVerdicts>, versions: usize) -> PairwiseQuestion {
        PairwiseQuestion {
            question_id: id.into(),
            sample_ids: vec![id.into(); versions],
            question: format!("question {id}"),
            has_reference: false,
            lengths: vec![
                AnswerLength {
                    chars: 10,
                    tokens: 3
                };
                versions
            ],
            pairs,
        }
    }

    fn versions(n: usize) -> Vec<PairwiseVersion> {
        (0..n)
            .map(|i| PairwiseVersion {
                name: format!("v{i}"),
                source: format!("runs/v{i}"),
            })
            .collect()
    }

    fn account() -> JudgeAccount {
        JudgeAccount::over_sessions("heuristic", Vec::new(), Vec::new(), &[])
    }

    #[test]
    fn a_failed_pair_is_counted_as_failed_not_as_a_tie_and_the_summary_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let questions = vec![
            question(
                "1",
                vec![PairVerdicts::new(
                    0,
                    1,
                    answered(Seat::First),
                    answered(Seat::Second),
                )],
                2,
            ),
            question(
                "2",
                vec![PairVerdicts::new(
                    0,
                    1,
                    answered(Seat::First),
                    SeatVerdict::Failed {
                        error: "the judge timed out".into(),
                    },
                )],
                2,
            ),
        ];
        let summary = PairwiseSummary::of(versions(2), &questions, "rag", RESAMPLING, account());
        let pair = &summary.pairs[0];
        assert_eq!((pair.figures.n, pair.figures.wins, pair.failed), (1, 1, 1));
        assert_eq!(pair.figures.ties, 0);
        assert_eq!(pair.first_error.as_deref(), Some("the judge timed out"));
        assert!(summary.strengths.is_empty());
        let swapped = summary.pair(1, 0).unwrap();
        assert_eq!((swapped.a.as_str(), swapped.figures.losses), ("v1", 1));
        fs::write(
            dir.path().join(SUMMARY_FILE),
            serde_json::to_string(&summary).unwrap(),
        )
        .unwrap();
        assert_eq!(PairwiseSummary::load(dir.path()).unwrap(), summary);
        // The gate's fields sit at the top of each pair.
        let json = serde_json::to_value(&summary).unwrap();
        for field in [
            "wins",
            "ties",
            "losses",
            "failed",
            "n",
            "win_rate",
            "win_rate_ci95",
            "p_value",
        ] {
            assert!(json["pairs"][0].get(field).is_some(), "{field}");
        }
    }

    #[test]
    fn three_versions_get_every_pair_and_strengths_in_their_order() {
        // v2 beats both, v1 beats v0, on every question.
        let pairs = || {
            vec![
                PairVerdicts::new(0, 1, answered(Seat::Second), answered(Seat::First)),
                PairVerdicts::new(0, 2, answered(Seat::Second), answered(Seat::First)),
                PairVerdicts::new(1, 2, answered(Seat::Second), answered(Seat::First)),
            ]
        };
        let questions: Vec<PairwiseQuestion> = (0..8)
            .map(|i| question(&i.to_string(), pairs(), 3))
            .collect();
        let summary = PairwiseSummary::of(versions(3), &questions, "rag", RESAMPLING, account());
        assert_eq!(summary.pairs.len(), 3);
        let s: Vec<f64> = summary.strengths.iter().map(|s| s.strength).collect();
        assert!(s[2] > s[1] && s[1] > s[0], "{s:?}");
        assert!(summary.strengths.iter().all(|s| s.ci95.is_some()));
    }
}
