//! `rageval judge-check`: the judge measured against human labels.

use std::path::PathBuf;

use clap::Args;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use rageval_core::stats::DEFAULT_BOOTSTRAP_RESAMPLES;
use rageval_run::commands::judge_check::LabelFormat;

use super::{JudgeArgs, OutputArgs, RunDirArgs};

#[derive(Debug, Args)]
pub struct JudgeCheckArgs {
    /// The labels: a labels JSONL file, or a shared set's file (folder for Cranfield) with
    /// --format.
    pub labels: PathBuf,

    /// The metric whose scores are checked against the labels (`rageval metrics` lists
    /// them; `NAME:MODE` picks a mode).
    #[arg(long, short, required_unless_present = "head_to_head")]
    pub metric: Option<String>,

    /// Check the head-to-head judge of `rageval pairwise` instead of a metric: each
    /// labelled pair (pairwise labels) is asked in both seat orders, orders that disagree
    /// are a tie, and the result is compared with `preferred` (agreement, and the
    /// position-flip rate). Needs a chat model
    #[arg(long, conflicts_with = "metric")]
    pub head_to_head: bool,

    /// With --head-to-head: judge by a rubric metric of one's own (a `[[metric]]` table of
    /// rageval.toml or --metric-file, see docs/rubrics.md), as `pairwise --criterion` does
    #[arg(long, value_name = "METRIC", requires = "head_to_head")]
    pub criterion: Option<String>,

    /// With a rubric metric: draw N labelled items (by --seed, spread over the label
    /// values) as the rubric's few-shot examples, and measure the agreement on the other
    /// labels only
    #[arg(
        long,
        value_name = "N",
        default_value_t = 0,
        conflicts_with = "head_to_head"
    )]
    pub few_shot: usize,

    /// The layout of LABELS: jsonl (rageval's labels, docs/judge-fidelity.md), or a shared
    /// set read in place: wikieval, uhgeval, rgb, dureader, cranfield (a folder)
    #[arg(long, default_value = "jsonl", value_parser = label_formats())]
    pub format: LabelFormat,

    #[command(flatten)]
    pub run_dir: RunDirArgs,

    /// Check only the first N source records (lines; questions or queries of a shared set).
    #[arg(long, value_name = "N")]
    pub samples: Option<usize>,

    /// Ask every judgement K times (the cache is bypassed for repeats 2..K) and report how
    /// often the repeats agree; unstable items are listed.
    #[arg(long, default_value_t = 1, value_name = "K",
          value_parser = clap::value_parser!(u32).range(1..=20))]
    pub repeat: u32,

    /// Binary labels: a score at or above this is a "good" verdict.
    #[arg(long, default_value_t = 0.5)]
    pub threshold: f64,

    /// Binary labels: folds for the cross-validated best threshold.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(2..=50))]
    pub folds: u32,

    /// Bootstrap resamples for the 95% intervals.
    #[arg(long, default_value_t = DEFAULT_BOOTSTRAP_RESAMPLES)]
    pub bootstrap_resamples: usize,

    #[command(flatten)]
    pub judge: JudgeArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}

/// `--format`: the engine's label formats, by name (listed in `--help`).
fn label_formats() -> impl TypedValueParser<Value = LabelFormat> {
    PossibleValuesParser::new(LabelFormat::ALL.map(LabelFormat::name)).try_map(|name| {
        LabelFormat::from_name(&name).ok_or_else(|| format!("unknown format `{name}`"))
    })
}
