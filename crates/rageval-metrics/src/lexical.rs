//! Answer against reference, without a model: exact match, string presence, edit-distance
//! similarities, BLEU, ROUGE and chrF.
//!
//! With several references a sample scores its best match (BLEU and chrF take all references
//! at once, as sacrebleu does). Every metric reads `response` and `reference`; a sample
//! lacking either is `Undefined`. Chinese text is tokenised with jieba by `rageval-core`'s
//! `text` module, never dropped.

use rageval_core::text::{self, BleuTokenizer, RougeKind};
use rageval_core::{Evidence, Outcome, Sample};
use serde_json::json;

use crate::metric::{MetricInfo, ModelFree, with_inputs};

/// Which lexical comparison a [`Lexical`] metric makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LexicalKind {
    ExactMatch,
    StringPresence,
    Levenshtein,
    Hamming,
    Jaro,
    JaroWinkler,
    Bleu,
    Rouge1,
    Rouge2,
    RougeL,
    Chrf,
}

/// A lexical metric from the catalogue.
pub struct Lexical {
    info: &'static MetricInfo,
    kind: LexicalKind,
}

impl Lexical {
    pub fn new(info: &'static MetricInfo, kind: LexicalKind) -> Self {
        Self { info, kind }
    }
}

impl ModelFree for Lexical {
    fn info(&self) -> &'static MetricInfo {
        self.info
    }

    fn score(&self, sample: &Sample) -> Outcome {
        with_inputs(self.info, sample, || {
            let answer = sample.answer.as_deref().unwrap_or_default();
            let references: Vec<&str> = sample
                .references
                .iter()
                .map(String::as_str)
                .filter(|r| !r.trim().is_empty())
                .collect();
            score_lexical(self.kind, answer, &references)
        })
    }
}

fn score_lexical(kind: LexicalKind, answer: &str, references: &[&str]) -> Outcome {
    let quadratic = matches!(
        kind,
        LexicalKind::Levenshtein
            | LexicalKind::Jaro
            | LexicalKind::JaroWinkler
            | LexicalKind::RougeL
    );
    if quadratic {
        if let Some(reason) = references
            .iter()
            .find_map(|r| text::too_long_to_compare(answer, r))
        {
            return Outcome::undefined(reason);
        }
    }
    match kind {
        LexicalKind::ExactMatch => binary(references.iter().any(|r| text::exact_match(answer, r))),
        LexicalKind::StringPresence => {
            binary(references.iter().any(|r| text::string_presence(answer, r)))
        }
        LexicalKind::Levenshtein => {
            best_of(references, |r| text::levenshtein_similarity(answer, r))
        }
        LexicalKind::Hamming => best_of(references, |r| text::hamming_similarity(answer, r)),
        LexicalKind::Jaro => best_of(references, |r| text::jaro_similarity(answer, r)),
        LexicalKind::JaroWinkler => {
            best_of(references, |r| text::jaro_winkler_similarity(answer, r))
        }
        LexicalKind::Bleu => {
            let bleu = text::sentence_bleu(answer, references, BleuTokenizer::Auto);
            Outcome::score(
                bleu.score / 100.0,
                Evidence::details([
                    ("precisions", json!(bleu.precisions)),
                    ("brevity_penalty", json!(bleu.brevity_penalty)),
                    ("hyp_len", json!(bleu.hyp_len)),
                    ("ref_len", json!(bleu.ref_len)),
                ]),
            )
        }
        LexicalKind::Rouge1 => best_rouge(answer, references, RougeKind::Rouge1),
        LexicalKind::Rouge2 => best_rouge(answer, references, RougeKind::Rouge2),
        LexicalKind::RougeL => best_rouge(answer, references, RougeKind::RougeL),
        LexicalKind::Chrf => Outcome::bare(text::chrf(answer, references) / 100.0),
    }
}

fn binary(hit: bool) -> Outcome {
    Outcome::bare(if hit { 1.0 } else { 0.0 })
}

