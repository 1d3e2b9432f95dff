//! Rubrics of one's own: a criterion a team writes ("cites the policy number"), judged by
//! the chat model through the `custom_rubric` template like any built-in task.
//!
//! A [`Rubric`] is the definition (name, criterion per prompt pack, the sample fields it
//! reads, the [`RubricScale`], worked examples); [`JudgeRubric`] is one call's input and
//! [`RubricGrade`] its typed answer. The rubric's [`Rubric::hash`] goes into the template id
//! of every call, so a cached answer is replayed only for the very same rubric text. The
//! heuristic judge has no implementation: a free criterion cannot be judged by word
//! overlap, so without a chat model the task is unavailable. Parsing rubrics from files is
//! `rageval-metrics`'s job.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::prompt::Lang;

/// A sample field a rubric shows the judge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RubricField {
    Question,
    Answer,
    Contexts,
    Reference,
}

impl RubricField {
    /// Every field, in the order a prompt shows them.
    pub const ALL: [RubricField; 4] = [
        RubricField::Question,
        RubricField::Contexts,
        RubricField::Answer,
        RubricField::Reference,
    ];

    /// The name used in rubric files and in the template's parts.
    pub fn name(self) -> &'static str {
        match self {
            RubricField::Question => "question",
            RubricField::Answer => "answer",
            RubricField::Contexts => "contexts",
            RubricField::Reference => "reference",
        }
    }

    /// The field called `name`, if any.
    pub fn from_name(name: &str) -> Option<RubricField> {
        RubricField::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// How a rubric grades.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RubricScale {
    /// Pass (1.0) or fail (0.0).
    PassFail,
    /// A whole number from 1 to 5, normalised `(s − 1) / 4` as S1 does.
    OneToFive,
}

impl RubricScale {
    /// The name used in rubric files: `pass_fail`, `1-5`.
    pub fn name(self) -> &'static str {
        match self {
            RubricScale::PassFail => "pass_fail",
            RubricScale::OneToFive => "1-5",
        }
    }

    /// The scale a rubric file names (`pass_fail`, `pass/fail`, `1-5`, `1..5`).
    pub fn from_name(name: &str) -> Option<RubricScale> {
        match name.trim() {
            "pass_fail" | "pass/fail" | "pass-fail" => Some(RubricScale::PassFail),
            "1-5" | "1..5" | "1_to_5" => Some(RubricScale::OneToFive),
            _ => None,
        }
    }

    /// The grade as a score in [0, 1].
    pub fn normalise(self, grade: u8) -> f64 {
        match self {
            RubricScale::PassFail => f64::from(grade.min(1)),
            RubricScale::OneToFive => (f64::from(grade.clamp(1, 5)) - 1.0) / 4.0,
        }
    }
}

/// One worked example shown to the judge: the fields the rubric reads, the grade a person
/// gave, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RubricExample {
    /// Field values, for the fields the rubric reads (others are ignored).
    pub fields: Vec<(RubricField, String)>,
    /// 0/1 for pass/fail, 1–5 for the 1–5 scale.
    pub grade: u8,
    /// Why, when the author said.
    pub reason: Option<String>,
}

/// A rubric metric's definition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rubric {
    /// The metric name (`--metrics NAME`, results, summaries).
    pub name: String,
    /// One line for `rageval metrics`; the criterion's first line when absent.
    pub summary: Option<String>,
    /// The criterion in the English pack.
    pub criterion_en: String,
    /// The criterion in the Chinese pack; the English one when absent.
    pub criterion_zh: Option<String>,
    /// The fields shown to the judge, in [`RubricField::ALL`] order.
    pub reads: Vec<RubricField>,
    pub scale: RubricScale,
    pub examples: Vec<RubricExample>,
}

impl Rubric {
    /// The criterion for the pack `lang`.
    pub fn criterion(&self, lang: Lang) -> &str {
        match lang {
            Lang::Zh => self.criterion_zh.as_deref().unwrap_or(&self.criterion_en),
            Lang::En => &self.criterion_en,
        }
    }

    /// The first 12 hex digits of the SHA-256 of the whole definition: any edit (criterion,
    /// fields, scale, examples, even the name) gives another hash.
    pub fn hash(&self) -> String {
        let canonical = serde_json::to_vec(self).unwrap_or_default();
        let digest = Sha256::digest(&canonical);
        digest.iter().take(6).map(|b| format!("{b:02x}")).collect()
    }

    /// Whether it reads `field`.
    pub fn reads(&self, field: RubricField) -> bool {
        self.reads.contains(&field)
    }
}

/// Grade one sample on a [`Rubric`]. Only the fields the rubric reads are shown; the others
/// may be left empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JudgeRubric {
    pub rubric: Arc<Rubric>,
    pub question: String,
    pub answer: String,
    pub contexts: Vec<String>,
    pub reference: String,
}

/// The answer to [`JudgeRubric`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RubricGrade {
    /// 0 (fail) or 1 (pass) on the pass/fail scale; 1–5 on the 1–5 scale.
    pub grade: u8,
    /// Why.
    pub reason: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rubric() -> Rubric {
        Rubric {
            name: "cites_policy".into(),
            summary: None,
            criterion_en: "The answer cites a policy number.".into(),
            criterion_zh: None,
            reads: vec![RubricField::Answer],
            scale: RubricScale::PassFail,
            examples: Vec::new(),
        }
    }

    #[test]
    fn any_edit_changes_the_hash() {
        let base = rubric();
        let mut edited = rubric();
        edited.criterion_en.push_str(" Quoted exactly.");
        assert_eq!(base.hash(), rubric().hash());
        assert_ne!(base.hash(), edited.hash());
        assert_eq!(base.hash().len(), 12);
    }

    #[test]
    fn scales_normalise_into_the_unit_interval() {
        assert_eq!(RubricScale::PassFail.normalise(1), 1.0);
        assert_eq!(RubricScale::PassFail.normalise(0), 0.0);
        assert_eq!(RubricScale::OneToFive.normalise(1), 0.0);
        assert_eq!(RubricScale::OneToFive.normalise(4), 0.75);
        assert_eq!(
            RubricScale::from_name("pass/fail"),
            Some(RubricScale::PassFail)
        );
    }

    #[test]
    fn the_chinese_criterion_falls_back_to_english() {
        assert_eq!(
            rubric().criterion(Lang::Zh),
            "The answer cites a policy number."
        );
    }
}
