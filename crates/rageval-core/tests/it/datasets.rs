//! Dataset readers against files on disk: every malformed fixture must fail with the
//! expected file, line, field and message, and every good fixture must read into the
//! expected samples.

use std::path::{Path, PathBuf};

use rageval_core::Context;
use rageval_core::dataset::{self, DatasetErrorKind, FieldMap, Format, ReadOptions, read_all};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/datasets")
}

fn good(name: &str) -> PathBuf {
    fixtures().join("good").join(name)
}

fn options(maps: &[&str]) -> ReadOptions {
    let specs: Vec<String> = maps.iter().map(|s| s.to_string()).collect();
    ReadOptions {
        field_map: FieldMap::parse(&specs).expect("valid --map in test"),
        ..ReadOptions::default()
    }
}

/// One row of `malformed/EXPECTED.tsv`.
struct Expected {
    input: String,
    line: Option<usize>,
    field: Option<String>,
    message: String,
    options: Vec<String>,
}

fn dash(cell: &str) -> Option<&str> {
    (cell != "-").then_some(cell)
}

fn expected_rows() -> Vec<Expected> {
    let table = std::fs::read_to_string(fixtures().join("malformed/EXPECTED.tsv"))
        .expect("EXPECTED.tsv is readable");
    table
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| {
            let cells: Vec<&str> = line.split('\t').collect();
            assert_eq!(cells.len(), 5, "EXPECTED.tsv row needs 5 cells: {line}");
            Expected {
                input: cells[0].to_string(),
                line: dash(cells[1]).map(|l| l.parse().expect("line is a number")),
                field: dash(cells[2]).map(String::from),
                message: cells[3].to_string(),
                options: dash(cells[4])
                    .map(|o| o.split(';').map(String::from).collect())
                    .unwrap_or_default(),
            }
        })
        .collect()
}

#[test]
fn malformed_corpus_fails_with_file_line_field_and_message() {
    let rows = expected_rows();
    assert!(rows.len() >= 30, "the corpus must hold at least 30 cases");

    // Every fixture has a row, so a new bad file cannot go unchecked.
    let directory = fixtures().join("malformed");
    for entry in std::fs::read_dir(&directory).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name != "EXPECTED.tsv" {
            assert!(
                rows.iter().any(|r| r.input == name),
                "{name} has no row in EXPECTED.tsv"
            );
        }
    }

    let mut failures = Vec::new();
    for row in &rows {
        let path = directory.join(&row.input);
        let mut maps = Vec::new();
        let mut read_options = ReadOptions::default();
        for option in &row.options {
            match option.split_once('=') {
                Some(("map", spec)) => maps.push(spec.to_string()),
                Some(("sheet", sheet)) => read_options.sheet = Some(sheet.to_string()),
                _ => panic!("unknown option {option} for {}", row.input),
            }
        }
        let error = match FieldMap::parse(&maps) {
            // A bad --map concerns no file: it fails before any is opened.
            Err(error) => {
                if !error.file.as_os_str().is_empty() {
                    failures.push(format!("{}: --map error names a file", row.input));
                }
                error
            }
            Ok(field_map) => {
                read_options.field_map = field_map;
                match read_all(&path, &read_options) {
                    Ok(samples) => {
                        failures.push(format!(
                            "{}: read {} samples, expected an error",
                            row.input,
                            samples.len()
                        ));
                        continue;
                    }
                    Err(error) => {
                        if !error.file.starts_with(&path) {
                            failures.push(format!(
                                "{}: error names file {}",
                                row.input,
                                error.file.display()
                            ));
                        }
                        error
                    }
                }
            }
        };
        let text = error.to_string();
        if error.line != row.line {
            failures.push(format!(
                "{}: line {:?}, expected {:?} ({text})",
                row.input, error.line, row.line
            ));
        }
        if error.field != row.field {
            failures.push(format!(
                "{}: field {:?}, expected {:?} ({text})",
                row.input, error.field, row.field
            ));
        }
        if !text.contains(&row.message) {
            failures.push(format!(
                "{}: message `{text}` lacks `{}`",
                row.input, row.message
            ));
        }
        if let Some(line) = row.line {
            if !error.file.as_os_str().is_empty() && !text.contains(&format!(":{line}: ")) {
                failures.push(format!("{}: display `{text}` lacks the line", row.input));
            }
        }
        if text.ends_with('.') || text.contains("  ") {
            failures.push(format!("{}: display `{text}` is not tidy", row.input));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn display_reads_file_line_field_message() {
    let path = fixtures().join("malformed/missing_question.jsonl");
    let error = read_all(&path, &ReadOptions::default()).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "{}:1: field `question`: no column is the question; the columns are `answer`: \
             name the question's with --map question=COLUMN (and the others the same way, \
             e.g. --map answer=COLUMN)",
            path.display()
        )
    );
}

