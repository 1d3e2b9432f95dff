//! Writing every human file of a run at once: `report.html`, `report.md`, `results.xlsx`.

use std::fs;
use std::path::{Path, PathBuf};

use rageval_core::Sample;

use crate::{ReportError, RunData, render_html, render_markdown, write_xlsx};

pub const HTML_FILE: &str = "report.html";
pub const MARKDOWN_FILE: &str = "report.md";
pub const XLSX_FILE: &str = "results.xlsx";

/// Writes the run's HTML, Markdown and XLSX reports into its directory and returns their
/// paths. `samples` (the run's dataset; may be empty) gives the texts of the HTML
/// drill-down and of the workbook's rows, and the order rows are listed in.
pub fn write_reports(run: &RunData, samples: &[Sample]) -> Result<Vec<PathBuf>, ReportError> {
    let html = run.path.join(HTML_FILE);
    write_text(&html, &render_html(run, samples))?;
    let markdown = run.path.join(MARKDOWN_FILE);
    write_text(&markdown, &render_markdown(run))?;
    let xlsx = run.path.join(XLSX_FILE);
    write_xlsx(run, samples, &xlsx)?;
    Ok(vec![html, markdown, xlsx])
}

/// Writes a text file whole (used for reports and JUnit files).
pub(crate) fn write_text(path: &Path, text: &str) -> Result<(), ReportError> {
    fs::write(path, text).map_err(|source| ReportError::Write {
        path: path.to_path_buf(),
        source,
    })
}
