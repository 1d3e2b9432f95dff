//! [`ToolArgumentMeaning`]: does each free-text argument of a tool call mean what the
//! expected call's argument means ("capital of France" and "France capital city" as a search
//! query)? One call per paired tool call, for all its free-text arguments. The heuristic
//! judge's rule: content-word Dice overlap (jieba for Chinese) at [`SAME_OVERLAP`], the
//! measure question similarity uses.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::question_similarity::dice;
use super::{TaskFamily, TaskKind, TypedTask};
use crate::error::TaskError;
use crate::heuristic::{self, Heuristic};
use crate::judged::{HeuristicInfo, Judged};
use crate::llm::{LlmTask, Part, key_list, take_item, text};
use crate::prompt::pack::{PackFiles, pack_files};
use crate::router::TaskJudge;
use crate::schema::{Shape, keyed, keys, object, verdict, with_defs};

/// The free-text arguments of one call of `tool`, each with the expected call's value: does
/// the value made mean the same as the expected one? `names`, `expected` and `made` are
/// parallel (argument `i` is `names[i]`); build it with [`ToolArgumentMeaning::new`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolArgumentMeaning {
    /// The tool called.
    pub tool: String,
    /// The arguments' names.
    pub names: Vec<String>,
    /// The expected call's values.
    pub expected: Vec<String>,
    /// The values of the call made.
    pub made: Vec<String>,
}

impl ToolArgumentMeaning {
    /// The task over `arguments`, each `(name, expected value, value made)`.
    pub fn new(
        tool: impl Into<String>,
        arguments: impl IntoIterator<Item = (String, String, String)>,
    ) -> Self {
        let (mut names, mut expected, mut made) = (Vec::new(), Vec::new(), Vec::new());
        for (name, want, got) in arguments {
            names.push(name);
            expected.push(want);
            made.push(got);
        }
        ToolArgumentMeaning {
            tool: tool.into(),
            names,
            expected,
            made,
        }
    }
}

/// The verdict on one argument of [`ToolArgumentMeaning`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArgumentVerdict {
    /// The value made asks the tool for the same thing as the expected value.
    pub same: bool,
    /// Why.
    pub reason: String,
}

/// Two argument values mean the same when their content-word Dice overlap reaches this
/// (question similarity's threshold: an argument of a search tool is a question in short).
pub const SAME_OVERLAP: f64 = 0.5;

/// The key prefix of the arguments (`a1`, `a2`, ...).
const ARGUMENT: char = 'a';

#[derive(Deserialize)]
pub(crate) struct ArgumentsRaw {
    verdicts: std::collections::BTreeMap<String, ArgumentItem>,
}

#[derive(Deserialize)]
struct ArgumentItem {
    reason: String,
    same: bool,
}

impl LlmTask for ToolArgumentMeaning {
    const KIND: TaskKind = TaskKind::ToolArgumentMeaning;
    const PACK: PackFiles = pack_files!("tool_argument_meaning");
    type Raw = ArgumentsRaw;
    type Output = Vec<ArgumentVerdict>;
    fn schema(shape: Shape) -> Value {
        with_defs(
            object([("verdicts", keyed(&keys(ARGUMENT, shape.items), "same"))]),
            [("same", verdict("same"))],
        )
    }
    fn deciding_text(&self) -> &str {
        self.expected.first().unwrap_or(&self.tool)
    }
    fn parts(&self) -> Vec<Part<'_>> {
        let item = |slot, label, items| Part::Items {
            slot,
            label,
            key: Some(ARGUMENT),
            items,
        };
        vec![
            text("tool", &self.tool),
            item("names", "name of", &self.names),
            item("expected", "expected", &self.expected),
            item("made", "made", &self.made),
            Part::Plain {
                slot: "keys",
                value: key_list(ARGUMENT, self.names.len()),
            },
        ]
    }
    fn shape(&self) -> Shape {
        Shape {
            items: self.names.len(),
            ..Shape::default()
        }
    }
    fn convert(&self, mut raw: ArgumentsRaw) -> Result<Vec<ArgumentVerdict>, String> {
        (0..self.names.len())
            .map(|i| {
                let item = take_item(&mut raw.verdicts, ARGUMENT, i)?;
                Ok(ArgumentVerdict {
                    same: item.same,
                    reason: item.reason,
                })
            })
            .collect()
    }
}

impl TypedTask for ToolArgumentMeaning {
    const FAMILY: TaskFamily = TaskFamily::Verdict;

