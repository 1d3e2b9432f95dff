//! `rageval calibrate RUN_DIR --labels FILE`: the calibrated means of a finished run
//! (`rageval_run::commands::calibrate`) on stdout, the reports rewritten.

use std::io::Write;

use anyhow::Context as _;
use rageval_report::{Gate, RunInfo, Summary};
use rageval_run::commands::calibrate::{self, CalibrateOptions};
use rageval_run::engine::reports::{finish_reports, texts_of};

use super::Exit;
use crate::cli::{CalibrateArgs, LabelsArgs};
use crate::ui::Ui;

pub fn run(args: &CalibrateArgs, ui: &Ui, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let Some(options) = options(&args.labels) else {
        anyhow::bail!("--labels names the labels file to calibrate with");
    };
    let (summary, _) = calibrate::calibrate(&args.run, &options, ui)?;
    if summary.calibrated.is_empty() {
        // A calibration that calibrated nothing is not a success: the reports and the
        // summary are left as they were.
        anyhow::bail!(
            "no metric of {} could be calibrated with {} (the warnings above say why)",
            args.run.display(),
            options.labels.display()
        );
    }
    print(&summary, out)?;
    let run = RunInfo::load(&args.run)?;
    let texts = texts_of(&run.manifest, &run.path, ui);
    let finished = finish_reports(&run, &texts, &Gate::parse::<String>(&[])?, None)?;
    super::report::gate_lines(&finished, ui, out)
}

/// The calibration options of `--labels`, `--label-scale`, `--label-metric`.
pub fn options(args: &LabelsArgs) -> Option<CalibrateOptions> {
    Some(CalibrateOptions {
        labels: args.labels.clone()?,
        scale: args.label_scale,
        metric: args.label_metric.clone(),
    })
}

/// The calibrated means, when the summary has any.
pub fn print(summary: &Summary, out: &mut dyn Write) -> anyhow::Result<()> {
    if summary.calibrated.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "\ncalibrated with human labels (PPI++; 95% intervals):"
    )
    .context("cannot write to stdout")?;
    out.write_all(calibrate::render(summary).as_bytes())
        .context("cannot write to stdout")
}
