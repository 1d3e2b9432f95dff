//! Citation faithfulness: is each sentence of the answer that cites sources supported by
//! the contexts it cites, not merely by some context?
//!
//! Markers are read from the answer's text, never asked of the judge: `[1]`, `[1, 2]`,
//! `[^1]`, `【1】`, `[doc2]` (a word `doc`, `document`, `source`, `context`, `passage` or
//! `ref` before the number) count as 1-based context numbers; any bracketed text equal to a
//! context's id names that context. Bracketed text that is neither (`[sic]`) is no citation.
//! A marker belongs to the sentence it stands in; markers that open a sentence, or stand
//! alone after one (`… France.[1]`), belong to the sentence before. The judge is asked only
//! the support question, once per distinct set of cited contexts. This module does not
//! decide what a context says.

use std::collections::BTreeMap;

use rageval_core::{Outcome, Sample, Verdict, VerdictTarget};
use rageval_tasks::heuristic::sentences;
use rageval_tasks::{Premise, SupportCredit};
use serde_json::json;

use super::evidence::{self, judged_by, share};
use crate::scoring::{Failure, ScoringContext};

/// The words accepted before a citation number, lower-cased (`[doc2]`, `[Source 3]`).
const CITATION_WORDS: [&str; 6] = ["doc", "document", "source", "context", "passage", "ref"];

/// One sentence of the answer with what it cites.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CitedSentence {
    /// The sentence with its markers removed.
    pub text: String,
    /// 0-based indices of the existing contexts it cites, ascending, each once.
    pub contexts: Vec<usize>,
    /// Markers that name no existing context, as written (`[7]`).
    pub dangling: Vec<String>,
}

impl CitedSentence {
    /// Whether the sentence carries any citation (existing or not).
    pub fn cites(&self) -> bool {
        !self.contexts.is_empty() || !self.dangling.is_empty()
    }
}

/// What a marker names: the existing contexts (0-based) and the parts that name none.
type Named = (Vec<usize>, Vec<String>);

/// What one bracket holds: the contexts it names and the part that names none, or `None`
/// when it is not a citation at all.
fn read_marker(inner: &str, ids: &[Option<&str>]) -> Option<Named> {
    let inner = inner.trim();
    if let Some(index) = ids.iter().position(|id| *id == Some(inner)) {
        return Some((vec![index], Vec::new()));
    }
    let inner = inner.strip_prefix('^').unwrap_or(inner);
    let mut found = Vec::new();
    let mut dangling = Vec::new();
    for part in inner.split([',', '，', ';', '；', '、']) {
        let part = part.trim();
        if part.is_empty() {
            return None;
        }
        if let Some(index) = ids.iter().position(|id| *id == Some(part)) {
            found.push(index);
            continue;
        }
        let lower = part.to_lowercase();
        let digits = CITATION_WORDS
            .iter()
            .find_map(|word| lower.strip_prefix(word))
            .unwrap_or(&lower)
            .trim_start_matches([' ', '_', '-', '#']);
        let number: usize = match digits.parse() {
            Ok(number) if digits.chars().all(|c| c.is_ascii_digit()) => number,
            _ => return None,
        };
        if (1..=ids.len()).contains(&number) {
            found.push(number - 1);
        } else {
            dangling.push(part.to_owned());
        }
    }
    Some((found, dangling))
}

/// `text` with its citation markers removed, the contexts they name and the markers that
/// name none (each as `[…]`).
fn strip_markers(text: &str, ids: &[Option<&str>]) -> (String, Vec<usize>, Vec<String>) {
    let mut kept = String::new();
    let mut contexts = Vec::new();
    let mut dangling = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find(['[', '【']) {
        kept.push_str(&rest[..open]);
        let from = &rest[open..];
        match marker_at(from, ids) {
            Some((length, (found, unknown))) => {
                let after = &from[length..];
                // "France [1]." reads "France."; "[1] Berlin" keeps its space.
                kept.truncate(kept.trim_end().len());
                if after.starts_with(char::is_alphanumeric) && !kept.is_empty() {
                    kept.push(' ');
                }
                contexts.extend(found);
                dangling.extend(unknown.into_iter().map(|m| format!("[{m}]")));
                rest = after;
            }
            None => {
                let opener = from.chars().next().map_or(1, char::len_utf8);
                kept.push_str(&from[..opener]);
                rest = &from[opener..];
            }
        }
    }
    kept.push_str(rest);
    (kept.trim().to_owned(), contexts, dangling)
}