/// The best similarity over the references, with the index of the reference that gave it.
fn best_of(references: &[&str], similarity: impl Fn(&str) -> f64) -> Outcome {
    let best = references
        .iter()
        .enumerate()
        .map(|(i, r)| (i, similarity(r)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    match best {
        Some((index, value)) if references.len() > 1 => {
            Outcome::score(value, Evidence::details([("best_reference", json!(index))]))
        }
        Some((_, value)) => Outcome::bare(value),
        None => Outcome::undefined("sample has no reference"),
    }
}

/// ROUGE F1 of the best-matching reference, with its precision and recall as evidence.
fn best_rouge(answer: &str, references: &[&str], kind: RougeKind) -> Outcome {
    let best = references
        .iter()
        .map(|r| text::rouge(answer, r, kind))
        .max_by(|a, b| a.f1.total_cmp(&b.f1));
    match best {
        Some(rouge) => Outcome::score(
            rouge.f1,
            Evidence::details([
                ("precision", json!(rouge.precision)),
                ("recall", json!(rouge.recall)),
            ]),
        ),
        None => Outcome::undefined("sample has no reference"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression (issue 40, item 11): edit distances of two long texts cost the product
    /// of their lengths (two of 200,000 characters ran 1,900 s); past the bound the cell is
    /// `undefined` with the reason, at once, for every quadratic measure.
    #[test]
    fn regression_issue_40_texts_too_long_to_compare_are_undefined_with_the_reason() {
        let answer = "a".repeat(12_000);
        let reference = "b".repeat(12_000);
        for kind in [
            LexicalKind::Levenshtein,
            LexicalKind::Jaro,
            LexicalKind::JaroWinkler,
            LexicalKind::RougeL,
        ] {
            match score_lexical(kind, &answer, &[&reference]) {
                Outcome::Undefined { reason } => assert!(
                    reason.contains("12000 and 12000 characters are too long to compare"),
                    "{kind:?}: {reason}"
                ),
                other => panic!("{kind:?}: {other:?}"),
            }
        }
        // Within the bound it scores.
        assert!(matches!(
            score_lexical(LexicalKind::Levenshtein, &"a".repeat(100), &["b"]),
            Outcome::Score { .. }
        ));
    }
    use crate::build;

    fn sample(answer: &str, references: &[&str]) -> Sample {
        Sample {
            id: "1".into(),
            question: "q".into(),
            answer: Some(answer.into()),
            references: references.iter().map(|r| r.to_string()).collect(),
            ..Sample::default()
        }
    }

    fn value(metric: &str, sample: &Sample) -> Option<f64> {
        build(metric)
            .unwrap()
            .score_now(sample)
            .and_then(|o| o.value())
    }

    #[test]
    fn exact_match_takes_any_reference() {
        let s = sample("Paris.", &["London", "paris"]);
        assert_eq!(value("exact_match", &s), Some(1.0));
        assert_eq!(value("exact_match", &sample("Lyon", &["paris"])), Some(0.0));
    }

    #[test]
    fn missing_reference_is_undefined_with_reason() {
        let s = sample("an answer", &[]);
        let outcome = build("rouge_l").unwrap().score_now(&s).unwrap();
        assert_eq!(outcome, Outcome::undefined("sample has no reference"));
        let mut s = sample("", &["ref"]);
        s.answer = None;
        assert_eq!(
            build("bleu").unwrap().score_now(&s).unwrap(),
            Outcome::undefined("sample has no response")
        );
    }

    #[test]
    fn identical_texts_score_one_everywhere() {
        let s = sample(
            "The cat sat on the mat today.",
            &["The cat sat on the mat today."],
        );
        for name in [
            "exact_match",
            "string_presence",
            "levenshtein",
            "hamming",
            "jaro",
            "jaro_winkler",
            "bleu",
            "rouge1",
            "rouge2",
            "rouge_l",
            "chrf",
        ] {
            let v = value(name, &s).unwrap();
            assert!((v - 1.0).abs() < 1e-9, "{name} gave {v}");
        }
    }

    #[test]
    fn chinese_is_scored_not_dropped() {
        let s = sample(
            "少儿编程教育市场规模持续扩大",
            &["少儿编程教育的市场规模正在扩大"],
        );
        for name in ["rouge1", "rouge_l", "bleu", "chrf"] {
            let v = value(name, &s).unwrap();
            assert!(v > 0.0 && v < 1.0, "{name} gave {v}");
        }
    }

    #[test]
    fn rouge_keeps_precision_and_recall() {
        let s = sample("a b c d", &["a b"]);
        let Outcome::Score { value, evidence } = build("rouge1").unwrap().score_now(&s).unwrap()
        else {
            panic!("expected a score")
        };
        // P = 2/4, R = 2/2, F = 2PR/(P+R) = 2/3.
        assert!((value - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(evidence.details["precision"], json!(0.5));
        assert_eq!(evidence.details["recall"], json!(1.0));
    }
}
