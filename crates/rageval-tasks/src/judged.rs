//! What comes back from a task: the typed value plus who answered it and how — so a metric
//! can store the evidence and the run manifest can say who judged.

use rageval_judge::{Rung, TemplateId, Usage};
use serde::{Deserialize, Serialize};

use crate::prompt::Lang;

/// A task's answer and its provenance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judged<T> {
    /// The answer.
    pub value: T,
    /// Who answered.
    pub by: Implementation,
    /// Where the structured-output ladder ended (LLM answers only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rung: Option<Rung>,
    /// Tokens the calls took, cached calls included (zero for heuristics and rules).
    pub usage: Usage,
    /// Every model call was answered from the judge's cache (false when none was made).
    pub cached: bool,
}

impl<T> Judged<T> {
    /// The same provenance with another value (e.g. after a metric derives from it).
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Judged<U> {
        Judged {
            value: f(self.value),
            by: self.by,
            rung: self.rung,
            usage: self.usage,
            cached: self.cached,
        }
    }

    /// An answer given by a fixed rule, without judgement.
    pub(crate) fn by_rule(value: T, rule: &str) -> Self {
        Judged {
            value,
            by: Implementation::Rule {
                rule: rule.to_owned(),
            },
            rung: None,
            usage: Usage::default(),
            cached: false,
        }
    }
}

/// Who answered a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Implementation {
    /// A chat model through the judge pipeline.
    Llm {
        /// Backend kind (`openai`, `gguf`, ...).
        backend: String,
        /// Model name.
        model: String,
        /// The prompt template, `id@version` (e.g. `support_verdicts.zh@1`).
        template: TemplateId,
        /// The prompt pack's language.
        lang: Lang,
        /// Where the model's thinking was, when the answer came after thinking: the answer
        /// was read outside it ([`rageval_judge::reasoning`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        after_thinking: Option<rageval_judge::ThinkingSource>,
    },
    /// The offline heuristic judge.
    Heuristic(HeuristicInfo),
    /// A checker model (`--judge checker:DIR`).
    Checker(crate::checker::CheckerInfo),
    /// No judgement was needed: the answer follows from the input (e.g. no contexts, so
    /// no statement is supported).
    Rule {
        /// The rule, in words.
        rule: String,
    },
}

/// A heuristic implementation: its name, version and the thresholds it applied.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeuristicInfo {
    /// E.g. `content_word_overlap`.
    pub name: String,
    /// Bumped whenever the rule or a threshold changes, like a prompt template's version.
    pub version: u32,
    /// The named thresholds, as constants in [`heuristic`](crate::heuristic).
    pub thresholds: Vec<Threshold>,
    /// The embedding model whose cosine enters the decision, when one does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedder: Option<String>,
}

/// One named threshold of a heuristic.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Threshold {
    /// Its constant's name, lower-case (e.g. `support_full`).
    pub name: String,
    /// Its value.
    pub value: f64,
}
