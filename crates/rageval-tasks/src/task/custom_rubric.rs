//! [`JudgeRubric`]: rubrics of one's own — a criterion a team writes ("cites the policy
//! number"), judged by the chat model through the `custom_rubric` template like any
//! built-in task.
//!
//! A [`Rubric`] is the definition (name, criterion per prompt pack, the sample fields it
//! reads, the [`RubricScale`], worked examples); [`JudgeRubric`] is one call's input and
//! [`RubricGrade`] its typed answer. The call shows the rubric's criterion, scale, examples
//! and the fields it reads; the rubric's [`Rubric::hash`] goes into the template id of every
//! call, so a cached answer is replayed only for the very same rubric text. The heuristic
//! judge has no rule: a free criterion cannot be judged by word overlap, so without a chat
//! model the task is unavailable. Parsing rubrics from files is `rageval-metrics`'s job.

use std::sync::Arc;

use rageval_judge::TemplateId;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{TaskFamily, TaskKind, TypedTask};
use crate::error::TaskError;
use crate::heuristic::Heuristic;
use crate::judged::Judged;
use crate::llm::{LlmTask, Part, text};
use crate::prompt::Lang;
use crate::prompt::pack::{PackFiles, pack_files};
use crate::router::TaskJudge;
use crate::schema::{Shape, integer, object, reason};

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

/// The answer as either scale's schema shapes it.
#[derive(Deserialize)]
pub(crate) struct RubricRaw {
    reason: String,
    #[serde(default)]
    verdict: Option<String>,
    #[serde(default)]
    score: Option<u8>,
}

impl LlmTask for JudgeRubric {
    const KIND: TaskKind = TaskKind::CustomRubric;
    const PACK: PackFiles = pack_files!("custom_rubric");
    type Raw = RubricRaw;
    type Output = RubricGrade;

    /// Either scale's verdict with its reason.
    fn schema(shape: Shape) -> Value {
        if shape.pass_fail {
            object([
                ("reason", reason()),
                (
                    "verdict",
                    json!({"type": "string", "enum": ["pass", "fail"]}),
                ),
            ])
        } else {
            object([("reason", reason()), ("score", integer(1, 5))])
        }
    }

    fn deciding_text(&self) -> &str {
        if self.question.trim().is_empty() {
            &self.answer
        } else {
            &self.question
        }
    }

    fn parts(&self) -> Vec<Part<'_>> {
        let rubric = &self.rubric;
        let mut parts = vec![Part::Plain {
            slot: "examples",
            value: examples(self),
        }];
        for field in RubricField::ALL {
            if !rubric.reads(field) {
                continue;
            }
            parts.push(match field {
                RubricField::Question => text("question", &self.question),
                RubricField::Answer => text("answer", &self.answer),
                RubricField::Reference => text("reference", &self.reference),
                RubricField::Contexts => Part::Items {
                    slot: "contexts",
                    label: "passage",
                    key: None,
                    items: &self.contexts,
                },
            });
        }
        parts
    }

    fn pack_parts(&self, lang: Lang) -> Vec<Part<'_>> {
        vec![Part::Plain {
            slot: "criterion",
            value: self.rubric.criterion(lang).trim().to_owned(),
        }]
    }

    fn shape(&self) -> Shape {
        Shape {
            pass_fail: self.rubric.scale == RubricScale::PassFail,
            ..Shape::default()
        }
    }

    fn template_parts(&self) -> Vec<&'static str> {
        let mut parts = vec![match self.rubric.scale {
            RubricScale::PassFail => "pass_fail",
            RubricScale::OneToFive => "one_to_five",
        }];
        if !self.rubric.examples.is_empty() {
            parts.push("examples");
        }
        parts.extend(
            RubricField::ALL
                .into_iter()
                .filter(|field| self.rubric.reads(*field))
                .map(RubricField::name),
        );
        parts
    }

    fn template_id(&self, template: TemplateId) -> TemplateId {
        TemplateId::new(
            format!(
                "{}:{}#{}",
                template.id,
                self.rubric.name,
                self.rubric.hash()
            ),
            template.version,
        )
    }

    fn convert(&self, raw: RubricRaw) -> Result<RubricGrade, String> {
        let grade = match self.rubric.scale {
            RubricScale::PassFail => match raw.verdict.as_deref() {
                Some("pass") => 1,
                Some("fail") => 0,
                other => return Err(format!("verdict {other:?} is neither pass nor fail")),
            },
            RubricScale::OneToFive => match raw.score {
                Some(score @ 1..=5) => score,
                other => return Err(format!("score {other:?} is not from 1 to 5")),
            },
        };
        Ok(RubricGrade {
            grade,
            reason: raw.reason,
        })
    }
}

