//! Excel workbooks (`.xlsx`), through calamine: one sheet, the first row a header.
//!
//! Numbers are written back as text the way a person typed them (`3`, not `3.0`), so ids
//! and cells behave as in CSV. Rows are the sheet's own 1-based row numbers; rows with no
//! value at all (left over from formatting) are skipped.

use std::path::Path;

use calamine::{Data, Reader, Xlsx, open_workbook};
use serde_json::{Map, Value};

use super::csv::header_names;
use super::error::{DatasetError, DatasetErrorKind};
use super::value::{Record, RecordBuilder};

/// The most bytes one part of a workbook (a sheet, the shared strings) may unpack to:
/// 256 MiB. calamine holds a sheet whole; a 1 MB file holding one 1 GB cell took 3.0 GiB
/// and 34 s before its error (issue 40). Larger sets read streamed as JSONL or Parquet.
pub const MAX_XLSX_PART_BYTES: u64 = 256 * 1024 * 1024;

/// Refuses a workbook a part of which unpacks past [`MAX_XLSX_PART_BYTES`], from the sizes
/// its zip directory declares, before anything is unpacked. A file that is no zip is left
/// for calamine to name.
fn check_unpacked_sizes(path: &Path) -> Result<(), DatasetError> {
    let Ok(file) = std::fs::File::open(path) else {
        return Ok(());
    };
    let Ok(mut archive) = zip::ZipArchive::new(std::io::BufReader::new(file)) else {
        return Ok(());
    };
    for index in 0..archive.len() {
        let Ok(part) = archive.by_index_raw(index) else {
            continue;
        };
        if part.size() > MAX_XLSX_PART_BYTES {
            let message = format!(
                "its part {} unpacks to {} bytes, over the {MAX_XLSX_PART_BYTES} one part may \
                 have (a zip bomb, or a set too large for a workbook: convert it to JSONL or \
                 Parquet, which are read streamed)",
                part.name(),
                part.size()
            );
            return Err(DatasetError::file(
                path,
                DatasetErrorKind::InvalidXlsx { message },
            ));
        }
    }
    Ok(())
}

/// The rows of one sheet as records; the header is checked against `builder`'s `--map`.
pub(crate) fn load(
    path: &Path,
    sheet: Option<&str>,
    builder: &mut RecordBuilder,
) -> Result<Vec<Result<Record, DatasetError>>, DatasetError> {
    let invalid =
        |message: String| DatasetError::file(path, DatasetErrorKind::InvalidXlsx { message });
    check_unpacked_sizes(path)?;
    let mut workbook: Xlsx<_> =
        open_workbook(path).map_err(|error: calamine::XlsxError| invalid(error.to_string()))?;
    let available = workbook.sheet_names();
    let name = match sheet {
        Some(name) => name.to_string(),
        None => available
            .first()
            .cloned()
            .ok_or_else(|| DatasetError::file(path, DatasetErrorKind::Empty))?,
    };
    if !available.contains(&name) {
        let kind = DatasetErrorKind::MissingSheet {
            sheet: name,
            available,
        };
        return Err(DatasetError::file(path, kind));
    }
    let range = workbook
        .worksheet_range(&name)
        .map_err(|error| invalid(error.to_string()))?;
    let first_row = range.start().map_or(0, |(row, _)| row as usize);
    let mut rows = range
        .rows()
        .enumerate()
        .map(|(index, cells)| (first_row + index + 1, cells))
        .filter(|(_, cells)| cells.iter().any(|cell| !cell_text(cell).trim().is_empty()));
    let Some((header_line, header_cells)) = rows.next() else {
        return Err(DatasetError::file(path, DatasetErrorKind::Empty));
    };
    let header = header_names(header_cells.iter().map(cell_text))
        .map_err(|kind| DatasetError::at(path, header_line, kind))?;
    builder.check_header(&header, header_line)?;
    let records: Vec<_> = rows
        .map(|(line, cells)| {
            let fields: Map<String, Value> = header
                .iter()
                .zip(cells.iter())
                .map(|(name, cell)| (name.clone(), Value::String(cell_text(cell))))
                .collect();
            Ok(Record {
                file: None,
                line,
                fields,
            })
        })
        .collect();
    if records.is_empty() {
        return Err(DatasetError::file(path, DatasetErrorKind::HeaderOnly));
    }
    Ok(records)
}

/// A cell as the text a person would read in it.
fn cell_text(cell: &Data) -> String {
    match cell {
        Data::Empty => String::new(),
        Data::String(s) => s.clone(),
        // Whole floats print without `.0`: Excel stores every number as a float, and an id
        // typed as 12 should read as "12".
        Data::Float(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", *f as i64),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    /// Regression (issue 40, item 11): a small workbook whose sheet unpacks to more than
    /// the bound is refused from its zip directory, naming the file and the part, before
    /// calamine unpacks anything.
    #[test]
    fn regression_issue_40_a_part_that_unpacks_past_the_bound_is_refused_before_reading() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bomb.xlsx");
        let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
        let deflated = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .compression_level(Some(1))
            .large_file(true);
        zip.start_file("xl/worksheets/sheet1.xml", deflated)
            .unwrap();
        let zeros = vec![b'0'; 1 << 20];
        for _ in 0..=MAX_XLSX_PART_BYTES >> 20 {
            zip.write_all(&zeros).unwrap();
        }
        zip.finish().unwrap();
        assert!(std::fs::metadata(&path).unwrap().len() < MAX_XLSX_PART_BYTES / 100);
        let mut builder = RecordBuilder::new(&path, super::super::field::FieldMap::default(), true);
        let error = load(&path, None, &mut builder).unwrap_err().to_string();
        assert!(
            error.contains("bomb.xlsx")
                && error.contains("xl/worksheets/sheet1.xml unpacks to")
                && error.contains("JSONL or Parquet"),
            "{error}"
        );
    }

    #[test]
    fn cells_read_as_typed() {
        assert_eq!(cell_text(&Data::Float(12.0)), "12");
        assert_eq!(cell_text(&Data::Float(0.25)), "0.25");
        assert_eq!(cell_text(&Data::Int(7)), "7");
        assert_eq!(cell_text(&Data::String("x".into())), "x");
        assert_eq!(cell_text(&Data::Empty), "");
    }
}
