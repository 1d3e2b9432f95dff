//! Support of one statement by the contexts: one measurement ([`Coverage`]) that gives both
//! the label the thresholds assign (full / partial / not supported) and the continuous
//! degree of support graded metrics read ([`DegreeRule`]). The support-verdicts rule (its
//! thresholds and reasons, in `src/task/support_verdicts.rs`) reads it, and the validation
//! sweep stores the same measurement, so the rule it scores is the rule the judge applies.

use std::fmt;

use super::words::{Material, content_words, is_number, share};
use crate::task::Support;

/// Where the words of a statement may be found when its degree of support is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Anywhere in the contexts together (facts spread over two chunks count).
    AllContexts,
    /// In the one context holding the most (as full support requires).
    BestContext,
}

/// How the heuristic measures a statement's degree of support: the weighted share of its
/// content words found within `scope`, a number (any word with a digit) weighing
/// `number_weight` against 1 for any other word — a missing date or amount then costs more
/// than a missing adjective.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DegreeRule {
    /// Where the words may be found.
    pub scope: Scope,
    /// The weight of a number word (other content words weigh 1).
    pub number_weight: f64,
}

impl DegreeRule {
    /// The rules the development sweep compares, simplest first.
    pub const CANDIDATES: [DegreeRule; 6] = [
        DegreeRule::new(Scope::AllContexts, 1.0),
        DegreeRule::new(Scope::AllContexts, 2.0),
        DegreeRule::new(Scope::AllContexts, 4.0),
        DegreeRule::new(Scope::BestContext, 1.0),
        DegreeRule::new(Scope::BestContext, 2.0),
        DegreeRule::new(Scope::BestContext, 4.0),
    ];

    /// A rule.
    pub const fn new(scope: Scope, number_weight: f64) -> Self {
        DegreeRule {
            scope,
            number_weight,
        }
    }
}

impl fmt::Display for DegreeRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scope = match self.scope {
            Scope::AllContexts => "all contexts",
            Scope::BestContext => "best context",
        };
        write!(f, "degree in {scope}, numbers ×{}", self.number_weight)
    }
}

/// Content words found, split into numbers and other words.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Found {
    words: usize,
    numbers: usize,
}

impl Found {
    fn count(self) -> usize {
        self.words + self.numbers
    }
}

/// Counts `word` in `found`, as a number or as another word.
fn tally(found: &mut Found, word: &str) {
    if is_number(word) {
        found.numbers += 1;
    } else {
        found.words += 1;
    }
}

/// Which of a statement's content words each context holds: everything the support rule
/// reads. `None` from `Coverage::measure` for a statement without content words.
#[derive(Debug, Clone, PartialEq)]
pub struct Coverage {
    /// The statement's content words.
    total: Found,
    /// Found in each context, in order.
    per_context: Vec<Found>,
    /// Found in at least one context.
    union: Found,
    /// The statement's numbers no context holds.
    missing_numbers: Vec<String>,
}

impl Coverage {
    /// Measures `statement` against `contexts`; `None` when it has no content words.
    pub(crate) fn measure(statement: &str, contexts: &[Material]) -> Option<Coverage> {
        let words = content_words(statement);
        if words.is_empty() {
            return None;
        }
        let mut total = Found::default();
        let mut union = Found::default();
        let mut per_context = vec![Found::default(); contexts.len()];
        let mut missing_numbers = Vec::new();
        for word in &words {
            tally(&mut total, word);
            let mut anywhere = false;
            for (found, context) in per_context.iter_mut().zip(contexts) {
                if context.contains(word) {
                    tally(found, word);
                    anywhere = true;
                }
            }
            if anywhere {
                tally(&mut union, word);
            } else if is_number(word) {
                missing_numbers.push(word.clone());
            }
        }
        Some(Coverage {
            total,
            per_context,
            union,
            missing_numbers,
        })
    }

