//! `rageval judge-check LABELS --metric M`: the flags as `rageval_run::commands::judge_check`'s
//! options; the agreement figures on stdout.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context as _;
use clap::Args;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use rageval_core::stats::{DEFAULT_BOOTSTRAP_RESAMPLES, DEFAULT_SEED};
use rageval_run::commands::judge_check::{self, JudgeCheckOptions, LabelFormat};

use super::{Exit, completed, estimate};
use crate::cli::{JudgeArgs, OutputArgs};
use crate::judge;
use crate::ui::Ui;

#[derive(Debug, Args)]
pub struct JudgeCheckArgs {
    /// The labels: a labels JSONL file, or a shared set's file (folder for Cranfield) with
    /// --format.
    pub labels: PathBuf,

    /// The metric whose scores are checked against the labels (`rageval metrics` lists
    /// them; `NAME:MODE` picks a mode).
    #[arg(long, short)]
    pub metric: String,

    /// The layout of LABELS: jsonl (rageval's labels, docs/judge-fidelity.md), or a shared
    /// set read in place: wikieval, uhgeval, rgb, dureader, cranfield (a folder)
    #[arg(long, default_value = "jsonl", value_parser = label_formats())]
    pub format: LabelFormat,

    /// The run directory to write (default: `runs/judge-check-<labels>-<metric>`). A run
    /// there over the same labels with the same metric and judge is resumed; other labels or
    /// another judge there are refused.
    #[arg(long, short)]
    pub out: Option<PathBuf>,

    /// Replace a run already in the output directory (by default a run there over the same
    /// labels, metric and judge is resumed: only what it lacks is judged).
    #[arg(long)]
    pub overwrite: bool,

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

    /// Seed of the bootstrap and the folds.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    pub seed: u64,

    /// Bootstrap resamples for the 95% intervals.
    #[arg(long, default_value_t = DEFAULT_BOOTSTRAP_RESAMPLES)]
    pub bootstrap_resamples: usize,

    /// Estimate, without any model call, what the check would ask of the judge (every
    /// repeat included). Sends nothing, writes nothing.
    #[arg(long)]
    pub dry_run: bool,

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

pub fn run(
    args: &JudgeCheckArgs,
    metric_files: &[PathBuf],
    ui: &Ui,
    out: &mut dyn Write,
) -> anyhow::Result<Exit> {
    let options = JudgeCheckOptions {
        labels: args.labels.clone(),
        format: args.format,
        metric: args.metric.clone(),
        rubric_files: metric_files.to_vec(),
        out: args.out.clone(),
        overwrite: args.overwrite,
        samples: args.samples,
        repeat: args.repeat,
        threshold: args.threshold,
        folds: args.folds,
        seed: args.seed,
        bootstrap_resamples: args.bootstrap_resamples,
        judge: judge::options(&args.judge),
    };
    if args.dry_run {
        return estimate(judge_check::dry_run(&options, &judge::env, ui)?, ui, out);
    }
    let cancel = crate::signals::cancel_on_ctrl_c();
    let checked = match completed(judge_check::run(&options, &judge::env, ui, &cancel)?, ui) {
        Ok(checked) => checked,
        Err(exit) => return Ok(exit),
    };
    out.write_all(judge_check::measure::render(&checked.agreement).as_bytes())
        .context("cannot write to stdout")?;
    writeln!(out, "{}", checked.footer).context("cannot write to stdout")?;
    super::report::gate_lines(&checked.finished, ui, out)
}
