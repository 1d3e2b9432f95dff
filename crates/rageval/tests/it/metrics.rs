//! `rageval metrics` and `rageval metrics explain`.

use crate::{rageval, repo_root, stderr, stdout};

#[test]
fn lists_every_catalogue_metric() {
    let output = rageval(&repo_root(), &["metrics"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    for info in rageval_metrics::catalogue() {
        assert!(
            text.contains(info.name),
            "{} missing from:\n{text}",
            info.name
        );
    }
}

#[test]
fn explains_formula_inputs_and_source() {
    let output = rageval(&repo_root(), &["metrics", "explain", "rouge_score"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.starts_with("rouge_l\n"), "{text}");
    assert!(text.contains("inputs:   response, reference"), "{text}");
    assert!(text.contains("source:   Lin 2004"), "{text}");
}

#[test]
fn explaining_an_unknown_metric_suggests_the_nearest() {
    let output = rageval(&repo_root(), &["metrics", "explain", "blue"]);
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(
        err.contains("unknown metric `blue` (did you mean `bleu`?)"),
        "{err}"
    );
    assert!(
        err.contains("hint: `rageval metrics` lists every metric"),
        "{err}"
    );
}

#[test]
fn judged_metrics_explain_their_modes() {
    let output = rageval(&repo_root(), &["metrics", "explain", "answer_relevancy"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.starts_with("answer_relevance\n"), "{text}");
    assert!(text.contains("mode answer_relevance:embedding"), "{text}");
    assert!(
        text.contains(
            "mode answer_relevance (default; also `answer_relevance:simulated_questions`)"
        ),
        "{text}"
    );
    assert!(text.contains("ragas ResponseRelevancy"), "{text}");
    assert!(text.contains("asks the judge"), "{text}");
}

/// Regression: `explain knowledge_retention` said the heuristic judge's agreement was
/// "unmeasured", as if it answered the metric; it has no rule for it, and offline the cells
/// fail. The line says so, and a metric the heuristic does answer keeps its figures.
#[test]
fn explain_says_what_the_offline_judge_does_for_a_metric_it_cannot_answer() {
    let output = rageval(&repo_root(), &["metrics", "explain", "knowledge_retention"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(!text.contains("unmeasured"), "{text}");
    assert!(
        text.contains(
            "offline:  the heuristic judge has no rule for knowledge_retention: with no chat \
             model configured, each cell that needs it fails (\"no judge can answer it\")"
        ),
        "{text}"
    );
    let output = rageval(&repo_root(), &["metrics", "explain", "faithfulness"]);
    let text = stdout(&output);
    assert!(!text.contains("has no rule for"), "{text}");
    assert!(
        text.contains("offline:  the heuristic judge's measured"),
        "{text}"
    );
}
