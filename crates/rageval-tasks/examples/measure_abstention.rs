//! Measures what the heuristic judge could say about abstention, on the shared sets:
//!
//! - whether the contexts support an answer: RGB's queries, each once with its positive
//!   passages (they hold the answer) and once with as many negative ones (on the topic,
//!   without it) — RGB's negative-rejection setting. Candidate rules: the highest overlap
//!   grade of any passage (AUROC) and "some passage is relevant" (balanced accuracy);
//! - whether an answer declines: the refusal phrases on answers that all answer (WikiEval's
//!   grounded, ungrounded and poor answers, the kids-coding references, FiQA's responses),
//!   whose flagged share is the detector's false-refusal rate, and on RGB's own refusal
//!   sentences.
//!
//! ```text
//! cargo test --workspace --locked --no-run && target/debug/examples/measure_abstention
//! ```
//!
//! Reads `../shared/validation/` relative to the workspace root (or
//! `$RAGEVAL_VALIDATION_DIR`).

#![allow(clippy::print_stdout)]

use std::path::PathBuf;

use rageval_core::agreement::{auroc, balanced_accuracy};
use rageval_tasks::validation::{
    KIDS_CODING_FILE, read_kids_coding, read_rgb, read_wikieval, validation_dir,
};
use rageval_tasks::{Abstention, ContextRelevance, GradeRelevanceBatch, Heuristic};

/// Passages shown per case (RGB's own experiments use five; every query has at least this
/// many positives and negatives in the sets measured, or the case is skipped).
const PASSAGES: usize = 3;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = validation_dir(&root);
    let heuristic = Heuristic::lexical();
    for set in ["rgb/en_fact.json", "rgb/zh_fact.json", "rgb/zh_refine.json"] {
        let rows = read_rgb(&dir.join(set))?;
        let (mut labels, mut grades, mut relevant) = (Vec::new(), Vec::new(), Vec::new());
        for row in &rows {
            if row.positive.len() < PASSAGES || row.negative.len() < PASSAGES {
                continue;
            }
            for (supported, passages) in [(true, &row.positive), (false, &row.negative)] {
                let contexts: Vec<String> = passages[..PASSAGES].to_vec();
                let batch = GradeRelevanceBatch {
                    question: row.query.clone(),
                    contexts: contexts.clone(),
                };
                let best = heuristic
                    .grade_relevance_batch(&batch)
                    .value
                    .iter()
                    .map(|g| f64::from(g.grade))
                    .fold(0.0, f64::max);
                let any = contexts.iter().any(|context| {
                    let task = ContextRelevance {
                        question: row.query.clone(),
                        context: context.clone(),
                    };
                    heuristic.context_relevance(&task).value.relevant
                });
                labels.push(supported);
                grades.push(best);
                relevant.push(any);
            }
        }
        println!(
            "supported? {set}: {} cases; AUROC of the best passage's grade {:.3}; balanced \
             accuracy of 'some passage relevant' {:.3}",
            labels.len(),
            auroc(&labels, &grades).unwrap_or(f64::NAN),
            balanced_accuracy(&labels, &relevant).unwrap_or(f64::NAN),
        );
    }

    let mut answers: Vec<(&str, String)> = Vec::new();
    for row in read_wikieval(&dir.join("wikieval/WikiEval_samples_10.jsonl"))? {
        for answer in [row.answer, row.ungrounded_answer, row.poor_answer] {
            answers.push(("wikieval", answer));
        }
    }
    for row in read_kids_coding(&dir.join(KIDS_CODING_FILE))? {
        answers.push(("kids-coding", row.answer));
    }
    let fiqa = std::fs::read_to_string(dir.join("ragas-fiqa-sample/fiqa_ragas_30.jsonl"))?;
    for line in fiqa.lines() {
        let row: serde_json::Value = serde_json::from_str(line)?;
        answers.push((
            "fiqa",
            row["response"].as_str().unwrap_or_default().to_owned(),
        ));
    }
    let declines = |answer: &str| {
        let task = Abstention {
            question: String::new(),
            contexts: Vec::new(),
            answer: answer.to_owned(),
        };
        heuristic.abstention(&task).value.refused
    };
    let flagged: Vec<&(&str, String)> = answers.iter().filter(|(_, a)| declines(a)).collect();
    println!(
        "declines? {} answers that answer (WikiEval, kids-coding, FiQA): {} flagged as declining",
        answers.len(),
        flagged.len()
    );
    for (set, answer) in flagged {
        println!(
            "  flagged ({set}): {}",
            answer.chars().take(160).collect::<String>()
        );
    }
    // RGB's refusal sentences, as its prompts ask models to write them (Chen et al. 2024).
    for refusal in [
        "I can not answer the question because of the insufficient information in documents.",
        "文档信息不足，因此我无法基于提供的文档回答该问题。",
    ] {
        println!("declines? RGB refusal {refusal:?}: {}", declines(refusal));
    }
    Ok(())
}
