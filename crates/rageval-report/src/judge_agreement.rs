//! Which judge answered each judged metric and how well that judge was measured to agree with
//! people on the metric's tasks — the words every human file puts beside a judged score, from
//! the manifest's [`MetricRecord::judges`]. A figure is shown with a 95% Wilson interval over
//! its items; where that interval reaches chance (0.5 for pairwise accuracy, balanced
//! accuracy and AUROC alike) the score is marked "interval includes chance".
//!
//! Each figure says its kind: **held out by set** (the judge's settings were chosen without
//! any part of that set) or **in-set** (the set helped choose them, or is the task's only
//! one). The console prints one line per judged metric with the spread of its figures across
//! the sets (lowest–highest) and its [`headline`] — the lowest held-out-by-set figure, the
//! least a user can expect on data unlike the labelled sets — and the reports list every
//! figure.
//!
//! The interval treats the figure as a proportion of `count` independent items: exact for
//! pairwise accuracy, an approximation for balanced accuracy and AUROC. Nothing here
//! measures agreement; `rageval judge-check` does.

use rageval_core::agreement::FigureKind;

use crate::{
    Manifest, MeasuredFigure, MetricRecord, RunInfo, TaskJudgeRecord, escape_html,
    escape_markdown_cell,
};

/// Every figure recorded here is at chance at 0.5.
pub const CHANCE: f64 = 0.5;
/// What a score is marked with when a figure's interval reaches chance.
pub const INCLUDES_CHANCE: &str = "interval includes chance";
/// What the console line of a judged metric ends with when any of its judges' figures has
/// an interval that reaches chance: on data like that set, its verdicts are no better than
/// a coin.
const AT_CHANCE_ON_SOME_DATA: &str = "; at or near chance on some data";
/// What a task without measured figures says.
pub const UNMEASURED: &str = "unmeasured";
/// Who answers a task no configured judge can answer, as the task router names it
/// (`rageval_tasks::TaskRoute::who`).
const UNAVAILABLE: &str = "unavailable";
/// What such a task says instead of [`UNMEASURED`]: there is no judge to measure, and its
/// cells fail.
const NO_JUDGE: &str = "no judge configured answers it, so its cells fail";

/// `unmeasured`, or for a task nobody answers, why there is nothing to measure.
fn without_figures(answered_by: &str) -> &'static str {
    if answered_by == UNAVAILABLE {
        NO_JUDGE
    } else {
        UNMEASURED
    }
}

/// What the two kinds of figure mean, where the reports list them.
const KINDS: &str = "Held out by set: the judge's settings were chosen without any part of \
                     that set, what to expect on data unlike it; in-set: the set helped \
                     choose them, or is the task's only one";

impl MeasuredFigure {
    /// The 95% Wilson score interval of the figure over its items (`None` without items).
    pub fn ci95(&self) -> Option<[f64; 2]> {
        rageval_core::stats::wilson(self.value, self.count).map(|i| [i.low, i.high])
    }

    /// Whether the interval reaches chance (no interval counts as reaching it).
    pub fn includes_chance(&self) -> bool {
        self.ci95()
            .is_none_or(|[low, high]| low <= CHANCE && CHANCE <= high)
    }

    /// `RGB en fact (en script) pairwise accuracy 0.90 [0.74, 0.97] (30 pairs), held out by
    /// set`.
    pub fn describe(&self) -> String {
        format!("{}, {}", self.describe_figure(), self.kind.label())
    }

    /// [`describe`](Self::describe) without the kind.
    fn describe_figure(&self) -> String {
        let interval = self.ci95().map_or(String::new(), |[low, high]| {
            format!(" [{low:.2}, {high:.2}]")
        });
        format!(
            "{} {} {:.2}{interval} ({} {})",
            self.dataset, self.measure, self.value, self.count, self.unit
        )
    }
}

/// The figure to print beside a score: the lowest held-out-by-set figure (what a user whose
/// data is unlike any labelled set can expect), or the lowest in-set one where none is held
/// out by set; `None` without figures.
pub fn headline<'a>(
    figures: impl IntoIterator<Item = &'a MeasuredFigure>,
) -> Option<&'a MeasuredFigure> {
    let figures: Vec<&MeasuredFigure> = figures.into_iter().collect();
    let lowest = |kind: FigureKind| {
        figures
            .iter()
            .copied()
            .filter(|f| f.kind == kind)
            .min_by(|a, b| a.value.total_cmp(&b.value))
    };
    lowest(FigureKind::HeldOutBySet).or_else(|| lowest(FigureKind::InSet))
}

