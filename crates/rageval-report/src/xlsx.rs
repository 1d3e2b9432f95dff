//! `results.xlsx`: the run as a spreadsheet for people who live in Excel — seed S3's
//! workbook.
//!
//! Sheets: `summary` (one row per metric, the fields of `summary.json`); `samples` (one row
//! per sample in the dataset's order: id, question, reference, answer, the ids and numbered
//! texts of the contexts its scores read (with a count of those retrieved but cut), then two columns per metric: the score — or `undefined` / `failed` —
//! and the reason: the verdicts and details of the evidence, the undefined reason or the
//! error); `rank_agreement` when the run holds `rank_agreement.jsonl` (one row per question:
//! the retriever's order against the judge's); and `results` (one row per line of
//! `results.jsonl`, evidence as JSON), from which the journal can be rebuilt exactly.
//! Without the dataset the `samples` rows keep the journal's order and have no texts.
//! With human labels, a `calibrated` sheet (judge-only, labels-only and PPI++ means with
//! their intervals); with an abstention metric, an `abstention` sheet (its 2×2 table and
//! rates). The `samples` and `results` sheets are written row by row in
//! rust_xlsxwriter's constant-memory mode, so a 100,000-sample workbook is never held whole.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;

use rageval_core::{Outcome, Sample};
use rust_xlsxwriter::{Format, Workbook, Worksheet, XlsxError};

use crate::outcome_text::outcome_reason;
use crate::rank_agreement_render::rank_agreement_sheet;
use crate::{
    INCLUDES_CHANCE, JournalIndex, ReportError, ReportTexts, ResultRecord, RunData, RunInfo,
    SampleOutcomes, cascade_line, includes_chance, judge_lines,
};

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

/// Column headers of the `samples` sheet before the metrics; each metric then has two
/// columns, its name (the score, or `undefined` / `failed`) and `{name} reason`.
pub const SAMPLES_SHEET_COLUMNS: [&str; 6] = [
    "sample_id",
    "question",
    "reference",
    "answer",
    "context_ids",
    "contexts",
];
/// Appended to a metric's name to head its reason column.
pub const REASON_SUFFIX: &str = " reason";

/// Writes the run's spreadsheet to `path`. `texts` gives the question, reference, answer
/// and contexts of each row and the rows' order; the sheets with a row per sample or per
/// result are streamed to disk as they are written, so the workbook is never held whole.
pub fn write_xlsx(run: &RunData, texts: &ReportTexts, path: &Path) -> Result<(), ReportError> {
    write_xlsx_from(
        &run.info(),
        &JournalIndex::of_records(&run.records),
        texts,
        path,
    )
}

/// [`write_xlsx`] from the run's journal index: each sample's outcomes are read back from
/// the journal as its row is written, and the `results` sheet streams the journal.
pub(crate) fn write_xlsx_from(
    run: &RunInfo,
    journal: &JournalIndex,
    texts: &ReportTexts,
    path: &Path,
) -> Result<(), ReportError> {
    without_panics(path, || build_xlsx(run, journal, texts, path))
}

/// [`write_xlsx_from`]'s work, which may panic where the disk fills (see [`without_panics`]).
fn build_xlsx(
    run: &RunInfo,
    journal: &JournalIndex,
    texts: &ReportTexts,
    path: &Path,
) -> Result<(), ReportError> {
    let xlsx = |source| ReportError::Xlsx {
        path: path.to_path_buf(),
        source,
    };
    let mut workbook = Workbook::new();
    // Temporary files beside the workbook, not in /tmp, which may be memory.
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        workbook.set_tempdir(dir).map_err(xlsx)?;
    }
    let bold = Format::new().set_bold();
    let metrics = journal.metric_names(&run.summary.metric_order);
    summary_sheet(workbook.add_worksheet(), run, &metrics, &bold).map_err(xlsx)?;
    let sheet = workbook
        .add_worksheet_with_constant_memory()
        .map_err(xlsx)?;
    let rows = SampleRows {
        journal,
        metrics: &metrics,
        path,
    };
    rows.write(sheet, texts, &bold)?;
    if let Some(rows) = &run.rank_agreement {
        rank_agreement_sheet(workbook.add_worksheet(), rows, &bold).map_err(xlsx)?;
    }
    let sheet = workbook
        .add_worksheet_with_constant_memory()
        .map_err(xlsx)?;
    results_sheet(sheet, journal, &bold, path)?;
    crate::calibrated_render::add_calibrated_sheet(&mut workbook, &run.summary).map_err(xlsx)?;
    crate::abstention_render::add_abstention_sheet(&mut workbook, &run.summary).map_err(xlsx)?;
    save(Ok(workbook), path)
}

