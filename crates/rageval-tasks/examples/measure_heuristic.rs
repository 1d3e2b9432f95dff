//! Prints the heuristic judge's agreement with human labels on the shared validation sets
//! (the figures of `rageval_tasks::measured` and `docs/judges.md`):
//!
//! ```text
//! cargo run -p rageval-tasks --example measure_heuristic
//! ```
//!
//! Reads `../shared/validation/` relative to the workspace root.

#![allow(clippy::print_stdout)]

use std::path::PathBuf;

use rageval_tasks::validation::{read_wikieval, wikieval};
use rageval_tasks::{Heuristic, Policy, TaskJudge};

fn shared() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/validation")
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let judge = TaskJudge::new(Policy::offline()).with_heuristic(Heuristic::lexical());
    let rows = read_wikieval(&shared().join("wikieval/WikiEval_samples_10.jsonl"))?;
    let figures = wikieval(&judge, &rows).await?;
    for (name, figure) in [
        ("faithfulness", figures.faithfulness),
        ("answer relevance", figures.answer_relevance),
        ("context relevance", figures.context_relevance),
    ] {
        println!(
            "WikiEval {name} pairwise accuracy {:.2} ({} pairs)",
            figure.accuracy(),
            figure.pairs
        );
    }
    Ok(())
}
