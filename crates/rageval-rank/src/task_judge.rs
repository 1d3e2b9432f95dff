//! The typed judge tasks of `rageval-tasks` behind this crate's traits: [`TaskJudge`] grades
//! ([`GradeRelevance`], several at once with [`GradeRelevanceBatch`]), compares
//! ([`PairwisePreference`]), orders windows ([`OrderContexts`]), answers from contexts
//! ([`AnswerFromContexts`]) and merges ([`MergeAnswers`]), so every call of a ranking or a
//! reference goes through the router and, for a chat model, the judge pipeline (cache,
//! limiter, retries, structured output).
//!
//! Prompt sizes for the window are counted in the judge model's tokenizer
//! (`rageval_judge::tokens`): the task's templates in the larger of its two packs, its output
//! schema, the fences around every input and the data rule, plus the inputs themselves (and,
//! for the list tasks, each passage's key in the schema and the key lists of the
//! instructions). The templates are counted with their `{{slot}}` markers, so the count is a
//! little above what is sent, never below it by design.

use rageval_judge::ChatModel;
use rageval_judge::tokens::count_tokens;
use rageval_tasks::prompt::pack;
use rageval_tasks::schema::{Shape, output_schema};
use rageval_tasks::{
    AnswerFromContexts, GradeRelevance, GradeRelevanceBatch, Lang, MergeAnswers, OrderContexts,
    PairwisePreference, Preferred, TaskJudge, TaskKind,
};

use crate::judges::{
    Answerer, BatchGrader, CallError, Comparator, ContextAnswer, Grade, GradeOutOfRange, Grader,
    ListCall, ListOrderer, Preference, PromptSize,
};

/// Tokens of the data rule (the system paragraph about fenced material) and the chat framing
/// of two messages, allowed once per prompt.
pub const RULE_AND_FRAMING_TOKENS: usize = 320;
/// Tokens of one input's fence (opening tag with its label, closing tag, blank line).
pub const FENCE_TOKENS_PER_INPUT: usize = 32;
/// Tokens one passage of a list task adds besides its fenced text: its key in the output
/// schema (a `$ref` for a batch, an enum entry for an order) and in the instructions' key
/// list.
pub const LIST_KEY_TOKENS: usize = 16;

fn grade_of(value: u8) -> Result<Grade, CallError> {
    Ok(Grade::try_from(value)
        .map_err(|GradeOutOfRange(v)| format!("the judge gave grade {v}, not 0-3"))?)
}

impl Grader for TaskJudge {
    async fn grade(&self, question: &str, context: &str) -> Result<Grade, CallError> {
        let task = GradeRelevance {
            question: question.to_owned(),
            context: context.to_owned(),
        };
        grade_of(self.grade_relevance(&task).await?.value.grade)
    }
}

impl BatchGrader for TaskJudge {
    async fn grade_batch(
        &self,
        question: &str,
        contexts: &[&str],
    ) -> Result<Vec<Grade>, CallError> {
        let task = GradeRelevanceBatch {
            question: question.to_owned(),
            contexts: contexts.iter().map(|c| (*c).to_owned()).collect(),
        };
        let judged = self.grade_relevance_batch(&task).await?;
        judged.value.iter().map(|g| grade_of(g.grade)).collect()
    }
}

impl ListOrderer for TaskJudge {
    async fn order(&self, question: &str, contexts: &[&str]) -> Result<Vec<usize>, CallError> {
        let task = OrderContexts {
            question: question.to_owned(),
            contexts: contexts.iter().map(|c| (*c).to_owned()).collect(),
        };
        Ok(self.order_contexts(&task).await?.value.order)
    }
}

impl PromptSize for TaskJudge {
    fn fixed_prompt_tokens(&self, call: ListCall, question: &str) -> usize {
        let task = match call {
            ListCall::GradeBatch => TaskKind::GradeRelevanceBatch,
            ListCall::Order => TaskKind::OrderContexts,
        };
        let model = model_of(self);
        overhead(&model, task)
            .saturating_add(tokens(&model, question))
            .saturating_add(FENCE_TOKENS_PER_INPUT)
    }

