//! [`ResolveQuestion`]: a follow-up question of a conversation rewritten as a question that
//! stands alone ("and last year?" → "What was Acme's revenue last year?"), so that answer
//! relevance and the context metrics judge what the user asked. Asked only for a sample
//! with a history. The heuristic judge's rule: the earlier user messages' content words
//! that the follow-up lacks, in order, before the follow-up.

use std::collections::HashSet;

use rageval_core::{Role, Turn};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::support_verdicts::history;
use super::{TaskFamily, TaskKind, TypedTask};
use crate::error::TaskError;
use crate::heuristic::words::content_words;
use crate::heuristic::{self, Heuristic};
use crate::judged::{HeuristicInfo, Judged};
use crate::llm::{LlmTask, Part, text};
use crate::prompt::Lang;
use crate::prompt::pack::{PackFiles, pack_files};
use crate::router::TaskJudge;
use crate::schema::{Shape, object};

/// Rewrite `question`, the latest user message of a conversation, as a standalone question
/// from `history` (the turns before it). Answered with the standalone question; a question
/// that already stands alone comes back unchanged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResolveQuestion {
    /// The follow-up question.
    pub question: String,
    /// The turns before it; the passages retrieved for them are not shown.
    pub history: Vec<Turn>,
}

#[derive(Deserialize)]
pub(crate) struct ResolvedRaw {
    question: String,
}

impl LlmTask for ResolveQuestion {
    const KIND: TaskKind = TaskKind::ResolveQuestion;
    const PACK: PackFiles = pack_files!("resolve_question");
    type Raw = ResolvedRaw;
    type Output = String;
    fn schema(_: Shape) -> Value {
        object([("question", json!({"type": "string"}))])
    }
    fn deciding_text(&self) -> &str {
        &self.question
    }
    fn parts(&self) -> Vec<Part<'_>> {
        vec![text("question", &self.question)]
    }
    fn pack_parts(&self, lang: Lang) -> Vec<Part<'_>> {
        // Only the messages: the passages retrieved for them do not change what was asked.
        vec![history::messages_only(&self.history, lang)]
    }
    fn convert(&self, raw: ResolvedRaw) -> Result<String, String> {
        let question = raw.question.trim();
        if question.is_empty() {
            return Err("the standalone question is empty".into());
        }
        Ok(question.to_owned())
    }
}

impl TypedTask for ResolveQuestion {
    const FAMILY: TaskFamily = TaskFamily::Generation;

    fn heuristic_info(_: &Heuristic) -> Option<HeuristicInfo> {
        Some(heuristic::rule("earlier_user_content_words", Vec::new()))
    }

    fn by_rule(&self) -> Result<Option<Judged<String>>, TaskError> {
        // Nothing before it: the question is its own standalone form.
        Ok(self
            .history
            .is_empty()
            .then(|| Judged::by_rule(self.question.clone(), "no_history")))
    }

    async fn by_heuristic(&self, heuristic: &Heuristic) -> Result<Judged<String>, TaskError> {
        Ok(heuristic.resolve_question(self))
    }
}

impl Heuristic {
    /// The earlier user messages' content words the follow-up lacks, each once and in
    /// order, then the follow-up: deterministic, and enough for the overlap rules of the
    /// verdict tasks to see the earlier subject.
    pub fn resolve_question(&self, task: &ResolveQuestion) -> Judged<String> {
        let mut seen: HashSet<String> = content_words(&task.question).into_iter().collect();
        let earlier: Vec<String> = task
            .history
            .iter()
            .filter(|turn| turn.role == Role::User)
            .flat_map(|turn| content_words(&turn.content))
            .filter(|word| seen.insert(word.clone()))
            .collect();
        let resolved = match earlier.is_empty() {
            true => task.question.clone(),
            false => format!("{} {}", earlier.join(" "), task.question.trim()),
        };
        self.judged(TaskKind::ResolveQuestion, resolved, false)
    }
}

impl TaskJudge {
    /// [`ResolveQuestion`]: the standalone form of a follow-up question.
    pub async fn resolve_question(
        &self,
        task: &ResolveQuestion,
    ) -> Result<Judged<String>, TaskError> {
        self.ask(task).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn follow_up() -> ResolveQuestion {
        ResolveQuestion {
            question: "And last year?".into(),
            history: vec![
                Turn::new(1, Role::User, "What was Acme's revenue in 2023?"),
                Turn::new(1, Role::Assistant, "Acme's revenue was 4 million dollars."),
            ],
        }
    }

    #[test]
    fn the_heuristic_puts_the_earlier_subject_before_the_follow_up() {
        let judged = Heuristic::lexical().resolve_question(&follow_up());
        assert_eq!(judged.value, "acme's revenue 2023 And last year?");
    }

    #[test]
    fn a_question_with_no_history_is_its_own_standalone_form() {
        let task = ResolveQuestion {
            question: "What is BM25?".into(),
            history: Vec::new(),
        };
        let judged = task.by_rule().ok().flatten().map(|j| j.value);
        assert_eq!(judged.as_deref(), Some("What is BM25?"));
    }

    #[test]
    fn an_empty_rewrite_is_refused() {
        let raw = ResolvedRaw {
            question: "  ".into(),
        };
        assert!(follow_up().convert(raw).is_err());
    }
}
