//! `rageval compare BASELINE CANDIDATE --gate SPEC`: the regression gate's glue. The gate's
//! settings and the pairwise run are read before the comparison (a bad SPEC costs nothing);
//! after it, the gate decides (`rageval_report::RegressionGate`), its lines go to stdout,
//! its warnings to stderr, and `--comment` writes the pull-request comment. A regression is
//! confirmed first with `--confirm K` (`compare_confirm`). Exit 1 only on a regression; 2
//! on bad settings, or a mismatch the gate was told to refuse; with `--confirm`, 3 or 4
//! when the repeats were capped or the judge never answered (no verdict).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use rageval_report::{
    Comparison, GateDecision, GateSpec, HTML_FILE, MARKDOWN_FILE, OnMismatch, PairwiseSummary,
    RegressionGate, ReportLocation, RunData, render_gate_comment, unix_now,
};

use super::Exit;
use super::compare_confirm::{Confirmation, Redecide, confirm};
use crate::cli::{CompareArgs, CompareGateArgs};
use crate::ui::Ui;

/// What the gate reads of the command: its flags, the rubric files (`--metric-file`, for
/// `--confirm`'s metrics) and where it speaks.
pub struct GateContext<'a> {
    pub args: &'a CompareArgs,
    pub metric_files: &'a [PathBuf],
    pub ui: &'a Ui,
}

/// The gate's settings and pairwise run, read and checked before the comparison.
pub struct PreparedGate {
    spec: GateSpec,
    pairwise: Option<PairwiseSummary>,
}

/// The gate `args` ask for over `runs` runs, or `None` without `--gate`.
pub fn prepare(args: &CompareGateArgs, runs: usize) -> anyhow::Result<Option<PreparedGate>> {
    let Some(argument) = &args.gate else {
        return Ok(None);
    };
    if runs != 2 {
        return Err(rageval_report::ReportError::GateRunCount { count: runs }.into());
    }
    let spec = GateSpec::from_argument(argument)?;
    let pairwise = args
        .gate_pairwise
        .as_deref()
        .map(|dir| super::compare::load_pairwise("--gate-pairwise", dir))
        .transpose()?;
    Ok(Some(PreparedGate { spec, pairwise }))
}

/// Gates `comparison` of `runs` (baseline, candidate), confirming a regression first with
/// `--confirm` (`rebuild` compares runs again); the exit it earns.
pub fn run(
    context: &GateContext<'_>,
    prepared: &PreparedGate,
    comparison: &Comparison,
    runs: &[RunData],
    rebuild: &dyn Fn(&[RunData]) -> anyhow::Result<Comparison>,
    out: &mut dyn Write,
) -> anyhow::Result<Exit> {
    let (gate_args, ui) = (&context.args.gate, context.ui);
    let [_, candidate] = runs else {
        return Err(rageval_report::ReportError::GateRunCount { count: runs.len() }.into());
    };
    if let Some(summary) = &prepared.pairwise {
        check_pairwise_order(summary, runs, |line| ui.note(line))?;
    }
    let decide = |comparison: &Comparison, runs: &[RunData]| -> anyhow::Result<RegressionGate> {
        Ok(RegressionGate::check(
            comparison,
            [&runs[0].manifest, &runs[1].manifest],
            &prepared.spec,
            prepared.pairwise.as_ref(),
            unix_now(),
        )?)
    };
    let mut gate = decide(comparison, runs)?;
    for warning in gate.mismatches.iter().chain(&gate.blind_spots) {
        ui.note(&format!("warning: gate: {warning}"));
    }
    if let Some(age) = &gate.baseline_age {
        ui.note(&format!("gate: {}", age.line()));
    }
    let refuse = gate_args.gate_strict || prepared.spec.on_mismatch == OnMismatch::Refuse;
    if refuse && !gate.mismatches.is_empty() {
        anyhow::bail!(
            "the gate refuses to compare {} with {}: {}; hint: judge both versions alike and \
             on the same questions, or gate with a warning (without --gate-strict, \
             on_mismatch = \"warn\")",
            gate.candidate,
            gate.baseline,
            gate.mismatches.join("; ")
        );
    }
    let confirmed_comparison;
    let mut comparison = comparison;
    if gate_args.confirm.is_some() && gate.decision() == GateDecision::Regressed {
        let redecide = Redecide {
            compare: rebuild,
            gate: &decide,
        };
        match confirm(context, &gate, comparison, runs, redecide, out)? {
            Confirmation::Decided(decided) => {
                let (confirmed_gate, rebuilt) = *decided;
                gate = confirmed_gate;
                confirmed_comparison = rebuilt;
                comparison = &confirmed_comparison;
            }
            Confirmation::Nothing => {}
            Confirmation::Ended(exit) => return Ok(exit),
        }
    } else if gate_args.dry_run {
        writeln!(
            out,
            "\n{}\nconfirm (dry run): no regression, nothing to judge again",
            gate.render_text().trim_end()
        )
        .context("cannot write to stdout")?;
        return Ok(Exit::Success);
    }
    writeln!(out, "\n{}", gate.render_text()).context("cannot write to stdout")?;
    if let Some(path) = &gate_args.comment {
        let reports = ReportLocation {
            url: gate_args.report_url.clone(),
            paths: report_paths(&candidate.path),
        };
        let comment = render_gate_comment(&gate, comparison, &reports);
        rageval_core::files::write_atomically(path, comment.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
        ui.note(&format!("wrote {}", path.display()));
    }
    Ok(match gate.decision() {
        GateDecision::Regressed => Exit::GateFailed,
        GateDecision::Improved | GateDecision::NoSignificantChange => Exit::Success,
    })
}

/// Refuses a pairwise run that judged the candidate as its first version and the baseline
/// as its second (the gate would read the win rate from the wrong side); says so when its
/// versions are not these two runs (by the rule of
/// [`PairwiseSummary::versions_of_runs`]: directory, pipeline folder or dataset), whose
/// order the gate then takes as given.
fn check_pairwise_order(
    summary: &PairwiseSummary,
    runs: &[RunData],
    note: impl Fn(&str),
) -> anyhow::Result<()> {
    let sources: Vec<&str> = summary.versions.iter().map(|v| v.source.as_str()).collect();
    let [first, second] = sources.as_slice() else {
        return Ok(());
    };
    match summary.versions_of_runs(runs).as_slice() {
        [Some(0), Some(1)] => Ok(()),
        [Some(1), Some(0)] => anyhow::bail!(
            "--gate-pairwise: the pairwise run judged the candidate {} first and the baseline \
             {} second; hint: run `rageval pairwise BASELINE CANDIDATE` in the order compare \
             takes them",
            runs[1].path.display(),
            runs[0].path.display()
        ),
        _ => {
            note(&format!(
                "warning: gate: the pairwise run's versions ({first}, {second}) are not the two \
                 runs compared: its first is read as the baseline, its second as the candidate"
            ));
            Ok(())
        }
    }
}

/// The candidate run's human reports that exist.
fn report_paths(run: &Path) -> Vec<String> {
    [HTML_FILE, MARKDOWN_FILE]
        .iter()
        .map(|name| run.join(name))
        .filter(|path| path.is_file())
        .map(|path| path.display().to_string())
        .collect()
}
