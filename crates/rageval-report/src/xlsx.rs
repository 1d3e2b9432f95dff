//! `results.xlsx`: the run as a spreadsheet for people who live in Excel.
//!
//! Three sheets: `summary` (one row per metric, the fields of `summary.json`), `samples`
//! (one row per sample, one column per metric: the score, or `undefined: reason` /
//! `failed: error`), and `results` (one row per line of `results.jsonl`, evidence as JSON),
//! from which the journal can be rebuilt exactly; with human labels, a `calibrated` sheet
//! (judge-only, labels-only and PPI++ means with their intervals).

use std::collections::BTreeMap;
use std::path::Path;

use rageval_core::Outcome;
use rust_xlsxwriter::{Format, Workbook, Worksheet, XlsxError};

use crate::RunData;

/// Excel's limit on the characters of one cell.
const CELL_LIMIT: usize = 32_767;
/// What replaces the end of a cell cut to fit.
const CUT_MARK: &str = " … [cut: longer than an Excel cell holds]";

/// Column headers of the `results` sheet.
pub const RESULTS_SHEET_COLUMNS: [&str; 6] = [
    "sample_id",
    "metric",
    "status",
    "value",
    "reason_or_error",
    "evidence_json",
];

/// Writes the run's spreadsheet to `path`.
pub fn write_xlsx(run: &RunData, path: &Path) -> Result<(), crate::ReportError> {
    build_workbook(run)
        .and_then(|mut workbook| workbook.save(path))
        .map_err(|source| crate::ReportError::Xlsx {
            path: path.to_path_buf(),
            source,
        })
}

fn build_workbook(run: &RunData) -> Result<Workbook, XlsxError> {
    let mut workbook = Workbook::new();
    let bold = Format::new().set_bold();
    let number = Format::new().set_num_format("0.0000");
    let metrics = run.metric_names();

    let sheet = workbook.add_worksheet().set_name("summary")?;
    let header = [
        "metric",
        "mean",
        "ci95_low",
        "ci95_high",
        "n",
        "n_scored",
        "n_undefined",
        "n_failed",
        "min",
        "max",
        "undefined_reasons",
        "failed_errors",
    ];
    write_header(sheet, &header, &bold)?;
    let mut row = 1u32;
    for name in &metrics {
        let Some(m) = run.summary.metrics.get(name) else {
            continue;
        };
        sheet.write_string(row, 0, name)?;
        let numbers = [
            m.mean,
            m.ci95.map(|c| c[0]),
            m.ci95.map(|c| c[1]),
            Some(m.n as f64),
            Some(m.n_scored as f64),
            Some(m.n_undefined as f64),
            Some(m.n_failed as f64),
            m.min,
            m.max,
        ];
        for (col, value) in (1u16..).zip(numbers) {
            if let Some(value) = value {
                if (1..=3).contains(&col) || col >= 8 {
                    sheet.write_number_with_format(row, col, value, &number)?;
                } else {
                    sheet.write_number(row, col, value)?;
                }
            }
        }
        write_text(sheet, row, 10, &counted(&m.undefined_reasons))?;
        write_text(sheet, row, 11, &counted(&m.failed_errors))?;
        row += 1;
    }
    sheet.set_column_width(0, 24)?;
    sheet.set_column_width(10, 40)?;
    sheet.set_column_width(11, 40)?;
    sheet.set_freeze_panes(1, 1)?;
    crate::calibrated_render::add_calibrated_sheet(&mut workbook, &run.summary)?;

    let outcomes = run.outcomes();
    let sheet = workbook.add_worksheet().set_name("samples")?;
    sheet.write_string_with_format(0, 0, "sample_id", &bold)?;
    for (col, name) in (1u16..).zip(&metrics) {
        sheet.write_string_with_format(0, col, name, &bold)?;
    }
    for (row, id) in (1u32..).zip(run.sample_ids()) {
        write_text(sheet, row, 0, id)?;
        for (col, name) in (1u16..).zip(&metrics) {
            match outcomes.get(&(id, name.as_str())) {
                Some(Outcome::Score { value, .. }) => {
                    sheet.write_number(row, col, *value)?;
                }
                Some(Outcome::Undefined { reason }) => {
                    write_text(sheet, row, col, &format!("undefined: {reason}"))?;
                }
                Some(Outcome::Failed { error }) => {
                    write_text(sheet, row, col, &format!("failed: {error}"))?;
                }
                None => {}
            }
        }
    }
    sheet.set_column_width(0, 20)?;
    sheet.set_freeze_panes(1, 1)?;

    let sheet = workbook.add_worksheet().set_name("results")?;
    write_header(sheet, &RESULTS_SHEET_COLUMNS, &bold)?;
    for (row, record) in (1u32..).zip(&run.records) {
        write_text(sheet, row, 0, &record.sample_id)?;
        write_text(sheet, row, 1, &record.metric)?;
        match &record.outcome {
            Outcome::Score { value, evidence } => {
                sheet.write_string(row, 2, "score")?;
                sheet.write_number(row, 3, *value)?;
                if !evidence.is_empty() {
                    // Evidence is plain data; encoding it cannot fail, but an empty cell is
                    // a better outcome than a lost spreadsheet if it ever did.
                    let json = serde_json::to_string(evidence).unwrap_or_default();
                    write_text(sheet, row, 5, &json)?;
                }
            }
            Outcome::Undefined { reason } => {
                sheet.write_string(row, 2, "undefined")?;
                write_text(sheet, row, 4, reason)?;
            }
            Outcome::Failed { error } => {
                sheet.write_string(row, 2, "failed")?;
                write_text(sheet, row, 4, error)?;
            }
        }
    }
    sheet.set_column_width(0, 20)?;
    sheet.set_column_width(1, 20)?;
    sheet.set_column_width(4, 40)?;
    sheet.set_freeze_panes(1, 0)?;
    Ok(workbook)
}

