//! CSV and TSV files with a header row, loaded whole.
//!
//! The delimiter is a tab for `.tsv` files, or when the header holds tabs and no commas;
//! otherwise a comma. Cells are handed on as strings; the record builder decides which are
//! lists. Lines are the file's own: the header is line 1, and a record whose quoted cell
//! spans lines is reported at the line where it starts.

use std::path::Path;

use serde_json::{Map, Value};

use super::error::{DatasetError, DatasetErrorKind};
use super::json::read_text;
use super::value::{Record, RecordBuilder};

/// The rows of a CSV file as records; the header is checked against `builder`'s `--map`.
pub(crate) fn load(
    path: &Path,
    builder: &mut RecordBuilder,
) -> Result<Vec<Result<Record, DatasetError>>, DatasetError> {
    let text = read_text(path)?;
    if text.trim().is_empty() {
        return Err(DatasetError::file(path, DatasetErrorKind::Empty));
    }
    let mut reader = ::csv::ReaderBuilder::new()
        .delimiter(delimiter(path, &text))
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut rows = reader.records();
    let csv_error = |error: ::csv::Error| {
        let line = error.position().map_or(1, |p| p.line() as usize);
        let message = error.to_string();
        DatasetError::at(path, line, DatasetErrorKind::InvalidCsv { message })
    };
    let header_row = match rows.next() {
        Some(row) => row.map_err(csv_error)?,
        None => return Err(DatasetError::file(path, DatasetErrorKind::Empty)),
    };
    let header_line = header_row.position().map_or(1, |p| p.line() as usize);
    let header = header_names(header_row.iter().map(str::to_string))
        .map_err(|kind| DatasetError::at(path, header_line, kind))?;
    builder.check_header(&header, header_line)?;

    let mut records = Vec::new();
    for row in rows {
        let row = match row {
            Ok(row) => row,
            Err(error) => {
                records.push(Err(csv_error(error)));
                continue;
            }
        };
        let line = row.position().map_or(0, |p| p.line() as usize);
        if row.len() != header.len() {
            let kind = DatasetErrorKind::ColumnCount {
                expected: header.len(),
                found: row.len(),
            };
            records.push(Err(DatasetError::at(path, line, kind)));
            continue;
        }
        let fields: Map<String, Value> = header
            .iter()
            .zip(row.iter())
            .map(|(name, cell)| (name.clone(), Value::String(cell.to_string())))
            .collect();
        records.push(Ok(Record {
            file: None,
            line,
            fields,
        }));
    }
    if records.is_empty() {
        return Err(DatasetError::file(path, DatasetErrorKind::HeaderOnly));
    }
    Ok(records)
}

/// Tabs for `.tsv`, or for a header with tabs and no commas; commas otherwise.
fn delimiter(path: &Path, text: &str) -> u8 {
    let is_tsv = path
        .extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("tsv"));
    let header = text.lines().next().unwrap_or_default();
    if is_tsv || (header.contains('\t') && !header.contains(',')) {
        b'\t'
    } else {
        b','
    }
}

/// Header cells as column names: trimmed, blanks named `column_N` (a pandas index column has
/// no name), duplicates rejected because one name cannot key two cells.
pub(crate) fn header_names(
    cells: impl Iterator<Item = String>,
) -> Result<Vec<String>, DatasetErrorKind> {
    let mut names: Vec<String> = Vec::new();
    for (index, cell) in cells.enumerate() {
        let name = cell.trim();
        let name = if name.is_empty() {
            format!("column_{}", index + 1)
        } else {
            name.to_string()
        };
        if names.contains(&name) {
            return Err(DatasetErrorKind::DuplicateColumn { column: name });
        }
        names.push(name);
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_names_fill_blanks_and_reject_duplicates() {
        let names =
            header_names(["", " question ", "answer"].into_iter().map(String::from)).unwrap();
        assert_eq!(names, vec!["column_1", "question", "answer"]);
        let error = header_names(["a", "a"].into_iter().map(String::from)).unwrap_err();
        assert!(error.to_string().contains("duplicate column `a`"));
    }

    #[test]
    fn delimiter_follows_extension_or_header() {
        assert_eq!(delimiter(Path::new("a.tsv"), "a,b"), b'\t');
        assert_eq!(delimiter(Path::new("a.csv"), "a\tb\n"), b'\t');
        assert_eq!(delimiter(Path::new("a.csv"), "a,b\tc\n"), b',');
    }
}
