//! `rageval metrics` and `rageval metrics explain NAME`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use rageval_judge::config::JudgeFlags;
use rageval_metrics::{MetricCatalogue, MetricInfo};

use rageval_run::LocalJudge;

use crate::cli::{MetricsAction, MetricsArgs};
use crate::judge;

pub fn run(
    args: &MetricsArgs,
    metric_files: &[PathBuf],
    out: &mut dyn Write,
) -> anyhow::Result<ExitCode> {
    // The rubrics `eval` would read without judge flags: `--metric-file`, else
    // `RAGEVAL_CONFIG`, else `./rageval.toml`.
    let catalogue =
        rageval_run::engine::rubrics::catalogue(metric_files, &JudgeFlags::default(), &judge::env)?;
    match &args.action {
        None => list(&catalogue, out)?,
        Some(MetricsAction::Explain { name, judge }) => {
            let base = name.split('@').next().unwrap_or(name);
            let info = match catalogue.find(base) {
                Some(info) => info,
                // `build` explains an unknown name, with the nearest known one.
                None => match catalogue.build(base) {
                    Err(error) => return Err(error.into()),
                    Ok(metric) => metric.info(),
                },
            };
            // With a checker, its lines stand where the heuristic's figures would: the
            // heuristic's support-verdict figures are not the checker's.
            let checker = judge
                .as_ref()
                .map(|judge| checker_lines(info, &catalogue, judge))
                .transpose()?;
            explain(info, &catalogue, checker.is_some(), out)?;
            if let Some(text) = checker {
                out.write_all(text.as_bytes())
                    .context("cannot write to stdout")?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn list(catalogue: &MetricCatalogue, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut text = String::new();
    for info in catalogue.infos() {
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

/// The metric's description; `checker_answers`: a checker model answers its support
/// verdicts, so the heuristic's figures for that task are left out.
fn explain(
    info: &MetricInfo,
    catalogue: &MetricCatalogue,
    checker_answers: bool,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
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
    text.push_str(&offline_agreement(info, catalogue, checker_answers));
    out.write_all(text.as_bytes())
        .context("cannot write to stdout")?;
    Ok(())
}

/// What a checker model (`--judge checker:DIR`) would answer of the metric's tasks: its
/// family, its weights' SHA-256, and its agreement, unmeasured until `judge-check` runs.
fn checker_lines(
    info: &MetricInfo,
    catalogue: &MetricCatalogue,
    judge: &LocalJudge,
) -> anyhow::Result<String> {
    let LocalJudge::Checker(dir) = judge else {
        anyhow::bail!("`metrics explain --judge` takes checker:DIR only");
    };
    let checker = rageval_judge::SupportChecker::open(dir)
        .with_context(|| format!("cannot use the checker model {}", dir.display()))?;
    let asks_support = catalogue.build(info.name).is_ok_and(|metric| {
        metric
            .requirements()
            .tasks
            .contains(&rageval_tasks::TaskKind::SupportVerdicts)
    });
    if !asks_support {
        return Ok(format!(
            "  checker:  {} asks no support verdicts: the checker answers none of its tasks\n",
            info.name
        ));
    }
    // rageval keeps no record of judge-check runs by weights, so a checker's agreement
    // is unmeasured here whatever was measured elsewhere: judge-check's own report holds it.
    Ok(format!(
        "  checker:  support_verdicts by checker {} {}, {} head, weights SHA-256 {}\n    \
         agreement unmeasured — run `rageval judge-check LABELS --metric {} --judge \
         checker:{}` on labelled data (docs/judges.md); the heuristic judge's figures are \
         not the checker's\n",
        checker.family().name(),
        checker.name(),
        checker.head().name(),
        checker.sha256(),
        info.name,
        dir.display()
    ))
}

/// Where to measure a judge of one's own.
const MEASURE_ANY: &str =
    "    (measure any judge: `rageval judge-check`, docs/judge-fidelity.md)\n";

/// The offline line of a metric with a task the heuristic judge has no rule for; else `None`.
fn offline_unanswered(tasks: &[rageval_tasks::TaskKind]) -> Option<String> {
    let unanswered: Vec<String> = tasks
        .iter()
        .filter(|task| !rageval_tasks::Heuristic::supports(**task))
        .map(ToString::to_string)
        .collect();
    let others = (unanswered.len() < tasks.len()).then_some("; its other tasks unmeasured");
    (!unanswered.is_empty()).then(|| {
        format!(
            "  offline:  the heuristic judge has no rule for {}: with no chat model configured, \
             each cell that needs it fails (\"no judge can answer it\"), never a guessed score; \
             give a chat model (`--judge-model`, docs/judges.md){}\n",
            unanswered.join(", "),
            others.unwrap_or_default()
        )
    })
}

/// The offline heuristic judge's published agreement for the tasks a judged metric asks, in
/// its setting (`rageval judge-check` measures any judge the same way): the headline — the
/// lowest figure held out by set — then every figure with its kind, its 95% interval and a
/// warning where that interval reaches chance; "unmeasured" when none. `checker_answers`:
/// support verdicts go to a checker model, so the heuristic's figures for them are left
/// out (they speak for the heuristic alone).
fn offline_agreement(
    info: &MetricInfo,
    catalogue: &MetricCatalogue,
    checker_answers: bool,
) -> String {
    let Ok(metric) = catalogue.build(info.name) else {
        return String::new();
    };
    if metric.requirements().tasks.is_empty() {
        return String::new();
    }
    // Only figures measured for this metric's own tasks, in its setting.
    let figures = rageval_metrics::measured_for(metric.as_ref(), rageval_tasks::published());
    let shown: Vec<(rageval_tasks::TaskKind, rageval_report::MeasuredFigure)> = figures
        .into_iter()
        .filter(|figure| {
            !(checker_answers && figure.task == rageval_tasks::TaskKind::SupportVerdicts)
        })
        .map(|figure| {
            let shown = rageval_report::MeasuredFigure {
                dataset: figure.dataset,
                measure: figure.measure,
                value: figure.value,
                count: figure.count,
                unit: figure.unit,
                kind: figure.kind,
            };
            (figure.task, shown)
        })
        .collect();
    let Some(headline) = rageval_report::headline(shown.iter().map(|(_, f)| f)) else {
        return offline_unanswered(&metric.requirements().tasks).unwrap_or_else(|| {
            if checker_answers {
                "  offline:  the heuristic judge answers the tasks the checker does not; its \
                 agreement on them is unmeasured for this metric\n"
                    .into()
            } else {
                format!(
                    "  offline:  the heuristic judge's agreement with human labels on this \
                     metric's tasks is unmeasured\n{MEASURE_ANY}"
                )
            }
        });
    };
    let which = match headline.kind {
        rageval_tasks::FigureKind::HeldOutBySet => "the lowest figure held out by set",
        rageval_tasks::FigureKind::InSet => "the lowest in-set figure; none is held out by set",
    };
    let mut text = format!(
        "  offline:  the heuristic judge's measured agreement with human labels, each figure \
         held out by set\n            (its settings chosen without that set) or in-set (the \
         set helped choose them, or is the task's only one)\n    headline ({which}): {}\n",
        headline.describe()
    );
    for (task, shown) in &shown {
        let warning = if shown.includes_chance() {
            "  — interval includes chance: use a model judge for this"
        } else {
            ""
        };
        text.push_str(&format!("    {task}: {}{warning}\n", shown.describe()));
    }
    text.push_str(MEASURE_ANY);
    text
}
