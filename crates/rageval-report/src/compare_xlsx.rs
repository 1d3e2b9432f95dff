//! `rageval compare --xlsx`: the comparison as a workbook.
//!
//! - `versions`: seed S4's version table — one row per run, and per metric its mean, then
//!   the run's Δ against the first run with the interval, p and reading (empty on the first
//!   row), then the judge's calls and cost, then for each metric some run has human labels
//!   for, the run's calibrated mean and its calibrated Δ against the first;
//! - `deltas`: every pair of runs × metric, as `rageval compare --json` has them, the
//!   calibrated difference in the last columns where both runs have one;
//! - `questions`: per pair, how the questions were paired and how the datasets differ;
//! - `agreement`, only when `judge-check` runs are compared: per pair, the two judges'
//!   paired difference in agreement with the labels (or why there is none).

use std::path::Path;

use rust_xlsxwriter::{Format, Workbook, Worksheet, XlsxError};

use crate::xlsx::{save, write_header, write_number as number, write_text};
use crate::{Comparison, ReportError};

/// The name of the version table's sheet.
pub const VERSIONS_SHEET: &str = "versions";
/// The name of the sheet of two judges' paired agreement difference.
pub const AGREEMENT_SHEET: &str = "agreement";
/// Columns of each metric in the `versions` sheet, after its name: `{metric}{suffix}`.
const METRIC_SUFFIXES: [&str; 6] = ["", " Δ", " Δ ci95_low", " Δ ci95_high", " Δ p", " reading"];
/// Columns of each calibrated metric at the end of the `versions` sheet.
const CALIBRATED_SUFFIXES: [&str; 7] = [
    " calibrated",
    " calibrated ci95_low",
    " calibrated ci95_high",
    " calibrated Δ",
    " calibrated Δ ci95_low",
    " calibrated Δ ci95_high",
    " calibrated reading",
];

/// Columns of the head-to-head result at the end of the `versions` sheet (`--pairwise`).
const HEAD_TO_HEAD_COLUMNS: [&str; 7] = [
    "h2h wins",
    "h2h ties",
    "h2h losses",
    "h2h win_rate",
    "h2h ci95_low",
    "h2h ci95_high",
    "h2h p",
];

/// Writes the comparison's workbook to `path`.
pub fn write_compare_xlsx(comparison: &Comparison, path: &Path) -> Result<(), ReportError> {
    save(build(comparison), path)
}

fn build(comparison: &Comparison) -> Result<Workbook, XlsxError> {
    let mut workbook = Workbook::new();
    let bold = Format::new().set_bold();
    versions_sheet(workbook.add_worksheet(), comparison, &bold)?;
    deltas_sheet(workbook.add_worksheet(), comparison, &bold)?;
    questions_sheet(workbook.add_worksheet(), comparison, &bold)?;
    if comparison.pairs.iter().any(|pair| pair.agreement.is_some()) {
        agreement_sheet(workbook.add_worksheet(), comparison, &bold)?;
    }
    Ok(workbook)
}

