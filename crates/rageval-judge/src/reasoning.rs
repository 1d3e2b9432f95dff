//! A reasoning model's answer, split from its thinking once, where the backend reads the
//! reply, so that nothing downstream (the parse ladder, the cache, a re-ask) ever sees the
//! thinking.
//!
//! Servers lay a reasoning model's reply out in one of four ways, and the split handles each
//! without knowing the model's name:
//!
//! | reply | thinking | answer |
//! |---|---|---|
//! | `reasoning_content` or `reasoning` beside `content` (DeepSeek API, vLLM with a parser) | the field | `content` |
//! | `<think>…</think>` then the answer in `content` (Ollama, vLLM without a parser) | inside the tags | after the **last** closing tag |
//! | `…</think>` then the answer, no opening tag (distilled R1: the template opened it) | before the closing tag | after it |
//! | `content` empty, everything in the reasoning field (a misrouted answer) | the field | read from the field's end |
//!
//! Thinking often drafts an answer of its own (a JSON object with other verdicts): reading
//! the first `{…}` of the whole text, as a plain parser would, takes the draft. A reply cut
//! off while thinking (`finish_reason: "length"`, no answer) is recognised here and handled by
//! the [`Judge`](crate::Judge), never parsed.

use serde::{Deserialize, Serialize};

/// Tags that close a model's thinking, compared without case.
const CLOSING_TAGS: [&str; 2] = ["</think>", "</thinking>"];
/// Tags that open it (an opening tag may carry attributes: `<think type="x">`).
const OPENING_TAGS: [&str; 2] = ["<think", "<thinking"];
/// Most candidate starts tried when reading a JSON value off the end of a text.
const MAX_TAIL_CANDIDATES: usize = 4096;

/// Where a reply's thinking was, and so where its answer was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThinkingSource {
    /// A reasoning field (`reasoning_content` or `reasoning`); the answer is `content`.
    Field,
    /// `<think>…</think>` in `content`; the answer follows the last closing tag.
    Tags,
    /// Only a closing tag in `content` (the chat template opened it); the answer follows it.
    ClosingTag,
    /// `content` was empty: the answer was read from the end of the reasoning field.
    EndOfField,
}

impl ThinkingSource {
    /// How the answer was found, in words, for evidence and reports.
    pub fn describe(self) -> &'static str {
        match self {
            ThinkingSource::Field => "answer in content, thinking in the reasoning field",
            ThinkingSource::Tags => "answer after the thinking's closing tag",
            ThinkingSource::ClosingTag => "answer after a closing tag with no opening one",
            ThinkingSource::EndOfField => "answer read from the end of the reasoning field",
        }
    }
}

/// What is kept of a reply's thinking: where it was and how long. The text itself is not
/// kept with the answer (it is most of the reply and no verdict may be read from it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Thinking {
    /// Where it was.
    pub source: ThinkingSource,
    /// Its length in characters.
    pub chars: u64,
}

/// A reply split into its answer and its thinking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Split {
    /// The answer (empty when there is none: cut off, or thinking that never closed).
    pub answer: String,
    /// The thinking, when the reply had any.
    pub thinking: Option<(ThinkingSource, String)>,
}

/// Splits a reply's `content` and reasoning field (`reasoning_content` or `reasoning`) into
/// answer and thinking. `finish_reason` tells a cut-off reply (`length`), whose answer is
/// empty, from a misrouted one, whose answer is read from the end of the reasoning field.
pub(crate) fn split_reply(
    content: Option<&str>,
    field: Option<&str>,
    finish_reason: Option<&str>,
) -> Split {
    let content = content.unwrap_or("");
    let field = field.filter(|f| !f.trim().is_empty());
    let (answer, tagged) = split_tags(content);
    let cut_off = finish_reason == Some("length");
    match field {
        None => Split {
            answer,
            thinking: tagged,
        },
        Some(field) if !answer.trim().is_empty() => {
            let mut thinking = field.to_owned();
            if let Some((_, inline)) = tagged {
                thinking.push_str(&inline);
            }
            Split {
                answer,
                thinking: Some((ThinkingSource::Field, thinking)),
            }
        }
        Some(field) if cut_off => Split {
            answer: String::new(),
            thinking: Some((ThinkingSource::Field, field.to_owned())),
        },
        Some(field) => {
            let (answer, thinking) = end_of_field(field);
            Split {
                answer: answer.to_owned(),
                thinking: Some((ThinkingSource::EndOfField, thinking.to_owned())),
            }
        }
    }
}

