//! `rageval compare RUN_A RUN_B [RUN_C…]`: the version table and, for each pair of runs,
//! per-metric paired differences with bootstrap intervals and permutation p-values. Markdown
//! goes to stdout; `--html`, `--markdown` and `--json` write files.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;
use rageval_report::{
    CompareSettings, Comparison, RunData, render_compare_html, render_compare_markdown,
};

use crate::cli::CompareArgs;

pub fn run(args: &CompareArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let runs = args
        .runs
        .iter()
        .map(|path| RunData::load(path))
        .collect::<Result<Vec<_>, _>>()?;
    let settings = CompareSettings {
        resamples: args.bootstrap_resamples,
        permutations: args.permutations,
        seed: args.seed,
        top_flips: args.top,
        ..CompareSettings::default()
    };
    let comparison = Comparison::build(&runs, settings)?;
    let markdown = render_compare_markdown(&comparison);
    out.write_all(markdown.as_bytes())
        .context("cannot write to stdout")?;
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
    Ok(ExitCode::SUCCESS)
}

fn write_file(path: &Path, text: &str) -> anyhow::Result<()> {
    fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
    let _ = writeln!(std::io::stderr().lock(), "wrote {}", path.display());
    Ok(())
}
