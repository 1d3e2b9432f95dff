//! `rageval merge`: the flags as `rageval_run::commands::merge`'s options, then the merged run's
//! summary table, the judge's accounts over every shard, and the gate's lines.

use std::io::Write;

use anyhow::Context as _;
use rageval_report::render_summary_table;
use rageval_run::commands::merge::{self, MergeOptions};

use super::Exit;
use crate::cli::MergeArgs;
use crate::ui::Ui;

pub fn run(args: &MergeArgs, ui: &Ui, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let options = MergeOptions {
        runs: args.runs.clone(),
        out: args.out.clone(),
        overwrite: args.overwrite,
        gate: super::eval::gate(&args.gate)?,
        junit: args.gate.junit.clone(),
    };
    let merged = merge::merge(&options, ui)?;
    out.write_all(render_summary_table(&merged.summary).as_bytes())
        .context("cannot write to stdout")?;
    writeln!(out, "{}", merged.footer).context("cannot write to stdout")?;
    ui.note(&format!(
        "wrote {} ({}, {} × {})",
        merged.path.display(),
        rageval_run::engine::words::counted(merged.shards as usize, "shards"),
        rageval_run::engine::words::counted(merged.summary.samples, "samples"),
        rageval_run::engine::words::counted(merged.summary.metric_order.len(), "metrics")
    ));
    super::report::gate_lines(&merged.finished, ui, out)
}
