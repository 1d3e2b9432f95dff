//! [`SupportVerdicts`]: every statement of one text judged against the contexts in one call,
//! with what a verdict counts for in a metric ([`SupportCredit`]).
//!
//! The heuristic judge's rule is content-word coverage (`heuristic::support` measures it):
//! full support in one context at [`SUPPORT_FULL`] with every number found, partial support
//! across the contexts at [`SUPPORT_PARTIAL`], and a degree of support by
//! [`SUPPORT_DEGREE`]. A checker model, when one is set, answers instead (the router's
//! cascade). Contradiction is never inferred from words alone.
//!
//! A task may carry the conversation before the answer (`history`): a statement the
//! contexts do not back may then be backed by an earlier turn (see `history.rs`).

pub(crate) mod history;

use std::collections::BTreeMap;

use rageval_core::Turn;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{TaskFamily, TaskKind, TypedTask};
use crate::error::TaskError;
use crate::heuristic::support::{Coverage, DegreeRule, Scope};
use crate::heuristic::words::Material;
use crate::heuristic::{self, ByScript, Heuristic};
use crate::judged::{HeuristicInfo, Judged};
use crate::llm::{LlmTask, Part, count_and_keys, take_item};
use crate::prompt::Lang;
use crate::prompt::pack::{PackFiles, pack_files};
use crate::router::TaskJudge;
use crate::schema::{Shape, keyed, keys, object, reason, with_defs};

/// Judge every statement of one text against the contexts, in one call.
/// Answered with one [`SupportVerdict`] per statement, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SupportVerdicts {
    /// The statements to check.
    pub statements: Vec<String>,
    /// The material they may be supported by (retrieved contexts, or a reference answer).
    pub contexts: Vec<String>,
    /// What `contexts` are, so that reasons name it ("in the answer", not "in no context").
    /// Prompts do not read it: a chat model is shown the material as contexts either way.
    #[serde(default, skip_serializing_if = "Premise::is_contexts")]
    pub premise: Premise,
    /// The conversation before the answer the statements come from, oldest message first:
    /// a statement the contexts do not back is supported by an earlier turn when the user
    /// said it, or an earlier assistant reply that is itself backed said it. Empty for a
    /// question asked on its own, whose call is then exactly as without the field.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<Turn>,
}

/// What the statements of a [`SupportVerdicts`] task are checked against.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Premise {
    /// Retrieved contexts (faithfulness, context recall, noise sensitivity).
    #[default]
    Contexts,
    /// The system's answer (answer correctness checks the reference's statements in it).
    Answer,
    /// The reference answer (answer correctness checks the answer's statements in it).
    Reference,
}

impl Premise {
    /// Whether this is the default, retrieved contexts.
    pub fn is_contexts(&self) -> bool {
        *self == Premise::Contexts
    }

    /// The premise as reasons name it when it is one text: "the answer", "the reference".
    pub fn noun(self) -> &'static str {
        match self {
            Premise::Contexts => "the contexts",
            Premise::Answer => "the answer",
            Premise::Reference => "the reference",
        }
    }
}

/// How far the contexts back a statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Support {
    /// Everything the statement says follows from the contexts.
    FullySupported,
    /// Part of it follows; the rest is missing.
    PartiallySupported,
    /// The contexts do not say it.
    NotSupported,
    /// The contexts say otherwise.
    Contradicted,
}

impl Support {
    /// The label as written in prompts and evidence (`fully_supported`, ...).
    pub fn label(self) -> &'static str {
        match self {
            Support::FullySupported => "fully_supported",
            Support::PartiallySupported => "partially_supported",
            Support::NotSupported => "not_supported",
            Support::Contradicted => "contradicted",
        }
    }

    /// Only full support counts as supported in seeds S1 and S4's counts (and ragas's).
    pub fn is_supported(self) -> bool {
        self == Support::FullySupported
    }
}

/// The labels of a support verdict, in the order prompts list them.
pub const SUPPORT_LABELS: [&str; 4] = [
    "fully_supported",
    "partially_supported",
    "not_supported",
    "contradicted",
];

