//! `rageval metrics` and `rageval metrics explain NAME`.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context as _;
use rageval_metrics::{MetricInfo, catalogue, find};

use crate::cli::{MetricsAction, MetricsArgs};

pub fn run(args: &MetricsArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    match &args.action {
        None => list(out)?,
        Some(MetricsAction::Explain { name }) => {
            let name = name.split('@').next().unwrap_or(name);
            let info = match find(name) {
                Some(info) => info,
                // `build` explains an unknown name, with the nearest known one.
                None => match rageval_metrics::build(name) {
                    Err(error) => return Err(error.into()),
                    Ok(metric) => metric.info(),
                },
            };
            explain(info, out)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn list(out: &mut dyn Write) -> anyhow::Result<()> {
    let mut text = String::new();
    for info in catalogue() {
        text.push_str(&format!(
            "{} — {}\n    inputs:  {}\n    formula: {}\n    source:  {}\n\n",
            display_name(info),
            info.summary,
            input_names(info).join(", "),
            info.formula,
            info.source
        ));
    }
    text.push_str("`rageval metrics explain NAME` shows one metric, with its aliases.\n");
    out.write_all(text.as_bytes())
        .context("cannot write to stdout")
}

fn input_names(info: &MetricInfo) -> Vec<&'static str> {
    info.inputs.iter().map(|i| i.field_name()).collect()
}

fn display_name(info: &MetricInfo) -> String {
    if info.takes_cutoff {
        format!("{}[@k]", info.name)
    } else {
        info.name.to_string()
    }
}

fn explain(info: &MetricInfo, out: &mut dyn Write) -> anyhow::Result<()> {
    let inputs = input_names(info);
    let mut text = format!(
        "{}\n  {}\n\n  inputs:   {}\n  formula:  {}\n  source:   {}\n",
        info.name,
        info.summary,
        inputs.join(", "),
        info.formula,
        info.source
    );
    if !info.aliases.is_empty() {
        text.push_str(&format!("  aliases:  {}\n", info.aliases.join(", ")));
    }
    if info.takes_cutoff {
        text.push_str(&format!(
            "  cut-off:  `{0}@k` scores the top k (e.g. `{0}@10`); without it, every retrieved item\n",
            info.name
        ));
    }
    text.push_str(&format!(
        "  model:    {}\n",
        if info.needs_model {
            "asks the judge"
        } else {
            "none (exact computation)"
        }
    ));
    out.write_all(text.as_bytes())
        .context("cannot write to stdout")?;
    Ok(())
}