/// Saves a workbook built by one of this crate's writers, whole or not at all (temporary
/// file, then rename): a full disk leaves the earlier workbook, or none, never a truncated
/// one. A write that fails is a [`ReportError::Write`] holding the I/O error (so a full
/// disk is told as one).
pub(crate) fn save(workbook: Result<Workbook, XlsxError>, path: &Path) -> Result<(), ReportError> {
    let mut workbook = workbook.map_err(|source| ReportError::Xlsx {
        path: path.to_path_buf(),
        source,
    })?;
    rageval_core::files::write_atomically_with(path, |out| {
        workbook.save_to_writer(out).map_err(|error| match error {
            XlsxError::IoError(io) => io,
            // The zip writer's error keeps its cause (an I/O error) as its source.
            other => std::io::Error::other(other),
        })
    })
    .map_err(|source| ReportError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// Runs `write`, a workbook writer, turning a panic into an error. rust_xlsxwriter's
/// constant-memory sheets write their rows to a temporary file beside the workbook and
/// panic when that write fails (`expect` on a full disk): without this, a full disk
/// would end the process with a backtrace. The panic's message is kept from stderr while
/// `write` runs (the panic hook is the process's: one in another thread meanwhile goes
/// untold too) and comes back in the error; a full disk comes back as one.
pub(crate) fn without_panics(
    path: &Path,
    write: impl FnOnce() -> Result<(), ReportError>,
) -> Result<(), ReportError> {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let written = std::panic::catch_unwind(std::panic::AssertUnwindSafe(write));
    std::panic::set_hook(hook);
    written.unwrap_or_else(|panic| {
        let message = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| panic.downcast_ref::<&str>().copied())
            .unwrap_or("the workbook writer stopped");
        let kind = if message.contains("StorageFull") || message.contains("QuotaExceeded") {
            std::io::ErrorKind::StorageFull
        } else {
            std::io::ErrorKind::Other
        };
        Err(ReportError::Write {
            path: path.to_path_buf(),
            source: std::io::Error::new(kind, message.to_owned()),
        })
    })
}

fn summary_sheet(
    sheet: &mut Worksheet,
    run: &RunInfo,
    metrics: &[String],
    bold: &Format,
) -> Result<(), XlsxError> {
    let number = Format::new().set_num_format("0.0000");
    sheet.set_name("summary")?;
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
        "judge",
        "judge_note",
    ];
    write_header(sheet, &header, bold)?;
    let mut row = 1u32;
    for name in metrics {
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
        write_text(sheet, row, 12, &judge_lines(&run.manifest, name).join("\n"))?;
        if includes_chance(&run.manifest, name) {
            write_text(sheet, row, 13, INCLUDES_CHANCE)?;
        }
        row += 1;
    }
    // Below the metrics, after a blank row, what the cascade's tiers settled: it speaks of
    // the run's judge, not of one metric.
    if let Some(line) = run
        .summary
        .judge
        .as_ref()
        .and_then(|j| cascade_line(&j.usage))
    {
        sheet.write_string_with_format(row + 1, 0, "judge cascade", bold)?;
        sheet.write_string(row + 1, 1, &line)?;
    }
    sheet.set_column_width(0, 24)?;
    sheet.set_column_width(10, 40)?;
    sheet.set_column_width(11, 40)?;
    sheet.set_column_width(12, 60)?;
    sheet.set_freeze_panes(1, 1)?;
    Ok(())
}

/// The `samples` sheet of a run: its journal index, metrics, and the workbook's path (for
/// errors).
struct SampleRows<'r, 'a> {
    journal: &'r JournalIndex<'a>,
    metrics: &'r [String],
    path: &'r Path,
}

