//! Support verdicts that read the conversation: a statement the contexts do not back may be
//! backed by an earlier turn — what the user said, or an earlier assistant reply that is
//! itself backed (by the contexts shown with it, or by what came before it). A reply that
//! nothing backs lends support to nothing.
//!
//! Only a task with a history reaches any of this: its prompt gains the conversation and
//! the `supporting_turn` field; a task without one renders, validates and caches exactly
//! as before.

use rageval_core::{Role, Turn};
use serde_json::{Value, json};

use super::{SUPPORT_DEGREE, SUPPORT_FULL, SUPPORT_PARTIAL, Support, SupportVerdict};
use crate::heuristic::sentences::sentences;
use crate::heuristic::support::Coverage;
use crate::heuristic::words::Material;
use crate::prompt::Lang;

/// The template parts a call with a history asks for.
pub(crate) const PARTS: [&str; 2] = ["conversation", "conversation_input"];

/// The last turn number of `history` (what `supporting_turn` may name), 0 when empty.
pub(crate) fn last_turn(history: &[Turn]) -> usize {
    history.iter().map(|t| t.turn).max().unwrap_or(0)
}

/// `item` (one statement's verdict schema) with a `supporting_turn` of 0 to `turns`.
pub(crate) fn with_turn(mut item: Value, turns: usize) -> Value {
    if let Some(properties) = item.get_mut("properties").and_then(Value::as_object_mut) {
        properties.insert(
            "supporting_turn".into(),
            json!({"type": "integer", "minimum": 0, "maximum": turns}),
        );
    }
    if let Some(required) = item.get_mut("required").and_then(Value::as_array_mut) {
        required.push("supporting_turn".into());
    }
    item
}

/// The conversation laid out for the prompt, in the pack's words: each message with its
/// turn and speaker, an assistant reply followed by the passages retrieved for it.
pub(crate) fn render(history: &[Turn], lang: Lang) -> String {
    let mut lines = Vec::new();
    for message in history {
        let (turn, speaker) = (message.turn, message.role);
        lines.push(match (lang, speaker) {
            (Lang::Zh, Role::User) => format!("第 {turn} 轮，用户：{}", message.content),
            (Lang::Zh, Role::Assistant) => format!("第 {turn} 轮，助手：{}", message.content),
            (_, Role::User) => format!("turn {turn}, user: {}", message.content),
            (_, Role::Assistant) => format!("turn {turn}, assistant: {}", message.content),
        });
        for (index, context) in message.contexts.iter().enumerate() {
            let n = index + 1;
            lines.push(match lang {
                Lang::Zh => format!("  （第 {turn} 轮检索到的段落 {n}：{}）", context.text),
                _ => format!(
                    "  (passage {n} retrieved for turn {turn}: {})",
                    context.text
                ),
            });
        }
    }
    lines.join("\n")
}

/// The conversation's messages alone, without the passages retrieved for them, in the
/// `conversation` slot: what a task that asks about the dialogue (not its sources) shows.
pub(crate) fn messages_only(history: &[Turn], lang: Lang) -> crate::llm::Part<'static> {
    let messages: Vec<Turn> = history
        .iter()
        .map(|turn| Turn {
            contexts: Vec::new(),
            ..turn.clone()
        })
        .collect();
    crate::llm::Part::Owned {
        slot: "conversation",
        label: "conversation",
        text: render(&messages, lang),
    }
}

/// A message of the history that may back a statement, for the heuristic judge.
struct Backing {
    turn: usize,
    role: Role,
    material: Material,
}

/// The messages that may back a statement: every user message, and each assistant reply
/// whose every sentence is fully supported by its own contexts or by one message before
/// it that may back (so support never rests on an unsupported reply).
fn backings(history: &[Turn]) -> Vec<Backing> {
    let mut backed: Vec<Backing> = Vec::new();
    for message in history {
        let keep = match message.role {
            Role::User => true,
            Role::Assistant => {
                let mut material: Vec<Material> = message
                    .contexts
                    .iter()
                    .map(|c| Material::new(&c.text))
                    .collect();
                material.extend(backed.iter().map(|b| b.material.clone()));
                let said = sentences(&message.content);
                !said.is_empty()
                    && said.iter().all(|sentence| {
                        fully_supported(sentence, &material).is_some()
                            || Coverage::measure(sentence, &material).is_none()
                    })
            }
        };
        if keep {
            backed.push(Backing {
                turn: message.turn,
                role: message.role,
                material: Material::new(&message.content),
            });
        }
    }
    backed
}