    fn heuristic_info(_: &Heuristic) -> Option<HeuristicInfo> {
        Some(heuristic::rule(
            "content_word_overlap",
            vec![heuristic::threshold("same_overlap", SAME_OVERLAP)],
        ))
    }

    /// No arguments → no verdicts; lists of different lengths cannot be judged.
    fn by_rule(&self) -> Result<Option<Judged<Vec<ArgumentVerdict>>>, TaskError> {
        let n = self.names.len();
        if self.expected.len() != n || self.made.len() != n {
            return Err(TaskError::Unavailable {
                task: Self::KIND,
                why: format!(
                    "{n} argument names for {} expected and {} made values",
                    self.expected.len(),
                    self.made.len()
                ),
            });
        }
        Ok((n == 0).then(|| Judged::by_rule(Vec::new(), "no free-text arguments")))
    }

    async fn by_heuristic(
        &self,
        heuristic: &Heuristic,
    ) -> Result<Judged<Vec<ArgumentVerdict>>, TaskError> {
        Ok(heuristic.tool_argument_meaning(self))
    }
}

impl Heuristic {
    /// See [`SAME_OVERLAP`].
    pub fn tool_argument_meaning(
        &self,
        task: &ToolArgumentMeaning,
    ) -> Judged<Vec<ArgumentVerdict>> {
        let verdicts = task
            .expected
            .iter()
            .zip(&task.made)
            .map(|(expected, made)| {
                let overlap = dice(expected, made);
                let same = overlap >= SAME_OVERLAP;
                ArgumentVerdict {
                    same,
                    reason: format!(
                        "content-word overlap (Dice) {overlap:.2} {} {SAME_OVERLAP:.2}",
                        if same { "≥" } else { "<" }
                    ),
                }
            })
            .collect();
        self.judged(TaskKind::ToolArgumentMeaning, verdicts, false)
    }
}

impl TaskJudge {
    /// [`ToolArgumentMeaning`]: no arguments → no verdicts (no call).
    pub async fn tool_argument_meaning(
        &self,
        task: &ToolArgumentMeaning,
    ) -> Result<Judged<Vec<ArgumentVerdict>>, TaskError> {
        self.ask(task).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(pairs: &[(&str, &str, &str)]) -> ToolArgumentMeaning {
        ToolArgumentMeaning::new(
            "web_search",
            pairs
                .iter()
                .map(|(n, e, m)| (n.to_string(), e.to_string(), m.to_string())),
        )
    }

    /// "capital of France" / "France capital city": content words {capital, france} and
    /// {france, capital, city}, Dice (2 + 2) ÷ (2 + 3) = 0.8 ≥ 0.5 → same; "capital of
    /// France" / "population of Spain": no shared content word, 0 → not.
    #[test]
    fn the_heuristic_finds_reworded_queries_the_same() {
        let verdicts = Heuristic::lexical()
            .tool_argument_meaning(&task(&[
                ("query", "capital of France", "France capital city"),
                ("query2", "capital of France", "population of Spain"),
            ]))
            .value;
        assert_eq!(
            verdicts.iter().map(|v| v.same).collect::<Vec<_>>(),
            [true, false]
        );
        assert!(verdicts[0].reason.contains("0.80 ≥ 0.50"), "{verdicts:?}");
    }

    /// 法国的首都 / 法国首都是哪里: jieba gives 法国, 首都 on both sides → same.
    #[test]
    fn the_heuristic_reads_chinese_by_words() {
        let verdicts = Heuristic::lexical()
            .tool_argument_meaning(&task(&[("query", "法国的首都", "法国首都是哪里")]))
            .value;
        assert!(verdicts[0].same, "{verdicts:?}");
    }

    #[test]
    fn the_schema_asks_one_verdict_per_argument() {
        let t = task(&[("a", "x", "y"), ("b", "x", "y")]);
        let schema = ToolArgumentMeaning::schema(t.shape());
        assert_eq!(
            schema["properties"]["verdicts"]["required"],
            serde_json::json!(["a1", "a2"])
        );
    }

    #[test]
    fn no_arguments_are_answered_by_rule_and_ragged_lists_refused() {
        let empty = task(&[]);
        assert!(matches!(empty.by_rule(), Ok(Some(j)) if j.value.is_empty()));
        let mut ragged = task(&[("a", "x", "y")]);
        ragged.made.clear();
        assert!(ragged.by_rule().is_err());
    }
}