    fn context_prompt_tokens(&self, context: &str) -> usize {
        tokens(&model_of(self), context)
            .saturating_add(FENCE_TOKENS_PER_INPUT)
            .saturating_add(LIST_KEY_TOKENS)
    }
}

/// The chat model's name, empty when there is none (its prompts are then counted in
/// `o200k_base`).
fn model_of(judge: &TaskJudge) -> String {
    judge
        .llm()
        .map(|llm| llm.model().model().to_owned())
        .unwrap_or_default()
}

/// Tokens of `text` in `model`'s tokenizer.
fn tokens(model: &str, text: &str) -> usize {
    usize::try_from(count_tokens(model, text)).unwrap_or(usize::MAX)
}

impl Comparator for TaskJudge {
    async fn compare(
        &self,
        question: &str,
        first: &str,
        second: &str,
    ) -> Result<Preference, CallError> {
        let task = PairwisePreference {
            question: question.to_owned(),
            first: first.to_owned(),
            second: second.to_owned(),
        };
        let judged = self.pairwise_preference(&task).await?;
        Ok(match judged.value.preferred {
            Preferred::First => Preference::First,
            Preferred::Second => Preference::Second,
            Preferred::Tie => Preference::Tie,
        })
    }
}

/// A [`TaskJudge`] as the reference planner's [`Answerer`], with the fixed part of each
/// prompt counted once.
#[derive(Debug, Clone)]
pub struct TaskAnswerer {
    judge: TaskJudge,
    model: String,
    answer_overhead: usize,
    merge_overhead: usize,
}

impl TaskAnswerer {
    /// Wraps `judge`; prompt sizes are counted in its chat model's tokenizer (tiktoken's
    /// `o200k_base` when it has none or the model is not an OpenAI one).
    pub fn new(judge: TaskJudge) -> Self {
        let model = model_of(&judge);
        let answer_overhead = overhead(&model, TaskKind::AnswerFromContexts);
        let merge_overhead = overhead(&model, TaskKind::MergeAnswers);
        TaskAnswerer {
            judge,
            model,
            answer_overhead,
            merge_overhead,
        }
    }

    /// The wrapped judge.
    pub fn judge(&self) -> &TaskJudge {
        &self.judge
    }

    fn inputs_tokens(&self, question: &str, inputs: &[&str]) -> usize {
        let material: usize = inputs
            .iter()
            .map(|text| tokens(&self.model, text).saturating_add(FENCE_TOKENS_PER_INPUT))
            .fold(0, usize::saturating_add);
        material
            .saturating_add(tokens(&self.model, question))
            .saturating_add(FENCE_TOKENS_PER_INPUT)
    }
}

/// Templates (the larger pack), schema, data rule and framing of `task`, in tokens.
fn overhead(model: &str, task: TaskKind) -> usize {
    let templates = Lang::ALL
        .into_iter()
        .filter_map(|lang| pack::template(task, lang).ok())
        .map(|t| count_tokens(model, &t.system) + count_tokens(model, &t.user))
        .max()
        .unwrap_or(0);
    let schema = count_tokens(model, &output_schema(task, Shape::default()).to_string());
    usize::try_from(templates + schema)
        .unwrap_or(usize::MAX)
        .saturating_add(RULE_AND_FRAMING_TOKENS)
}

impl Answerer for TaskAnswerer {
    fn answer_prompt_tokens(&self, question: &str, contexts: &[&str]) -> usize {
        self.answer_overhead
            .saturating_add(self.inputs_tokens(question, contexts))
    }

    fn merge_prompt_tokens(&self, question: &str, answers: &[&str]) -> usize {
        self.merge_overhead
            .saturating_add(self.inputs_tokens(question, answers))
    }