/// The citation marker `text` opens with, if it opens with one: its byte length and what
/// it names ([`read_marker`]).
fn marker_at(text: &str, ids: &[Option<&str>]) -> Option<(usize, Named)> {
    let close = match text.chars().next()? {
        '[' => ']',
        '【' => '】',
        _ => return None,
    };
    let opener = text.chars().next().map_or(1, char::len_utf8);
    let end = text[opener..].find(close)?;
    let named = read_marker(&text[opener..opener + end], ids)?;
    Some((opener + end + close.len_utf8(), named))
}

/// The answer's sentences with their citations, for contexts with these `ids`.
pub fn cited_sentences(answer: &str, ids: &[Option<&str>]) -> Vec<CitedSentence> {
    let mut out: Vec<CitedSentence> = Vec::new();
    for sentence in sentences(&break_after_end_markers(answer, ids)) {
        let (head, body) = sentence.split_at(first_word(&sentence));
        let (_, lead_contexts, lead_dangling) = strip_markers(head, ids);
        let (text, contexts, dangling) = strip_markers(body, ids);
        let bare = !text.chars().any(char::is_alphanumeric);
        let mut current = CitedSentence {
            text,
            contexts,
            dangling,
        };
        // Markers with no sentence of their own, or opening one, cite the sentence before.
        match out.last_mut() {
            Some(previous) => {
                previous.contexts.extend(lead_contexts);
                previous.dangling.extend(lead_dangling);
                if bare {
                    previous.contexts.append(&mut current.contexts);
                    previous.dangling.append(&mut current.dangling);
                }
            }
            None => {
                current.contexts.extend(lead_contexts);
                current.dangling.extend(lead_dangling);
            }
        }
        if !bare {
            out.push(current);
        }
    }
    for sentence in &mut out {
        sentence.contexts.sort_unstable();
        sentence.contexts.dedup();
        sentence.dangling.dedup();
    }
    out
}

/// `text` with a line break after every run of markers that directly follows a full stop
/// (`France.[1] Berlin` → `France.[1]` / `Berlin`): the sentence splitter ends no sentence
/// at a full stop glued to a bracket, and the markers belong to the sentence they close.
fn break_after_end_markers(text: &str, ids: &[Option<&str>]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(stop) = rest.find(['.', '!', '?', '。', '！', '？']) {
        let stop_end = stop + rest[stop..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&rest[..stop_end]);
        rest = &rest[stop_end..];
        let mut markers = 0;
        while let Some((length, _)) = marker_at(rest, ids) {
            out.push_str(&rest[..length]);
            rest = &rest[length..];
            markers += 1;
        }
        if markers > 0 {
            out.push('\n');
        }
    }
    out.push_str(rest);
    out
}

/// The byte offset of the sentence's first letter or digit outside brackets (its length
/// when it has none).
fn first_word(sentence: &str) -> usize {
    let mut depth = 0usize;
    for (i, c) in sentence.char_indices() {
        match c {
            '[' | '【' => depth += 1,
            ']' | '】' => depth = depth.saturating_sub(1),
            c if depth == 0 && c.is_alphanumeric() => return i,
            _ => {}
        }
    }
    sentence.len()
}