impl SampleRows<'_, '_> {
    /// One row per sample in the dataset's order (the samples `texts` holds, by their
    /// position there, then the rest in journal order): its texts, then each metric's
    /// score and the reason behind it. Rows are written as the dataset is read, one sample
    /// at a time, each with its outcomes read back from the journal.
    fn write(
        &self,
        sheet: &mut Worksheet,
        texts: &ReportTexts,
        bold: &Format,
    ) -> Result<(), ReportError> {
        let xlsx = |source| ReportError::Xlsx {
            path: self.path.to_path_buf(),
            source,
        };
        sample_columns(sheet, self.metrics, bold).map_err(xlsx)?;
        let journal = self.journal;
        let mut reader = journal.reader();
        let mut placed = vec![false; journal.len()];
        let mut row = 1u32;
        let mut write_row = |at: usize, sample: Option<&Sample>| -> Result<(), ReportError> {
            let outcomes = reader.sample(at)?;
            sample_row(sheet, row, journal.id(at), sample, self.metrics, &outcomes)
                .map_err(xlsx)?;
            row += 1;
            Ok(())
        };
        texts.for_each(|sample| match journal.index_of(&sample.id) {
            Some(at) if !placed[at] => {
                placed[at] = true;
                write_row(at, Some(sample))
            }
            _ => Ok(()),
        })?;
        for at in (0..placed.len()).filter(|&at| !placed[at]) {
            write_row(at, None)?;
        }
        Ok(())
    }
}

/// The `samples` sheet's name, column widths and header row.
fn sample_columns(
    sheet: &mut Worksheet,
    metrics: &[String],
    bold: &Format,
) -> Result<(), XlsxError> {
    sheet.set_name("samples")?;
    // Set before any row: the rows are streamed out as they are written.
    sheet.set_column_width(0, 16)?;
    sheet.set_column_width(1, 40)?;
    sheet.set_column_width(2, 40)?;
    sheet.set_column_width(3, 40)?;
    sheet.set_column_width(5, 60)?;
    sheet.set_freeze_panes(1, 2)?;
    write_header(sheet, &SAMPLES_SHEET_COLUMNS, bold)?;
    let first_metric = SAMPLES_SHEET_COLUMNS.len() as u16;
    for (col, name) in (first_metric..).step_by(2).zip(metrics) {
        sheet.write_string_with_format(0, col, name, bold)?;
        sheet.write_string_with_format(0, col + 1, format!("{name}{REASON_SUFFIX}"), bold)?;
    }
    Ok(())
}

/// One sample's row: its texts when known, then each metric's score and reason.
fn sample_row(
    sheet: &mut Worksheet,
    row: u32,
    id: &str,
    sample: Option<&Sample>,
    metrics: &[String],
    outcomes: &SampleOutcomes,
) -> Result<(), XlsxError> {
    write_text(sheet, row, 0, id)?;
    if let Some(sample) = sample {
        write_text(sheet, row, 1, &sample.question)?;
        write_text(sheet, row, 2, &sample.references.join("\n\n"))?;
        write_text(sheet, row, 3, sample.answer.as_deref().unwrap_or_default())?;
        let scored = contexts_scored(metrics, outcomes).unwrap_or(sample.contexts.len());
        let context_ids: Vec<&str> = sample
            .contexts
            .iter()
            .take(scored)
            .filter_map(|c| c.id.as_deref())
            .collect();
        write_text(sheet, row, 4, &context_ids.join(", "))?;
        write_text(sheet, row, 5, &numbered_contexts(sample, scored))?;
    }
    let first_metric = SAMPLES_SHEET_COLUMNS.len() as u16;
    for (col, name) in (first_metric..).step_by(2).zip(metrics) {
        let Some(outcome) = outcomes.get(name.as_str()) else {
            continue;
        };
        match outcome {
            Outcome::Score { value, .. } => {
                sheet.write_number(row, col, *value)?;
            }
            Outcome::Undefined { .. } => {
                sheet.write_string(row, col, "undefined")?;
            }
            Outcome::Failed { .. } => {
                sheet.write_string(row, col, "failed")?;
            }
        }
        write_text(sheet, row, col + 1, &outcome_reason(outcome))?;
    }
    Ok(())
}

/// `[0] (id d1) text`, one context per paragraph.
/// How many of a sample's contexts its scores read, when the run cut them (`--top-k`, or a
/// judge's window): the scoring records it in each score's evidence as `top_k`.
fn contexts_scored(metrics: &[String], outcomes: &SampleOutcomes) -> Option<usize> {
    metrics
        .iter()
        .find_map(|name| match outcomes.get(name.as_str()) {
            Some(Outcome::Score { evidence, .. }) => evidence
                .details
                .get("top_k")
                .and_then(|k| k.as_u64())
                .and_then(|k| usize::try_from(k).ok()),
            _ => None,
        })
}

