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
            let base = name.split('@').next().unwrap_or(name);
            let info = match find(base) {
                Some(info) => info,
                // `build` explains an unknown name, with the nearest known one.
                None => match rageval_metrics::build(base) {
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
            "{} — {}\n    inputs:  {}\n    formula: {}\n    source:  {}\n{}\n",
            display_name(info),
            info.summary,
            input_names(info).join(", "),
            info.formula,
            info.source,
            mode_line(info)
        ));
    }
    text.push_str(
        "`rageval metrics explain NAME` shows one metric, with its aliases and each mode's \
         formula.\n",
    );
    out.write_all(text.as_bytes())
        .context("cannot write to stdout")
}

/// `    modes:   a (default), b, c` for metrics with modes.
fn mode_line(info: &MetricInfo) -> String {
    if info.modes.is_empty() {
        return String::new();
    }
    let names: Vec<String> = info
        .modes
        .iter()
        .enumerate()
        .map(|(i, m)| {
            if i == 0 {
                format!("{} (default)", m.name)
            } else {
                m.name.to_string()
            }
        })
        .collect();
    format!(
        "    modes:   {} — pick with `{}:MODE`\n",
        names.join(", "),
        info.name
    )
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
    for (index, mode) in info.modes.iter().enumerate() {
        let spec = if index == 0 {
            format!(
                "{} (default; also `{}:{}`)",
                info.name, info.name, mode.name
            )
        } else {
            format!("{}:{}", info.name, mode.name)
        };
        text.push_str(&format!(
            "\n  mode {spec}\n    {}\n    formula: {}\n    source:  {}\n",
            mode.summary, mode.formula, mode.source
        ));
    }
    if !info.modes.is_empty() {
        text.push('\n');
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
            "asks the judge (see `rageval eval --help` for choosing one)"
        } else {
            "none (exact computation)"
        }
    ));
    text.push_str(&offline_agreement(info));
    out.write_all(text.as_bytes())
        .context("cannot write to stdout")?;
    Ok(())
}

/// The offline heuristic judge's measured agreement for the tasks a judged metric asks, in
/// its setting (`rageval judge-check` measures any judge the same way), each with its 95%
/// interval and a warning where that interval reaches chance; "unmeasured" when none.
fn offline_agreement(info: &MetricInfo) -> String {
    let Ok(metric) = rageval_metrics::build(info.name) else {
        return String::new();
    };
    if metric.requirements().tasks.is_empty() {
        return String::new();
    }
    // Only figures measured for this metric's own tasks, in its setting.
    let figures = rageval_metrics::measured_for(metric.as_ref(), rageval_tasks::measurements());
    let mut text = if figures.is_empty() {
        String::from(
            "  offline:  the heuristic judge's agreement with human labels on this metric's tasks \
             is unmeasured\n",
        )
    } else {
        String::from("  offline:  the heuristic judge's measured agreement with human labels\n")
    };
    for figure in figures {
        let shown = rageval_report::MeasuredFigure {
            dataset: figure.dataset,
            measure: figure.measure,
            value: figure.value,
            count: figure.count,
            unit: figure.unit,
        };
        let warning = if shown.includes_chance() {
            "  — interval includes chance: use a model judge for this"
        } else {
            ""
        };
        text.push_str(&format!(
            "    {}: {}{warning}\n",
            figure.task,
            shown.describe()
        ));
    }
    text.push_str("    (measure any judge: `rageval judge-check`, docs/judge-fidelity.md)\n");
    text
}
