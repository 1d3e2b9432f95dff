//! [`OrderContexts`]: several contexts put in order of usefulness for the question
//! (listwise ranking), shown as passages `p1`, `p2`, …; the answer must be a permutation of
//! exactly those. The heuristic judge sorts by the question's content words each holds, then
//! by focus: the listwise counterpart of
//! [`PairwisePreference`](super::PairwisePreference)'s rule, without its margin (a margin
//! does not sort: it is not transitive).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{TaskFamily, TaskKind, TypedTask};
use crate::error::TaskError;
use crate::heuristic::overlap::focus;
use crate::heuristic::words::{Material, content_words};
use crate::heuristic::{self, Heuristic};
use crate::judged::{HeuristicInfo, Judged};
use crate::llm::{LlmTask, PASSAGE, Part, keyed_passages};
use crate::prompt::pack::{PackFiles, pack_files};
use crate::router::TaskJudge;
use crate::schema::{Shape, item_key, keys, object, reason};

/// Order several contexts by how useful they are for `question`, most useful first (listwise
/// ranking, issue 4). The contexts are shown as passages `p1`, `p2`, …; the answer must be a
/// permutation of exactly those. Answered with the 0-based indices into
/// [`OrderContexts::contexts`], best first. Ask each list in two orders to expose position
/// bias.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderContexts {
    /// The user's question.
    pub question: String,
    /// The contexts, in the order shown.
    pub contexts: Vec<String>,
}

/// The answer to [`OrderContexts`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextOrder {
    /// 0-based indices into [`OrderContexts::contexts`], each once, most useful first.
    pub order: Vec<usize>,
    /// Why.
    pub reason: String,
}

#[derive(Deserialize)]
pub(crate) struct OrderRaw {
    order: Vec<String>,
    reason: String,
}

impl LlmTask for OrderContexts {
    const KIND: TaskKind = TaskKind::OrderContexts;
    const PACK: PackFiles = pack_files!("order_contexts");
    type Raw = OrderRaw;
    type Output = ContextOrder;
    /// The permutation as a list of the shown keys, exactly as many as shown. Whether each
    /// key appears once is checked on conversion: `uniqueItems` is not in every provider's
    /// structured-output subset.
    fn schema(shape: Shape) -> Value {
        object([
            ("reason", reason()),
            (
                "order",
                json!({
                    "type": "array",
                    "items": {"type": "string", "enum": keys(PASSAGE, shape.items)},
                    "minItems": shape.items,
                    "maxItems": shape.items,
                }),
            ),
        ])
    }
    fn deciding_text(&self) -> &str {
        &self.question
    }
    fn parts(&self) -> Vec<Part<'_>> {
        keyed_passages(&self.question, &self.contexts)
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

impl TypedTask for OrderContexts {
    const FAMILY: TaskFamily = TaskFamily::Verdict;

    fn heuristic_info(_: &Heuristic) -> Option<HeuristicInfo> {
        Some(heuristic::rule("content_word_overlap", vec![]))
    }

    /// Fewer than two contexts are their own order.
    fn by_rule(&self) -> Result<Option<Judged<ContextOrder>>, TaskError> {
        if self.contexts.len() >= 2 {
            return Ok(None);
        }
        let order = ContextOrder {
            order: (0..self.contexts.len()).collect(),
            reason: "fewer than two contexts have one order".into(),
        };
        Ok(Some(Judged::by_rule(order, "fewer than two contexts")))
    }

    async fn by_heuristic(&self, heuristic: &Heuristic) -> Result<Judged<ContextOrder>, TaskError> {
        Ok(heuristic.order_contexts(self))
    }
}

impl Heuristic {
    /// The contexts by the question's content words they hold, then by focus (the measure
    /// [`Heuristic::pairwise_preference`] compares, without its margin).
    pub fn order_contexts(&self, task: &OrderContexts) -> Judged<ContextOrder> {
        let order = order(&task.question, &task.contexts);
        self.judged(TaskKind::OrderContexts, order, false)
    }
}

impl TaskJudge {
    /// [`OrderContexts`]: fewer than two contexts are their own order (no call).
    pub async fn order_contexts(
        &self,
        task: &OrderContexts,
    ) -> Result<Judged<ContextOrder>, TaskError> {
        self.ask(task).await
    }
}

/// The contexts sorted by the share of the question's content words each holds, then by
/// focus (the share of its sentences mentioning them), most first; equal keys keep the shown
/// order.
fn order(question: &str, contexts: &[String]) -> ContextOrder {
    let words = content_words(question);
    let keys: Vec<(f64, f64)> = contexts
        .iter()
        .map(|c| (Material::new(c).coverage(&words), focus(&words, c)))
        .collect();
    let mut order: Vec<usize> = (0..contexts.len()).collect();
    order.sort_by(|&x, &y| {
        keys[y]
            .0
            .total_cmp(&keys[x].0)
            .then(keys[y].1.total_cmp(&keys[x].1))
    });
    let shares: Vec<String> = order
        .iter()
        .map(|&i| format!("p{} {:.2}", i + 1, keys[i].0))
        .collect();
    ContextOrder {
        order,
        reason: format!(
            "sorted by the share of the question's content words each passage holds ({}), \
             then by the share of its sentences that mention them",
            shares.join(", ")
        ),
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
}