/// The contexts the scores read, numbered as verdicts name them; those retrieved but cut
/// are counted after them, so the cell never shows text no score looked at as if it had.
fn numbered_contexts(sample: &Sample, scored: usize) -> String {
    let mut text = sample
        .contexts
        .iter()
        .take(scored)
        .enumerate()
        .map(|(index, context)| match &context.id {
            Some(id) => format!("[{index}] (id {id}) {}", context.text),
            None => format!("[{index}] {}", context.text),
        })
        .collect::<Vec<_>>()
        .join("\n\n");
    let cut = sample.contexts.len().saturating_sub(scored);
    if cut > 0 {
        let contexts = if cut == 1 { "context" } else { "contexts" };
        text.push_str(&format!(
            "\n\n({cut} more retrieved {contexts} not scored: the first {scored} were)"
        ));
    }
    text
}

/// Every journal line as it is, from which the journal can be rebuilt exactly.
/// Streamed from the journal, one line at a time.
fn results_sheet(
    sheet: &mut Worksheet,
    journal: &JournalIndex,
    bold: &Format,
    path: &Path,
) -> Result<(), ReportError> {
    let xlsx = |source| ReportError::Xlsx {
        path: path.to_path_buf(),
        source,
    };
    results_columns(sheet, bold).map_err(xlsx)?;
    let mut row = 1u32;
    journal.for_each_record(|record| {
        result_row(sheet, row, record).map_err(xlsx)?;
        row += 1;
        Ok(())
    })
}

/// The `results` sheet's name, column widths and header row.
fn results_columns(sheet: &mut Worksheet, bold: &Format) -> Result<(), XlsxError> {
    sheet.set_name("results")?;
    sheet.set_column_width(0, 20)?;
    sheet.set_column_width(1, 20)?;
    sheet.set_column_width(4, 40)?;
    sheet.set_freeze_panes(1, 0)?;
    write_header(sheet, &RESULTS_SHEET_COLUMNS, bold)
}

/// One journal line as a row.
fn result_row(sheet: &mut Worksheet, row: u32, record: &ResultRecord) -> Result<(), XlsxError> {
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
    Ok(())
}

pub(crate) fn write_header(
    sheet: &mut Worksheet,
    names: &[&str],
    bold: &Format,
) -> Result<(), XlsxError> {
    for (col, name) in (0u16..).zip(names) {
        sheet.write_string_with_format(0, col, *name, bold)?;
    }
    Ok(())
}

/// Writes a number, or nothing when there is none.
pub(crate) fn write_number(
    sheet: &mut Worksheet,
    row: u32,
    col: u16,
    value: Option<f64>,
) -> Result<(), XlsxError> {
    if let Some(value) = value {
        sheet.write_number(row, col, value)?;
    }
    Ok(())
}

/// Writes text, cut to fit a cell when it is longer than Excel allows (long evidence);
/// nothing for empty text.
pub(crate) fn write_text(
    sheet: &mut Worksheet,
    row: u32,
    col: u16,
    text: &str,
) -> Result<(), XlsxError> {
    if !text.is_empty() {
        sheet.write_string(row, col, fit_cell(text))?;
    }
    Ok(())
}

