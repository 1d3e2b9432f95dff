//! The flags of every command that writes a resumable run directory, declared once:
//! `eval` (and `pipeline` through it), `rank`, `reference`, `testset`, `judge-check` and
//! `pairwise` flatten [`RunDirArgs`]. Their words must be true of each of those commands; what only
//! one command does is said in its own description.

use std::path::PathBuf;

use clap::Args;
use rageval_core::stats::DEFAULT_SEED;

/// Where a run is written, whether an earlier run there is resumed or replaced, its seed,
/// and whether it runs at all or is only estimated.
#[derive(Debug, Clone, Args)]
pub struct RunDirArgs {
    /// The run directory to write. Default: under `runs/`, named after the input:
    /// `runs/<dataset name>` for eval, `runs/<dataset name>-rank` and `-reference`,
    /// `runs/<source name>-testset`, `runs/judge-check-<labels>-<metric>`. A run already
    /// there with the same data, settings and judge is resumed: what it finished is kept
    /// and only the rest is done; any other run there is refused
    #[arg(long, short)]
    pub out: Option<PathBuf>,

    /// Replace a run already in the run directory instead of resuming it
    #[arg(long)]
    pub overwrite: bool,

    /// When resuming, do again what failed (a judge error, an answer that never parsed):
    /// failed cells, questions or items are replaced, never duplicated
    #[arg(long)]
    pub retry_failed: bool,

    /// Seed of every random choice: bootstrap intervals and folds, pair draws and shuffles,
    /// the test set's plan
    #[arg(long, default_value_t = DEFAULT_SEED)]
    pub seed: u64,

    /// Estimate, without any model call, what the command would ask of the judge: model
    /// calls, prompt and completion tokens and cost, per metric or kind of call (per stage
    /// for `pipeline`, every repeat for `judge-check`), for the whole run and per prompt
    /// template (prompts rendered as a real run renders them, counted with tiktoken). With
    /// --judge checker:DIR, the claims the checker will score (locally, no cost; the
    /// checker is not run); with --escalate, the model calls are the most the cascade can
    /// make. Sends nothing, writes nothing
    #[arg(long)]
    pub dry_run: bool,
}