/// Citation faithfulness of one sample: fully supported cited sentences ÷ cited sentences,
/// each judged against the contexts it cites alone; undefined when nothing is cited.
pub async fn citation_faithfulness(
    sample: &Sample,
    scoring: &ScoringContext,
) -> Result<Outcome, Failure> {
    let answer = sample.answer.as_deref().unwrap_or_default();
    let ids: Vec<Option<&str>> = sample.contexts.iter().map(|c| c.id.as_deref()).collect();
    let all = cited_sentences(answer, &ids);
    let cited: Vec<&CitedSentence> = all.iter().filter(|s| s.cites()).collect();
    if cited.is_empty() {
        return Ok(Outcome::undefined("the answer cites no source"));
    }
    // One support call per distinct set of cited contexts; a sentence whose citations all
    // dangle is unsupported without a call.
    let mut groups: BTreeMap<&[usize], Vec<usize>> = BTreeMap::new();
    for (index, sentence) in cited.iter().enumerate() {
        if !sentence.contexts.is_empty() {
            groups.entry(&sentence.contexts).or_default().push(index);
        }
    }
    let mut verdicts: Vec<Option<Verdict>> = vec![None; cited.len()];
    let mut by = Vec::new();
    for (contexts, members) in &groups {
        let statements: Vec<String> = members.iter().map(|&i| cited[i].text.clone()).collect();
        let texts = contexts
            .iter()
            .map(|&c| sample.contexts[c].text.clone())
            .collect();
        let judged = scoring
            .support(&statements, texts, Premise::Contexts)
            .await?;
        by.push(judged.by.clone());
        for (&member, verdict) in members.iter().zip(&judged.value) {
            let sentence = cited[member];
            verdicts[member] = Some(Verdict {
                target: VerdictTarget::Statement(member),
                value: verdict.credit(SupportCredit::FullOnly),
                label: Some(verdict.support.label().to_owned()),
                text: Some(sentence.text.clone()),
                reason: Some(with_dangling(&verdict.reason, &sentence.dangling)),
                supporting_contexts: sentence.contexts.clone(),
            });
        }
    }
    let verdicts: Vec<Verdict> = verdicts
        .into_iter()
        .enumerate()
        .map(|(index, verdict)| {
            verdict.unwrap_or_else(|| Verdict {
                target: VerdictTarget::Statement(index),
                value: 0.0,
                label: Some("cites_no_context".to_owned()),
                text: Some(cited[index].text.clone()),
                reason: Some(format!(
                    "it cites {}, and no such context was retrieved",
                    cited[index].dangling.join(" ")
                )),
                supporting_contexts: Vec::new(),
            })
        })
        .collect();
    let supported = verdicts.iter().filter(|v| v.value >= 1.0).count();
    let dangling: Vec<&String> = cited.iter().flat_map(|s| &s.dangling).collect();
    Ok(Outcome::score(
        share(supported, cited.len()),
        evidence::build(
            verdicts,
            [
                ("supported_by_cited", json!(supported)),
                ("cited_sentences", json!(cited.len())),
                ("sentences", json!(all.len())),
                ("citation_coverage", json!(share(cited.len(), all.len()))),
                ("dangling_citations", json!(dangling)),
                ("support_calls", json!(groups.len())),
                ("judged_by", json!(judged_by(by.iter()))),
            ],
        ),
    ))
}

/// The judge's reason, with the markers that named no context appended.
fn with_dangling(reason: &str, dangling: &[String]) -> String {
    if dangling.is_empty() {
        reason.to_owned()
    } else {
        format!(
            "{reason} (also cites {}, which no retrieved context is)",
            dangling.join(" ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(n: usize) -> Vec<Option<&'static str>> {
        vec![None; n]
    }

    #[test]
    fn every_marker_style_names_its_context() {
        let sentences = cited_sentences(
            "Paris is in France [1]. Berlin is in Germany [doc2]. Rome is in Italy 【3】. \
             Madrid is in Spain [^1][2]. Lisbon is in Portugal [1, 3].",
            &numbered(3),
        );
        let cited: Vec<Vec<usize>> = sentences.iter().map(|s| s.contexts.clone()).collect();
        assert_eq!(cited, [vec![0], vec![1], vec![2], vec![0, 1], vec![0, 2]]);
        assert_eq!(sentences[0].text, "Paris is in France.");
    }

    #[test]
    fn ids_name_contexts_and_unknown_numbers_dangle() {
        let ids = [Some("kb-7"), Some("kb-9")];
        let sentences = cited_sentences("A fact [kb-9]. Another fact [5]. A [sic] quote.", &ids);
        assert_eq!(sentences[0].contexts, [1]);
        assert!(sentences[1].contexts.is_empty());
        assert_eq!(sentences[1].dangling, ["[5]"]);
        assert!(!sentences[2].cites());
        assert_eq!(sentences[2].text, "A [sic] quote.");
    }

    #[test]
    fn markers_after_the_full_stop_cite_the_sentence_before() {
        let sentences = cited_sentences(
            "巴黎是法国的首都。【1】柏林是德国的首都【2】。",
            &numbered(2),
        );
        assert_eq!(sentences.len(), 2);
        assert_eq!(sentences[0].contexts, [0]);
        assert_eq!(sentences[1].contexts, [1]);
        let english = cited_sentences(
            "Paris is in France.[1] Berlin is in Germany [2].",
            &numbered(2),
        );
        let cited: Vec<Vec<usize>> = english.iter().map(|s| s.contexts.clone()).collect();
        assert_eq!(cited, [vec![0], vec![1]]);
    }

    #[test]
    fn a_marker_on_a_line_of_its_own_cites_the_line_before() {
        let sentences = cited_sentences("Paris is the capital.\n[2]\nIt is large.", &numbered(2));
        assert_eq!(sentences.len(), 2);
        assert_eq!(sentences[0].contexts, [1]);
        assert!(!sentences[1].cites());
    }

    #[test]
    fn an_answer_without_brackets_cites_nothing() {
        let sentences = cited_sentences("Paris is the capital. It is large.", &numbered(2));
        assert_eq!(sentences.len(), 2);
        assert!(sentences.iter().all(|s| !s.cites()));
    }
}
