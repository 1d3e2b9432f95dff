//! The heuristic judge's agreement with human labels on the shared validation sets: the
//! gate of issue 7 (WikiEval faithfulness pairwise accuracy ≥ 0.9) and every figure the
//! crate's measured table claims, recomputed.

use std::path::PathBuf;

use rageval_tasks::validation::{WIKIEVAL_FILE, measure_all, read_wikieval, wikieval};
use rageval_tasks::{Heuristic, Policy, TaskJudge, measurements};

fn validation_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/validation")
}

fn heuristic_judge() -> TaskJudge {
    TaskJudge::new(Policy::offline()).with_heuristic(Heuristic::lexical())
}

#[tokio::test]
async fn wikieval_faithfulness_pairwise_accuracy_is_at_least_0_9() {
    let rows = read_wikieval(&validation_dir().join(WIKIEVAL_FILE)).expect("WikiEval sample");
    assert_eq!(rows.len(), 10);
    assert!(!rows[0].question.starts_with("Question:"));
    let figures = wikieval(&heuristic_judge(), &rows).await.expect("figures");
    assert_eq!(figures.faithfulness.pairs, 10);
    assert!(
        figures.faithfulness.accuracy() >= 0.9,
        "WikiEval faithfulness pairwise accuracy fell to {:.2}",
        figures.faithfulness.accuracy()
    );
}

#[tokio::test]
async fn every_measured_figure_is_reproduced() {
    let measured = measure_all(&heuristic_judge(), &validation_dir())
        .await
        .expect("the shared validation sets");
    let table = measurements();
    assert_eq!(measured.len(), table.len());
    for (now, claimed) in measured.iter().zip(&table) {
        assert_eq!(
            (
                &now.task,
                &now.implementation,
                now.version,
                &now.dataset,
                &now.measure
            ),
            (
                &claimed.task,
                &claimed.implementation,
                claimed.version,
                &claimed.dataset,
                &claimed.measure
            )
        );
        assert_eq!(now.count, claimed.count, "{claimed}");
        assert!(
            (now.value - claimed.value).abs() < 1e-9,
            "{claimed}: measured {} now",
            now.value
        );
    }
}

#[test]
fn a_broken_row_is_named_by_file_and_line() {
    let dir = std::env::temp_dir().join(format!("rageval-tasks-wikieval-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("bad.jsonl");
    std::fs::write(&file, "{\"question\": \"q\"}\n").expect("write");
    let error = read_wikieval(&file).expect_err("missing fields");
    assert!(
        error.to_string().contains("bad.jsonl:1: missing field"),
        "{error}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
