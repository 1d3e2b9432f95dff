//! `rageval pipeline`: the flags as `rageval_run::commands::pipeline`'s options; each finished
//! stage's figures on stdout as it ends, then `eval`'s summary.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context as _;
use rageval_report::render_summary_table;
use rageval_run::commands::pipeline::{self, PipelineOptions, StageEnded};

use super::reference::{print_referenced, reference_options};
use super::{print_ranked, ranking_options};
use crate::cli::PipelineArgs;
use crate::commands::{Exit, completed, estimate};
use crate::judge;
use crate::ui::Ui;

pub fn run(
    args: PipelineArgs,
    metric_files: &[PathBuf],
    ui: &Ui,
    out: &mut dyn Write,
) -> anyhow::Result<Exit> {
    let options = PipelineOptions {
        eval: super::super::eval::options(&args.eval, metric_files)?,
        ranking: ranking_options(&args.ranking),
        reference: reference_options(&args.reference),
    };
    if args.eval.run_dir.dry_run {
        return estimate(
            rageval_run::commands::pipeline::plan::estimate(&options, &judge::env, ui)?,
            ui,
            out,
        );
    }
    let cancel = crate::signals::cancel_on_ctrl_c();
    let mut printed: anyhow::Result<()> = Ok(());
    let mut stage_done = |stage: StageEnded<'_>| {
        let result = match stage {
            StageEnded::Rank(ranked) => print_ranked(ranked, out),
            StageEnded::Reference(done) => print_referenced(done, ui, out),
        };
        if printed.is_ok() {
            printed = result;
        }
    };
    let ended = pipeline::run(&options, &judge::env, ui, &cancel, &mut stage_done)?;
    printed?;
    let piped = match completed(ended, ui) {
        Ok(piped) => piped,
        Err(exit) => return Ok(exit),
    };
    let eval = &piped.eval;
    out.write_all(render_summary_table(&eval.summary).as_bytes())
        .context("cannot write to stdout")?;
    writeln!(out, "{}", eval.footer).context("cannot write to stdout")?;
    ui.note(&format!("wrote {}", options.root().display()));
    let exit = super::super::report::gate_lines(&eval.finished, ui, out)?;
    if let Some(too_many) = &eval.too_many_failed {
        ui.warn(&format!("error: {}", too_many.message()));
        return Ok(Exit::JudgeFailed);
    }
    Ok(exit)
}
