//! `rageval trec`: trec_eval-compatible evaluation of a run file against a qrels file.
//!
//! Flags mirror trec_eval's (`-m`, `-q`, `-c`, `-l`, `-M`, attached values like `-M100`
//! included) and the output is trec_eval's text, so scripts can switch tools. This command
//! only opens files and wires options; the evaluation lives in `rageval_core::trec`.

use anyhow::Context;
use rageval_core::trec::{Qrels, Run, TrecOptions, TrecReport, evaluate_named};
use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `rageval trec`.
#[derive(Debug, Clone, clap::Args)]
pub struct TrecArgs {
    /// Relevance judgments: `qid iter docno rel` per line
    pub qrels: PathBuf,
    /// Ranked results: `qid Q0 docno rank score run_id` per line
    pub run: PathBuf,
    /// Measure to compute, as in trec_eval (`map`, `P.5,10`, `ndcg_cut.10`, `all_trec`);
    /// repeatable; default `official`
    #[arg(short = 'm', long = "measure", value_name = "MEASURE")]
    pub measures: Vec<String>,
    /// Also print every measure for each topic
    #[arg(short = 'q', long = "per-query")]
    pub per_query: bool,
    /// Average over all topics in the qrels; topics without results score 0
    #[arg(short = 'c', long = "complete")]
    pub complete: bool,
    /// Lowest relevance value counted as relevant
    #[arg(
        short = 'l',
        long = "level",
        value_name = "LEVEL",
        default_value_t = 1,
        allow_hyphen_values = true
    )]
    pub rel_level: i64,
    /// Keep only the top N documents of each topic
    #[arg(short = 'M', long = "max-docs", value_name = "N")]
    pub max_docs: Option<usize>,
    /// Print full-precision values as JSON (`{"queries": {qid: {measure: value}}, "summary":
    /// {…}}`) instead of trec_eval's 4-decimal text
    #[arg(long)]
    pub json: bool,
}

/// Exit status for unreadable or malformed input, as trec_eval uses.
const EXIT_BAD_INPUT: u8 = 2;

/// Run the command, writing trec_eval's text to `stdout`. Input errors come back as `Err`
/// naming file and line; the caller prints them and exits with status 2.
pub fn run(args: &TrecArgs, stdout: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let qrels_name = args.qrels.display().to_string();
    let run_name = args.run.display().to_string();
    let qrels_file = open(&args.qrels)?;
    let run_file = open(&args.run)?;
    // The two files are independent: read the qrels on a second thread while this one reads
    // the run (parsing is most of the work on large inputs).
    let (qrels, run) = std::thread::scope(|scope| {
        let qrels = scope.spawn(|| Qrels::parse(qrels_file, &qrels_name));
        let run = Run::parse(run_file, &run_name);
        let qrels = qrels
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (qrels, run)
    });
    let (qrels, run) = (qrels?, run?);
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

/// The exit status for an error returned by [`run`].
pub fn exit_code_for_error() -> ExitCode {
    ExitCode::from(EXIT_BAD_INPUT)
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
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    Ok(BufReader::with_capacity(1 << 16, file))
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