/// `content` without its thinking tags: the text after the last closing tag, and what came
/// before it. An opening tag that never closes leaves no answer (the reply stopped while
/// thinking, or will be re-asked): a draft inside it is never the answer.
fn split_tags(content: &str) -> (String, Option<(ThinkingSource, String)>) {
    let lower = content.to_ascii_lowercase();
    if let Some((at, len)) = last_closing_tag(&lower) {
        let before = &content[..at];
        let answer = content[at + len..].trim().to_owned();
        return match first_opening(&lower[..at]) {
            Some((open_at, open_end)) => {
                let thinking = format!("{}{}", &before[..open_at], &before[open_end..]);
                (answer, Some((ThinkingSource::Tags, thinking)))
            }
            None => (
                answer,
                Some((ThinkingSource::ClosingTag, before.to_owned())),
            ),
        };
    }
    match first_opening(&lower) {
        Some((open_at, open_end)) => {
            let answer = content[..open_at].trim().to_owned();
            let thinking = content[open_end..].to_owned();
            (answer, Some((ThinkingSource::Tags, thinking)))
        }
        None => (content.to_owned(), None),
    }
}

/// The last closing tag in `lower`: where it starts and its length.
fn last_closing_tag(lower: &str) -> Option<(usize, usize)> {
    CLOSING_TAGS
        .iter()
        .filter_map(|tag| lower.rfind(tag).map(|at| (at, tag.len())))
        .max_by_key(|(at, _)| *at)
}

/// The first opening tag in `lower`: where it starts and where it ends (after its `>`).
fn first_opening(lower: &str) -> Option<(usize, usize)> {
    OPENING_TAGS
        .iter()
        .filter_map(|tag| {
            let mut from = 0;
            while let Some(found) = lower[from..].find(tag) {
                let at = from + found;
                let rest = &lower[at + tag.len()..];
                // `<think>` or `<think attr=…>`, not `<thinking>` read as `<think` + `ing>`.
                match rest.chars().next() {
                    Some('>') => return Some((at, at + tag.len() + 1)),
                    Some(c) if c.is_whitespace() => {
                        let close = rest.find('>')?;
                        return Some((at, at + tag.len() + close + 1));
                    }
                    _ => from = at + tag.len(),
                }
            }
            None
        })
        .min_by_key(|(at, _)| *at)
}

/// A misrouted answer at the end of a reasoning field: the text after the field's last
/// closing tag if it has one, else the JSON value that ends the field, else its last
/// paragraph. Returns (answer, thinking before it).
fn end_of_field(field: &str) -> (&str, &str) {
    if let Some((at, len)) = last_closing_tag(&field.to_ascii_lowercase()) {
        let after = field[at + len..].trim();
        if !after.is_empty() {
            return (after, &field[..at]);
        }
    }
    if let Some((start, end)) = trailing_json(field) {
        return (&field[start..end], &field[..start]);
    }
    let trimmed = field.trim_end();
    match trimmed.rfind("\n\n") {
        Some(at) => (trimmed[at..].trim(), &trimmed[..at]),
        None => ("", field),
    }
}