/// The coverage of `statement` when one of `material` fully supports it.
fn fully_supported(statement: &str, material: &[Material]) -> Option<Coverage> {
    let coverage = Coverage::measure(statement, material)?;
    let full = SUPPORT_FULL.get(Lang::detect(statement));
    (coverage.support(full, SUPPORT_PARTIAL) == Support::FullySupported).then_some(coverage)
}

/// The heuristic judge's verdicts with the conversation read: each verdict short of full
/// support by the contexts becomes full support by the conversation when one message that
/// may back ([`backings`]) holds the statement as the contexts would have to.
pub(crate) fn heuristic(
    statements: &[String],
    verdicts: Vec<SupportVerdict>,
    history: &[Turn],
) -> Vec<SupportVerdict> {
    let backed = backings(history);
    if backed.is_empty() {
        return verdicts;
    }
    let material: Vec<Material> = backed.iter().map(|b| b.material.clone()).collect();
    statements
        .iter()
        .zip(verdicts)
        .map(|(statement, verdict)| {
            if verdict.support == Support::FullySupported {
                return verdict;
            }
            let Some(coverage) = fully_supported(statement, &material) else {
                return verdict;
            };
            let Some((best, share)) = coverage.best() else {
                return verdict;
            };
            let backing = &backed[best];
            let lang = Lang::detect(statement);
            let degree = coverage.degree(SUPPORT_DEGREE.get(lang));
            let full = SUPPORT_FULL.get(lang);
            SupportVerdict {
                support: Support::FullySupported,
                context: None,
                reason: format!(
                    "supported by the conversation, turn {turn}: {share:.2} of the statement's \
                     {n} content words appear in what the {who} said (≥ {full:.2}); degree of \
                     support {degree:.2}",
                    turn = backing.turn,
                    n = coverage.words(),
                    who = backing.role.name(),
                ),
                score: Some(degree),
                turn: Some(backing.turn),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rageval_core::Context;

    fn reply(turn: usize, content: &str, contexts: &[&str]) -> Turn {
        Turn {
            contexts: contexts.iter().map(|c| Context::text(*c)).collect(),
            ..Turn::new(turn, Role::Assistant, content)
        }
    }

    #[test]
    fn an_unbacked_reply_backs_nothing_and_a_backed_one_does() {
        let history = [
            Turn::new(1, Role::User, "My order number is 4471."),
            reply(1, "The parcel left Rotterdam on Monday.", &[]),
            Turn::new(2, Role::User, "Where is it now?"),
            reply(
                2,
                "It is in Hamburg.",
                &["The parcel reached Hamburg on Tuesday."],
            ),
        ];
        let turns: Vec<(usize, Role)> = backings(&history)
            .iter()
            .map(|b| (b.turn, b.role))
            .collect();
        assert_eq!(
            turns,
            [(1, Role::User), (2, Role::User), (2, Role::Assistant)]
        );
        let statements = ["The parcel left Rotterdam on Monday.".to_string()];
        let unsupported = SupportVerdict::unsupported_by_rule("no context");
        let judged = heuristic(&statements, vec![unsupported.clone()], &history);
        assert_eq!(
            judged[0].support,
            Support::NotSupported,
            "{}",
            judged[0].reason
        );
        let statements = ["The order number is 4471.".to_string()];
        let judged = heuristic(&statements, vec![unsupported], &history);
        assert_eq!(judged[0].turn, Some(1));
        assert!(
            judged[0]
                .reason
                .starts_with("supported by the conversation, turn 1"),
            "{}",
            judged[0].reason
        );
    }

    #[test]
    fn the_conversation_is_laid_out_in_the_pack_language() {
        let history = [Turn::new(1, Role::User, "你好"), reply(1, "答", &["段"])];
        assert_eq!(
            render(&history, Lang::Zh),
            "第 1 轮，用户：你好\n第 1 轮，助手：答\n  （第 1 轮检索到的段落 1：段）"
        );
        assert!(
            render(&history, Lang::En).starts_with("turn 1, user: 你好\nturn 1, assistant: 答")
        );
    }
}