/// `text`, cut to Excel's cell limit with a mark saying so.
pub(crate) fn fit_cell(text: &str) -> Cow<'_, str> {
    if text.chars().count() <= CELL_LIMIT {
        Cow::Borrowed(text)
    } else {
        let keep = CELL_LIMIT - CUT_MARK.chars().count();
        Cow::Owned(text.chars().take(keep).chain(CUT_MARK.chars()).collect())
    }
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
    use crate::{MEAN_ROW_LABEL, RANK_AGREEMENT_FILE, RANK_AGREEMENT_SHEET_COLUMNS};
    use calamine::{Data, Reader, Xlsx, open_workbook};
    use rageval_core::{Context, Evidence, Verdict, VerdictTarget};

    fn supported() -> Evidence {
        Evidence {
            verdicts: vec![Verdict {
                target: VerdictTarget::Statement(0),
                value: 1.0,
                label: Some("supported".into()),
                text: Some("巴黎是法国的首都".into()),
                reason: Some("context 1 says so <script>".into()),
                supporting_contexts: vec![1],
            }],
            details: serde_json::Map::new(),
        }
    }

    #[test]
    fn the_results_sheet_reads_back_equal_to_the_journal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run");
        write_run(
            &path,
            "abc",
            &[
                (
                    "问题-1",
                    "faithfulness",
                    Outcome::score(0.1 + 0.2, supported()),
                ),
                ("问题-1", "bleu", Outcome::bare(1.0 / 3.0)),
                ("q2", "faithfulness", Outcome::undefined("答案没有陈述")),
                ("q2", "bleu", Outcome::failed("judge said <nonsense>")),
                ("q3", "faithfulness", Outcome::bare(0.0)),
                ("q3", "bleu", Outcome::bare(0.123_456_789_012_345)),
            ],
        );
        let run = RunData::load(&path).unwrap();
        let xlsx = path.join("results.xlsx");
        write_xlsx(&run, &ReportTexts::Absent, &xlsx).unwrap();
        assert_workbook_matches_journal(&xlsx, &path.join(crate::RESULTS_FILE));

        let mut workbook: Xlsx<_> = open_workbook(&xlsx).unwrap();
        assert_eq!(
            workbook.sheet_names(),
            vec!["summary", "samples", "results"],
            "no rank agreement without its file"
        );
        let summary = workbook.worksheet_range("summary").unwrap();
        assert_eq!(
            summary.get_value((1, 0)),
            Some(&Data::String("faithfulness".into()))
        );
        assert_eq!(summary.get_value((1, 6)), Some(&Data::Float(1.0)));
    }

    /// Regression: the `samples` sheet held only ids and scores, in completion order. Seed
    /// S3's user reads each question with its reference, answer, contexts and every
    /// metric's score beside the reason for it, in the dataset's order.
    #[test]
    fn the_samples_sheet_has_texts_and_reasons_in_the_dataset_s_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run");
        // The journal finished q2 first.
        write_run(
            &path,
            "abc",
            &[
                ("q2", "faithfulness", Outcome::undefined("答案没有陈述")),
                ("q2", "bleu", Outcome::failed("judge said <nonsense>")),
                ("q1", "faithfulness", Outcome::score(0.5, supported())),
                ("q1", "bleu", Outcome::bare(0.25)),
            ],
        );
        let samples = vec![
            Sample {
                id: "q1".into(),
                question: "法国的首都是哪里？".into(),
                answer: Some("巴黎。".into()),
                references: vec!["巴黎".into(), "Paris".into()],
                contexts: vec![
                    Context {
                        id: Some("doc-7".into()),
                        text: "法国在欧洲。".into(),
                        score: None,
                        hop: None,
                    },
                    Context {
                        id: Some("doc-9".into()),
                        text: "巴黎是法国的首都。".into(),
                        score: None,
                        hop: None,
                    },
                ],
                ..Sample::default()
            },
            Sample {
                id: "q2".into(),
                question: "second?".into(),
                ..Sample::default()
            },
        ];
        let run = RunData::load(&path).unwrap();
        let xlsx = path.join("results.xlsx");
        write_xlsx(&run, &ReportTexts::Samples(&samples), &xlsx).unwrap();
        assert_workbook_matches_journal(&xlsx, &path.join(crate::RESULTS_FILE));

        let mut workbook: Xlsx<_> = open_workbook(&xlsx).unwrap();
        let sheet = workbook.worksheet_range("samples").unwrap();
        let cell = |r: u32, c: u32| match sheet.get_value((r, c)) {
            Some(Data::String(s)) => s.clone(),
            Some(Data::Float(f)) => f.to_string(),
            _ => String::new(),
        };
        let header: Vec<String> = (0..10).map(|c| cell(0, c)).collect();
        assert_eq!(
            header,
            [
                "sample_id",
                "question",
                "reference",
                "answer",
                "context_ids",
                "contexts",
                "faithfulness",
                "faithfulness reason",
                "bleu",
                "bleu reason"
            ]
        );
        // Row 1 is q1, the dataset's first, though the journal wrote q2 first.
        assert_eq!(cell(1, 0), "q1");
        assert_eq!(cell(1, 1), "法国的首都是哪里？");
        assert_eq!(cell(1, 2), "巴黎\n\nParis");
        assert_eq!(cell(1, 3), "巴黎。");
        assert_eq!(cell(1, 4), "doc-7, doc-9");
        assert_eq!(
            cell(1, 5),
            "[0] (id doc-7) 法国在欧洲。\n\n[1] (id doc-9) 巴黎是法国的首都。"
        );
        assert_eq!(cell(1, 6), "0.5");
        assert_eq!(
            cell(1, 7),
            "statement 0 «巴黎是法国的首都»: supported (1) — context 1 says so <script>; \
             cites context 1"
        );
        assert_eq!(cell(1, 8), "0.25");
        assert_eq!(cell(1, 9), "");
        assert_eq!((cell(2, 0), cell(2, 1)), ("q2".into(), "second?".into()));
        assert_eq!(
            (cell(2, 6), cell(2, 7)),
            ("undefined".into(), "答案没有陈述".into())
        );
        assert_eq!(
            (cell(2, 8), cell(2, 9)),
            ("failed".into(), "judge said <nonsense>".into())
        );
    }

    #[test]
    fn the_rank_agreement_sheet_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run");
        write_run(
            &path,
            "abc",
            &[
                ("1", "m", Outcome::bare(0.5)),
                ("2", "m", Outcome::bare(1.0)),
            ],
        );
        std::fs::write(
            path.join(RANK_AGREEMENT_FILE),
            concat!(
                r#"{"sample_id": "1", "question": "少儿编程？", "spearman": 0.5, "kendall_tau_b": 0.25, "k": 3, "top_k_overlap": 0.6666666666666666, "overlap_indices": [2, 0], "ndcg_at_k": 0.75, "map": 0.5}"#,
                "\n",
                r#"{"sample_id": "2", "question": "q2", "k": 3, "left_out": "1 of 4 grades failed"}"#,
                "\n",
            ),
        )
        .unwrap();
        let run = RunData::load(&path).unwrap();
        let xlsx = path.join("results.xlsx");
        write_xlsx(&run, &ReportTexts::Absent, &xlsx).unwrap();
        let mut workbook: Xlsx<_> = open_workbook(&xlsx).unwrap();
        assert_eq!(
            workbook.sheet_names(),
            vec!["summary", "samples", "rank_agreement", "results"]
        );
        let sheet = workbook.worksheet_range("rank_agreement").unwrap();
        let row = |r: u32| -> Vec<Data> {
            (0..10)
                .map(|c| sheet.get_value((r, c)).cloned().unwrap_or(Data::Empty))
                .collect()
        };
        let header: Vec<String> = row(0).iter().map(|c| c.to_string()).collect();
        assert_eq!(header, RANK_AGREEMENT_SHEET_COLUMNS);
        let s = |t: &str| Data::String(t.into());
        assert_eq!(
            row(1),
            vec![
                s("1"),
                s("少儿编程？"),
                Data::Float(3.0),
                Data::Float(0.5),
                Data::Float(0.25),
                Data::Float(2.0 / 3.0),
                s("2, 0"),
                Data::Float(0.75),
                Data::Float(0.5),
                Data::Empty,
            ]
        );
        // A left-out question shows why and carries no figure.
        assert_eq!(
            row(2),
            vec![
                s("2"),
                s("q2"),
                Data::Float(3.0),
                Data::Empty,
                Data::Empty,
                Data::Empty,
                Data::Empty,
                Data::Empty,
                Data::Empty,
                s("1 of 4 grades failed"),
            ]
        );
        assert_eq!(row(3)[0], s(MEAN_ROW_LABEL));
        assert_eq!(row(3)[3], Data::Float(0.5));
        assert_eq!(row(3)[9], s("1 of 2 questions left out"));
    }

    #[test]
    fn overlong_text_is_cut_to_fit_a_cell() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run");
        let long = "长".repeat(CELL_LIMIT + 10);
        write_run(&path, "abc", &[("1", "m", Outcome::undefined(long))]);
        let run = RunData::load(&path).unwrap();
        let xlsx = path.join("results.xlsx");
        write_xlsx(&run, &ReportTexts::Absent, &xlsx).unwrap();
        let mut workbook: Xlsx<_> = open_workbook(&xlsx).unwrap();
        let range = workbook.worksheet_range("results").unwrap();
        let Some(Data::String(cell)) = range.get_value((1, 4)) else {
            panic!("no reason cell");
        };
        assert_eq!(cell.chars().count(), CELL_LIMIT);
        assert!(cell.ends_with(CUT_MARK));
    }
}
