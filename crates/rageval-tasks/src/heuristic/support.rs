//! Support of one statement by the contexts: one measurement ([`Coverage`]) that gives both
//! the label the thresholds assign (full / partial / not supported) and the continuous
//! degree of support graded metrics read ([`DegreeRule`]). The validation sweep stores the
//! same measurement, so the rule it scores is the rule the judge applies.

use std::fmt;

use super::words::{Material, content_words, is_number, share};
use super::{SUPPORT_DEGREE, SUPPORT_FULL, SUPPORT_PARTIAL};
use crate::prompt::Lang;
use crate::task::{Premise, Support, SupportVerdict};

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

/// How reasons name the premise: numbered contexts, or the one text (answer or reference)
/// a statement is checked against.
struct PremiseWords {
    premise: Premise,
}

impl PremiseWords {
    /// "context 2", or "the answer".
    fn one(&self, index: usize) -> String {
        match self.premise {
            Premise::Contexts => format!("context {}", index + 1),
            premise => premise.noun().to_string(),
        }
    }

    /// "the contexts", or "the answer".
    fn all(&self) -> &'static str {
        self.premise.noun()
    }

    /// "; 2010 appears in no context", or "; 2010 does not appear in the answer".
    fn missing_numbers(&self, missing: &[String]) -> String {
        let (list, plural) = match missing {
            [] => return String::new(),
            [one] => (one.clone(), false),
            many => (many.join(", "), true),
        };
        match (self.premise, plural) {
            (Premise::Contexts, false) => format!("; {list} appears in no context"),
            (Premise::Contexts, true) => format!("; {list} appear in no context"),
            (premise, false) => format!("; {list} does not appear in {}", premise.noun()),
            (premise, true) => format!("; {list} do not appear in {}", premise.noun()),
        }
    }
}

/// Support of one statement by the contexts, with the thresholds and degree rule of the
/// statement's script ([`SUPPORT_FULL`], [`SUPPORT_PARTIAL`], [`SUPPORT_DEGREE`]).
/// Contradiction is never inferred from words alone. `premise` names the contexts in the
/// reasons.
pub(crate) fn support(statement: &str, contexts: &[Material], premise: Premise) -> SupportVerdict {
    let verdict = |support, context, reason: String, score| SupportVerdict {
        support,
        context,
        reason,
        score,
    };
    let words = PremiseWords { premise };
    let Some(coverage) = Coverage::measure(statement, contexts) else {
        return verdict(
            Support::NotSupported,
            None,
            "the statement has no content words to look up".into(),
            None,
        );
    };
    let Some((best, best_share)) = coverage.best() else {
        let reason = match premise {
            Premise::Contexts => "there is no context".to_string(),
            premise => format!("{} is empty", premise.noun()),
        };
        return verdict(Support::NotSupported, None, reason, Some(0.0));
    };
    let lang = Lang::detect(statement);
    let (full, rule) = (SUPPORT_FULL.get(lang), SUPPORT_DEGREE.get(lang));
    let degree = coverage.degree(rule);
    let n = coverage.words();
    let together = coverage.together();
    let numbers_note = words.missing_numbers(&coverage.missing_numbers);
    let degree_note = format!("; degree of support {degree:.2}");
    let (in_best, in_all) = (words.one(best), words.all());
    match coverage.support(full, SUPPORT_PARTIAL) {
        Support::FullySupported => verdict(
            Support::FullySupported,
            Some(best),
            format!(
                "{best_share:.2} of the statement's {n} content words appear in {in_best} \
                 (≥ {full:.2}){degree_note}"
            ),
            Some(degree),
        ),
        Support::PartiallySupported => {
            let best_note = match premise {
                Premise::Contexts => format!(
                    ", at most {best_share:.2} in one context ({in_best}; {full:.2} needed \
                     for full support)"
                ),
                _ => format!("; full support needs {full:.2} and every number"),
            };
            verdict(
                Support::PartiallySupported,
                Some(best),
                format!(
                    "{together:.2} of the statement's {n} content words appear in {in_all} \
                     (≥ {SUPPORT_PARTIAL:.2}){best_note}{numbers_note}{degree_note}"
                ),
                Some(degree),
            )
        }
        _ => verdict(
            Support::NotSupported,
            None,
            format!(
                "only {together:.2} of the statement's {n} content words appear in \
                 {in_all} (< {SUPPORT_PARTIAL:.2}){numbers_note}{degree_note}"
            ),
            Some(degree),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn materials(texts: &[&str]) -> Vec<Material> {
        texts.iter().map(|t| Material::new(t)).collect()
    }

    /// Regression (issue 25 item 6): answer correctness checks the reference's statements
    /// in the answer, and the reasons said "2024 appears in no context" and "in context 1".
    #[test]
    fn reasons_name_the_answer_when_the_answer_is_the_premise() {
        let answer = materials(&["The mission launched in 2023 from Sriharikota."]);
        let missing = support("The mission launched in 2024.", &answer, Premise::Answer);
        assert_eq!(missing.support, Support::PartiallySupported);
        assert!(
            missing.reason.contains("appear in the answer")
                && missing
                    .reason
                    .contains("; 2024 does not appear in the answer"),
            "{}",
            missing.reason
        );
        let found = support("The mission launched in 2023.", &answer, Premise::Answer);
        assert_eq!(found.support, Support::FullySupported);
        assert!(
            found.reason.contains("appear in the answer"),
            "{}",
            found.reason
        );
        let none = support("Rockets need fuel.", &answer, Premise::Reference);
        assert!(
            none.reason.contains("appear in the reference"),
            "{}",
            none.reason
        );
        for verdict in [&missing, &found, &none] {
            assert!(!verdict.reason.contains("context"), "{}", verdict.reason);
        }
        // Retrieved contexts keep their numbered wording.
        let contexts = support("The mission launched in 2024.", &answer, Premise::Contexts);
        assert!(
            contexts.reason.contains("2024 appears in no context"),
            "{}",
            contexts.reason
        );
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
