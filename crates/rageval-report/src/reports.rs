//! Writing every human file of a run at once: `report.html`, `report.md`, `results.xlsx`.

use std::fs;
use std::path::{Path, PathBuf};

use crate::html::render_html_from;
use crate::{ReportError, ReportTexts, RunData, render_markdown, write_xlsx};

pub const HTML_FILE: &str = "report.html";
pub const MARKDOWN_FILE: &str = "report.md";
pub const XLSX_FILE: &str = "results.xlsx";

/// Writes the run's HTML, Markdown and XLSX reports into its directory and returns their
/// paths. `texts` (the run's dataset, or none) gives the texts of the HTML drill-down and of
/// the workbook's rows, and the order rows are listed in; a dataset file is read once per
/// file written, never held whole.
pub fn write_reports(run: &RunData, texts: &ReportTexts) -> Result<Vec<PathBuf>, ReportError> {
    let html = run.path.join(HTML_FILE);
    write_text(&html, &render_html_from(run, texts)?)?;
    let markdown = run.path.join(MARKDOWN_FILE);
    write_text(&markdown, &render_markdown(run))?;
    let xlsx = run.path.join(XLSX_FILE);
    write_xlsx(run, texts, &xlsx)?;
    Ok(vec![html, markdown, xlsx])
}

/// Writes a text file whole (used for reports and JUnit files).
pub(crate) fn write_text(path: &Path, text: &str) -> Result<(), ReportError> {
    fs::write(path, text).map_err(|source| ReportError::Write {
        path: path.to_path_buf(),
        source,
    })
}
