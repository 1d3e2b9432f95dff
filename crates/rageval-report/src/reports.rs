//! Writing every human file of a run at once: `report.html`, `report.md`, `results.xlsx`,
//! each whole or not at all, like every other run file.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::agreement_render::agreement_samples;
use crate::html::render_html_from;
use crate::markdown::{lowest_scoring, markdown};
use crate::xlsx::write_xlsx_from;
use crate::{JournalIndex, ReportError, ReportTexts, RunInfo};

pub const HTML_FILE: &str = "report.html";
pub const MARKDOWN_FILE: &str = "report.md";
pub const XLSX_FILE: &str = "results.xlsx";

/// Writes the run's HTML, Markdown and XLSX reports into its directory and returns their
/// paths. `journal` indexes the run's journal ([`JournalIndex::read`]); the outcomes the
/// files show are read back from it, never all held at once. `texts` (the run's dataset,
/// or none) gives the texts of the HTML drill-down and of the workbook's rows, and the
/// order rows are listed in; a dataset file is read once per file written, never held
/// whole.
pub fn write_reports(
    run: &RunInfo,
    journal: &JournalIndex,
    texts: &ReportTexts,
) -> Result<Vec<PathBuf>, ReportError> {
    let html = run.path.join(HTML_FILE);
    write_text(&html, &render_html_from(run, journal, texts)?)?;
    let markdown_path = run.path.join(MARKDOWN_FILE);
    let quoted = journal.outcomes(agreement_samples(run, journal))?;
    let lowest = lowest_scoring(run, journal);
    let listed: HashSet<&str> = lowest
        .iter()
        .flat_map(|(_, samples)| samples.iter().map(|&(_, at)| journal.id(at)))
        .collect();
    let questions = texts.pick(&listed)?;
    write_text(&markdown_path, &markdown(run, journal, &quoted, &questions))?;
    let xlsx = run.path.join(XLSX_FILE);
    write_xlsx_from(run, journal, texts, &xlsx)?;
    Ok(vec![html, markdown_path, xlsx])
}

/// Writes a report file whole or not at all (temporary file, then rename): a full disk
/// leaves the earlier file, or none, never a truncated one.
pub(crate) fn write_text(path: &Path, text: &str) -> Result<(), ReportError> {
    rageval_core::files::write_atomically(path, text.as_bytes()).map_err(|source| {
        ReportError::Write {
            path: path.to_path_buf(),
            source,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::calamine::{Data, Reader, Xlsx, open_workbook};
    use crate::testing::write_run;
    use crate::{
        EVERY_SAMPLE_UP_TO, RunData, read_run_samples, render_html, render_markdown, write_xlsx,
    };
    use rageval_core::{Evidence, Outcome, Verdict, VerdictTarget};

    /// Every cell of every sheet of a workbook, by sheet.
    fn cells(path: &Path) -> Vec<(String, Vec<Vec<Data>>)> {
        let mut workbook: Xlsx<_> = open_workbook(path).unwrap();
        let names = workbook.sheet_names();
        names
            .into_iter()
            .map(|name| {
                let range = workbook.worksheet_range(&name).unwrap();
                (name, range.rows().map(<[Data]>::to_vec).collect())
            })
            .collect()
    }

    /// The reports written from the journal's file, streamed, are the reports of the same
    /// run held in memory, byte for byte (the workbook cell for cell: its files carry the
    /// time they were written).
    #[test]
    fn the_streamed_reports_are_the_reports_of_the_run_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let n = EVERY_SAMPLE_UP_TO + 500;
        // The dataset lists the samples in reverse; the journal interleaves metrics.
        let data: String = (0..n)
            .rev()
            .map(|i| format!("{{\"id\": \"s{i}\", \"question\": \"q {i}?\", \"answer\": \"a\"}}\n"))
            .collect();
        let data_path = dir.path().join("data.jsonl");
        std::fs::write(&data_path, &data).unwrap();
        let cited = Evidence {
            verdicts: vec![Verdict {
                target: VerdictTarget::Statement(0),
                value: 0.0,
                label: Some("unsupported".into()),
                text: None,
                reason: Some("no context says so".into()),
                supporting_contexts: vec![],
            }],
            details: serde_json::Map::new(),
        };
        let mut results = Vec::new();
        for i in 0..n {
            let value = ((i * 37) % 101) as f64 / 100.0;
            results.push((format!("s{i}"), "m", Outcome::score(value, cited.clone())));
            let k = match i % 97 {
                0 => Outcome::failed("judge down"),
                1 => Outcome::undefined("no reference"),
                _ => Outcome::bare(1.0 - value),
            };
            results.push((format!("s{i}"), "k", k));
        }
        let path = dir.path().join("run");
        write_run(&path, &crate::sha256_bytes(data.as_bytes()), &results);
        let mut manifest = RunInfo::load(&path).unwrap().manifest;
        manifest.dataset.path = data_path.display().to_string();
        std::fs::write(
            path.join(crate::MANIFEST_FILE),
            serde_json::to_string(&manifest).unwrap(),
        )
        .unwrap();

        let info = RunInfo::load(&path).unwrap();
        let journal = JournalIndex::read(&info.results_path()).unwrap();
        let texts = ReportTexts::dataset(&info.manifest, &info.path).unwrap();
        write_reports(&info, &journal, &texts).unwrap();

        let run = RunData::load(&path).unwrap();
        let samples = read_run_samples(&run).unwrap();
        let html = std::fs::read_to_string(path.join(HTML_FILE)).unwrap();
        assert!(html.contains("this page lists"), "a large run's page");
        assert_eq!(html, render_html(&run, &samples));
        let markdown = std::fs::read_to_string(path.join(MARKDOWN_FILE)).unwrap();
        assert_eq!(markdown, render_markdown(&run, &samples));
        let in_memory = dir.path().join("in-memory.xlsx");
        write_xlsx(&run, &ReportTexts::Samples(&samples), &in_memory).unwrap();
        assert_eq!(cells(&path.join(XLSX_FILE)), cells(&in_memory));
    }
}
