//! `rageval eval` with no endpoint configured, on the embedded models that
//! `scripts/fetch-models.sh` provisions (found beside the executable): verdicts by the
//! heuristic judge, generated questions and entities by the GGUF chat model, embeddings by
//! all-MiniLM-L6-v2 — and the errors when the models are not where the flags say.

use std::fs;
use std::path::Path;

use serde_json::{Value, json};

use crate::judged::checked_cells;
use crate::{rageval, stderr};

const METRICS: &str = "faithfulness,answer_relevance,answer_relevance:embedding,\
                       semantic_similarity,context_entity_recall";

fn tiny_dataset(dir: &Path) -> std::path::PathBuf {
    let rows = [
        json!({
            "question": "Where is the Eiffel Tower?",
            "response": "The Eiffel Tower is in Paris, France.",
            "reference": "It stands in Paris.",
            "retrieved_contexts": ["The Eiffel Tower is a wrought-iron tower in Paris, France, built in 1889."],
        }),
        json!({
            "question": "Who wrote Pride and Prejudice?",
            "response": "Jane Austen wrote Pride and Prejudice in 1813.",
            "reference": "Jane Austen.",
            "retrieved_contexts": ["Pride and Prejudice is an 1813 novel by Jane Austen."],
        }),
        json!({
            "question": "What is the boiling point of water at sea level?",
            "response": "Water boils at 100 degrees Celsius at sea level.",
            "reference": "100 °C.",
            "retrieved_contexts": ["At sea level, pure water boils at 100 degrees Celsius (212 °F)."],
        }),
    ];
    let text: String = rows.iter().map(|row| format!("{row}\n")).collect();
    let path = dir.join("tiny.jsonl");
    fs::write(&path, text).unwrap();
    path
}

#[test]
fn without_an_endpoint_the_embedded_models_and_the_heuristic_judge_score_every_cell() {
    let dir = tempfile::tempdir().unwrap();
    let data = tiny_dataset(dir.path());
    let output = rageval(
        dir.path(),
        &[
            "eval",
            data.to_str().unwrap(),
            "--metrics",
            METRICS,
            "--out",
            "run",
        ],
    );
    let err = stderr(&output);
    assert!(output.status.success(), "{err}");
    // Who answers each task, with its measured agreement, is said on stderr.
    assert!(
        err.contains("judge: support_verdicts: heuristic content_word_overlap v2 — WikiEval"),
        "{err}"
    );
    assert!(
        err.contains(
            "judge: generate_questions: llm gguf:SmolLM2-135M-Instruct.Q4_1 — no agreement measured"
        ),
        "{err}"
    );
    assert!(
        err.contains("judge: split_statements: heuristic sentence_split"),
        "{err}"
    );

    let lines = checked_cells(&dir.path().join("run"), 3, 5);
    let scored = |metric: &str| {
        lines
            .iter()
            .filter(|l| l["metric"] == metric && l["status"] == "score")
            .count()
    };
    // MiniLM embeds every response and reference; the heuristic judges every statement.
    assert_eq!(scored("semantic_similarity"), 3);
    assert_eq!(scored("faithfulness"), 3);
    // The GGUF model's answers are schema-constrained, so its questions always parse.
    assert_eq!(scored("answer_relevance"), 3);
    assert_eq!(scored("answer_relevance:embedding"), 3);

    let manifest: Value =
        serde_json::from_slice(&fs::read(dir.path().join("run/manifest.json")).unwrap()).unwrap();
    let judge = &manifest["settings"]["judge"];
    assert_eq!(judge["kind"], "offline", "{judge}");
    assert!(
        judge["models"]["chat_model"]
            .as_str()
            .unwrap()
            .ends_with("SmolLM2-135M-Instruct.Q4_1.gguf"),
        "{judge}"
    );
    assert!(judge["stats"]["attempts"].as_u64().unwrap() > 0, "{judge}");
    let routes = judge["routes"].as_array().unwrap();
    let route = |task: &str| routes.iter().find(|r| r["task"] == task).unwrap();
    assert_eq!(
        route("support_verdicts")["answered_by"]["kind"],
        "heuristic"
    );
    assert_eq!(
        route("generate_questions")["answered_by"]["backend"],
        "gguf"
    );
}

#[test]
fn a_models_folder_without_the_models_is_an_error_naming_the_fetch_script() {
    let dir = tempfile::tempdir().unwrap();
    let data = tiny_dataset(dir.path());
    let empty = dir.path().join("empty");
    fs::create_dir(&empty).unwrap();
    let output = rageval(
        dir.path(),
        &[
            "eval",
            data.to_str().unwrap(),
            "--metrics",
            "faithfulness",
            "--models-dir",
            empty.to_str().unwrap(),
            "--out",
            "run",
        ],
    );
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(
        err.contains("scripts/fetch-models.sh") && err.contains("--models-dir"),
        "{err}"
    );
    assert!(!dir.path().join("run").exists());
}

#[test]
fn judge_gguf_names_a_model_file_and_bad_values_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let data = tiny_dataset(dir.path());
    let not_gguf = dir.path().join("model.gguf");
    fs::write(&not_gguf, "not a model").unwrap();
    let spec = format!("gguf:{}", not_gguf.display());
    let output = rageval(
        dir.path(),
        &["eval", data.to_str().unwrap(), "--judge", &spec],
    );
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(
        err.contains("model.gguf") && err.contains("not a GGUF file"),
        "{err}"
    );

    let output = rageval(
        dir.path(),
        &["eval", data.to_str().unwrap(), "--judge", "llama"],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("gguf:PATH"), "{}", stderr(&output));
}

/// Issue 3's two real sets on the embedded defaults, every judged metric: FiQA (English,
/// ragas's sample) and the S4 kids-coding set (Chinese), two samples each — a CI-sized cut
/// of a run that takes about half a minute per sample here.
#[test]
fn fiqa_and_kids_coding_score_every_judged_metric_on_the_embedded_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let fiqa = crate::repo_root().join("examples/fiqa-30.jsonl");
    let kids = crate::judged::kids_coding_dataset(dir.path());
    for (name, data) in [("fiqa", fiqa), ("kids", kids)] {
        let output = rageval(
            dir.path(),
            &[
                "eval",
                data.to_str().unwrap(),
                "--metrics",
                crate::judged::JUDGED,
                "--samples",
                "2",
                "--out",
                name,
            ],
        );
        assert!(output.status.success(), "{name}: {}", stderr(&output));
        let metrics = crate::judged::JUDGED.split(',').count();
        let lines = checked_cells(&dir.path().join(name), 2, metrics);
        let failed: Vec<&Value> = lines.iter().filter(|l| l["status"] == "failed").collect();
        assert!(failed.is_empty(), "{name}: {failed:?}");
        for metric in [
            "faithfulness",
            "context_recall",
            "answer_relevance",
            "semantic_similarity",
            "context_entity_recall",
        ] {
            let scored = lines
                .iter()
                .filter(|l| l["metric"] == metric && l["status"] == "score")
                .count();
            assert_eq!(scored, 2, "{name}: {metric}");
        }
    }
}