#[test]
fn truncated_and_corrupted_files_never_panic() {
    // Every prefix of every small good fixture, and each with one byte flipped, must give
    // samples or an error, never a panic.
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for entry in std::fs::read_dir(fixtures().join("good")).unwrap() {
        let path = entry.unwrap().path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if path.is_dir() {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        // About 50 cuts per file: each variant is a file write, slow on shared disks.
        let step = (bytes.len() / 50).max(1);
        let target = dir.path().join(name);
        for end in (0..bytes.len()).step_by(step) {
            std::fs::write(&target, &bytes[..end]).unwrap();
            let _ = read_all(&target, &ReadOptions::default());
            let mut flipped = bytes.clone();
            flipped[end] ^= 0x80;
            std::fs::write(&target, &flipped).unwrap();
            let _ = read_all(&target, &ReadOptions::default());
            checked += 2;
        }
    }
    assert!(checked > 500, "only {checked} variants checked");
}

#[test]
fn readers_and_errors_cross_threads() {
    fn assert_send_sync<T: Send>() {}
    assert_send_sync::<dataset::DatasetReader>();
    assert_send_sync::<dataset::DatasetError>();
}

#[test]
fn missing_file_keeps_the_io_cause() {
    let error = read_all(Path::new("no/such/file.jsonl"), &ReadOptions::default()).unwrap_err();
    assert!(matches!(error.kind, DatasetErrorKind::Io(_)));
    assert!(std::error::Error::source(&error).is_some());
}

#[test]
fn jsonl_is_streamed_and_continues_past_bad_records() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.jsonl");
    let mut content = String::from("{\"question\": \"first\"}\nnot json\n");
    for i in 0..10_000 {
        content.push_str(&format!("{{\"id\": \"s{i}\", \"question\": \"q{i}\"}}\n"));
    }
    std::fs::write(&path, content).unwrap();
    let mut reader = dataset::open(&path, &ReadOptions::default()).unwrap();
    assert_eq!(reader.next().unwrap().unwrap().question, "first");
    let error = reader.next().unwrap().unwrap_err();
    assert_eq!(error.line, Some(2));
    // The reader goes on after a bad record; read_all would have stopped.
    assert_eq!(reader.filter(Result::is_ok).count(), 10_000);
}

#[test]
fn ragas_v02_jsonl() {
    let samples = read_all(&good("ragas_v02.jsonl"), &ReadOptions::default()).unwrap();
    assert_eq!(samples.len(), 2);
    let first = &samples[0];
    assert_eq!(first.id, "a1");
    assert_eq!(first.question, "What is the capital of France?");
    assert_eq!(
        first.contexts[0],
        Context {
            id: Some("d1".into()),
            text: "Paris is the capital of France.".into(),
            score: Some(0.93),
            hop: None,
        }
    );
    assert_eq!(first.contexts[1].id.as_deref(), Some("d7"));
    assert_eq!(first.answer.as_deref(), Some("Paris."));
    assert_eq!(first.references, vec!["Paris"]);
    assert_eq!(
        first.reference_contexts,
        vec!["Paris is the capital of France."]
    );
    assert_eq!(first.reference_context_ids, vec!["d1"]);
    assert_eq!(
        first.metadata.get("model").and_then(|v| v.as_str()),
        Some("v1.0")
    );
    assert_eq!(first.metadata.len(), 1);
    // A numeric id is kept as text; a string reference is a one-element list.
    assert_eq!(samples[1].id, "2");
    assert!(samples[1].contexts.is_empty());
    assert_eq!(samples[1].references, vec!["William Shakespeare"]);
}

#[test]
fn ragas_v01_json_array() {
    let samples = read_all(&good("ragas_v01.json"), &ReadOptions::default()).unwrap();
    assert_eq!(samples.len(), 2);
    assert_eq!(samples[0].id, "1");
    assert_eq!(
        samples[0].references,
        vec!["Endorse it, then deposit.", "Sign the back."]
    );
    assert_eq!(samples[0].contexts.len(), 2);
    assert_eq!(samples[1].id, "2");
    assert_eq!(
        samples[1].contexts,
        vec![Context::text("A third-party cheque is legal.")]
    );
    assert_eq!(
        samples[1].metadata.get("episode_done"),
        Some(&serde_json::Value::Bool(true))
    );
}

