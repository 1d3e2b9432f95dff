//! `rageval report RUN_DIR`: rewrites the human files of a finished run (report.html,
//! report.md, results.xlsx) and checks quality gates. `eval` calls [`finish_run`] too, so a
//! fresh run and a rewritten one get the same files.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;
use rageval_core::Sample;
use rageval_core::dataset::{self, FieldMap, Format, ReadOptions};
use rageval_report::{Gate, Manifest, RunData, render_junit, sha256_file, write_reports};

use crate::cli::{GateArgs, ReportArgs};
use crate::commands::EXIT_GATE_FAILED;

pub fn run(args: &ReportArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let gate = Gate::parse(&args.gate.fail_under)?;
    let run = RunData::load(&args.run)?;
    let samples = if args.no_dataset {
        Vec::new()
    } else {
        samples_of(&run.manifest)
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

/// The run's samples for the HTML drill-down, re-read from its dataset when the file is
/// still there with the same hash; otherwise none, with a note saying why.
pub(crate) fn samples_of(manifest: &Manifest) -> Vec<Sample> {
    let path = Path::new(&manifest.dataset.path);
    match sha256_file(path) {
        Ok(sha) if sha == manifest.dataset.sha256 => {}
        Ok(_) => {
            note(&format!(
                "{} changed since the run: the report shows verdicts without texts",
                path.display()
            ));
            return Vec::new();
        }
        Err(_) => {
            note(&format!(
                "{} is not readable: the report shows verdicts without texts",
                path.display()
            ));
            return Vec::new();
        }
    }
    match read_dataset(manifest, path) {
        Ok(samples) => samples,
        Err(error) => {
            note(&format!(
                "cannot re-read {} ({error:#}): the report shows verdicts without texts",
                path.display()
            ));
            Vec::new()
        }
    }
}

/// Reads the dataset with the options the run used (from its manifest's settings).
fn read_dataset(manifest: &Manifest, path: &Path) -> anyhow::Result<Vec<Sample>> {
    let settings = &manifest.settings;
    let field_map: Vec<String> = settings["field_map"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    let format = match manifest.dataset.format.as_str() {
        "jsonl" => Some(Format::Jsonl),
        "json" => Some(Format::Json),
        "csv" => Some(Format::Csv),
        "xlsx" => Some(Format::Xlsx),
        _ => None,
    };
    let options = ReadOptions {
        format,
        field_map: FieldMap::parse(&field_map)?,
        sheet: settings["sheet"].as_str().map(String::from),
    };
    let limit = settings["samples"]
        .as_u64()
        .map_or(usize::MAX, |n| usize::try_from(n).unwrap_or(usize::MAX));
    let samples = dataset::open(path, &options)?
        .take(limit)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(samples)
}

/// A status line on stderr.
fn note(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}