fn versions_sheet(
    sheet: &mut Worksheet,
    comparison: &Comparison,
    bold: &Format,
) -> Result<(), XlsxError> {
    sheet.set_name(VERSIONS_SHEET)?;
    let mut header = vec!["run".to_string(), "dataset".to_string()];
    for metric in &comparison.metrics {
        header.extend(METRIC_SUFFIXES.iter().map(|s| format!("{metric}{s}")));
    }
    header.extend(["judge calls".to_string(), "cost (USD)".to_string()]);
    let calibrated: Vec<&String> = comparison
        .metrics
        .iter()
        .filter(|m| {
            comparison
                .runs
                .iter()
                .any(|r| r.calibrated.contains_key(*m))
        })
        .collect();
    for metric in &calibrated {
        header.extend(CALIBRATED_SUFFIXES.iter().map(|s| format!("{metric}{s}")));
    }
    let head_to_head = comparison.runs.iter().any(|r| r.head_to_head.is_some());
    if head_to_head {
        header.extend(HEAD_TO_HEAD_COLUMNS.iter().map(|c| (*c).to_string()));
    }
    let names: Vec<&str> = header.iter().map(String::as_str).collect();
    write_header(sheet, &names, bold)?;
    let head_to_head_col = (header.len() - HEAD_TO_HEAD_COLUMNS.len()) as u16;
    for (row, (index, run)) in (1u32..).zip(comparison.runs.iter().enumerate()) {
        write_text(sheet, row, 0, &run.version)?;
        write_text(sheet, row, 1, &run.dataset)?;
        let pair = comparison.against_first(index);
        for (col, metric) in (2u16..)
            .step_by(METRIC_SUFFIXES.len())
            .zip(&comparison.metrics)
        {
            number(
                sheet,
                row,
                col,
                run.metrics.get(metric).and_then(|m| m.mean),
            )?;
            let Some(d) = pair.and_then(|p| p.deltas.iter().find(|d| &d.metric == metric)) else {
                continue;
            };
            number(sheet, row, col + 1, d.delta)?;
            number(sheet, row, col + 2, d.ci95.map(|c| c[0]))?;
            number(sheet, row, col + 3, d.ci95.map(|c| c[1]))?;
            number(sheet, row, col + 4, d.p_value)?;
            sheet.write_string(row, col + 5, d.reading.words())?;
        }
        let col = 2 + (METRIC_SUFFIXES.len() * comparison.metrics.len()) as u16;
        if let Some(judge) = &run.judge {
            sheet.write_number(row, col, judge.calls as f64)?;
            number(sheet, row, col + 1, judge.cost_usd)?;
        }
        for (col, metric) in (col + 2..)
            .step_by(CALIBRATED_SUFFIXES.len())
            .zip(&calibrated)
        {
            if let Some(c) = run.calibrated.get(*metric) {
                let e = &c.estimate;
                for (offset, value) in (0u16..).zip([e.mean, e.ci95.low, e.ci95.high]) {
                    sheet.write_number(row, col + offset, value)?;
                }
            }
            let delta = pair
                .and_then(|p| p.deltas.iter().find(|d| &&d.metric == metric))
                .and_then(|d| d.calibrated.as_ref());
            if let Some(c) = delta {
                for (offset, value) in (3u16..).zip([c.delta, c.ci95[0], c.ci95[1]]) {
                    sheet.write_number(row, col + offset, value)?;
                }
                sheet.write_string(row, col + 6, c.reading.words())?;
            }
        }
        if let Some(pair) = run.head_to_head.as_ref().filter(|_| head_to_head) {
            let f = &pair.figures;
            let values = [
                Some(f.wins as f64),
                Some(f.ties as f64),
                Some(f.losses as f64),
                f.win_rate,
                f.win_rate_ci95.map(|c| c[0]),
                f.win_rate_ci95.map(|c| c[1]),
                f.p_value,
            ];
            for (col, value) in (head_to_head_col..).zip(values) {
                number(sheet, row, col, value)?;
            }
        }
    }
    sheet.set_column_width(0, 20)?;
    sheet.set_freeze_panes(1, 1)?;
    Ok(())
}

/// Column headers of the `deltas` sheet.
const DELTAS_COLUMNS: [&str; 18] = [
    "baseline",
    "candidate",
    "metric",
    "n_paired",
    "n_unpaired",
    "baseline_mean",
    "candidate_mean",
    "delta",
    "ci95_low",
    "ci95_high",
    "p_value",
    "reading",
    "calibrated_baseline_mean",
    "calibrated_candidate_mean",
    "calibrated_delta",
    "calibrated_ci95_low",
    "calibrated_ci95_high",
    "calibrated_reading",
];