/// What a partially supported statement earns in a graded metric when the judge gives no
/// degree of support: the middle of the three-step scale not / partially / fully
/// supported mapped linearly onto [0, 1] (TruLens's groundedness likewise maps its
/// per-sentence ordinal rating linearly and averages it).
pub const PARTIAL_SUPPORT_CREDIT: f64 = 0.5;

/// How a metric counts one support verdict: the metric's score is the mean credit of its
/// statements. The judge's degree of support ([`SupportVerdict::score`]) is used where
/// one is given and the rule lets the statement earn anything; chat models give none,
/// and every rule then falls back on the label alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SupportCredit {
    /// 1 for `fully_supported`, else 0, whatever the degree: the counts of seeds S1 and S4
    /// (and ragas).
    FullOnly,
    /// `fully_supported` earns its degree (1 without one), anything else 0: only full
    /// support counts, as in S1, but a statement the contexts state word for word counts
    /// more than one that barely passed (faithfulness).
    FullByDegree,
    /// `fully_supported` earns its degree (1 without one), `partially_supported` its degree
    /// ([`PARTIAL_SUPPORT_CREDIT`] without one), not supported and contradicted 0: how much
    /// of a text the other holds (context recall, answer correctness).
    Graded,
}

impl SupportCredit {
    /// `full_only`, `full_by_degree` or `graded`, as evidence names the rule.
    pub fn name(self) -> &'static str {
        match self {
            SupportCredit::FullOnly => "full_only",
            SupportCredit::FullByDegree => "full_by_degree",
            SupportCredit::Graded => "graded",
        }
    }

    /// The credit of a statement judged `support`, with the judge's degree `score` when it
    /// gave one; always in [0, 1].
    pub fn credit(self, support: Support, score: Option<f64>) -> f64 {
        let degree = |fallback: f64| score.map_or(fallback, |s| s.clamp(0.0, 1.0));
        match (self, support) {
            (SupportCredit::FullOnly, Support::FullySupported) => 1.0,
            (SupportCredit::FullByDegree | SupportCredit::Graded, Support::FullySupported) => {
                degree(1.0)
            }
            (SupportCredit::Graded, Support::PartiallySupported) => degree(PARTIAL_SUPPORT_CREDIT),
            _ => 0.0,
        }
    }
}

/// The verdict on one statement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SupportVerdict {
    /// How far it is supported.
    pub support: Support,
    /// The context (0-based index into [`SupportVerdicts::contexts`]) that supports or
    /// contradicts it best, when one does.
    pub context: Option<usize>,
    /// Why.
    pub reason: String,
    /// The judge's degree of support in [0, 1], when it measures one: the heuristic judge
    /// gives the weighted share of the statement's content words the contexts hold
    /// ([`SUPPORT_DEGREE`]); chat models give none. It refines the label, never replaces
    /// it: see [`SupportCredit`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// The earlier turn of the conversation (1-based) that supports the statement where
    /// the contexts do not ([`SupportVerdicts::history`]); its support is then that turn's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<usize>,
}

impl SupportVerdict {
    /// A verdict no model gave: not supported, for `reason` (no context to read, a dry run).
    pub fn unsupported_by_rule(reason: impl Into<String>) -> Self {
        SupportVerdict {
            support: Support::NotSupported,
            context: None,
            reason: reason.into(),
            score: None,
            turn: None,
        }
    }

    /// This verdict's credit under `rule`.
    pub fn credit(&self, rule: SupportCredit) -> f64 {
        rule.credit(self.support, self.score)
    }
}

/// A statement is fully supported when one context holds at least this share of its content
/// words (and every number it states appears in the contexts); by the statement's script.
pub const SUPPORT_FULL: ByScript = ByScript { en: 0.5, zh: 0.65 };

/// A statement is partially supported when the contexts together hold at least this share;
/// below it a statement earns nothing in any metric. Not chosen by the sweep: the midpoint,
/// kept from version 1.
pub const SUPPORT_PARTIAL: f64 = 0.5;

/// How a statement's degree of support ([`SupportVerdict::score`]) is measured, by the
/// statement's script: what graded metrics count instead of the label's fixed weight
/// ([`SupportCredit`]).
pub const SUPPORT_DEGREE: ByScript<DegreeRule> = ByScript {
    en: DegreeRule::new(Scope::AllContexts, 1.0),
    zh: DegreeRule::new(Scope::AllContexts, 1.0),
};

