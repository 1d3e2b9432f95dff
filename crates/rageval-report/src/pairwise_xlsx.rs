//! A `pairwise` run's workbook, `results.xlsx`:
//!
//! - `head_to_head`: one row per pair of versions — wins, ties, losses, failed, the win
//!   rate with its interval, the sign test, the reading, position and length bias;
//! - `strengths` (three or more versions): each version's Bradley–Terry log-strength with
//!   its interval;
//! - `verdicts`: one row per question × pair of versions — the question, each version's
//!   answer, both verdicts (the version named, or `tie`) with their reasons or errors, the
//!   combined result and whether it flipped.
//!
//! Renders only: the figures are [`PairwiseSummary`]'s.

use std::collections::HashMap;
use std::path::Path;

use rageval_core::preference::{Duel, Seat};
use rust_xlsxwriter::{Format, Workbook, Worksheet, XlsxError};

use crate::ReportError;
use crate::pairwise::{PairVerdicts, PairwiseQuestion, PairwiseSummary, SeatVerdict};
use crate::pairwise_render::version_name;
use crate::xlsx::{save, write_header, write_number, write_text};

/// The sheet of the head-to-head table.
pub const HEAD_TO_HEAD_SHEET: &str = "head_to_head";
/// The sheet of the per-question verdicts.
pub const VERDICTS_SHEET: &str = "verdicts";

/// Columns of the `head_to_head` sheet.
pub const HEAD_TO_HEAD_SHEET_COLUMNS: [&str; 20] = [
    "a",
    "b",
    "n",
    "wins",
    "ties",
    "losses",
    "failed",
    "win_rate",
    "win_rate_ci95_low",
    "win_rate_ci95_high",
    "p_value",
    "reading",
    "flips",
    "flip_rate",
    "flip_rate_all",
    "first_seat_share",
    "a_longer_win_rate",
    "b_longer_win_rate",
    "longer_win_rate",
    "held_equal_win_rate",
];

/// Columns of the `verdicts` sheet.
pub const VERDICTS_SHEET_COLUMNS: [&str; 12] = [
    "question_id",
    "question",
    "a",
    "b",
    "a_answer",
    "b_answer",
    "a_first_verdict",
    "a_first_reason",
    "b_first_verdict",
    "b_first_reason",
    "result",
    "flipped",
];

/// Each version's answer to a question, in version order, by the question's id (the
/// first version's sample id); a question missing here is written without answers.
pub type PairwiseAnswers = HashMap<String, Vec<String>>;

/// Writes the run's workbook to `path`.
pub fn write_pairwise_xlsx(
    summary: &PairwiseSummary,
    questions: &[PairwiseQuestion],
    answers: &PairwiseAnswers,
    path: &Path,
) -> Result<(), ReportError> {
    save(build(summary, questions, answers), path)
}

fn build(
    summary: &PairwiseSummary,
    questions: &[PairwiseQuestion],
    answers: &PairwiseAnswers,
) -> Result<Workbook, XlsxError> {
    let mut workbook = Workbook::new();
    let bold = Format::new().set_bold();
    head_to_head_sheet(workbook.add_worksheet(), summary, &bold)?;
    if !summary.strengths.is_empty() {
        let sheet = workbook.add_worksheet();
        sheet.set_name("strengths")?;
        write_header(
            sheet,
            &["version", "log_strength", "ci95_low", "ci95_high"],
            &bold,
        )?;
        for (row, strength) in (1u32..).zip(&summary.strengths) {
            write_text(sheet, row, 0, &strength.name)?;
            sheet.write_number(row, 1, strength.strength)?;
            write_number(sheet, row, 2, strength.ci95.map(|c| c[0]))?;
            write_number(sheet, row, 3, strength.ci95.map(|c| c[1]))?;
        }
    }
    verdicts_sheet(workbook.add_worksheet(), summary, questions, answers, &bold)?;
    Ok(workbook)
}

