//! `rageval eval`: the flags as `rageval_run::commands::eval`'s options, then the summary
//! table, the judge's footer and the gate's lines on stdout, notes on stderr.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context as _;
use rageval_judge::batch::PollPolicy;
use rageval_report::{Gate, render_summary_table};
use rageval_run::commands::eval::{self, EvalOptions};
use rageval_run::engine::batch::BatchMode;
use rageval_run::engine::words::counted;

use super::{Exit, calibrate, completed, estimate};
use crate::cli::{BatchArgs, EvalArgs, GateArgs, ResultsFormat};
use crate::judge;
use crate::ui::Ui;

pub fn run(
    args: &EvalArgs,
    metric_files: &[PathBuf],
    ui: &Ui,
    out: &mut dyn Write,
) -> anyhow::Result<Exit> {
    let options = options(args, metric_files)?;
    if args.show_settings {
        let resolved = eval::resolved_settings(&options, &judge::env, ui)?;
        writeln!(out, "{}", serde_json::to_string_pretty(&resolved)?)
            .context("cannot write to stdout")?;
        return Ok(Exit::Success);
    }
    if args.run_dir.dry_run {
        return estimate(eval::dry_run(&options, &judge::env, ui)?, ui, out);
    }
    let cancel = crate::signals::cancel_on_ctrl_c();
    let done = match completed(eval::run(&options, &judge::env, ui, &cancel)?, ui) {
        Ok(done) => done,
        Err(exit) => return Ok(exit),
    };
    out.write_all(render_summary_table(&done.summary).as_bytes())
        .context("cannot write to stdout")?;
    calibrate::print(&done.summary, out)?;
    writeln!(out, "{}", done.footer).context("cannot write to stdout")?;
    for line in eval::unscored_notes(&done.summary) {
        ui.note(&line);
    }
    if done.scored.cut > 0 {
        ui.note(&format!(
            "{} had their contexts cut to fit (--top-k / --context-window)",
            counted(done.scored.cut, "samples")
        ));
    }
    if args.results_format == ResultsFormat::Parquet {
        let written = rageval_report::write_results_parquet(&done.path)?;
        ui.note(&format!("wrote {}", written.display()));
    }
    ui.note(&format!(
        "wrote {} ({} × {}; {} scored now, {} of them failed)",
        done.path.display(),
        counted(done.summary.samples, "samples"),
        counted(done.summary.metric_order.len(), "metrics"),
        counted(done.scored.cells, "cells"),
        done.scored.failed
    ));
    let exit = super::report::gate_lines(&done.finished, ui, out)?;
    if let Some(too_many) = &done.too_many_failed {
        ui.warn(&format!("error: {}", too_many.message()));
        return Ok(Exit::JudgeFailed);
    }
    Ok(exit)
}

/// `eval`'s options from its flags and the rubric files (`--metric-file`).
pub fn options(args: &EvalArgs, metric_files: &[PathBuf]) -> anyhow::Result<EvalOptions> {
    Ok(EvalOptions {
        data: args.data.clone(),
        format: args.dataset.format,
        field_map: args.dataset.field_map.clone(),
        sheet: args.dataset.sheet.clone(),
        metrics: args.metrics.clone(),
        rubric_files: metric_files.to_vec(),
        out: args.run_dir.out.clone(),
        version_name: args.name.clone(),
        overwrite: args.run_dir.overwrite,
        samples: args.samples,
        seed: args.run_dir.seed,
        bootstrap_resamples: args.bootstrap_resamples,
        top_k: args.top_k,
        retry_failed: args.run_dir.retry_failed,
        gate: gate(&args.gate)?,
        junit: args.gate.junit.clone(),
        labels: calibrate::options(&args.labels),
        judge: judge::options(&args.judge),
        shard: args.shard,
        batch: batch_mode(&args.batch),
        reports: !args.no_reports,
        max_failed: args.max_failed,
    })
}

/// Batch mode from its flags, when any is given.
fn batch_mode(args: &BatchArgs) -> Option<BatchMode> {
    args.any().then(|| BatchMode {
        submit: args.batch,
        failed_items: args.batch_fallback,
        export: args.export_requests.clone(),
        import: args.import_responses.clone(),
        poll: PollPolicy {
            first: args.batch_poll,
            ..PollPolicy::default()
        },
        ..BatchMode::default()
    })
}

/// The `--fail-under` thresholds.
pub fn gate(args: &GateArgs) -> anyhow::Result<Gate> {
    Ok(Gate::parse(&args.fail_under)?)
}