fn deltas_sheet(
    sheet: &mut Worksheet,
    comparison: &Comparison,
    bold: &Format,
) -> Result<(), XlsxError> {
    sheet.set_name("deltas")?;
    write_header(sheet, &DELTAS_COLUMNS, bold)?;
    let mut row = 1u32;
    for pair in &comparison.pairs {
        for d in &pair.deltas {
            write_text(sheet, row, 0, comparison.version_of(pair.baseline))?;
            write_text(sheet, row, 1, comparison.version_of(pair.candidate))?;
            write_text(sheet, row, 2, &d.metric)?;
            sheet.write_number(row, 3, d.n_paired as f64)?;
            sheet.write_number(row, 4, d.n_unpaired as f64)?;
            let values = [
                d.baseline_mean,
                d.candidate_mean,
                d.delta,
                d.ci95.map(|c| c[0]),
                d.ci95.map(|c| c[1]),
                d.p_value,
            ];
            for (col, value) in (5u16..).zip(values) {
                number(sheet, row, col, value)?;
            }
            sheet.write_string(row, 11, d.reading.words())?;
            if let Some(c) = &d.calibrated {
                let values = [
                    c.baseline_mean,
                    c.candidate_mean,
                    c.delta,
                    c.ci95[0],
                    c.ci95[1],
                ];
                for (col, value) in (12u16..).zip(values) {
                    sheet.write_number(row, col, value)?;
                }
                sheet.write_string(row, 17, c.reading.words())?;
            }
            row += 1;
        }
    }
    sheet.set_freeze_panes(1, 0)?;
    Ok(())
}

/// Column headers of the `questions` sheet.
const QUESTIONS_COLUMNS: [&str; 14] = [
    "baseline",
    "candidate",
    "paired",
    "by_id",
    "by_question",
    "id_conflicts",
    "only_baseline",
    "only_candidate",
    "overlap",
    "same_dataset",
    "compared_texts",
    "answers_differ",
    "contexts_differ",
    "references_differ",
];

fn questions_sheet(
    sheet: &mut Worksheet,
    comparison: &Comparison,
    bold: &Format,
) -> Result<(), XlsxError> {
    sheet.set_name("questions")?;
    write_header(sheet, &QUESTIONS_COLUMNS, bold)?;
    for (row, pair) in (1u32..).zip(&comparison.pairs) {
        let q = &pair.pairing;
        write_text(sheet, row, 0, comparison.version_of(pair.baseline))?;
        write_text(sheet, row, 1, comparison.version_of(pair.candidate))?;
        let counts = [q.paired, q.by_id, q.by_question, q.id_conflicts];
        for (col, count) in (2u16..).zip(counts) {
            sheet.write_number(row, col, count as f64)?;
        }
        write_text(sheet, row, 6, &q.only_baseline.join(", "))?;
        write_text(sheet, row, 7, &q.only_candidate.join(", "))?;
        sheet.write_number(row, 8, q.overlap)?;
        sheet.write_boolean(row, 9, q.same_dataset)?;
        if let Some(d) = &q.differences {
            let counts = [d.compared, d.answers, d.contexts, d.references];
            for (col, count) in (10u16..).zip(counts) {
                sheet.write_number(row, col, count as f64)?;
            }
        }
    }
    sheet.set_freeze_panes(1, 0)?;
    Ok(())
}

/// Column headers of the `agreement` sheet.
const AGREEMENT_COLUMNS: [&str; 13] = [
    "baseline",
    "candidate",
    "items",
    "baseline agreement",
    "candidate agreement",
    "difference",
    "ci95_low",
    "ci95_high",
    "p",
    "test",
    "baseline better",
    "candidate better",
    "no difference because",
];