/// Where the JSON object or array that ends `text` lies (a closing code fence after it is
/// allowed), if one does: from the rightmost `{` or `[` from which the whole rest parses as
/// one value, to that value's end. A draft earlier in the text never qualifies, since more
/// text follows it.
fn trailing_json(text: &str) -> Option<(usize, usize)> {
    let mut end = text.trim_end();
    if let Some(unfenced) = end.strip_suffix("```") {
        end = unfenced.trim_end();
    }
    if !(end.ends_with('}') || end.ends_with(']')) {
        return None;
    }
    end.char_indices()
        .rev()
        .filter(|(_, c)| *c == '{' || *c == '[')
        .take(MAX_TAIL_CANDIDATES)
        .find(|(at, _)| serde_json::from_str::<serde_json::Value>(&end[*at..]).is_ok())
        .map(|(at, _)| (at, end.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DRAFT: &str = r#"{"verdicts": [{"verdict": 0}]}"#;
    const FINAL: &str = r#"{"verdicts": [{"verdict": 1}]}"#;

    fn thinking() -> String {
        format!("Let me think. A first draft: {DRAFT} Wait, check again. x x x")
    }

    #[test]
    fn paired_tags_give_the_text_after_the_last_closing_tag() {
        let content = format!("<think>\n{}\n</think>\n\n{FINAL}", thinking());
        let split = split_reply(Some(&content), None, Some("stop"));
        assert_eq!(split.answer, FINAL);
        let (source, text) = split.thinking.unwrap();
        assert_eq!(source, ThinkingSource::Tags);
        assert!(text.contains(DRAFT) && !text.contains("<think>"), "{text}");
    }

    #[test]
    fn a_closing_tag_alone_still_splits() {
        // Distilled R1 models: the chat template opened the tag, only `</think>` comes back.
        let content = format!("{}\n</think>\n\n{FINAL}", thinking());
        let split = split_reply(Some(&content), None, Some("stop"));
        assert_eq!(split.answer, FINAL);
        assert_eq!(split.thinking.unwrap().0, ThinkingSource::ClosingTag);
    }

    #[test]
    fn nested_and_repeated_tags_take_the_last_close_and_any_case() {
        let content = format!("<THINK>outer <think>inner {DRAFT}</think> more</THINK>\n{FINAL}");
        let split = split_reply(Some(&content), None, None);
        assert_eq!(split.answer, FINAL);
        let content = format!("<thinking>{DRAFT}</thinking>{FINAL}");
        assert_eq!(split_reply(Some(&content), None, None).answer, FINAL);
        let content = format!("<think type=\"x\">{DRAFT}</think>{FINAL}");
        let split = split_reply(Some(&content), None, None);
        assert_eq!(split.answer, FINAL);
        assert_eq!(split.thinking.unwrap().0, ThinkingSource::Tags);
    }

    #[test]
    fn thinking_that_never_closed_leaves_no_answer() {
        let content = format!("<think>\n{}", thinking());
        let split = split_reply(Some(&content), None, Some("length"));
        assert_eq!(split.answer, "");
        assert!(split.thinking.unwrap().1.contains(DRAFT));
        // Not a tag: `<thinker>` is text.
        let split = split_reply(Some("<thinker> is a word"), None, None);
        assert_eq!(split.answer, "<thinker> is a word");
        assert!(split.thinking.is_none());
    }

    #[test]
    fn a_reasoning_field_beside_content_is_thinking() {
        let split = split_reply(Some(FINAL), Some(&thinking()), Some("stop"));
        assert_eq!(split.answer, FINAL);
        assert_eq!(split.thinking.unwrap().0, ThinkingSource::Field);
    }

    #[test]
    fn an_answer_misrouted_into_the_field_is_read_from_its_end() {
        let field = format!("{}\n\n{FINAL}", thinking());
        for content in [None, Some(""), Some("  \n")] {
            let split = split_reply(content, Some(&field), Some("stop"));
            assert_eq!(split.answer, FINAL, "{content:?}");
            let (source, text) = split.thinking.unwrap();
            assert_eq!(source, ThinkingSource::EndOfField);
            assert!(text.contains(DRAFT));
        }
        // Fenced, nested, and after a closing tag inside the field.
        let nested = r#"{"a": {"b": [1, {"c": 2}]}}"#;
        let field = format!("{}\n```json\n{nested}\n```\n", thinking());
        assert_eq!(split_reply(None, Some(&field), None).answer, nested);
        let field = format!("{}</think>{FINAL}", thinking());
        assert_eq!(split_reply(None, Some(&field), None).answer, FINAL);
    }

    #[test]
    fn a_cut_off_field_with_no_content_has_no_answer() {
        let split = split_reply(Some(""), Some(&thinking()), Some("length"));
        assert_eq!(split.answer, "");
        assert_eq!(split.thinking.unwrap().0, ThinkingSource::Field);
    }

    #[test]
    fn plain_replies_pass_untouched() {
        let split = split_reply(Some(FINAL), None, Some("stop"));
        assert_eq!((split.answer.as_str(), split.thinking), (FINAL, None));
        let split = split_reply(None, Some("   "), Some("stop"));
        assert_eq!((split.answer.as_str(), split.thinking), ("", None));
    }

    #[test]
    fn the_trailing_json_is_the_last_complete_value() {
        let text = format!("draft {DRAFT} then {{\"s\": \"a {{brace}} in a string\"}}  ");
        let (start, end) = trailing_json(&text).unwrap();
        assert_eq!(&text[start..end], "{\"s\": \"a {brace} in a string\"}");
        assert_eq!(trailing_json("no json here"), None);
        assert_eq!(trailing_json(&format!("{DRAFT} and then words")), None);
    }
}
