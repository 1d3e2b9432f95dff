//! Chooses the heuristic judge's defaults by measurement: for every verdict task and
//! script, sweeps the candidate rules (content-word overlap, MiniLM cosine, blends; their
//! thresholds) on the development half of the shared sets and prints each candidate's
//! development and held-out figures, best first (`rageval_tasks::validation::choose`):
//!
//! ```text
//! cargo run -p rageval-tasks --example choose_heuristic -- [--top N] [--no-embeddings] [--rows]
//! ```
//!
//! Reads `../shared/validation/` relative to the workspace root (or
//! `$RAGEVAL_VALIDATION_DIR`) and all-MiniLM-L6-v2 from
//! the models folder (`scripts/fetch-models.sh`), caching the vectors in
//! `target/choose-heuristic-embeddings.sqlite`; with `--no-embeddings`, overlap only (the
//! defaults the judge uses: `--judge heuristic` and the offline routing read no embeddings
//! for verdicts). `--rows` prints the chosen candidates' held-out figures, the rows of
//! `rageval_tasks::measured`.

#![allow(clippy::print_stdout)]

use std::path::PathBuf;

use rageval_judge::{AnyEmbedder, Cache, Judge, JudgeConfig, MiniLmEmbedder, ModelFiles, Models};
use rageval_tasks::validation::choose::{Figure, held_out_rows, read_all, sweep_all};
use rageval_tasks::validation::{SPLIT_SEED, validation_dir};

fn figures(figures: &[Figure]) -> String {
    figures
        .iter()
        .map(|f| format!("{} {:.3} ({})", f.set, f.value, f.count))
        .collect::<Vec<_>>()
        .join("; ")
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let top = args
        .iter()
        .position(|a| a == "--top")
        .and_then(|i| args.get(i + 1))
        .map_or(Ok(5), |n| n.parse())?;
    let dir = validation_dir(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."));
    let embedder = if args.iter().any(|a| a == "--no-embeddings") {
        None
    } else {
        let files = ModelFiles::locate(None)?;
        let models = Models {
            chat: None,
            embedder: Some(AnyEmbedder::new(MiniLmEmbedder::open(&files.minilm)?)),
        };
        // Embeddings are cached between runs (embedding every text takes minutes).
        let cache = Cache::open(
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../target/choose-heuristic-embeddings.sqlite"),
        )?;
        Some(Judge::new(models, Some(cache), JudgeConfig::default()))
    };
    let data = read_all(&dir, embedder.as_ref()).await?;
    println!("split: by question, seed {SPLIT_SEED:?}; objective: mean dev figure (0.5 = chance)");
    let sweeps = sweep_all(&data);
    if args.iter().any(|a| a == "--rows") {
        println!("\nheld-out rows of the chosen candidates (task, dataset, measure, value, n):");
        for (task, dataset, measure, value, count, unit) in held_out_rows(&sweeps) {
            println!("{task:?} | {dataset} | {measure} | {value:?} | {count} {unit}");
        }
        return Ok(());
    }
    for sweep in sweeps {
        println!("\n== {} ({})", sweep.task, sweep.lang.code());
        for (rank, scored) in sweep.ranked.iter().take(top).enumerate() {
            println!(
                "{}{}  dev {:.3}: {}\n      held-out: {}",
                if rank == 0 { "* " } else { "  " },
                scored.candidate,
                scored.objective,
                figures(&scored.dev),
                figures(&scored.held_out)
            );
        }
    }
    Ok(())
}