impl TaskJudgeRecord {
    /// `support_verdicts: heuristic … v3 — WikiEval … ; …` or `… — unmeasured`.
    pub fn describe(&self) -> String {
        let figures: Vec<String> = self.measured.iter().map(MeasuredFigure::describe).collect();
        let measured = if figures.is_empty() {
            without_figures(&self.answered_by).to_string()
        } else {
            figures.join("; ")
        };
        format!("{}: {} — {measured}", self.task, self.answered_by)
    }
}

/// The judge lines of the metric `name` in a run's manifest (empty for a model-free metric
/// or a run that did not record its judges).
pub fn judge_lines(manifest: &Manifest, name: &str) -> Vec<String> {
    record(manifest, name).map_or_else(Vec::new, |r| {
        r.judges.iter().map(TaskJudgeRecord::describe).collect()
    })
}

/// Whether a figure measured for the judge of the metric `name` has an interval that
/// reaches chance.
pub fn includes_chance(manifest: &Manifest, name: &str) -> bool {
    record(manifest, name).is_some_and(|r| {
        r.judges
            .iter()
            .flat_map(|j| &j.measured)
            .any(MeasuredFigure::includes_chance)
    })
}

/// The lines the console prints under the summary table: one per judged metric, naming each
/// judge of its tasks once — with the spread of its figures across the sets it was measured
/// on (lowest–highest, the lowest described: its [`headline`]), or `unmeasured` — and
/// `at or near chance on some data` where a figure's interval reaches chance. Every figure is
/// in report.md and `rageval metrics explain`.
pub fn render_judge_lines(manifest: &Manifest, metrics: &[String]) -> String {
    let mut text = String::new();
    for name in metrics {
        let Some(line) = record(manifest, name).and_then(headline_line) else {
            continue;
        };
        let chance = if includes_chance(manifest, name) {
            AT_CHANCE_ON_SOME_DATA
        } else {
            ""
        };
        text.push_str(&format!("judge of {name}: {line}{chance}\n"));
    }
    text
}

/// `JUDGE — LOW–HIGH across N sets held out by set (lowest: FIGURE; highest: SET MEASURE);
/// TASK: JUDGE — unmeasured` (`JUDGE — KIND: FIGURE` with one figure) — the judges
/// with figures first; `None` for a metric without judges.
fn headline_line(record: &MetricRecord) -> Option<String> {
    // Each judge once, with the tasks it answered, in the order the metric asks them.
    let mut judges: Vec<(&str, Vec<&TaskJudgeRecord>)> = Vec::new();
    for task in &record.judges {
        match judges.iter_mut().find(|(who, _)| *who == task.answered_by) {
            Some((_, tasks)) => tasks.push(task),
            None => judges.push((task.answered_by.as_str(), vec![task])),
        }
    }
    let (measured, unmeasured): (Vec<_>, Vec<_>) = judges
        .into_iter()
        .partition(|(_, tasks)| tasks.iter().any(|t| !t.measured.is_empty()));
    let measured = measured.into_iter().filter_map(|(who, tasks)| {
        let figures: Vec<&MeasuredFigure> = tasks.iter().flat_map(|t| &t.measured).collect();
        let shown = headline(figures.iter().copied())?;
        let kind = shown.kind.label();
        let same_kind: Vec<&MeasuredFigure> = figures
            .iter()
            .copied()
            .filter(|f| f.kind == shown.kind)
            .collect();
        let highest = same_kind
            .iter()
            .copied()
            .max_by(|a, b| a.value.total_cmp(&b.value))
            .unwrap_or(shown);
        Some(match same_kind.len() {
            1 => format!("{who} — {kind}: {}", shown.describe_figure()),
            n => format!(
                "{who} — {:.2}–{:.2} across {n} sets {kind} (lowest: {}; highest: {} {})",
                shown.value,
                highest.value,
                shown.describe_figure(),
                highest.dataset,
                highest.measure
            ),
        })
    });
    let unmeasured = unmeasured.into_iter().map(|(who, tasks)| {
        let names: Vec<&str> = tasks.iter().map(|t| t.task.as_str()).collect();
        format!("{}: {who} — {}", names.join(", "), without_figures(who))
    });
    let parts: Vec<String> = measured.chain(unmeasured).collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// The mean's cell suffix: ` (interval includes chance)` where so, else nothing.
pub(crate) fn chance_suffix(run: &RunInfo, name: &str) -> &'static str {
    if includes_chance(&run.manifest, name) {
        " (interval includes chance)"
    } else {
        ""
    }
}

