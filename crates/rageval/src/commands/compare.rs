//! `rageval compare RUN_A RUN_B [RUN_C…]`: the version table (each run's means, and each
//! later run's Δ against the first with its interval, p-value and reading) and, for each
//! pair of runs, per-metric paired differences. Samples pair by id, and by question text
//! where ids differ, using each run's dataset when it can be re-read. Markdown goes to
//! stdout; `--html`, `--markdown`, `--json` and `--xlsx` write files. With `--pairwise`, a
//! `pairwise` run of the same versions adds each version's head-to-head result against the
//! first to the version table. With `--gate`, two runs are gated as baseline and candidate
//! (`compare_gate`).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use rageval_report::{
    CompareSettings, Comparison, PairwiseSummary, RunData, RunFolder, RunInfo, locate_run,
    read_run_samples, render_compare_html, render_compare_markdown, write_compare_xlsx,
};

use super::Exit;
use crate::cli::CompareArgs;
use crate::ui::Ui;

pub fn run(
    args: &CompareArgs,
    metric_files: &[PathBuf],
    ui: &Ui,
    out: &mut dyn Write,
) -> anyhow::Result<Exit> {
    if args.names.len() > args.runs.len() {
        anyhow::bail!(
            "{} --name for {} runs: give at most one per run, in the runs' order",
            args.names.len(),
            args.runs.len()
        );
    }
    let gate = super::compare_gate::prepare(&args.gate, args.runs.len())?;
    let pairwise = args
        .pairwise
        .as_deref()
        .map(|dir| load_pairwise("--pairwise", dir))
        .transpose()?;
    let runs = args
        .runs
        .iter()
        .map(|path| load_run(path, note))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let samples: Vec<_> = runs
        .iter()
        .map(|run| {
            read_run_samples(run).unwrap_or_else(|error| {
                note(&format!(
                    "{}: {error}; its samples pair by id alone",
                    run.name()
                ));
                Vec::new()
            })
        })
        .collect();
    let settings = CompareSettings {
        resamples: args.bootstrap_resamples,
        permutations: args.permutations,
        seed: args.seed,
        top_flips: args.top,
        min_overlap: args.min_overlap,
        common: args.common,
        metrics: args.metrics.clone(),
        ..CompareSettings::default()
    };
    let compare = |runs: &[RunData]| -> anyhow::Result<Comparison> {
        let mut comparison = Comparison::build_with_samples(runs, &samples, settings.clone())?;
        comparison.name_versions(&args.names);
        if let Some(summary) = &pairwise {
            comparison.add_head_to_head(summary, &summary.versions_of_runs(runs))?;
        }
        Ok(comparison)
    };
    let comparison = compare(&runs)?;
    let markdown = render_compare_markdown(&comparison);
    out.write_all(markdown.as_bytes())
        .context("cannot write to stdout")?;
    if let Some(line) = super::export::mlflow_runs_line(&runs) {
        writeln!(out, "\n{line}").context("cannot write to stdout")?;
    }
    if let Some(path) = &args.markdown {
        write_file(path, &markdown)?;
    }
    if let Some(path) = &args.html {
        write_file(path, &render_compare_html(&comparison))?;
    }
    if let Some(path) = &args.json {
        let json = serde_json::to_string_pretty(&comparison)
            .context("cannot encode the comparison as JSON")?;
        write_file(path, &json)?;
    }
    if let Some(path) = &args.xlsx {
        write_compare_xlsx(&comparison, path)?;
        note(&format!("wrote {}", path.display()));
    }
    match &gate {
        Some(gate) => super::compare_gate::run(
            &super::compare_gate::GateContext {
                args,
                metric_files,
                ui,
            },
            gate,
            &comparison,
            &runs,
            &compare,
            out,
        ),
        None => Ok(Exit::Success),
    }
}

/// The `pairwise` run in `dir`, given as `flag` (`--pairwise`, `--gate-pairwise`): the one
/// reader of both.
pub fn load_pairwise(flag: &str, dir: &Path) -> anyhow::Result<PairwiseSummary> {
    PairwiseSummary::load(dir)
        .with_context(|| format!("{flag} {} is not a pairwise run", dir.display()))
}

/// The run at `path`: a run directory, or a `pipeline` folder's `eval/` run (`say` is told
/// which was used).
pub fn load_run(path: &Path, say: impl Fn(&str)) -> anyhow::Result<RunData> {
    Ok(RunData::load(&run_dir(path, say)?)?)
}

/// [`load_run`] without the journal, which reports stream.
pub fn load_run_info(path: &Path, say: impl Fn(&str)) -> anyhow::Result<RunInfo> {
    Ok(RunInfo::load(&run_dir(path, say)?)?)
}

/// The run directory `path` names, itself or a `pipeline` folder's `eval/`.
fn run_dir(path: &Path, say: impl Fn(&str)) -> anyhow::Result<std::path::PathBuf> {
    let folder = locate_run(path)?;
    if let RunFolder::Pipeline { root, eval } = &folder {
        say(&format!(
            "{} is a pipeline folder: using its eval run {}",
            root.display(),
            eval.display()
        ));
    }
    Ok(folder.run_dir().to_path_buf())
}

fn write_file(path: &Path, text: &str) -> anyhow::Result<()> {
    rageval_core::files::write_atomically(path, text.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))?;
    note(&format!("wrote {}", path.display()));
    Ok(())
}

/// A status line on stderr.
fn note(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}
