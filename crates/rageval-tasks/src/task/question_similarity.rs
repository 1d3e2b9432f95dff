//! [`QuestionSimilarity`]: is each generated question the same question as the real one?
//! The heuristic judge's rule: embedding cosine at [`SIMILAR_COSINE`] when an embedding model
//! is configured, else content-word Dice overlap at [`SIMILAR_OVERLAP`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{TaskFamily, TaskKind, TypedTask};
use crate::error::TaskError;
use crate::heuristic::words::{Material, content_words, share};
use crate::heuristic::{self, Heuristic, cosine};
use crate::judged::{HeuristicInfo, Judged};
use crate::llm::{LlmTask, Part, key_list, take_item};
use crate::prompt::pack::{PackFiles, pack_files};
use crate::router::TaskJudge;
use crate::schema::{Shape, keyed, keys, object, verdict, with_defs};

/// Is each candidate question the same question as `question`? One call for all candidates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuestionSimilarity {
    /// The real question.
    pub question: String,
    /// Generated questions to compare with it.
    pub candidates: Vec<String>,
}

/// The verdict on one candidate of [`QuestionSimilarity`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimilarityVerdict {
    /// Asks for the same information as the real question.
    pub similar: bool,
    /// Why.
    pub reason: String,
}

/// Two questions are similar when their content-word Dice overlap reaches this.
pub const SIMILAR_OVERLAP: f64 = 0.5;

/// With an embedding model, two questions are similar when their cosine reaches this.
pub const SIMILAR_COSINE: f64 = 0.8;

#[derive(Deserialize)]
pub(crate) struct SimilarityRaw {
    verdicts: BTreeMap<String, SimilarityItem>,
}

#[derive(Deserialize)]
struct SimilarityItem {
    reason: String,
    similar: bool,
}

impl LlmTask for QuestionSimilarity {
    const KIND: TaskKind = TaskKind::QuestionSimilarity;
    const PACK: PackFiles = pack_files!("question_similarity");
    type Raw = SimilarityRaw;
    type Output = Vec<SimilarityVerdict>;
    fn schema(shape: Shape) -> Value {
        with_defs(
            object([("verdicts", keyed(&keys('q', shape.items), "similar"))]),
            [("similar", verdict("similar"))],
        )
    }
    fn deciding_text(&self) -> &str {
        &self.question
    }
    fn parts(&self) -> Vec<Part<'_>> {
        vec![
            Part::Text {
                slot: "question",
                label: "real question",
                text: &self.question,
            },
            Part::Items {
                slot: "candidates",
                label: "candidate",
                key: Some('q'),
                items: &self.candidates,
            },
            Part::Plain {
                slot: "keys",
                value: key_list('q', self.candidates.len()),
            },
        ]
    }
    fn shape(&self) -> Shape {
        Shape {
            items: self.candidates.len(),
            ..Shape::default()
        }
    }
    fn convert(&self, mut raw: SimilarityRaw) -> Result<Vec<SimilarityVerdict>, String> {
        (0..self.candidates.len())
            .map(|i| {
                let item = take_item(&mut raw.verdicts, 'q', i)?;
                Ok(SimilarityVerdict {
                    similar: item.similar,
                    reason: item.reason,
                })
            })
            .collect()
    }
}

impl TypedTask for QuestionSimilarity {
    const FAMILY: TaskFamily = TaskFamily::Verdict;

    fn heuristic_info(heuristic: &Heuristic) -> Option<HeuristicInfo> {
        let threshold = heuristic::threshold;
        Some(match heuristic.embedder_name() {
            Some(model) => HeuristicInfo {
                embedder: Some(model),
                ..heuristic::rule(
                    "embedding_cosine",
                    vec![threshold("similar_cosine", SIMILAR_COSINE)],
                )
            },
            None => heuristic::rule(
                "content_word_overlap",
                vec![threshold("similar_overlap", SIMILAR_OVERLAP)],
            ),
        })
    }

    /// No candidates → no verdicts.
    fn by_rule(&self) -> Result<Option<Judged<Vec<SimilarityVerdict>>>, TaskError> {
        Ok(self
            .candidates
            .is_empty()
            .then(|| Judged::by_rule(Vec::new(), "no candidate questions")))
    }

    async fn by_heuristic(
        &self,
        heuristic: &Heuristic,
    ) -> Result<Judged<Vec<SimilarityVerdict>>, TaskError> {
        heuristic.question_similarity(self).await
    }
}

impl Heuristic {
    /// See [`SIMILAR_COSINE`] (with an embedding model) and [`SIMILAR_OVERLAP`] (without).
    pub async fn question_similarity(
        &self,
        task: &QuestionSimilarity,
    ) -> Result<Judged<Vec<SimilarityVerdict>>, TaskError> {
        let Some(judge) = self.embeddings() else {
            let verdicts = task
                .candidates
                .iter()
                .map(|c| similarity(&task.question, c))
                .collect();
            return Ok(self.judged(TaskKind::QuestionSimilarity, verdicts, false));
        };
        let mut inputs = vec![task.question.clone()];
        inputs.extend(task.candidates.iter().cloned());
        let embedded = judge
            .embed(&inputs)
            .await
            .map_err(|source| TaskError::Judge {
                task: TaskKind::QuestionSimilarity,
                source,
            })?;
        let cached = embedded.cached == inputs.len();
        let question = &embedded.vectors[0];
        let verdicts = embedded.vectors[1..]
            .iter()
            .map(|candidate| {
                similar_at(
                    "embedding cosine",
                    cosine(question, candidate),
                    SIMILAR_COSINE,
                )
            })
            .collect();
        Ok(self.judged(TaskKind::QuestionSimilarity, verdicts, cached))
    }
}

impl TaskJudge {
    /// [`QuestionSimilarity`]: no candidates → no verdicts (no call).
    pub async fn question_similarity(
        &self,
        task: &QuestionSimilarity,
    ) -> Result<Judged<Vec<SimilarityVerdict>>, TaskError> {
        self.ask(task).await
    }
}

/// Dice overlap of the two texts' content words (also tool arguments' rule).
pub(crate) fn dice(a: &str, b: &str) -> f64 {
    let (wa, wb) = (content_words(a), content_words(b));
    let (ma, mb) = (Material::new(a), Material::new(b));
    let hits =
        wa.iter().filter(|w| mb.contains(w)).count() + wb.iter().filter(|w| ma.contains(w)).count();
    share(hits, wa.len() + wb.len())
}

/// Similar when the Dice overlap reaches [`SIMILAR_OVERLAP`].
fn similarity(question: &str, candidate: &str) -> SimilarityVerdict {
    similar_at(
        "content-word overlap (Dice)",
        dice(question, candidate),
        SIMILAR_OVERLAP,
    )
}

/// Similar when `value` of `measure` reaches `threshold`; the reason says both.
fn similar_at(measure: &str, value: f64, threshold: f64) -> SimilarityVerdict {
    let similar = value >= threshold;
    SimilarityVerdict {
        similar,
        reason: format!(
            "{measure} {value:.2} {} {threshold:.2}",
            if similar { "≥" } else { "<" }
        ),
    }
}