/// The rubric's examples as the prompt shows them: the fields it reads, then the grade.
fn examples(task: &JudgeRubric) -> String {
    let rubric = &task.rubric;
    let mut blocks = Vec::new();
    for (number, example) in rubric.examples.iter().enumerate() {
        let mut lines = vec![format!("Example {}:", number + 1)];
        for field in RubricField::ALL {
            if !rubric.reads(field) {
                continue;
            }
            if let Some((_, value)) = example.fields.iter().find(|(f, _)| *f == field) {
                lines.push(format!("{}: {}", field.name(), value.trim()));
            }
        }
        let grade = match rubric.scale {
            RubricScale::PassFail if example.grade >= 1 => "verdict: pass".to_owned(),
            RubricScale::PassFail => "verdict: fail".to_owned(),
            RubricScale::OneToFive => format!("score: {}", example.grade),
        };
        lines.push(grade);
        if let Some(reason) = &example.reason {
            lines.push(format!("reason: {}", reason.trim()));
        }
        blocks.push(lines.join("\n"));
    }
    blocks.join("\n\n")
}

impl TypedTask for JudgeRubric {
    const FAMILY: TaskFamily = TaskFamily::Verdict;

    async fn by_heuristic(&self, heuristic: &Heuristic) -> Result<Judged<RubricGrade>, TaskError> {
        let _ = heuristic;
        Err(TaskError::Unavailable {
            task: TaskKind::CustomRubric,
            why: "a rubric of one's own needs a chat model; the heuristic judge cannot read \
                  a free criterion"
                .into(),
        })
    }
}

impl TaskJudge {
    /// [`JudgeRubric`]: the chat model only; the heuristic judge cannot read a free
    /// criterion, so without a chat model the rubric is unavailable (never guessed).
    pub async fn judge_rubric(&self, task: &JudgeRubric) -> Result<Judged<RubricGrade>, TaskError> {
        self.ask(task).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{material, slots};
    use crate::prompt::Fence;
    use crate::prompt::pack::render;

    fn task(scale: RubricScale) -> JudgeRubric {
        JudgeRubric {
            rubric: Arc::new(Rubric {
                name: "cites_policy".into(),
                summary: None,
                criterion_en: "The answer cites the policy number.".into(),
                criterion_zh: Some("回答引用了政策编号。".into()),
                reads: vec![RubricField::Question, RubricField::Answer],
                scale,
                examples: vec![RubricExample {
                    fields: vec![(RubricField::Answer, "See policy 7.".into())],
                    grade: 1,
                    reason: Some("names policy 7".into()),
                }],
            }),
            question: "Can I get a refund?".into(),
            answer: "Yes, within 30 days.".into(),
            contexts: vec!["never shown".into()],
            reference: String::new(),
        }
    }

    fn rendered(task: &JudgeRubric, lang: Lang) -> String {
        let mut parts = task.parts();
        parts.extend(task.pack_parts(lang));
        let fence = Fence::around(material(&parts));
        let filled = slots(&fence, &parts);
        let call = render(
            TaskKind::CustomRubric,
            lang,
            &fence,
            &filled,
            &task.template_parts(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        call.messages
            .iter()
            .map(|m| m.content.clone())
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn the_prompt_shows_the_criterion_and_only_the_fields_read() {
        let task = task(RubricScale::PassFail);
        let en = rendered(&task, Lang::En);
        assert!(en.contains("The answer cites the policy number."), "{en}");
        assert!(en.contains("Can I get a refund?") && en.contains("within 30 days"));
        assert!(!en.contains("never shown"), "{en}");
        assert!(en.contains("verdict: pass") && en.contains("\"pass\" or \"fail\""));
        assert!(rendered(&task, Lang::Zh).contains("回答引用了政策编号。"));
    }

    #[test]
    fn the_template_id_carries_the_rubric_hash() {
        let task = task(RubricScale::OneToFive);
        let id = task.template_id(TemplateId::new("custom_rubric.en", 1));
        assert_eq!(
            id.id,
            format!("custom_rubric.en:cites_policy#{}", task.rubric.hash())
        );
        let raw = RubricRaw {
            reason: "r".into(),
            verdict: None,
            score: Some(6),
        };
        assert!(task.convert(raw).is_err());
    }

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