fn write_header(sheet: &mut Worksheet, names: &[&str], bold: &Format) -> Result<(), XlsxError> {
    for (col, name) in (0u16..).zip(names) {
        sheet.write_string_with_format(0, col, *name, bold)?;
    }
    Ok(())
}

/// Writes text, cut to fit a cell when it is longer than Excel allows (long evidence).
fn write_text(sheet: &mut Worksheet, row: u32, col: u16, text: &str) -> Result<(), XlsxError> {
    if text.is_empty() {
        return Ok(());
    }
    if text.chars().count() <= CELL_LIMIT {
        sheet.write_string(row, col, text)?;
    } else {
        let keep = CELL_LIMIT - CUT_MARK.chars().count();
        let cut: String = text.chars().take(keep).chain(CUT_MARK.chars()).collect();
        sheet.write_string(row, col, cut)?;
    }
    Ok(())
}

/// `reason (count); reason (count)`.
fn counted(reasons: &BTreeMap<String, usize>) -> String {
    reasons
        .iter()
        .map(|(reason, count)| format!("{reason} ({count})"))
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{assert_workbook_matches_journal, write_run};
    use calamine::{Data, Reader, Xlsx, open_workbook};
    use rageval_core::{Evidence, Verdict, VerdictTarget};

    #[test]
    fn the_results_sheet_reads_back_equal_to_the_journal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run");
        let evidence = Evidence {
            verdicts: vec![Verdict {
                target: VerdictTarget::Statement(0),
                value: 1.0,
                label: Some("supported".into()),
                text: Some("巴黎是法国的首都".into()),
                reason: Some("context 1 says so <script>".into()),
                supporting_contexts: vec![1],
            }],
            details: serde_json::Map::new(),
        };
        write_run(
            &path,
            "abc",
            &[
                (
                    "问题-1",
                    "faithfulness",
                    Outcome::score(0.1 + 0.2, evidence),
                ),
                ("问题-1", "bleu", Outcome::bare(1.0 / 3.0)),
                ("q2", "faithfulness", Outcome::undefined("答案没有陈述")),
                ("q2", "bleu", Outcome::failed("judge said <nonsense>")),
                ("q3", "faithfulness", Outcome::bare(0.0)),
                ("q3", "bleu", Outcome::bare(123_456.789_012_345)),
            ],
        );
        let run = RunData::load(&path).unwrap();
        let xlsx = path.join("results.xlsx");
        write_xlsx(&run, &xlsx).unwrap();
        assert_workbook_matches_journal(&xlsx, &path.join(crate::RESULTS_FILE));

        // The per-sample sheet holds every metric's score, or why there is none.
        let mut workbook: Xlsx<_> = open_workbook(&xlsx).unwrap();
        let samples = workbook.worksheet_range("samples").unwrap();
        let cell = |r: u32, c: u32| samples.get_value((r, c)).cloned();
        assert_eq!(cell(0, 1), Some(Data::String("faithfulness".into())));
        assert_eq!(cell(1, 0), Some(Data::String("问题-1".into())));
        assert_eq!(cell(1, 2), Some(Data::Float(1.0 / 3.0)));
        assert_eq!(
            cell(2, 1),
            Some(Data::String("undefined: 答案没有陈述".into()))
        );
        let summary = workbook.worksheet_range("summary").unwrap();
        assert_eq!(
            summary.get_value((1, 0)),
            Some(&Data::String("faithfulness".into()))
        );
        assert_eq!(summary.get_value((1, 6)), Some(&Data::Float(1.0)));
    }

    #[test]
    fn overlong_text_is_cut_to_fit_a_cell() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run");
        let long = "长".repeat(CELL_LIMIT + 10);
        write_run(&path, "abc", &[("1", "m", Outcome::undefined(long))]);
        let run = RunData::load(&path).unwrap();
        let xlsx = path.join("results.xlsx");
        write_xlsx(&run, &xlsx).unwrap();
        let mut workbook: Xlsx<_> = open_workbook(&xlsx).unwrap();
        let range = workbook.worksheet_range("results").unwrap();
        let Some(Data::String(cell)) = range.get_value((1, 4)) else {
            panic!("no reason cell");
        };
        assert_eq!(cell.chars().count(), CELL_LIMIT);
        assert!(cell.ends_with(CUT_MARK));
    }
}
