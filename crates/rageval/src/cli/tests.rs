//! The command line parsed as a whole: flags declared once reach every command that
//! flattens them, and renamed flags keep their old spelling.

use clap::Parser;

use super::{Cli, Command};

fn parsed(args: &[&str]) -> Command {
    Cli::try_parse_from([&["rageval"], args].concat())
        .unwrap()
        .command
}

#[test]
fn rank_takes_its_cut_off_by_its_name_and_by_its_old_one() {
    for flag in ["--agreement-k", "--top-k"] {
        let Command::Rank(args) = parsed(&["rank", "d.jsonl", flag, "5"]) else {
            panic!("not rank")
        };
        assert_eq!(args.agreement_k, 5);
    }
}

#[test]
fn the_run_directory_flags_reach_every_command_that_writes_a_run() {
    let flags = [
        "--out",
        "dir",
        "--overwrite",
        "--retry-failed",
        "--seed",
        "7",
        "--dry-run",
    ];
    for command in [
        &["eval", "d.jsonl"][..],
        &["pipeline", "d.jsonl"],
        &["rank", "d.jsonl"],
        &["reference", "d.jsonl"],
        &["testset", "docs"],
        &["judge-check", "labels.jsonl", "--metric", "faithfulness"],
    ] {
        let run_dir = match parsed(&[command, &flags[..]].concat()) {
            Command::Eval(args) => args.run_dir,
            Command::Pipeline(args) => args.eval.run_dir,
            Command::Rank(args) => args.data.run_dir,
            Command::Reference(args) => args.data.run_dir,
            Command::Testset(args) => args.run_dir,
            Command::JudgeCheck(args) => args.run_dir,
            _ => panic!("{command:?} is another command"),
        };
        assert_eq!(run_dir.out.as_deref(), Some(std::path::Path::new("dir")));
        assert!(run_dir.overwrite && run_dir.retry_failed && run_dir.dry_run);
        assert_eq!(run_dir.seed, 7);
    }
}

#[test]
fn format_and_max_failed_parse_by_their_types_rules() {
    let Command::Eval(args) = parsed(&["eval", "d", "--format", "langfuse", "--max-failed", "25%"])
    else {
        panic!("not eval")
    };
    assert_eq!(
        args.dataset.format,
        Some(rageval_core::dataset::Format::Langfuse)
    );
    assert_eq!(args.max_failed.share(), 0.25);
    for (flag, value, expected) in [
        (
            "--format",
            "avro",
            "invalid value 'avro' for '--format <FORMAT>': expected jsonl, json, csv, xlsx, \
             openinference, langfuse, parquet or arrow",
        ),
        (
            "--max-failed",
            "150%",
            "invalid value '150%' for '--max-failed <PCT>': expected a percentage from 0 to 100",
        ),
    ] {
        let error = Cli::try_parse_from(["rageval", "eval", "d", flag, value])
            .unwrap_err()
            .to_string();
        assert!(error.contains(expected), "{error}");
    }
}
