//! Regression of issue 39, item 1, end to end: `rageval serve` listed every `reference`
//! run — standalone or a pipeline's `reference/` stage — as "unreadable: …/summary.json is
//! not valid JSON of the expected shape: missing field `questions`", because its reader
//! had been tested on a summary of a shape no command writes. Here each command writes its
//! own folder through the testkit mock, and `serve`'s root reads every one as what it is.

use std::fs;
use std::path::Path;

use rageval_server::{RunState, RunsRoot};
use rageval_testkit::MockConfig;
use serde_json::json;

use crate::judged::endpoint;
use crate::{rageval, stderr};

/// Two questions with their contexts and answers.
fn questions(dir: &Path) -> String {
    let rows = [
        json!({"id": "q1", "question": "Who founded the company?", "answer": "Ada.",
               "contexts": ["Ada founded the company in 1990.", "It rains in spring.",
                            "The company sells software."]}),
        json!({"id": "q2", "question": "What does it sell?", "answer": "Software.",
               "contexts": ["The company sells software.", "Ada likes tea.",
                            "Founded in 1990."]}),
    ];
    let path = dir.join("d.jsonl");
    fs::write(&path, rows.map(|r| format!("{r}\n")).concat()).unwrap();
    path.display().to_string()
}

/// Six chunks of two documents, each long enough to draw a question from.
fn chunks(dir: &Path) -> String {
    let text = |topic: &str, n: usize| {
        format!(
            "The {topic} team meets every Monday at nine to plan the week's work, part {n}. \
             Each member brings a short list of tasks and the risks they see in them, and the \
             team agrees on the order in which the tasks are done before noon."
        )
    };
    let lines: String = (0..6)
        .map(|i| {
            let document = if i < 3 { "ops.md" } else { "sales.md" };
            let row = json!({"id": format!("c{i}"), "document": document,
                             "text": text(if i < 3 { "operations" } else { "sales" }, i)});
            format!("{row}\n")
        })
        .collect();
    let path = dir.join("chunks.jsonl");
    fs::write(&path, lines).unwrap();
    path.display().to_string()
}

#[test]
fn issue_39_1_serve_reads_every_kind_of_run_the_commands_write() {
    let server = endpoint(MockConfig::default());
    let dir = tempfile::tempdir().unwrap();
    let data = questions(dir.path());
    let source = chunks(dir.path());
    let flags = server.flags();
    let run = |args: &[&str]| {
        let mut all: Vec<&str> = args.to_vec();
        all.extend(flags.iter().map(String::as_str));
        rageval(dir.path(), &all)
    };
    for args in [
        &[
            "reference",
            &data,
            "--mode",
            "fast",
            "--out",
            "runs/ref-fast",
        ][..],
        &["rank", &data, "--out", "runs/ranked"],
        &[
            "pipeline",
            &data,
            "--out",
            "runs/pipe",
            "--top-k",
            "2",
            "--metrics",
            "faithfulness",
        ],
        &[
            "eval",
            &data,
            "--metrics",
            "faithfulness",
            "--out",
            "runs/scored",
        ],
    ] {
        let output = run(args);
        assert!(output.status.success(), "{args:?}: {}", stderr(&output));
    }
    // A set the gates emptied ends with exit 1, its run complete all the same.
    let output = run(&["testset", &source, "--size", "4", "--out", "runs/questions"]);
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "testset: {}",
        stderr(&output)
    );

    let root = RunsRoot::open(&dir.path().join("runs")).unwrap();
    let entries = root.list().unwrap();
    let kinds: Vec<(&str, &str)> = entries
        .iter()
        .map(|entry| (entry.name.as_str(), entry.kind.as_str()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("pipe", "pipeline"),
            ("questions", "testset"),
            ("ranked", "rank"),
            ("ref-fast", "reference"),
            ("scored", "eval"),
        ]
    );
    for entry in &entries {
        match &entry.state {
            RunState::Complete(_) => {}
            RunState::Finished(figures) => assert!(!figures.describe().is_empty()),
            other => panic!("{} is listed as {other:?}", entry.name),
        }
        root.open_run(&entry.name)
            .unwrap_or_else(|error| panic!("{} does not open: {error}", entry.name));
    }
    let references = entries.iter().find(|e| e.name == "ref-fast").unwrap();
    let RunState::Finished(figures) = &references.state else {
        unreachable!("checked above")
    };
    assert!(
        figures.describe().starts_with("references written 2 of 2"),
        "{}",
        figures.describe()
    );

    // Served from the pipeline folder itself, its stages are runs of their own kinds.
    let stages = RunsRoot::open(&dir.path().join("runs/pipe")).unwrap();
    let listed: Vec<(String, String, bool)> = stages
        .list()
        .unwrap()
        .into_iter()
        .map(|entry| {
            let readable = matches!(entry.state, RunState::Complete(_) | RunState::Finished(_));
            (entry.name, entry.kind, readable)
        })
        .collect();
    assert_eq!(
        listed,
        [
            ("eval", "eval"),
            ("rank", "rank"),
            ("reference", "reference")
        ]
        .map(|(name, kind)| (name.to_string(), kind.to_string(), true))
    );
}