#[test]
fn seed_s4_names() {
    let samples = read_all(&good("s4.json"), &ReadOptions::default()).unwrap();
    let sample = &samples[0];
    assert_eq!(sample.contexts.len(), 2);
    assert_eq!(sample.references, vec!["政策、经济、社会和技术。"]);
    assert_eq!(
        sample.reference_statements.as_deref().map(<[String]>::len),
        Some(2)
    );
    assert_eq!(
        sample.answer_statements.as_deref(),
        Some(&["政策推动发展。".to_string()][..])
    );
    assert_eq!(sample.simulated_questions.as_ref().map(Vec::len), Some(3));
    assert!(sample.metadata.is_empty());
}

#[test]
fn context_objects_and_other_id_names() {
    let samples = read_all(&good("context_objects.jsonl"), &ReadOptions::default()).unwrap();
    let sample = &samples[0];
    assert_eq!(sample.id, "x");
    assert_eq!(sample.question, "q1");
    assert_eq!(
        sample.contexts[0],
        Context {
            id: Some("c1".into()),
            text: "t1".into(),
            score: Some(2.5),
            hop: None,
        }
    );
    assert_eq!(
        sample.contexts[1],
        Context {
            id: Some("9".into()),
            text: "t2".into(),
            score: None,
            hop: None,
        }
    );
    assert_eq!(sample.contexts[2], Context::text("t3"));
}

#[test]
fn bom_crlf_and_trailing_blank_lines_work() {
    for name in ["bom_crlf.jsonl", "bom_crlf.csv"] {
        let samples = read_all(&good(name), &ReadOptions::default()).unwrap();
        assert_eq!(samples.len(), 2, "{name}");
        assert_eq!(samples[0].question, "first", "{name}");
        assert_eq!(samples[0].answer.as_deref(), Some("a"), "{name}");
    }
    let csv = read_all(&good("bom_crlf.csv"), &ReadOptions::default()).unwrap();
    assert_eq!(csv[1].question, "multi\r\nline");
}

#[test]
fn csv_cells_hold_json_lists() {
    let samples = read_all(&good("json_cells.csv"), &ReadOptions::default()).unwrap();
    let first = &samples[0];
    assert_eq!(first.id, "7");
    assert_eq!(
        first.contexts,
        vec![
            Context {
                id: Some("d1".into()),
                text: "c1".into(),
                score: Some(0.5),
                hop: None,
            },
            Context {
                id: Some("2".into()),
                text: "c2".into(),
                score: Some(0.25),
                hop: None,
            },
        ]
    );
    assert_eq!(first.references, vec!["r1", "r2"]);
    assert_eq!(
        first.metadata.get("note").and_then(|v| v.as_str()),
        Some("hello")
    );
    // Plain cells are one-element lists; empty cells are absent.
    let second = &samples[1];
    assert_eq!(second.contexts, vec![Context::text("just one context")]);
    assert_eq!(second.references, vec!["plain reference"]);
    assert_eq!(
        second.metadata.get("note").and_then(|v| v.as_str()),
        Some("")
    );
}

#[test]
fn csv_cells_hold_python_list_reprs() {
    let samples = read_all(&good("python_lists.csv"), &ReadOptions::default()).unwrap();
    assert_eq!(samples.len(), 2);
    let texts: Vec<&str> = samples[0]
        .contexts
        .iter()
        .map(|c| c.text.as_str())
        .collect();
    assert_eq!(texts, vec!["X is a thing.", "X's origin is old."]);
    assert_eq!(
        samples[1].contexts,
        vec![Context::text("Y\nwith newline escape")]
    );
    // pandas's unnamed index column is kept, under a generated name.
    assert_eq!(
        samples[0].metadata.get("column_1").and_then(|v| v.as_str()),
        Some("0")
    );
}

#[test]
fn tsv_and_format_override() {
    let samples = read_all(&good("tabs.tsv"), &ReadOptions::default()).unwrap();
    assert_eq!(samples.len(), 2);
    assert_eq!(samples[1].references, vec!["g2"]);
    // A JSON Lines file named .json reads as JSON Lines, and --format beats the extension.
    let samples = read_all(&good("hf_lines.json"), &ReadOptions::default()).unwrap();
    assert_eq!(samples.len(), 2);
    let jsonl = ReadOptions {
        format: Some(Format::Jsonl),
        ..ReadOptions::default()
    };
    assert_eq!(read_all(&good("hf_lines.json"), &jsonl).unwrap().len(), 2);
}

