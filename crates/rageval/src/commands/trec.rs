//! `rageval trec`: trec_eval-compatible evaluation of a run file against a qrels file.
//!
//! Flags mirror trec_eval's (`-m`, `-q`, `-c`, `-l`, `-M`, attached values like `-M100`
//! included) and the output is trec_eval's text, so scripts can switch tools. This command
//! only opens files and wires options; the evaluation lives in `rageval_core::trec`.

use anyhow::Context;
use rageval_core::trec::{Qrels, Run, TrecOptions, TrecReport, evaluate_named};

use crate::cli::TrecArgs;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::process::ExitCode;

/// Run the command, writing trec_eval's text to `stdout`. Input errors come back as `Err`
/// naming file and line; the caller prints them and exits with status 2.
pub fn run(args: &TrecArgs, stdout: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let qrels_name = args.qrels.display().to_string();
    let run_name = args.run.display().to_string();
    let (qrels, run) = read_inputs(args, &qrels_name, &run_name)?;
    let options = TrecOptions {
        measures: args.measures.clone(),
        per_query: args.per_query,
        complete: args.complete,
        rel_level: args.rel_level,
        max_docs: args.max_docs,
    };
    let report = evaluate_named(&qrels, &run, &options, &qrels_name, &run_name)?;
    let mut out = BufWriter::new(stdout);
    if args.json {
        serde_json::to_writer(&mut out, &to_json(&report)).context("cannot write the report")?;
        writeln!(out).context("cannot write the report")?;
    } else {
        report.write(&mut out).context("cannot write the report")?;
    }
    out.flush().context("cannot write the report")?;
    Ok(ExitCode::SUCCESS)
}

/// Runs smaller than this are read in one piece.
const SPLIT_RUN_BYTES: u64 = 8 << 20;

/// Read both files on two threads. Parsing is most of the work on large inputs, and the
/// run is usually much bigger than the qrels, so a large run is cut at a line boundary: one
/// thread reads the qrels and then the head of the run, the other the tail, with equal
/// bytes each. If a piece fails, the whole run is read again in one piece so that the
/// error names the right line.
fn read_inputs(args: &TrecArgs, qrels_name: &str, run_name: &str) -> anyhow::Result<(Qrels, Run)> {
    let qrels_file = open(&args.qrels)?;
    let run_bytes = std::fs::metadata(&args.run).map_or(0, |meta| meta.len());
    let qrels_bytes = std::fs::metadata(&args.qrels).map_or(0, |meta| meta.len());
    let cut = if run_bytes >= SPLIT_RUN_BYTES {
        line_start_after(
            &args.run,
            run_bytes.saturating_sub((run_bytes + qrels_bytes) / 2),
        )?
    } else {
        None
    };
    let head_file = match cut {
        Some(cut) => Some(BufReader::new(open_raw(&args.run)?.take(cut))),
        None => None,
    };
    let mut tail_file = open(&args.run)?;
    if let Some(cut) = cut {
        tail_file
            .seek(SeekFrom::Start(cut))
            .with_context(|| format!("cannot read {}", args.run.display()))?;
    }
    let (qrels, head, tail) = std::thread::scope(|scope| {
        let helper = scope.spawn(|| {
            let qrels = Qrels::parse(qrels_file, qrels_name);
            let head = head_file.map(|file| Run::parse(file, run_name));
            (qrels, head)
        });
        let tail = Run::parse(tail_file, run_name);
        let (qrels, head) = helper
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (qrels, head, tail)
    });
    let qrels = qrels?;
    let run = match (head, tail) {
        (None, tail) => tail?,
        (Some(Ok(mut head)), Ok(tail)) => {
            head.append(tail, run_name)?;
            head
        }
        (Some(_), _) => Run::parse(open(&args.run)?, run_name)?,
    };
    Ok((qrels, run))
}

/// The offset just past the first newline at or after `offset`, or `None` if there is none.
fn line_start_after(path: &Path, offset: u64) -> anyhow::Result<Option<u64>> {
    let context = || format!("cannot read {}", path.display());
    let mut file = open(path)?;
    file.seek(SeekFrom::Start(offset)).with_context(context)?;
    let mut skipped = Vec::new();
    let read = file.read_until(b'\n', &mut skipped).with_context(context)?;
    Ok((read > 0 && skipped.last() == Some(&b'\n')).then(|| offset + read as u64))
}

