//! A qrels file and a run file read from disk, in parallel where it pays: parsing is most of
//! the work on large inputs, and the run is usually far bigger than the qrels, so a large
//! run is cut at a line boundary and read on two threads with the qrels. This is the one
//! place of the module that opens files; it never prints.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use super::{Qrels, Run, TrecError};

/// Runs smaller than this are read in one piece.
pub const SPLIT_RUN_BYTES: u64 = 8 << 20;

/// Reads `qrels` and `run`, errors naming the file and line. A run of
/// [`SPLIT_RUN_BYTES`] or more is cut at a line boundary: one thread reads the qrels and
/// then the head of the run, the other the tail, with equal bytes each. If a piece fails,
/// the whole run is read again in one piece so that the error names the right line.
pub fn read_files(qrels: &Path, run: &Path) -> Result<(Qrels, Run), TrecError> {
    let (qrels_name, run_name) = (qrels.display().to_string(), run.display().to_string());
    let qrels_file = open(qrels)?;
    let run_bytes = std::fs::metadata(run).map_or(0, |meta| meta.len());
    let qrels_bytes = std::fs::metadata(qrels).map_or(0, |meta| meta.len());
    let cut = if run_bytes >= SPLIT_RUN_BYTES {
        line_start_after(run, run_bytes.saturating_sub((run_bytes + qrels_bytes) / 2))?
    } else {
        None
    };
    let head_file = match cut {
        Some(cut) => Some(BufReader::new(open_raw(run)?.take(cut))),
        None => None,
    };
    let mut tail_file = open(run)?;
    if let Some(cut) = cut {
        tail_file
            .seek(SeekFrom::Start(cut))
            .map_err(read_error(run))?;
    }
    let (qrels, head, tail) = std::thread::scope(|scope| {
        let helper = scope.spawn(|| {
            let qrels = Qrels::parse(qrels_file, &qrels_name);
            let head = head_file.map(|file| Run::parse(file, &run_name));
            (qrels, head)
        });
        let tail = Run::parse(tail_file, &run_name);
        let (qrels, head) = helper
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (qrels, head, tail)
    });
    let qrels = qrels?;
    let run = match (head, tail) {
        (None, tail) => tail?,
        (Some(Ok(mut head)), Ok(tail)) => {
            head.append(tail, &run_name)?;
            head
        }
        (Some(_), _) => Run::parse(open(run)?, &run_name)?,
    };
    Ok((qrels, run))
}

/// The offset just past the first newline at or after `offset`, or `None` if there is none.
fn line_start_after(path: &Path, offset: u64) -> Result<Option<u64>, TrecError> {
    let mut file = open(path)?;
    file.seek(SeekFrom::Start(offset))
        .map_err(read_error(path))?;
    let mut skipped = Vec::new();
    let read = file
        .read_until(b'\n', &mut skipped)
        .map_err(read_error(path))?;
    Ok((read > 0 && skipped.last() == Some(&b'\n')).then(|| offset + read as u64))
}

fn open(path: &Path) -> Result<BufReader<File>, TrecError> {
    Ok(BufReader::with_capacity(1 << 16, open_raw(path)?))
}

fn open_raw(path: &Path) -> Result<File, TrecError> {
    File::open(path).map_err(read_error(path))
}

fn read_error(path: &Path) -> impl Fn(std::io::Error) -> TrecError + '_ {
    move |cause| TrecError::Read {
        source_name: path.display().to_string(),
        cause,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trec::{TrecOptions, evaluate};

    /// Runs above [`SPLIT_RUN_BYTES`] are read in two pieces: same output as one piece, and
    /// an error in the second piece still names the file's own line number.
    #[test]
    fn a_large_run_read_in_pieces_matches_one_piece() {
        let directory = tempfile::tempdir().unwrap();
        let qrels = directory.path().join("qrels");
        let run_path = directory.path().join("run");
        let mut qrels_text = String::new();
        let mut run_text = String::new();
        let mut lines = 0;
        for topic in 0..2_000 {
            qrels_text.push_str(&format!(
                "t{topic} 0 doc{topic}x7 1\nt{topic} 0 doc{topic}x3 0\n"
            ));
            for doc in 0..100 {
                run_text.push_str(&format!(
                    "t{topic} Q0 doc{topic}x{doc} {doc} {}.25 a_long_run_name_here\n",
                    100 - doc
                ));
                lines += 1;
            }
        }
        assert!(run_text.len() as u64 > SPLIT_RUN_BYTES);
        std::fs::write(&qrels, &qrels_text).unwrap();
        std::fs::write(&run_path, &run_text).unwrap();
        let options = TrecOptions {
            measures: vec!["all_trec".into()],
            per_query: true,
            ..TrecOptions::default()
        };
        let output = |qrels: &Qrels, run: &Run| {
            let mut text = Vec::new();
            evaluate(qrels, run, &options)
                .unwrap()
                .write(&mut text)
                .unwrap();
            text
        };
        let (read_qrels, read_run) = read_files(&qrels, &run_path).unwrap();
        let whole_qrels = Qrels::parse(qrels_text.as_bytes(), "q").unwrap();
        let whole_run = Run::parse(run_text.as_bytes(), "r").unwrap();
        assert!(
            output(&read_qrels, &read_run) == output(&whole_qrels, &whole_run),
            "split and whole outputs differ"
        );

        run_text.push_str("t1 Q0 late 1 not_a_score r\n");
        std::fs::write(&run_path, &run_text).unwrap();
        let error = read_files(&qrels, &run_path).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "{}:{}: score `not_a_score` is not a valid number",
                run_path.display(),
                lines + 1
            )
        );
    }

    #[test]
    fn a_missing_file_is_an_error_naming_it() {
        let directory = tempfile::tempdir().unwrap();
        let absent = directory.path().join("absent.qrels");
        let error = read_files(&absent, &absent).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("cannot read {}", absent.display())
        );
    }
}