#[test]
fn mixed_schemas_and_id_only_contexts() {
    let samples = read_all(&good("mixed_schema.jsonl"), &ReadOptions::default()).unwrap();
    assert_eq!(samples[0].answer.as_deref(), Some("r"));
    assert_eq!(samples[1].references, vec!["g"]);
    let samples = read_all(&good("ids_only.jsonl"), &ReadOptions::default()).unwrap();
    assert_eq!(samples[0].context_ids(), Some(vec!["d3", "d1"]));
    assert_eq!(samples[0].reference_context_ids, vec!["d1"]);
}

#[test]
fn xlsx_sheets() {
    let samples = read_all(&good("dataset.xlsx"), &ReadOptions::default()).unwrap();
    assert_eq!(samples.len(), 2);
    let first = &samples[0];
    assert_eq!(first.id, "12");
    assert_eq!(first.contexts.len(), 2);
    assert_eq!(first.contexts[1].score, Some(0.4));
    assert_eq!(first.references, vec!["Retrieval plus generation."]);
    assert_eq!(
        first.metadata.get("team").and_then(|v| v.as_str()),
        Some("search")
    );
    let second = &samples[1];
    assert_eq!(second.id, "q-2");
    assert_eq!(
        second.contexts,
        vec![Context {
            id: None,
            text: "2024年约488亿元。".into(),
            score: Some(0.5),
            hop: None,
        }]
    );

    let other = ReadOptions {
        sheet: Some("ragas01".into()),
        ..ReadOptions::default()
    };
    let samples = read_all(&good("dataset.xlsx"), &other).unwrap();
    let texts: Vec<&str> = samples[0]
        .contexts
        .iter()
        .map(|c| c.text.as_str())
        .collect();
    assert_eq!(texts, vec!["Ann wrote it.", "Bob's copy"]);
    assert_eq!(samples[0].references, vec!["Ann"]);
}

#[test]
fn seed_s3_directory() {
    let samples = read_all(&good("s3_seed"), &ReadOptions::default()).unwrap();
    assert_eq!(samples.len(), 2);
    assert_eq!(samples[0].question, "first question");
    assert_eq!(
        samples[0].answer.as_deref(),
        Some("ans1"),
        "FULL_ wins over GT_"
    );
    assert_eq!(samples[0].references, vec!["gt1"]);
    assert_eq!(samples[1].question, "second question");
    assert_eq!(samples[1].answer, None);
    // Files without an id are named by their question (the part after the prefix).
    assert_eq!(samples[1].id, "second question");
}

#[test]
fn real_ragas_fiqa_sample() {
    let samples = read_all(&good("real/fiqa_ragas_30.jsonl"), &ReadOptions::default()).unwrap();
    assert_eq!(samples.len(), 30);
    for sample in &samples {
        assert_eq!(
            sample.references.len(),
            1,
            "reference is a one-element list"
        );
        assert!(!sample.contexts.is_empty());
        assert!(sample.answer.is_some());
        assert!(sample.metadata.is_empty());
    }
    assert!(samples[0].question.starts_with("How to deposit a cheque"));
    assert_eq!(samples[29].id, "30");
}

#[test]
fn real_seed_s4_test_set() {
    let samples = read_all(&good("real/qa_test_20.json"), &ReadOptions::default()).unwrap();
    assert_eq!(samples.len(), 20);
    assert_eq!(
        samples[0].question,
        "少儿编程教育行业当前的发展动力主要来自哪些方面？"
    );
    assert_eq!(
        samples[0].reference_statements.as_ref().map(Vec::len),
        Some(5)
    );
    assert!(
        samples
            .iter()
            .all(|s| s.references.len() == 1 && s.contexts.is_empty())
    );
}

#[test]
fn real_seed_s4_jsonl_has_chunk_uuids() {
    // `uuid` there names the source chunk, shared by several questions: the default reading
    // rejects it as an id, and `--map id=` numbers the records instead.
    let path = good("real/qa_test_100.jsonl");
    let error = read_all(&path, &ReadOptions::default()).unwrap_err();
    assert_eq!(error.line, Some(2));
    assert!(
        error.to_string().contains("first used on line 1"),
        "{error}"
    );
    assert!(error.to_string().contains("--map id="), "{error}");

    let samples = read_all(&path, &options(&["id=", "reference=answer", "answer="])).unwrap();
    assert_eq!(samples.len(), 100);
    assert_eq!(samples[99].id, "100");
    let first = &samples[0];
    assert_eq!(first.references.len(), 1);
    assert_eq!(first.answer, None);
    assert!(first.metadata.contains_key("uuid"));
    assert!(first.metadata.contains_key("context"));
}