    /// How many content words the statement has.
    pub fn words(&self) -> usize {
        self.total.count()
    }

    /// The context holding the largest share of the content words (the first of equals)
    /// and that share; `None` without contexts.
    pub fn best(&self) -> Option<(usize, f64)> {
        self.per_context
            .iter()
            .map(|found| share(found.count(), self.total.count()))
            .enumerate()
            .fold(None, |acc: Option<(usize, f64)>, (j, s)| match acc {
                Some((_, top)) if top >= s => acc,
                _ => Some((j, s)),
            })
    }

    /// The share of the content words found in at least one context.
    pub fn together(&self) -> f64 {
        share(self.union.count(), self.total.count())
    }

    /// Whether every number of the statement appears in some context.
    pub fn numbers_found(&self) -> bool {
        self.missing_numbers.is_empty()
    }

    /// The statement's numbers no context holds, in its order.
    pub fn missing_numbers(&self) -> &[String] {
        &self.missing_numbers
    }

    /// The label: full when one context holds at least `full` of the content words and
    /// every number appears; partial when the contexts together hold at least `partial`;
    /// else not supported.
    pub fn support(&self, full: f64, partial: f64) -> Support {
        let best = self.best().map_or(0.0, |(_, s)| s);
        if best >= full && self.numbers_found() {
            Support::FullySupported
        } else if self.together() >= partial {
            Support::PartiallySupported
        } else {
            Support::NotSupported
        }
    }

    /// The degree of support under `rule`, in [0, 1] (0 without contexts).
    pub fn degree(&self, rule: DegreeRule) -> f64 {
        let weighted =
            |found: Found| found.words as f64 + rule.number_weight * found.numbers as f64;
        let whole = weighted(self.total);
        if whole <= 0.0 {
            return 0.0;
        }
        let found = match rule.scope {
            Scope::AllContexts => weighted(self.union),
            Scope::BestContext => self
                .per_context
                .iter()
                .map(|&found| weighted(found))
                .fold(0.0, f64::max),
        };
        (found / whole).clamp(0.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn materials(texts: &[&str]) -> Vec<Material> {
        texts.iter().map(|t| Material::new(t)).collect()
    }

    #[test]
    fn the_degree_weighs_numbers_and_reads_its_scope() {
        // Content words: mission, launch, 2023, sriharikota (4; one number).
        let contexts = materials(&["The mission launched in 2023.", "Sriharikota is a base."]);
        let coverage =
            Coverage::measure("The mission launched in 2023 from Sriharikota.", &contexts)
                .expect("content words");
        assert_eq!(coverage.words(), 4);
        assert_eq!(coverage.best(), Some((0, 0.75)));
        assert_eq!(coverage.together(), 1.0);
        assert!(coverage.numbers_found());
        let all = |w| coverage.degree(DegreeRule::new(Scope::AllContexts, w));
        let best = |w| coverage.degree(DegreeRule::new(Scope::BestContext, w));
        assert_eq!(all(1.0), 1.0);
        assert_eq!(best(1.0), 0.75);
        // Best context: 2 words + 2 × the number = 4 of 3 + 2 × 1 = 5.
        assert_eq!(best(2.0), 0.8);
        let wrong_year =
            Coverage::measure("The mission launched in 2024.", &contexts).expect("words");
        assert!(!wrong_year.numbers_found());
        assert_eq!(wrong_year.support(0.5, 0.5), Support::PartiallySupported);
        // 2 of 3 words; with the number at ×4: 2 of 6.
        assert!(
            (wrong_year.degree(DegreeRule::new(Scope::AllContexts, 4.0)) - 1.0 / 3.0).abs() < 1e-12
        );
        assert_eq!(Coverage::measure("the of and", &contexts), None);
        let alone = Coverage::measure("mission", &[]).expect("words");
        assert_eq!(
            (alone.best(), alone.degree(DegreeRule::CANDIDATES[0])),
            (None, 0.0)
        );
    }
}
