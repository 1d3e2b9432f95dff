//! [`PairwisePreference`]: which of two contexts is better for the question (ranking
//! comparisons); asked in both orders to expose position bias. The heuristic judge's rule:
//! the context holding more of the question's content words wins by more than
//! [`PAIRWISE_MARGIN`]; within it, the more focused one; else a tie.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{TaskFamily, TaskKind, TypedTask};
use crate::error::TaskError;
use crate::heuristic::overlap::focus;
use crate::heuristic::words::{Material, content_words};
use crate::heuristic::{self, ByScript, Heuristic};
use crate::judged::{HeuristicInfo, Judged};
use crate::llm::{LlmTask, Part, text};
use crate::prompt::pack::{PackFiles, pack_files};
use crate::router::TaskJudge;
use crate::schema::{Shape, object, reason};

/// Which of two contexts is better for `question` (ranking comparisons, issue 4). Ask in
/// both orders to expose position bias.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairwisePreference {
    /// The user's question.
    pub question: String,
    /// Context shown first (as "A").
    pub first: String,
    /// Context shown second (as "B").
    pub second: String,
}

/// Which side won a [`PairwisePreference`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Preferred {
    /// [`PairwisePreference::first`].
    First,
    /// [`PairwisePreference::second`].
    Second,
    /// Neither is better.
    Tie,
}

/// The answer to [`PairwisePreference`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Preference {
    /// The winner.
    pub preferred: Preferred,
    /// Why.
    pub reason: String,
}

/// Differences of coverage (or focus) up to this are no preference; by the question's
/// script.
pub const PAIRWISE_MARGIN: ByScript = ByScript { en: 0.2, zh: 0.05 };

#[derive(Deserialize)]
pub(crate) struct PreferenceRaw {
    reason: String,
    winner: String,
}

impl LlmTask for PairwisePreference {
    const KIND: TaskKind = TaskKind::PairwisePreference;
    const PACK: PackFiles = pack_files!("pairwise_preference");
    type Raw = PreferenceRaw;
    type Output = Preference;
    fn schema(_: Shape) -> Value {
        object([
            ("reason", reason()),
            (
                "winner",
                json!({"type": "string", "enum": ["A", "B", "tie"]}),
            ),
        ])
    }
    fn deciding_text(&self) -> &str {
        &self.question
    }
    fn parts(&self) -> Vec<Part<'_>> {
        vec![
            text("question", &self.question),
            Part::Text {
                slot: "first",
                label: "passage A",
                text: &self.first,
            },
            Part::Text {
                slot: "second",
                label: "passage B",
                text: &self.second,
            },
        ]
    }
    fn convert(&self, raw: PreferenceRaw) -> Result<Preference, String> {
        let preferred = match raw.winner.as_str() {
            "A" => Preferred::First,
            "B" => Preferred::Second,
            "tie" => Preferred::Tie,
            other => return Err(format!("winner `{other}` is not A, B or tie")),
        };
        Ok(Preference {
            preferred,
            reason: raw.reason,
        })
    }
}

impl TypedTask for PairwisePreference {
    const FAMILY: TaskFamily = TaskFamily::Verdict;
    const SWEPT: Option<ByScript> = Some(PAIRWISE_MARGIN);

    fn heuristic_info(_: &Heuristic) -> Option<HeuristicInfo> {
        Some(heuristic::rule(
            "content_word_overlap",
            heuristic::by_script("pairwise_margin", PAIRWISE_MARGIN),
        ))
    }

    async fn by_heuristic(&self, heuristic: &Heuristic) -> Result<Judged<Preference>, TaskError> {
        Ok(heuristic.pairwise_preference(self))
    }
}

impl Heuristic {
    /// See [`PAIRWISE_MARGIN`].
    pub fn pairwise_preference(&self, task: &PairwisePreference) -> Judged<Preference> {
        let preference = pairwise(&task.question, &task.first, &task.second);
        self.judged(TaskKind::PairwisePreference, preference, false)
    }
}

impl TaskJudge {
    /// [`PairwisePreference`].
    pub async fn pairwise_preference(
        &self,
        task: &PairwisePreference,
    ) -> Result<Judged<Preference>, TaskError> {
        self.ask(task).await
    }
}

/// The context covering more of the question wins; within [`PAIRWISE_MARGIN`], the more
/// focused one (a larger share of sentences on the question's words); else a tie.
fn pairwise(question: &str, first: &str, second: &str) -> Preference {
    let words = content_words(question);
    let margin = PAIRWISE_MARGIN.for_text(question);
    let (a, b) = (
        Material::new(first).coverage(&words),
        Material::new(second).coverage(&words),
    );
    let pick = |x: f64, y: f64| {
        if x - y > margin {
            Some(Preferred::First)
        } else if y - x > margin {
            Some(Preferred::Second)
        } else {
            None
        }
    };
    if let Some(preferred) = pick(a, b) {
        return Preference {
            preferred,
            reason: format!(
                "the question's content words: {a:.2} appear in A, {b:.2} in B (margin {margin:.2})"
            ),
        };
    }
    let (fa, fb) = (focus(&words, first), focus(&words, second));
    let preferred = pick(fa, fb).unwrap_or(Preferred::Tie);
    Preference {
        preferred,
        reason: format!(
            "the question's content words: {a:.2} appear in A, {b:.2} in B (within {margin:.2}); \
             sentences mentioning them: {fa:.2} of A, {fb:.2} of B"
        ),
    }
}