/// Per pair of `judge-check` runs, the paired difference in agreement, as `compare`'s
/// Markdown says it in a sentence.
fn agreement_sheet(
    sheet: &mut Worksheet,
    comparison: &Comparison,
    bold: &Format,
) -> Result<(), XlsxError> {
    sheet.set_name(AGREEMENT_SHEET)?;
    write_header(sheet, &AGREEMENT_COLUMNS, bold)?;
    let pairs = comparison.pairs.iter().filter_map(|pair| {
        let agreement = pair.agreement.as_ref()?;
        Some((pair, agreement))
    });
    for ((pair, agreement), row) in pairs.zip(1u32..) {
        write_text(sheet, row, 0, comparison.version_of(pair.baseline))?;
        write_text(sheet, row, 1, comparison.version_of(pair.candidate))?;
        let Some(paired) = &agreement.paired else {
            let why = agreement
                .paired_undefined
                .as_deref()
                .unwrap_or("no paired items");
            write_text(sheet, row, 12, why)?;
            continue;
        };
        sheet.write_number(row, 2, paired.items as f64)?;
        let values = [
            Some(paired.baseline),
            Some(paired.candidate),
            Some(paired.difference),
            paired.ci95.map(|c| c.low),
            paired.ci95.map(|c| c.high),
            paired.p_value,
        ];
        for (col, value) in (3u16..).zip(values) {
            number(sheet, row, col, value)?;
        }
        write_text(sheet, row, 9, paired.test.label())?;
        sheet.write_number(row, 10, paired.baseline_better as f64)?;
        sheet.write_number(row, 11, paired.candidate_better as f64)?;
    }
    sheet.set_freeze_panes(1, 0)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{scores, write_run};
    use crate::{CompareSettings, RunData};
    use calamine::{Data, Reader, Xlsx, open_workbook};

    #[test]
    fn the_version_table_sheet_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut runs = Vec::new();
        for (name, shift) in [("V1.0", 0.0), ("V1.1", 0.1), ("V1.2", -0.1)] {
            let path = dir.path().join(name);
            write_run(&path, name, &scores(shift));
            runs.push(RunData::load(&path).unwrap());
        }
        let comparison = Comparison::build(&runs, CompareSettings::default()).unwrap();
        let path = dir.path().join("compare.xlsx");
        write_compare_xlsx(&comparison, &path).unwrap();

        let mut workbook: Xlsx<_> = open_workbook(&path).unwrap();
        assert_eq!(
            workbook.sheet_names(),
            vec!["versions", "deltas", "questions"]
        );
        let sheet = workbook.worksheet_range(VERSIONS_SHEET).unwrap();
        let at = |r: u32, c: u32| sheet.get_value((r, c)).cloned().unwrap_or(Data::Empty);
        let header: Vec<String> = (0..16).map(|c| at(0, c).to_string()).collect();
        assert_eq!(
            header,
            [
                "run",
                "dataset",
                "faithfulness",
                "faithfulness Δ",
                "faithfulness Δ ci95_low",
                "faithfulness Δ ci95_high",
                "faithfulness Δ p",
                "faithfulness reading",
                "context_recall",
                "context_recall Δ",
                "context_recall Δ ci95_low",
                "context_recall Δ ci95_high",
                "context_recall Δ p",
                "context_recall reading",
                "judge calls",
                "cost (USD)",
            ]
        );
        let float = |r: u32, c: u32| match at(r, c) {
            Data::Float(f) => f,
            other => panic!("({r}, {c}) is {other:?}"),
        };
        assert_eq!(at(1, 0), Data::String("V1.0".into()));
        assert!((float(1, 2) - 0.6).abs() < 1e-12);
        // The first version has no Δ.
        assert_eq!(at(1, 3), Data::Empty);
        assert!((float(2, 2) - 0.7).abs() < 1e-12);
        assert!((float(2, 3) - 0.1).abs() < 1e-12);
        assert!(float(2, 4) > 0.0);
        assert!(float(2, 6) < 0.001);
        assert_eq!(at(2, 7), Data::String("higher".into()));
        assert_eq!(at(3, 7), Data::String("lower".into()));
        assert_eq!(at(2, 13), Data::String("no clear difference".into()));

        let deltas = workbook.worksheet_range("deltas").unwrap();
        // Three pairs × two metrics.
        assert_eq!(deltas.height(), 7);
        let questions = workbook.worksheet_range("questions").unwrap();
        assert_eq!(questions.get_value((1, 2)), Some(&Data::Float(40.0)));
        assert_eq!(questions.get_value((1, 9)), Some(&Data::Bool(false)));
    }
}
