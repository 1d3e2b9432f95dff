//! `rageval report RUN_DIR`: rewrites the human files of a finished run (report.html,
//! report.md, results.xlsx) and checks quality gates, as `eval` does when it finishes
//! (`rageval_run::engine::reports`). A `pipeline` folder stands for its `eval/` run.

use std::io::Write;

use anyhow::Context as _;
use rageval_report::ReportTexts;
use rageval_run::engine::reports::{Finished, finish_reports, texts_of};

use super::Exit;
use crate::cli::ReportArgs;
use crate::ui::Ui;

pub fn run(args: &ReportArgs, ui: &Ui, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let gate = super::eval::gate(&args.gate)?;
    let run = super::compare::load_run_info(&args.run, |text| ui.note(text))?;
    let texts = if args.no_dataset {
        ReportTexts::Absent
    } else {
        texts_of(&run.manifest, &run.path, ui)
    };
    let finished = finish_reports(&run, &texts, &gate, args.gate.junit.as_deref())?;
    gate_lines(&finished, ui, out)
}

/// Says which files were written and how each gate did; the exit the gate earns.
pub fn gate_lines(finished: &Finished, ui: &Ui, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let names: Vec<String> = finished
        .written
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    if !names.is_empty() {
        ui.note(&format!("wrote {}", names.join(", ")));
    }
    if !finished.gated {
        return Ok(Exit::Success);
    }
    for check in &finished.gate.checks {
        let mean = check
            .mean
            .map_or("none scored".into(), |m| format!("{m:.4}"));
        let verdict = if check.passed { "pass" } else { "FAIL" };
        let below = if check.passed {
            String::new()
        } else {
            format!(
                ", {} sample(s) below or failed",
                check.failing_samples.len()
            )
        };
        writeln!(
            out,
            "gate {verdict}: {} mean {mean} (minimum {}){below}",
            check.metric, check.minimum
        )
        .context("cannot write to stdout")?;
    }
    Ok(if finished.passed() {
        Exit::Success
    } else {
        Exit::GateFailed
    })
}
