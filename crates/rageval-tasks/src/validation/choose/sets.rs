//! The labelled material of the sweep, read from the shared sets with every signal a
//! candidate rule may use measured once: content-word overlap (the heuristic's own
//! functions), MiniLM cosine (through the judge's embedder, when one is given), focus, and
//! each statement's support [`Coverage`] (from which every support rule's label and degree
//! follow).

use std::collections::HashMap;
use std::path::Path;

use rageval_judge::{Judge, Models};

use super::super::kids::{KIDS_CODING_FILE, KidsCodingRow, distinct_chunks, read_kids_coding};
use super::super::split::Part;
use super::super::{
    DUREADER_FILE, RGB_EN_FACT_FILE, RGB_ZH_FACT_FILE, RGB_ZH_REFINE_FILE, WIKIEVAL_FILE,
    read_cranfield, read_dureader, read_rgb, read_uhgeval, read_wikieval,
};
use crate::error::TaskError;
use crate::heuristic::cosine;
use crate::heuristic::overlap::{answer_overlap, focus, question_overlap};
use crate::heuristic::sentences::sentences;
use crate::heuristic::support::Coverage;
use crate::heuristic::words::{Material, content_words};
use crate::prompt::Lang;
use crate::task::answer_rubric::noncommittal;
use crate::task::{SupportCredit, TaskKind};

/// UHGEval's file under the validation folder.
pub const UHGEVAL_FILE: &str = "uhgeval-zh/dataset_uhgeval_concise.jsonl";
/// Cranfield's folder under the validation folder.
pub const CRANFIELD_DIR: &str = "cranfield";
/// The name of the kids-coding set in figures.
pub const KIDS_CODING: &str = "S4 kids-coding zh";

/// A (question, text) with its label and signals, from a relevance-type set.
#[derive(Debug, Clone)]
pub struct Passage {
    /// The set's name.
    pub set: &'static str,
    /// The question's script.
    pub lang: Lang,
    /// Development or held-out.
    pub part: Part,
    /// Passages compared with each other share this (the question).
    pub group: String,
    /// The label: 1 / 0 for a binary set, the grade for a graded one.
    pub grade: f64,
    /// Whether the set's labels are binary.
    pub binary: bool,
    /// The share of the question's content words in the text.
    pub overlap: f64,
    /// MiniLM cosine of question and text, when an embedder was given.
    pub cosine: Option<f64>,
    /// The share of the text's sentences mentioning a question word.
    pub focus: f64,
}

/// One statement's support measurement; `None` for a statement without content words
/// (never supported).
pub type Shares = Option<Coverage>;

/// A support unit — a pair (the better text first) or a binary item — scored by the metric
/// its set stands for: the mean credit of a text's statements under `credit`.
#[derive(Debug, Clone)]
pub struct SupportUnit {
    /// The set's name.
    pub set: &'static str,
    /// The script.
    pub lang: Lang,
    /// Development or held-out.
    pub part: Part,
    /// The statements of each compared text (one text for a binary item).
    pub answers: Vec<Vec<Shares>>,
    /// The label of a binary item; `None` for a pair.
    pub label: Option<bool>,
    /// How the metric counts a verdict: faithfulness's rule for the faithfulness sets,
    /// context recall's for the kids-coding set.
    pub credit: SupportCredit,
}

/// A usefulness item: the share of what the answer adds found in the passage.
#[derive(Debug, Clone)]
pub struct Usefulness {
    /// The set's name.
    pub set: &'static str,
    /// The script.
    pub lang: Lang,
    /// Development or held-out.
    pub part: Part,
    /// `None` when the answer has no content words (never useful).
    pub share: Option<f64>,
    /// Whether the passage contains the answer.
    pub label: bool,
}

/// A rubric pair: the question's overlap and cosine with the better and the worse answer,
/// and whether each is noncommittal.
#[derive(Debug, Clone)]
pub struct RubricPair {
    /// Development or held-out.
    pub part: Part,
    /// (overlap, cosine, noncommittal) of the better answer, then the worse.
    pub answers: [(f64, Option<f64>, bool); 2],
}

/// Everything the sweep reads.
#[derive(Debug, Clone, Default)]
pub struct SweepData {
    /// Relevance-type passages.
    pub passages: Vec<Passage>,
    /// Support units (faithfulness and context recall).
    pub support: Vec<SupportUnit>,
    /// Usefulness items.
    pub usefulness: Vec<Usefulness>,
    /// WikiEval answer relevance.
    pub rubric: Vec<RubricPair>,
}

/// RGB's sets of positive and negative passages.
const RGB_RELEVANCE: [(&str, &str); 2] = [
    ("RGB en fact", RGB_EN_FACT_FILE),
    ("RGB zh refine", RGB_ZH_REFINE_FILE),
];

/// A passage before its signals are measured.
struct Raw {
    set: &'static str,
    group: String,
    grade: f64,
    binary: bool,
    question: String,
    text: String,
}

fn binary(set: &'static str, question: &str, text: &str, label: bool) -> Raw {
    Raw {
        set,
        group: question.to_owned(),
        grade: f64::from(u8::from(label)),
        binary: true,
        question: question.to_owned(),
        text: text.to_owned(),
    }
}

