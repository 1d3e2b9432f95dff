//! `rageval judge-check LABELS --metric M` (or `--head-to-head`): the flags as `rageval_run::commands::judge_check`'s
//! options; the agreement figures on stdout.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context as _;
use rageval_run::commands::judge_check::{self, JudgeCheckOptions, Measured};

use super::{Exit, completed, estimate};
use crate::cli::JudgeCheckArgs;
use crate::judge;
use crate::ui::Ui;

pub fn run(
    args: &JudgeCheckArgs,
    metric_files: &[PathBuf],
    ui: &Ui,
    out: &mut dyn Write,
) -> anyhow::Result<Exit> {
    let options = JudgeCheckOptions {
        labels: args.labels.clone(),
        format: args.format,
        measured: match &args.metric {
            Some(spec) => Measured::Metric(spec.clone()),
            None => Measured::HeadToHead {
                criterion: args.criterion.clone(),
            },
        },
        rubric_files: metric_files.to_vec(),
        few_shot: args.few_shot,
        out: args.run_dir.out.clone(),
        overwrite: args.run_dir.overwrite,
        retry_failed: args.run_dir.retry_failed,
        samples: args.samples,
        repeat: args.repeat,
        threshold: args.threshold,
        folds: args.folds,
        seed: args.run_dir.seed,
        bootstrap_resamples: args.bootstrap_resamples,
        judge: judge::options(&args.judge),
    };
    if args.run_dir.dry_run {
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
