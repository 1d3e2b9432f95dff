//! `rageval pairwise`: the flags as `rageval_run::commands::pairwise`'s options; each pair's
//! head-to-head line and the judge's footer on stdout.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context as _;
use rageval_run::commands::pairwise::versions::DatasetReading;
use rageval_run::commands::pairwise::{self, PairwiseOptions};
use rageval_run::engine::questions::Restart;

use super::{Exit, completed, estimate};
use crate::cli::PairwiseArgs;
use crate::judge;
use crate::ui::Ui;

pub fn run(
    args: &PairwiseArgs,
    metric_files: &[PathBuf],
    ui: &Ui,
    out: &mut dyn Write,
) -> anyhow::Result<Exit> {
    let options = PairwiseOptions {
        versions: args.versions.clone(),
        names: args.names.clone(),
        reading: DatasetReading {
            format: args.dataset.format,
            field_map: args.dataset.field_map.clone(),
            sheet: args.dataset.sheet.clone(),
        },
        samples: args.samples,
        out: args.run_dir.out.clone(),
        restart: Restart {
            overwrite: args.run_dir.overwrite,
            retry_failed: args.run_dir.retry_failed,
        },
        seed: args.run_dir.seed,
        criterion: args.criterion.clone(),
        metric_files: metric_files.to_vec(),
        questions_at_once: args.questions_at_once,
        resamples: args.bootstrap_resamples,
        max_failed: args.max_failed,
        judge: judge::options(&args.judge),
    };
    if args.run_dir.dry_run {
        return estimate(
            pairwise::plan::estimate(&options, &judge::env, ui)?,
            ui,
            out,
        );
    }
    let cancel = crate::signals::cancel_on_ctrl_c();
    let judged = match completed(pairwise::run(&options, &judge::env, ui, &cancel)?, ui) {
        Ok(judged) => judged,
        Err(exit) => return Ok(exit),
    };
    out.write_all(judged.render().as_bytes())
        .context("cannot write to stdout")?;
    writeln!(out, "{}", judged.footer).context("cannot write to stdout")?;
    ui.note(&format!("wrote {}", judged.path.display()));
    if let Some(too_many) = &judged.too_many_failed {
        ui.warn(&format!("error: {too_many}"));
        return Ok(Exit::JudgeFailed);
    }
    Ok(Exit::Success)
}