/// A chat model's answer: one verdict per statement, keyed `s1`, `s2`, ...
#[derive(Deserialize)]
pub(crate) struct SupportRaw {
    verdicts: BTreeMap<String, SupportItem>,
}

/// One statement's verdict as a chat model writes it (also a claim's, in
/// [`ContextsCheck`](super::ContextsCheck)).
#[derive(Deserialize)]
pub(crate) struct SupportItem {
    reason: String,
    supporting_context: usize,
    verdict: Support,
    /// Asked only of a call with a conversation (0 for none).
    #[serde(default)]
    supporting_turn: usize,
}

impl SupportItem {
    /// The verdict, its context number (1-based, 0 for none) checked against `contexts`.
    pub(crate) fn into_verdict(self, contexts: usize) -> Result<SupportVerdict, String> {
        let context = match self.supporting_context {
            0 => None,
            n if n <= contexts => Some(n - 1),
            n => return Err(format!("supporting context {n} does not exist")),
        };
        Ok(SupportVerdict {
            support: self.verdict,
            context,
            reason: self.reason,
            score: None,
            turn: None,
        })
    }
}

/// The verdicts on `count` statements keyed `s1..`, in order.
pub(crate) fn keyed_verdicts(
    items: &mut BTreeMap<String, SupportItem>,
    count: usize,
    contexts: usize,
) -> Result<Vec<SupportVerdict>, String> {
    (0..count)
        .map(|i| take_item(items, 's', i)?.into_verdict(contexts))
        .collect()
}

/// One statement's support verdict in a schema, with the number of its supporting context
/// (0 for none).
pub(crate) fn support_item(contexts: usize) -> Value {
    object([
        ("reason", reason()),
        (
            "supporting_context",
            json!({"type": "integer", "minimum": 0, "maximum": contexts}),
        ),
        ("verdict", json!({"type": "string", "enum": SUPPORT_LABELS})),
    ])
}

impl LlmTask for SupportVerdicts {
    const KIND: TaskKind = TaskKind::SupportVerdicts;
    const PACK: PackFiles = pack_files!("support_verdicts");
    type Raw = SupportRaw;
    type Output = Vec<SupportVerdict>;
    fn schema(shape: Shape) -> Value {
        let mut item = support_item(shape.contexts);
        if shape.turns > 0 {
            item = history::with_turn(item, shape.turns);
        }
        with_defs(
            object([("verdicts", keyed(&keys('s', shape.items), "support"))]),
            [("support", item)],
        )
    }
    fn deciding_text(&self) -> &str {
        self.statements.first().map_or("", String::as_str)
    }
    fn parts(&self) -> Vec<Part<'_>> {
        let mut parts = vec![
            Part::Items {
                slot: "contexts",
                label: "context",
                key: None,
                items: &self.contexts,
            },
            Part::Items {
                slot: "statements",
                label: "statement",
                key: Some('s'),
                items: &self.statements,
            },
        ];
        parts.extend(count_and_keys(
            self.contexts.len(),
            's',
            self.statements.len(),
        ));
        parts
    }
    fn shape(&self) -> Shape {
        Shape {
            items: self.statements.len(),
            contexts: self.contexts.len(),
            turns: history::last_turn(&self.history),
            ..Shape::default()
        }
    }
    fn template_parts(&self) -> Vec<&'static str> {
        if self.history.is_empty() {
            return Vec::new();
        }
        history::PARTS.to_vec()
    }
    fn pack_parts(&self, lang: Lang) -> Vec<Part<'_>> {
        if self.history.is_empty() {
            return Vec::new();
        }
        vec![
            Part::Owned {
                slot: "conversation",
                label: "conversation",
                text: history::render(&self.history, lang),
            },
            Part::Plain {
                slot: "turns",
                value: history::last_turn(&self.history).to_string(),
            },
        ]
    }
    fn convert(&self, mut raw: SupportRaw) -> Result<Vec<SupportVerdict>, String> {
        let turns = history::last_turn(&self.history);
        (0..self.statements.len())
            .map(|i| {
                let item = take_item(&mut raw.verdicts, 's', i)?;
                let turn = match item.supporting_turn {
                    0 => None,
                    n if n <= turns => Some(n),
                    n => return Err(format!("supporting turn {n} does not exist")),
                };
                let mut verdict = item.into_verdict(self.contexts.len())?;
                // A turn counts only for a statement the contexts do not back.
                if verdict.context.is_none() && verdict.support.is_supported() {
                    verdict.turn = turn;
                }
                Ok(verdict)
            })
            .collect()
    }
}

