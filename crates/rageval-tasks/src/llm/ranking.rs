//! The ranking tasks' LLM side (issue 4): one context graded, two compared, several graded
//! in one call, several put in order. The per-passage answers are checked strictly: every
//! shown passage answered once and nothing else, or the call fails (a judge that returns
//! garbage is bad input, never a verdict).

use std::collections::BTreeMap;

use serde::Deserialize;

use super::{LlmTask, Part, key_list, take_item, text};
use crate::schema::{Shape, item_key};
use crate::task::{
    ContextOrder, GradeRelevance, GradeRelevanceBatch, OrderContexts, PairwisePreference,
    Preference, Preferred, RelevanceGrade, TaskKind,
};

/// The key prefix of the passages of a list call (`p1`, `p2`, ...).
const PASSAGE: char = 'p';

#[derive(Deserialize)]
pub(crate) struct GradeRaw {
    reason: String,
    relevance: u8,
}

impl LlmTask for GradeRelevance {
    const KIND: TaskKind = TaskKind::GradeRelevance;
    type Raw = GradeRaw;
    type Output = RelevanceGrade;
    fn deciding_text(&self) -> &str {
        &self.question
    }
    fn parts(&self) -> Vec<Part<'_>> {
        vec![
            text("question", &self.question),
            text("context", &self.context),
        ]
    }
    fn convert(&self, raw: GradeRaw) -> Result<RelevanceGrade, String> {
        Ok(RelevanceGrade {
            grade: raw.relevance,
            reason: raw.reason,
        })
    }
}

#[derive(Deserialize)]
pub(crate) struct PreferenceRaw {
    reason: String,
    winner: String,
}

impl LlmTask for PairwisePreference {
    const KIND: TaskKind = TaskKind::PairwisePreference;
    type Raw = PreferenceRaw;
    type Output = Preference;
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

/// The slots of a call over `contexts` shown as keyed passages.
fn passages<'a>(question: &'a str, contexts: &'a [String]) -> Vec<Part<'a>> {
    vec![
        text("question", question),
        Part::Items {
            slot: "contexts",
            label: "passage",
            key: Some(PASSAGE),
            items: contexts,
        },
        Part::Plain {
            slot: "keys",
            value: key_list(PASSAGE, contexts.len()),
        },
        Part::Plain {
            slot: "count",
            value: contexts.len().to_string(),
        },
    ]
}

#[derive(Deserialize)]
pub(crate) struct GradesRaw {
    grades: BTreeMap<String, GradeRaw>,
}

impl LlmTask for GradeRelevanceBatch {
    const KIND: TaskKind = TaskKind::GradeRelevanceBatch;
    type Raw = GradesRaw;
    type Output = Vec<RelevanceGrade>;
    fn deciding_text(&self) -> &str {
        &self.question
    }
    fn parts(&self) -> Vec<Part<'_>> {
        passages(&self.question, &self.contexts)
    }
    fn shape(&self) -> Shape {
        Shape {
            items: self.contexts.len(),
            ..Shape::default()
        }
    }
    fn convert(&self, mut raw: GradesRaw) -> Result<Vec<RelevanceGrade>, String> {
        let grades = (0..self.contexts.len())
            .map(|i| {
                let key = item_key(PASSAGE, i);
                let raw = take_item(&mut raw.grades, PASSAGE, i)?;
                if raw.relevance > 3 {
                    return Err(format!("`{key}` got grade {}, not 0-3", raw.relevance));
                }
                Ok(RelevanceGrade {
                    grade: raw.relevance,
                    reason: raw.reason,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        match raw.grades.keys().next() {
            Some(extra) => Err(format!("the answer grades `{extra}`, which was not shown")),
            None => Ok(grades),
        }
    }
}

#[derive(Deserialize)]
pub(crate) struct OrderRaw {
    order: Vec<String>,
    reason: String,
}

impl LlmTask for OrderContexts {
    const KIND: TaskKind = TaskKind::OrderContexts;
    type Raw = OrderRaw;
    type Output = ContextOrder;
    fn deciding_text(&self) -> &str {
        &self.question
    }
    fn parts(&self) -> Vec<Part<'_>> {
        passages(&self.question, &self.contexts)
    }
    fn shape(&self) -> Shape {
        Shape {
            items: self.contexts.len(),
            ..Shape::default()
        }
    }
    fn convert(&self, raw: OrderRaw) -> Result<ContextOrder, String> {
        let shown = self.contexts.len();
        let mut seen = vec![false; shown];
        let mut order = Vec::with_capacity(shown);
        for key in &raw.order {
            let index = key
                .strip_prefix(PASSAGE)
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|&n| (1..=shown).contains(&n))
                .map(|n| n - 1)
                .ok_or_else(|| format!("the order names `{key}`, which was not shown"))?;
            if std::mem::replace(&mut seen[index], true) {
                return Err(format!("the order names `{key}` twice"));
            }
            order.push(index);
        }
        if let Some(missing) = seen.iter().position(|&s| !s) {
            return Err(format!(
                "the order leaves out `{}`",
                item_key(PASSAGE, missing)
            ));
        }
        Ok(ContextOrder {
            order,
            reason: raw.reason,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order_of(keys: &[&str], shown: usize) -> Result<Vec<usize>, String> {
        let task = OrderContexts {
            question: "q".into(),
            contexts: (0..shown).map(|i| format!("c{i}")).collect(),
        };
        let raw = OrderRaw {
            order: keys.iter().map(|k| (*k).to_owned()).collect(),
            reason: "r".into(),
        };
        task.convert(raw).map(|o| o.order)
    }

    #[test]
    fn an_order_must_be_a_permutation_of_exactly_the_shown_keys() {
        assert_eq!(order_of(&["p3", "p1", "p2"], 3), Ok(vec![2, 0, 1]));
        assert!(order_of(&["p3", "p3", "p2"], 3).is_err_and(|e| e.contains("twice")));
        assert!(order_of(&["p3", "p1"], 3).is_err_and(|e| e.contains("leaves out `p2`")));
        assert!(order_of(&["p4", "p1", "p2"], 3).is_err_and(|e| e.contains("`p4`")));
        assert!(order_of(&["1", "p1", "p2"], 3).is_err());
        assert!(order_of(&["p0", "p1", "p2"], 3).is_err());
    }

    #[test]
    fn batch_grades_must_cover_every_shown_passage_and_nothing_else() {
        let task = GradeRelevanceBatch {
            question: "q".into(),
            contexts: vec!["a".into(), "b".into()],
        };
        let raw = |pairs: &[(&str, u8)]| GradesRaw {
            grades: pairs
                .iter()
                .map(|&(k, g)| {
                    let grade = GradeRaw {
                        reason: "r".into(),
                        relevance: g,
                    };
                    (k.to_owned(), grade)
                })
                .collect(),
        };
        let grades = task.convert(raw(&[("p2", 0), ("p1", 3)]));
        assert_eq!(
            grades.map(|g| g.iter().map(|g| g.grade).collect::<Vec<_>>()),
            Ok(vec![3, 0])
        );
        assert!(task.convert(raw(&[("p1", 3)])).is_err());
        assert!(
            task.convert(raw(&[("p1", 3), ("p2", 1), ("p3", 1)]))
                .is_err()
        );
        assert!(task.convert(raw(&[("p1", 4), ("p2", 1)])).is_err());
    }
}
