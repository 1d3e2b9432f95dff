//! `rageval trec`: trec_eval-compatible evaluation of a run file against a qrels file.
//!
//! Flags mirror trec_eval's (`-m`, `-q`, `-c`, `-l`, `-M`, attached values like `-M100`
//! included) and the output is trec_eval's text, so scripts can switch tools. This command
//! only wires options and prints; reading the files and the evaluation live in
//! `rageval_core::trec`.

use anyhow::Context;
use rageval_core::trec::{TrecOptions, evaluate_named, read_files};

use crate::cli::TrecArgs;
use std::io::{BufWriter, Write};
use std::process::ExitCode;

/// Run the command, writing trec_eval's text to `stdout`. Input errors come back as `Err`
/// naming file and line; the caller prints them and exits with status 2.
pub fn run(args: &TrecArgs, stdout: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let (qrels, run) = read_files(&args.qrels, &args.run)?;
    let (qrels_name, run_name) = (args.qrels.display(), args.run.display());
    let options = TrecOptions {
        measures: args.measures.clone(),
        per_query: args.per_query,
        complete: args.complete,
        rel_level: args.rel_level,
        max_docs: args.max_docs,
    };
    let report = evaluate_named(
        &qrels,
        &run,
        &options,
        &qrels_name.to_string(),
        &run_name.to_string(),
    )?;
    let mut out = BufWriter::new(stdout);
    if args.json {
        serde_json::to_writer(&mut out, &report.to_json()).context("cannot write the report")?;
        writeln!(out).context("cannot write the report")?;
    } else {
        report.write(&mut out).context("cannot write the report")?;
    }
    out.flush().context("cannot write the report")?;
    Ok(ExitCode::SUCCESS)
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
