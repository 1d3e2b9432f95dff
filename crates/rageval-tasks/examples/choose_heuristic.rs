//! Chooses the heuristic judge's defaults by measurement: for every verdict task and
//! script, sweeps the candidate rules (content-word overlap, MiniLM cosine, blends; their
//! thresholds) on the development half of the shared sets and prints each candidate's
//! development and held-out figures, best first, then for each set the rule chosen without
//! it (leave one set out) and that rule's figure on the set's held-out half
//! (`rageval_tasks::validation::choose`):
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
//! for verdicts). `--rows` prints every row of `rageval_tasks::measured` as measured now
//! (lexical rules, no embeddings), each with its kind: held out by set or in-set.

#![allow(clippy::print_stdout)]

use std::path::PathBuf;

use rageval_judge::{AnyEmbedder, Cache, Judge, JudgeConfig, MiniLmEmbedder, ModelFiles, Models};
use rageval_tasks::validation::choose::{Figure, read_all, sweep_all};
use rageval_tasks::validation::{SPLIT_SEED, measure_all, validation_dir};

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
    if args.iter().any(|a| a == "--rows") {
        println!(
            "rows of the measured table (task | dataset | measure | value | n | kind | metric):"
        );
        for m in measure_all(&dir).await? {
            println!(
                "{:?} | {} | {} | {:?} | {} {} | {} | {}",
                m.task,
                m.dataset,
                m.measure,
                m.value,
                m.count,
                m.unit,
                m.kind.label(),
                m.metric.as_deref().unwrap_or("-")
            );
        }
        return Ok(());
    }
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
        for left_out in sweep.leave_one_set_out() {
            println!(
                "  without {}: {}{}  dev {:.3} -> {} held-out {:.3} ({})",
                left_out.figure.set,
                left_out.chosen,
                if left_out.is_default {
                    " (the default)"
                } else {
                    ""
                },
                left_out.objective,
                left_out.figure.set,
                left_out.figure.value,
                left_out.figure.count
            );
        }
    }
    Ok(())
}