fn head_to_head_sheet(
    sheet: &mut Worksheet,
    summary: &PairwiseSummary,
    bold: &Format,
) -> Result<(), XlsxError> {
    sheet.set_name(HEAD_TO_HEAD_SHEET)?;
    write_header(sheet, &HEAD_TO_HEAD_SHEET_COLUMNS, bold)?;
    for (row, pair) in (1u32..).zip(&summary.pairs) {
        let f = &pair.figures;
        write_text(sheet, row, 0, &pair.a)?;
        write_text(sheet, row, 1, &pair.b)?;
        for (col, count) in (2u16..).zip([f.n, f.wins, f.ties, f.losses, pair.failed]) {
            sheet.write_number(row, col, count as f64)?;
        }
        write_number(sheet, row, 7, f.win_rate)?;
        write_number(sheet, row, 8, f.win_rate_ci95.map(|c| c[0]))?;
        write_number(sheet, row, 9, f.win_rate_ci95.map(|c| c[1]))?;
        write_number(sheet, row, 10, f.p_value)?;
        write_text(sheet, row, 11, &f.reading.words(&pair.a, &pair.b))?;
        sheet.write_number(row, 12, f.position.flips as f64)?;
        let rates = [
            f.position.flip_rate,
            f.position.flip_rate_all,
            f.position.first_seat_share,
            f.length.a_longer.win_rate,
            f.length.b_longer.win_rate,
            f.length.longer_win_rate,
            f.length.held_equal.win_rate,
        ];
        for (col, rate) in (13u16..).zip(rates) {
            write_number(sheet, row, col, rate)?;
        }
    }
    sheet.set_freeze_panes(1, 2)?;
    Ok(())
}

fn verdicts_sheet(
    sheet: &mut Worksheet,
    summary: &PairwiseSummary,
    questions: &[PairwiseQuestion],
    answers: &PairwiseAnswers,
    bold: &Format,
) -> Result<(), XlsxError> {
    sheet.set_name(VERDICTS_SHEET)?;
    write_header(sheet, &VERDICTS_SHEET_COLUMNS, bold)?;
    let mut row = 1u32;
    for question in questions {
        let answered = answers.get(&question.question_id);
        let answer = |version: usize| {
            answered
                .and_then(|a| a.get(version))
                .map_or("", String::as_str)
        };
        for pair in &question.pairs {
            let (a, b) = (version_name(summary, pair.a), version_name(summary, pair.b));
            write_text(sheet, row, 0, &question.question_id)?;
            write_text(sheet, row, 1, &question.question)?;
            write_text(sheet, row, 2, a)?;
            write_text(sheet, row, 3, b)?;
            write_text(sheet, row, 4, answer(pair.a))?;
            write_text(sheet, row, 5, answer(pair.b))?;
            write_text(sheet, row, 6, &named(&pair.a_first, [a, b]))?;
            write_text(sheet, row, 7, pair.a_first.words())?;
            write_text(sheet, row, 8, &named(&pair.b_first, [b, a]))?;
            write_text(sheet, row, 9, pair.b_first.words())?;
            write_text(sheet, row, 10, &result(pair, a, b))?;
            sheet.write_boolean(row, 11, pair.flipped)?;
            row += 1;
        }
    }
    sheet.set_freeze_panes(1, 2)?;
    Ok(())
}

/// The version a verdict named (`seated`: the first seat's version, then the second's),
/// `tie`, or `failed`.
pub(crate) fn named(verdict: &SeatVerdict, seated: [&str; 2]) -> String {
    match verdict {
        SeatVerdict::Answered { preferred, .. } => match preferred {
            Seat::First => seated[0].to_owned(),
            Seat::Second => seated[1].to_owned(),
            Seat::Tie => "tie".to_owned(),
        },
        SeatVerdict::Failed { .. } => "failed".to_owned(),
    }
}

/// The combined result: the winning version's name, `tie`, or `failed`.
pub(crate) fn result(pair: &PairVerdicts, a: &str, b: &str) -> String {
    match pair.result {
        Some(Duel::A) => a.to_owned(),
        Some(Duel::B) => b.to_owned(),
        Some(Duel::Tie) => "tie".to_owned(),
        None => "failed".to_owned(),
    }
}