/// The "Judges" list of report.html: one item per judged metric (nothing when none).
pub(crate) fn judges_html(run: &RunInfo, metrics: &[String]) -> String {
    let items: Vec<String> = metrics
        .iter()
        .filter_map(|name| {
            let lines = judge_lines(&run.manifest, name);
            (!lines.is_empty()).then(|| {
                let lines: Vec<String> = lines.iter().map(|l| escape_html(l)).collect();
                format!(
                    "<li><code>{}</code>: {}</li>",
                    escape_html(name),
                    lines.join("<br>")
                )
            })
        })
        .collect();
    if items.is_empty() {
        return String::new();
    }
    format!(
        "<h3 id=\"judges\">Judges</h3>\n<p class=\"muted\">Who answered each judged metric's \
         tasks, and its agreement with human labels measured on labelled sets (95% Wilson \
         intervals; chance is 0.5). {KINDS}</p>\n<ul>\n{}\n</ul>\n",
        items.join("\n")
    )
}

/// The same list for report.md.
pub(crate) fn judges_markdown(run: &RunInfo, metrics: &[String]) -> String {
    let mut md = String::new();
    for name in metrics {
        for line in judge_lines(&run.manifest, name) {
            md.push_str(&format!("- `{name}`: {}\n", escape_markdown_cell(&line)));
        }
    }
    if md.is_empty() {
        return md;
    }
    format!(
        "\nJudges (agreement with human labels measured on labelled sets, 95% Wilson \
         intervals; chance is 0.5. {KINDS}):\n\n{md}"
    )
}