/// Reads every set under `dir` (`shared/validation`) and measures the signals; cosines
/// only with `embedder` (which must hold an embedding model).
pub async fn read_all(
    dir: &Path,
    embedder: Option<&Judge<Models>>,
) -> Result<SweepData, TaskError> {
    let mut raw = Vec::new();
    for (set, file) in RGB_RELEVANCE {
        for row in read_rgb(&dir.join(file))? {
            for (label, list) in [(true, &row.positive), (false, &row.negative)] {
                raw.extend(list.iter().map(|p| binary(set, &row.query, p, label)));
            }
        }
    }
    for row in read_dureader(&dir.join(DUREADER_FILE))? {
        for document in &row.documents {
            raw.push(binary(
                "DuReader zh",
                &row.question,
                &document.text(),
                document.is_selected,
            ));
        }
    }
    let kids = read_kids_coding(&dir.join(KIDS_CODING_FILE))?;
    let kids_chunks = distinct_chunks(&kids);
    for row in &kids {
        for &chunk in &kids_chunks {
            raw.push(binary(
                KIDS_CODING,
                &row.question,
                chunk,
                chunk == row.chunk,
            ));
        }
    }
    for j in read_cranfield(&dir.join(CRANFIELD_DIR), None)? {
        raw.push(Raw {
            set: "Cranfield",
            group: j.query_number.to_string(),
            grade: j.grade,
            binary: false,
            question: j.question,
            text: j.abstract_text,
        });
    }
    let wikieval = read_wikieval(&dir.join(WIKIEVAL_FILE))?;
    let mut texts: Vec<(&str, &str)> = raw
        .iter()
        .map(|r| (r.question.as_str(), r.text.as_str()))
        .collect();
    texts.extend(wikieval.iter().flat_map(|r| {
        [
            (r.question.as_str(), r.answer.as_str()),
            (r.question.as_str(), r.poor_answer.as_str()),
        ]
    }));
    let cosines = cosines(embedder, &texts).await?;
    let (passage_cosines, rubric_cosines) = cosines.split_at(raw.len());
    let passages = raw
        .iter()
        .zip(passage_cosines)
        .map(|(r, &cosine)| Passage {
            set: r.set,
            // The script the heuristic reads its threshold by.
            lang: Lang::detect(&r.question),
            part: Part::of(&r.group),
            group: r.group.clone(),
            grade: r.grade,
            binary: r.binary,
            overlap: question_overlap(&r.question, &r.text),
            cosine,
            focus: focus(&content_words(&r.question), &r.text),
        })
        .collect();
    let rubric = wikieval
        .iter()
        .zip(rubric_cosines.chunks(2))
        .map(|(row, cos)| {
            let measure = |answer: &str, cosine: Option<f64>| {
                (
                    question_overlap(&row.question, answer),
                    cosine,
                    noncommittal(answer).is_some(),
                )
            };
            RubricPair {
                part: Part::of(&row.question),
                answers: [
                    measure(&row.answer, cos[0]),
                    measure(&row.poor_answer, cos[1]),
                ],
            }
        })
        .collect();
    let mut support = faithfulness(dir)?;
    support.extend(kids_recall(&kids));
    let mut usefulness = usefulness(dir)?;
    usefulness.extend(kids_usefulness(&kids));
    Ok(SweepData {
        passages,
        support,
        usefulness,
        rubric,
    })
}

/// The cosine of each (question, text), `None` without an embedder; each distinct text is
/// embedded once, in batches, through the judge (cached, limited, retried).
async fn cosines(
    embedder: Option<&Judge<Models>>,
    pairs: &[(&str, &str)],
) -> Result<Vec<Option<f64>>, TaskError> {
    let Some(judge) = embedder else {
        return Ok(vec![None; pairs.len()]);
    };
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut distinct: Vec<String> = Vec::new();
    for text in pairs.iter().flat_map(|(q, t)| [*q, *t]) {
        index.entry(text).or_insert_with(|| {
            distinct.push(text.to_owned());
            distinct.len() - 1
        });
    }
    let mut vectors = Vec::with_capacity(distinct.len());
    for batch in distinct.chunks(256) {
        let embedded = judge
            .embed(batch)
            .await
            .map_err(|source| TaskError::Judge {
                task: TaskKind::ContextRelevance,
                source,
            })?;
        vectors.extend(embedded.vectors);
    }
    Ok(pairs
        .iter()
        .map(|(q, t)| Some(cosine(&vectors[index[q]], &vectors[index[t]])))
        .collect())
}

/// The coverage of each sentence of `answer` against `contexts`.
fn answer_shares(answer: &str, contexts: &[Material]) -> Vec<Shares> {
    sentences(answer)
        .iter()
        .map(|s| Coverage::measure(s, contexts))
        .collect()
}

