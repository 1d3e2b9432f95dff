//! `compare BASELINE CANDIDATE --gate SPEC --confirm K`: before a regression fails the gate,
//! the candidate cells that drove it are judged again (`rageval_run::commands::confirm`),
//! their medians put in place of the candidate's scores in memory, and the gate decided
//! again on the comparison rebuilt from them. The candidate's run directory is only read.

use std::io::Write;

use anyhow::Context as _;
use rageval_report::{
    Comparison, GateConfirmation, RegressionGate, RunData, apply_confirmed, dropped_cells,
};
use rageval_run::commands::confirm::{self, ConfirmOptions};

use super::compare_gate::GateContext;
use super::{Exit, completed, estimate};
use crate::judge;

/// How a confirmation ended.
pub enum Confirmation {
    /// The gate and comparison decided again on the confirmed scores.
    Decided(Box<(RegressionGate, Comparison)>),
    /// Nothing to judge again: no metric cell drove the regression (the head-to-head win
    /// rate alone regressed); the gate stands as decided.
    Nothing,
    /// A dry run (its estimate printed), a stop (a cap, the judge halted, Ctrl-C) or a judge
    /// that failed every repeat: the exit it earns, with no verdict.
    Ended(Exit),
}

/// What the gate needs to decide again: the comparison rebuilt from runs, and the gate
/// over a comparison.
pub struct Redecide<'a> {
    pub compare: &'a dyn Fn(&[RunData]) -> anyhow::Result<Comparison>,
    pub gate: &'a dyn Fn(&Comparison, &[RunData]) -> anyhow::Result<RegressionGate>,
}

/// Confirms `before`'s regression over `runs` (baseline, candidate) with K repeats.
pub fn confirm(
    context: &GateContext<'_>,
    before: &RegressionGate,
    comparison: &Comparison,
    runs: &[RunData],
    redecide: Redecide<'_>,
    out: &mut dyn Write,
) -> anyhow::Result<Confirmation> {
    let (args, ui) = (context.args, context.ui);
    let (Some(repeats), Some(dir), [baseline, candidate]) =
        (args.gate.confirm, &args.gate.confirm_out, runs)
    else {
        anyhow::bail!("--confirm needs K, --confirm-out DIR and two runs");
    };
    if args.judge.offline {
        anyhow::bail!(
            "--confirm asks the judge again, which --offline (answers from the cache only) \
             forbids; hint: drop --offline"
        );
    }
    let cells = dropped_cells(before, comparison, [baseline, candidate]);
    if cells.is_empty() {
        ui.note(
            "confirm: no metric's cells drove the regression (--confirm does not ask the \
             head-to-head judge again): the gate stands",
        );
        return Ok(Confirmation::Nothing);
    }
    let options = ConfirmOptions {
        candidate,
        cells: &cells,
        repeats,
        out: dir.clone(),
        judge: judge::options(&args.judge),
        rubric_files: context.metric_files.to_vec(),
    };
    if args.gate.dry_run {
        writeln!(
            out,
            "\n{}\nconfirm (dry run): {} cells that drove the regression, {repeats} repeats \
             each:",
            before.render_text().trim_end(),
            cells.len()
        )
        .context("cannot write to stdout")?;
        let planned = confirm::dry_run(&options, &judge::env, ui)?;
        return Ok(Confirmation::Ended(estimate(planned, ui, out)?));
    }
    let cancel = crate::signals::cancel_on_ctrl_c();
    let confirmed = match completed(confirm::run(&options, &judge::env, ui, &cancel)?, ui) {
        Ok(confirmed) => confirmed,
        Err(exit) => {
            ui.warn(&format!(
                "the gate has no verdict: confirming stopped before every repeat was judged \
                 (before confirming: {})",
                before.verdict_line()
            ));
            return Ok(Confirmation::Ended(exit));
        }
    };
    let cost = confirmed
        .cost_usd
        .map_or(String::new(), |usd| format!(", ${usd:.4}"));
    ui.note(&format!("confirm: {} judge calls{cost}", confirmed.calls));
    for difference in &confirmed.differences {
        ui.warn(&format!(
            "warning: confirm: the repeats against the candidate run: {difference}"
        ));
    }
    if let Some(too_many) = &confirmed.too_many_failed {
        ui.warn(&format!("error: confirming: {}", too_many.message()));
        return Ok(Confirmation::Ended(Exit::JudgeFailed));
    }
    let mut confirmed_runs = runs.to_vec();
    apply_confirmed(&mut confirmed_runs[1], &confirmed.cells);
    let comparison = (redecide.compare)(&confirmed_runs)?;
    let mut gate = (redecide.gate)(&comparison, &confirmed_runs)?;
    gate.confirmation = Some(GateConfirmation::of(
        repeats,
        &confirmed.cells,
        before,
        dir.display().to_string(),
    ));
    ui.note(&format!(
        "wrote {}",
        dir.join(confirm::CONFIRMED_FILE).display()
    ));
    Ok(Confirmation::Decided(Box::new((gate, comparison))))
}