fn record<'a>(manifest: &'a Manifest, name: &str) -> Option<&'a MetricRecord> {
    manifest.metrics.iter().find(|m| m.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RunData;

    fn figure(value: f64, count: usize) -> MeasuredFigure {
        MeasuredFigure {
            dataset: "WikiEval".into(),
            measure: "pairwise accuracy".into(),
            value,
            count,
            unit: "pairs".into(),
            kind: FigureKind::InSet,
        }
    }

    fn held_out(dataset: &str, value: f64, count: usize) -> MeasuredFigure {
        MeasuredFigure {
            dataset: dataset.into(),
            kind: FigureKind::HeldOutBySet,
            ..figure(value, count)
        }
    }

    /// Wilson interval by hand (Wilson 1927; e.g. Agresti & Coull 1998, eq. 2): p = 0.8,
    /// n = 10: centre (0.8 + 3.8415/20) / 1.38415 = 0.71674, half-width
    /// 1.95996/1.38415 · √(0.016 + 0.0096037) = 0.22658 → [0.4902, 0.9433].
    #[test]
    fn the_interval_is_wilson_s() {
        let [low, high] = figure(0.8, 10).ci95().unwrap();
        assert!(
            (low - 0.4902).abs() < 1e-3 && (high - 0.9433).abs() < 1e-3,
            "{low} {high}"
        );
        assert!(figure(0.8, 10).includes_chance());
        assert!(!figure(0.8, 100).includes_chance());
        assert!(figure(0.52, 219).includes_chance());
        assert!(figure(0.9, 0).ci95().is_none() && figure(0.9, 0).includes_chance());
        assert_eq!(
            figure(1.0, 10).describe(),
            "WikiEval pairwise accuracy 1.00 [0.72, 1.00] (10 pairs), in-set"
        );
    }

    /// The headline is the lowest figure held out by set, however low an in-set one is;
    /// only without any held-out-by-set figure is it the lowest in-set one.
    #[test]
    fn the_headline_is_the_lowest_figure_held_out_by_set() {
        let figures = [
            held_out("A", 0.9, 100),
            figure(0.6, 10),
            held_out("B", 0.7, 100),
            held_out("C", 0.8, 100),
        ];
        assert_eq!(headline(&figures).map(|f| f.dataset.as_str()), Some("B"));
        let in_set = [figure(0.9, 10), figure(0.6, 10)];
        assert_eq!(headline(&in_set).map(|f| f.value), Some(0.6));
        assert!(headline(&[]).is_none());
    }

    /// A manifest written before figures had a kind reads them as in-set.
    #[test]
    fn a_figure_without_a_kind_reads_as_in_set() {
        let old: MeasuredFigure = serde_json::from_str(
            r#"{"dataset": "DuReader zh", "measure": "pairwise accuracy", "value": 0.52,
                "count": 219, "unit": "pairs"}"#,
        )
        .unwrap();
        assert_eq!(old.kind, FigureKind::InSet);
        let json = serde_json::to_value(held_out("A", 0.9, 10)).unwrap();
        assert_eq!(json["kind"], "held_out_by_set");
    }

    #[test]
    fn a_task_without_figures_reads_unmeasured() {
        let record = TaskJudgeRecord {
            task: "support_verdicts".into(),
            answered_by: "llm gguf:judge.gguf".into(),
            measured: Vec::new(),
        };
        assert_eq!(
            record.describe(),
            "support_verdicts: llm gguf:judge.gguf — unmeasured"
        );
        // Regression: a task no judge answers (knowledge_retention offline) read
        // "unavailable — unmeasured", as if a judge answered it unmeasured.
        let unanswered = TaskJudgeRecord {
            task: "knowledge_retention".into(),
            answered_by: UNAVAILABLE.into(),
            measured: Vec::new(),
        };
        assert_eq!(
            unanswered.describe(),
            "knowledge_retention: unavailable — no judge configured answers it, so its cells fail"
        );
    }

    /// Every human file names the judge of a judged metric beside its score, with its
    /// figures or "unmeasured", and marks a score whose judge's interval reaches chance.
    #[test]
    fn every_human_file_names_the_judge_and_marks_chance() {
        use crate::testing::calamine::{Data, Reader, Xlsx, open_workbook};
        use crate::{ReportTexts, render_html, render_markdown, write_xlsx};
        use rageval_core::Outcome;

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run");
        crate::testing::write_run(
            &path,
            "abc",
            &[
                ("q1", "faithfulness", Outcome::bare(0.5)),
                ("q1", "answer_correctness", Outcome::bare(0.25)),
                ("q1", "rouge_l", Outcome::bare(0.75)),
            ],
        );
        let mut run = RunData::load(&path).unwrap();
        for record in &mut run.manifest.metrics {
            record.judges = match record.name.as_str() {
                "faithfulness" => vec![
                    TaskJudgeRecord {
                        task: "split_statements".into(),
                        answered_by: "heuristic sentence_split v3".into(),
                        measured: Vec::new(),
                    },
                    TaskJudgeRecord {
                        task: "support_verdicts".into(),
                        answered_by: "heuristic content_word_overlap v3".into(),
                        measured: vec![held_out("DuReader zh", 0.52, 219), figure(1.0, 10)],
                    },
                ],
                "answer_correctness" => vec![TaskJudgeRecord {
                    task: "support_verdicts".into(),
                    answered_by: "llm gguf:judge.gguf".into(),
                    measured: Vec::new(),
                }],
                _ => Vec::new(),
            };
        }
        assert!(includes_chance(&run.manifest, "faithfulness"));
        assert!(!includes_chance(&run.manifest, "answer_correctness"));
        let dureader_figure = "DuReader zh pairwise accuracy 0.52 [0.45, 0.59] (219 pairs)";
        let dureader = format!("{dureader_figure}, held out by set");
        let faithful = format!(
            "support_verdicts: heuristic content_word_overlap v3 — {dureader}; WikiEval \
             pairwise accuracy 1.00 [0.72, 1.00] (10 pairs), in-set"
        );
        let unmeasured = "support_verdicts: llm gguf:judge.gguf — unmeasured";

        let html = render_html(&run, &[]);
        assert!(
            html.contains(&faithful) && html.contains(unmeasured),
            "{html}"
        );
        assert!(html.contains("0.5000 (interval includes chance)"));
        assert!(!html.contains("0.7500 (interval includes chance)"));
        let md = render_markdown(&run, &[]);
        assert!(
            md.contains(&format!("- `faithfulness`: {faithful}")),
            "{md}"
        );
        assert!(md.contains(&format!("- `answer_correctness`: {unmeasured}")));
        assert!(md.contains("| 0.5000 (interval includes chance) |"), "{md}");
        assert!(!md.contains("`rouge_l`:"));
        let console = render_judge_lines(&run.manifest, &run.metric_names());
        // One line per judged metric, each judge named once, the headline its figure.
        assert_eq!(
            console,
            format!(
                "judge of faithfulness: heuristic content_word_overlap v3 — held out by set: \
                 {dureader_figure}; split_statements: heuristic sentence_split v3 — \
                 unmeasured; at or near chance on some data\n\
                 judge of answer_correctness: {unmeasured}\n"
            )
        );

        let xlsx = path.join("results.xlsx");
        write_xlsx(&run, &ReportTexts::Absent, &xlsx).unwrap();
        let mut workbook: Xlsx<_> = open_workbook(&xlsx).unwrap();
        let sheet = workbook.worksheet_range("summary").unwrap();
        assert_eq!(
            sheet.get_value((0, 12)),
            Some(&Data::String("judge".into()))
        );
        let row = |metric: &str| {
            (1..sheet.height() as u32)
                .find(|&r| sheet.get_value((r, 0)) == Some(&Data::String(metric.into())))
                .unwrap()
        };
        let faithfulness = row("faithfulness");
        assert_eq!(
            sheet.get_value((faithfulness, 12)),
            Some(&Data::String(format!(
                "split_statements: heuristic sentence_split v3 — unmeasured\n{faithful}"
            )))
        );
        assert_eq!(
            sheet.get_value((faithfulness, 13)),
            Some(&Data::String(INCLUDES_CHANCE.into()))
        );
        assert_eq!(
            sheet.get_value((row("answer_correctness"), 12)),
            Some(&Data::String(unmeasured.into()))
        );
        assert_eq!(sheet.get_value((row("rouge_l"), 12)), Some(&Data::Empty));
    }
}