/// WikiEval (grounded over ungrounded answer), RGB's fact sets (the true claim over the
/// fake one, against the true passages) and UHGEval's keywords.
fn faithfulness(dir: &Path) -> Result<Vec<SupportUnit>, TaskError> {
    let mut units = Vec::new();
    for row in read_wikieval(&dir.join(WIKIEVAL_FILE))? {
        let contexts: Vec<Material> = row.context_v1.iter().map(|c| Material::new(c)).collect();
        units.push(SupportUnit {
            set: "WikiEval",
            lang: Lang::En,
            part: Part::of(&row.question),
            answers: vec![
                answer_shares(&row.answer, &contexts),
                answer_shares(&row.ungrounded_answer, &contexts),
            ],
            label: None,
            credit: FAITHFULNESS,
        });
    }
    for (set, file) in [
        ("RGB en fact", RGB_EN_FACT_FILE),
        ("RGB zh fact", RGB_ZH_FACT_FILE),
    ] {
        for row in read_rgb(&dir.join(file))? {
            let (Some(fake), Some(answer)) = (&row.fake_answer, row.answers.first()) else {
                continue;
            };
            if row.positive.is_empty() {
                continue;
            }
            let contexts: Vec<Material> = row.positive.iter().map(|c| Material::new(c)).collect();
            let claim = |a: &str| {
                vec![Coverage::measure(
                    &super::super::rgb::claim(&row.query, a),
                    &contexts,
                )]
            };
            units.push(SupportUnit {
                set,
                lang: Lang::detect(&super::super::rgb::claim(&row.query, answer)),
                part: Part::of(&row.query),
                answers: vec![claim(answer), claim(fake)],
                label: None,
                credit: FAITHFULNESS,
            });
        }
    }
    let mut news: HashMap<String, Vec<Material>> = HashMap::new();
    for k in read_uhgeval(&dir.join(UHGEVAL_FILE), None)? {
        let contexts = news
            .entry(k.doc_id.clone())
            .or_insert_with(|| k.news.iter().map(|n| Material::new(n)).collect());
        units.push(SupportUnit {
            set: "UHGEval zh",
            lang: Lang::detect(&k.keyword),
            part: Part::of(&k.doc_id),
            answers: vec![answer_shares(&k.keyword, contexts)],
            label: Some(k.sound),
            credit: FAITHFULNESS,
        });
    }
    Ok(units)
}

/// Faithfulness's default rule, which the faithfulness sets stand for.
const FAITHFULNESS: SupportCredit = SupportCredit::FullByDegree;

/// Context recall on the kids-coding set: the claim "question？answer。" (one statement, as
/// a reference statement is self-contained) with the question's own chunk as the context,
/// against the same claim with another question's chunk — a pair per other chunk, scored by
/// context recall's default rule.
fn kids_recall(rows: &[KidsCodingRow]) -> Vec<SupportUnit> {
    let chunks = distinct_chunks(rows);
    let materials: Vec<Vec<Material>> = chunks.iter().map(|c| vec![Material::new(c)]).collect();
    let mut units = Vec::new();
    for row in rows {
        let claim = super::super::rgb::claim(&row.question, &row.answer);
        let coverage: Vec<Shares> = materials
            .iter()
            .map(|contexts| Coverage::measure(&claim, contexts))
            .collect();
        let Some(gold) = chunks.iter().position(|c| *c == row.chunk) else {
            continue;
        };
        for (other, negative) in coverage.iter().enumerate() {
            if other == gold {
                continue;
            }
            units.push(SupportUnit {
                set: KIDS_CODING,
                lang: Lang::detect(&claim),
                part: Part::of(&row.question),
                answers: vec![vec![coverage[gold].clone()], vec![negative.clone()]],
                label: None,
                credit: SupportCredit::Graded,
            });
        }
    }
    units
}

/// The kids-coding chunks judged for usefulness to the reference answer: the question's
/// own chunk (useful) and the other questions' chunks.
fn kids_usefulness(rows: &[KidsCodingRow]) -> Vec<Usefulness> {
    let chunks = distinct_chunks(rows);
    let mut items = Vec::new();
    for row in rows {
        for &chunk in &chunks {
            items.push(Usefulness {
                set: KIDS_CODING,
                lang: Lang::detect(&row.question),
                part: Part::of(&row.question),
                share: answer_overlap(&row.question, &row.answer, chunk)
                    .ok()
                    .map(|(s, _, _)| s),
                label: chunk == row.chunk,
            });
        }
    }
    items
}

/// RGB's passages judged for usefulness to the reference answer: positive (useful) or not.
fn usefulness(dir: &Path) -> Result<Vec<Usefulness>, TaskError> {
    let mut items = Vec::new();
    for (set, file) in RGB_RELEVANCE {
        for row in read_rgb(&dir.join(file))? {
            let lang = Lang::detect(&row.query);
            let answer = row.answers.join(if lang == Lang::Zh { "、" } else { ", " });
            for (label, list) in [(true, &row.positive), (false, &row.negative)] {
                items.extend(list.iter().map(|p| {
                    Usefulness {
                        set,
                        lang,
                        part: Part::of(&row.query),
                        share: answer_overlap(&row.query, &answer, p)
                            .ok()
                            .map(|(s, _, _)| s),
                        label,
                    }
                }));
            }
        }
    }
    Ok(items)
}