impl TypedTask for SupportVerdicts {
    const FAMILY: TaskFamily = TaskFamily::Verdict;
    const SWEPT: Option<ByScript> = Some(SUPPORT_FULL);

    fn heuristic_info(_: &Heuristic) -> Option<HeuristicInfo> {
        let threshold = heuristic::threshold;
        Some(heuristic::rule(
            "content_word_overlap",
            vec![
                threshold("support_full.en", SUPPORT_FULL.en),
                threshold("support_full.zh", SUPPORT_FULL.zh),
                threshold("support_partial", SUPPORT_PARTIAL),
                threshold(
                    "support_degree_number_weight.en",
                    SUPPORT_DEGREE.en.number_weight,
                ),
                threshold(
                    "support_degree_number_weight.zh",
                    SUPPORT_DEGREE.zh.number_weight,
                ),
            ],
        ))
    }

    /// No statements → no verdicts; no contexts and no conversation → every statement not
    /// supported.
    fn by_rule(&self) -> Result<Option<Judged<Vec<SupportVerdict>>>, TaskError> {
        if self.statements.is_empty() {
            return Ok(Some(Judged::by_rule(Vec::new(), "no statements to check")));
        }
        if self.contexts.iter().all(|c| c.trim().is_empty()) && self.history.is_empty() {
            let reason = match self.premise {
                Premise::Contexts => "there is no context to support it".to_string(),
                premise => format!("{} is empty", premise.noun()),
            };
            let verdicts = self
                .statements
                .iter()
                .map(|_| SupportVerdict::unsupported_by_rule(reason.clone()))
                .collect();
            return Ok(Some(Judged::by_rule(
                verdicts,
                "no context supports anything",
            )));
        }
        Ok(None)
    }

    async fn by_heuristic(
        &self,
        heuristic: &Heuristic,
    ) -> Result<Judged<Vec<SupportVerdict>>, TaskError> {
        Ok(heuristic.support_verdicts(self))
    }

    async fn by_checker(
        &self,
        router: &TaskJudge,
    ) -> Result<Judged<Vec<SupportVerdict>>, TaskError> {
        router.support_by_checker(self).await
    }
}

impl Heuristic {
    /// See [`SUPPORT_FULL`], [`SUPPORT_PARTIAL`] and [`SUPPORT_DEGREE`].
    pub fn support_verdicts(&self, task: &SupportVerdicts) -> Judged<Vec<SupportVerdict>> {
        let contexts: Vec<Material> = task.contexts.iter().map(|c| Material::new(c)).collect();
        let mut verdicts: Vec<SupportVerdict> = task
            .statements
            .iter()
            .map(|s| support(s, &contexts, task.premise))
            .collect();
        if !task.history.is_empty() {
            verdicts = history::heuristic(&task.statements, verdicts, &task.history);
        }
        self.judged(TaskKind::SupportVerdicts, verdicts, false)
    }
}

impl TaskJudge {
    /// [`SupportVerdicts`]: no statements → no verdicts; no contexts → every statement not
    /// supported (no call).
    pub async fn support_verdicts(
        &self,
        task: &SupportVerdicts,
    ) -> Result<Judged<Vec<SupportVerdict>>, TaskError> {
        self.ask(task).await
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
fn support(statement: &str, contexts: &[Material], premise: Premise) -> SupportVerdict {
    let verdict = |support, context, reason: String, score| SupportVerdict {
        support,
        context,
        reason,
        score,
        turn: None,
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
    let numbers_note = words.missing_numbers(coverage.missing_numbers());
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
}