    async fn answer(&self, question: &str, contexts: &[&str]) -> Result<ContextAnswer, CallError> {
        let task = AnswerFromContexts {
            question: question.to_owned(),
            contexts: contexts.iter().map(|c| (*c).to_owned()).collect(),
        };
        let judged = self.judge.answer_from_contexts(&task).await?;
        Ok(match judged.value.answer {
            Some(answer) if !answer.trim().is_empty() => ContextAnswer::Answer(answer),
            _ => ContextAnswer::Unknown,
        })
    }

    async fn merge(&self, question: &str, answers: &[&str]) -> Result<String, CallError> {
        let task = MergeAnswers {
            question: question.to_owned(),
            answers: answers.iter().map(|a| (*a).to_owned()).collect(),
        };
        Ok(self.judge.merge_answers(&task).await?.value)
    }
}

#[cfg(test)]
mod tests {
    use rageval_tasks::{Heuristic, Policy};

    use super::*;

    fn offline() -> TaskJudge {
        TaskJudge::new(Policy::offline()).with_heuristic(Heuristic::lexical())
    }

    #[tokio::test]
    async fn the_offline_judge_grades_and_compares_through_the_router() {
        let judge = offline();
        let question = "What is the capital city of France?";
        let good = "Paris is the capital city of France.";
        let off = "Bananas are a yellow fruit grown in the tropics.";
        let high = judge.grade(question, good).await.unwrap();
        let low = judge.grade(question, off).await.unwrap();
        assert!(high > low, "{high} vs {low}");
        assert_eq!(
            judge.compare(question, good, off).await.unwrap(),
            Preference::First
        );
        assert_eq!(
            judge.compare(question, off, good).await.unwrap(),
            Preference::Second
        );
    }

    #[tokio::test]
    async fn the_offline_judge_grades_batches_and_orders_windows() {
        let judge = offline();
        let question = "What is the capital city of France?";
        let good = "Paris is the capital city of France.";
        let off = "Bananas are a yellow fruit grown in the tropics.";
        let grades = judge.grade_batch(question, &[good, off]).await.unwrap();
        assert_eq!(grades.len(), 2);
        assert!(grades[0] > grades[1], "{grades:?}");
        assert_eq!(judge.order(question, &[off, good]).await.unwrap(), [1, 0]);
        assert_eq!(judge.order(question, &[good, off]).await.unwrap(), [0, 1]);
    }

    #[test]
    fn list_prompt_sizes_hold_the_templates_and_grow_with_every_context() {
        let judge = offline();
        for call in [ListCall::GradeBatch, ListCall::Order] {
            let fixed = judge.fixed_prompt_tokens(call, "q");
            assert!(fixed > RULE_AND_FRAMING_TOKENS + 50, "{call:?}: {fixed}");
        }
        let context = "a long context ".repeat(50);
        assert!(
            judge.context_prompt_tokens(&context) >= 50 + FENCE_TOKENS_PER_INPUT + LIST_KEY_TOKENS
        );
    }

    #[tokio::test]
    async fn answering_without_a_writing_model_fails_with_the_reason() {
        let answerer = TaskAnswerer::new(offline());
        let error = answerer.answer("q", &["some context"]).await.unwrap_err();
        assert!(
            error.to_string().contains("answer_from_contexts"),
            "{error}"
        );
    }

    #[test]
    fn prompt_counts_hold_the_templates_and_grow_with_every_input() {
        let answerer = TaskAnswerer::new(offline());
        let bare = answerer.answer_prompt_tokens("q", &[]);
        assert!(bare > RULE_AND_FRAMING_TOKENS + 50, "{bare}");
        let context = "a long context ".repeat(50);
        let one = answerer.answer_prompt_tokens("q", &[&context]);
        assert!(one >= bare + 50 + FENCE_TOKENS_PER_INPUT, "{one}");
        assert!(
            answerer.merge_prompt_tokens("q", &["x", "y"])
                > answerer.merge_prompt_tokens("q", &["x"])
        );
    }
}
