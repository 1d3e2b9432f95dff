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

/// The rows of one sheet as records; the header is checked against `builder`'s `--map`.
pub(crate) fn load(
    path: &Path,
    sheet: Option<&str>,
    builder: &mut RecordBuilder,
) -> Result<Vec<Result<Record, DatasetError>>, DatasetError> {
    let invalid =
        |message: String| DatasetError::file(path, DatasetErrorKind::InvalidXlsx { message });
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
    use super::*;

    #[test]
    fn cells_read_as_typed() {
        assert_eq!(cell_text(&Data::Float(12.0)), "12");
        assert_eq!(cell_text(&Data::Float(0.25)), "0.25");
        assert_eq!(cell_text(&Data::Int(7)), "7");
        assert_eq!(cell_text(&Data::String("x".into())), "x");
        assert_eq!(cell_text(&Data::Empty), "");
    }
}
