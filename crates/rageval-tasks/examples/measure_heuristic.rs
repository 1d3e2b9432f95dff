//! Prints the heuristic judge's agreement with human labels on the shared validation sets —
//! the figures of `rageval_tasks::measured` and `docs/judges.md`:
//!
//! ```text
//! cargo run -p rageval-tasks --example measure_heuristic
//! ```
//!
//! Reads `../shared/validation/` relative to the workspace root.

#![allow(clippy::print_stdout)]

use std::path::PathBuf;

use rageval_tasks::validation::measure_all;
use rageval_tasks::{Heuristic, Policy, TaskJudge};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/validation");
    let judge = TaskJudge::new(Policy::offline()).with_heuristic(Heuristic::lexical());
    println!("| task | heuristic | data | measure | value | n |");
    println!("|---|---|---|---|---|---|");
    for m in measure_all(&judge, &dir).await? {
        println!(
            "| {} | {} v{} | {} | {} | {:.3} | {} {} |",
            m.task, m.implementation, m.version, m.dataset, m.measure, m.value, m.count, m.unit
        );
    }
    Ok(())
}
