//! The LLM implementation of [`JudgeRubric`]: the `custom_rubric` template with the rubric's
//! criterion, scale, examples and the fields it reads; the rubric's hash in the template id.

use rageval_judge::TemplateId;
use serde::Deserialize;

use super::{LlmTask, Part, text};
use crate::prompt::Lang;
use crate::rubric::{JudgeRubric, RubricField, RubricGrade, RubricScale};
use crate::schema::Shape;
use crate::task::TaskKind;

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
    type Raw = RubricRaw;
    type Output = RubricGrade;

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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::prompt::Fence;
    use crate::prompt::pack::render;
    use crate::rubric::{Rubric, RubricExample};

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
        let fence = Fence::around(super::super::material(&parts));
        let filled = super::super::slots(&fence, &parts);
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
}
