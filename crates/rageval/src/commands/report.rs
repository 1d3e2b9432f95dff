//! `rageval report RUN_DIR`: rewrites the human files of a finished run (report.html,
//! report.md, results.xlsx) and checks quality gates. `eval` calls [`finish_run`] too, so a
//! fresh run and a rewritten one get the same files.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;
use rageval_core::Sample;
use rageval_report::{Gate, Manifest, RunData, read_dataset_of, render_junit, write_reports};

use crate::cli::{GateArgs, ReportArgs};
use crate::commands::EXIT_GATE_FAILED;

pub fn run(args: &ReportArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let gate = Gate::parse(&args.gate.fail_under)?;
    let run = RunData::load(&args.run)?;
    let samples = if args.no_dataset {
        Vec::new()
    } else {
        samples_beside(&run.manifest, &run.path)
    };
    finish_run(&run, &samples, &gate, &args.gate, out)
}

/// Writes the run's human files, checks the gate, writes the JUnit file if asked, and says
/// which exit code the run earns: 1 when a gate failed, else 0.
pub fn finish_run(
    run: &RunData,
    samples: &[Sample],
    gate: &Gate,
    gate_args: &GateArgs,
    out: &mut dyn Write,
) -> anyhow::Result<ExitCode> {
    let written = write_reports(run, samples)?;
    let names: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
    note(&format!("wrote {}", names.join(", ")));
    let outcome = gate.check(run)?;
    if let Some(path) = &gate_args.junit {
        fs::write(path, render_junit(&run.name(), &outcome))
            .with_context(|| format!("cannot write {}", path.display()))?;
        note(&format!("wrote {}", path.display()));
    }
    if gate.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    for check in &outcome.checks {
        let mean = check
            .mean
            .map_or("none scored".into(), |m| format!("{m:.4}"));
        let verdict = if check.passed { "pass" } else { "FAIL" };
        writeln!(
            out,
            "gate {verdict}: {} mean {mean} (minimum {}){}",
            check.metric,
            check.minimum,
            if check.passed {
                String::new()
            } else {
                format!(
                    ", {} sample(s) below or failed",
                    check.failing_samples.len()
                )
            }
        )
        .context("cannot write to stdout")?;
    }
    if outcome.passed() {
        Ok(ExitCode::SUCCESS)
    } else {
        Ok(ExitCode::from(EXIT_GATE_FAILED))
    }
}

/// The run's samples for the reports' texts, re-read from its dataset when the file is
/// still there with the same hash; otherwise none, with a note saying why.
pub(crate) fn samples_of(manifest: &Manifest) -> Vec<Sample> {
    samples_beside(manifest, Path::new(""))
}

/// [`samples_of`] for a run in `run_dir` (its dataset may have moved there with it).
fn samples_beside(manifest: &Manifest, run_dir: &Path) -> Vec<Sample> {
    read_dataset_of(manifest, run_dir).unwrap_or_else(|error| {
        note(&format!(
            "{error}: the report shows verdicts without texts, in the journal's order"
        ));
        Vec::new()
    })
}

/// A status line on stderr.
fn note(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}