/// Every per-topic and summary value at full precision (text measures left out).
fn to_json(report: &TrecReport) -> serde_json::Value {
    let names: Vec<&str> = report.measure_names().collect();
    let values_of =
        |lookup: &dyn Fn(&str) -> Option<f64>| -> serde_json::Map<String, serde_json::Value> {
            names
                .iter()
                .filter_map(|name| lookup(name).map(|value| ((*name).to_owned(), value.into())))
                .collect()
        };
    let queries: serde_json::Map<String, serde_json::Value> = report
        .query_ids()
        .map(|qid| {
            (
                qid.to_owned(),
                values_of(&|name| report.query_value(qid, name)).into(),
            )
        })
        .collect();
    serde_json::json!({
        "run_id": report.run_id(),
        "queries": queries,
        "summary": values_of(&|name| report.summary(name)),
    })
}

fn open(path: &Path) -> anyhow::Result<BufReader<File>> {
    Ok(BufReader::with_capacity(1 << 16, open_raw(path)?))
}

fn open_raw(path: &Path) -> anyhow::Result<File> {
    File::open(path).with_context(|| format!("cannot open {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Wrapper {
        #[command(flatten)]
        args: TrecArgs,
    }

    #[test]
    fn accepts_trec_eval_style_flags() {
        let parsed = Wrapper::try_parse_from([
            "trec", "q", "r", "-mmap", "-m", "P.5", "-q", "-c", "-l2", "-M100",
        ])
        .unwrap()
        .args;
        assert_eq!(parsed.measures, ["map", "P.5"]);
        assert!(parsed.per_query && parsed.complete);
        assert_eq!((parsed.rel_level, parsed.max_docs), (2, Some(100)));
    }

    /// Runs above [`SPLIT_RUN_BYTES`] are read in two pieces: same output as one piece, and
    /// an error in the second piece still names the file's own line number.
    #[test]
    fn large_run_read_in_pieces_matches_one_piece() {
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
        let args = Wrapper::try_parse_from([
            "trec",
            qrels.to_str().unwrap(),
            run_path.to_str().unwrap(),
            "-q",
            "-m",
            "all_trec",
        ])
        .unwrap()
        .args;
        let mut pieces = Vec::new();
        run(&args, &mut pieces).unwrap();
        let whole_qrels = Qrels::parse(qrels_text.as_bytes(), "q").unwrap();
        let whole_run = Run::parse(run_text.as_bytes(), "r").unwrap();
        let options = TrecOptions {
            measures: vec!["all_trec".into()],
            per_query: true,
            ..TrecOptions::default()
        };
        let mut whole = Vec::new();
        rageval_core::trec::evaluate(&whole_qrels, &whole_run, &options)
            .unwrap()
            .write(&mut whole)
            .unwrap();
        assert!(pieces == whole, "split and whole outputs differ");

        run_text.push_str("t1 Q0 late 1 not_a_score r\n");
        std::fs::write(&run_path, &run_text).unwrap();
        let error = run(&args, &mut Vec::new()).unwrap_err();
        assert_eq!(
            format!("{error:#}"),
            format!(
                "{}:{}: score `not_a_score` is not a valid number",
                run_path.display(),
                lines + 1
            )
        );
    }

    #[test]
    fn bad_file_error_names_file_and_line() {
        let directory = tempfile::tempdir().unwrap();
        let qrels = directory.path().join("qrels");
        let run_path = directory.path().join("run");
        std::fs::write(&qrels, "q 0 d 1\n").unwrap();
        std::fs::write(&run_path, "q Q0 d 1 0.5 sys\nq Q0 e 2 oops sys\n").unwrap();
        let args =
            Wrapper::try_parse_from(["trec", qrels.to_str().unwrap(), run_path.to_str().unwrap()])
                .unwrap()
                .args;
        let error = run(&args, &mut Vec::new()).unwrap_err();
        assert_eq!(
            format!("{error:#}"),
            format!(
                "{}:2: score `oops` is not a valid number",
                run_path.display()
            )
        );
    }
}
