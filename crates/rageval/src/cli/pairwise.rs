//! `pairwise`: the arguments of versions' answers judged head to head.

use std::path::PathBuf;

use clap::Args;
use rageval_run::commands::eval::MaxFailed;

use super::values::at_least_one;
use super::{DatasetArgs, JudgeArgs, OutputArgs, RunDirArgs};

/// Arguments of `rageval pairwise`.
#[derive(Debug, Args)]
#[command(mut_arg("out", |a| a.help(
    "The run directory to write (default: `runs/<first>-vs-<second>-pairwise`). A run \
     already there with the same versions, criterion and judge is resumed: the questions it \
     finished are kept and only the rest are asked; any other run there is refused"
)))]
pub struct PairwiseArgs {
    /// Two or more versions of the system over the same questions, each a run directory
    /// (its dataset is re-read), a collected dataset (JSONL, JSON, CSV, XLSX, Parquet) or a
    /// `pipeline` folder (its eval run's dataset). Questions pair by id, and by question
    /// text where ids differ; only the questions every version answered are judged
    #[arg(required = true, num_args = 2.., value_name = "VERSION")]
    pub versions: Vec<PathBuf>,

    /// Name the versions in their order (repeat: `--name V1.0 --name V1.1`); default: each
    /// one's file or folder name
    #[arg(long = "name", value_name = "NAME")]
    pub names: Vec<String>,

    /// Judge by a rubric metric of one's own (a `[[metric]]` table of rageval.toml or
    /// --metric-file, see docs/rubrics.md): its criterion replaces the built-in one
    /// (correct, grounded in its own contexts, answers what was asked)
    #[arg(long, value_name = "METRIC")]
    pub criterion: Option<String>,

    /// Only the first N paired questions
    #[arg(long, value_name = "N")]
    pub samples: Option<usize>,

    /// Questions judged at once (each asks every pair in both seat orders concurrently)
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = at_least_one::<usize>)]
    pub questions_at_once: usize,

    /// Bootstrap resamples of the win rates' and strengths' 95% intervals
    #[arg(long, value_name = "N",
          default_value_t = rageval_run::commands::pairwise::DEFAULT_RESAMPLES,
          value_parser = at_least_one::<usize>)]
    pub bootstrap_resamples: usize,

    /// The largest share of version pairs × questions whose judge calls may fail: past it
    /// the run exits 4, naming the share and the first error. A run whose every call
    /// failed always exits 4
    #[arg(long, value_name = "PCT", default_value_t = MaxFailed::DEFAULT, value_parser = str::parse::<MaxFailed>)]
    pub max_failed: MaxFailed,

    #[command(flatten)]
    pub dataset: DatasetArgs,

    #[command(flatten)]
    pub run_dir: RunDirArgs,

    #[command(flatten)]
    pub output: OutputArgs,

    #[command(flatten)]
    pub judge: JudgeArgs,
}
