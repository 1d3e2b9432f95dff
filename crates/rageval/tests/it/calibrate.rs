//! Calibrated means from a few human labels (`eval --labels`, `rageval calibrate`): the
//! `calibrated` block in summary.json with the PPI++ mean beside the labels-only and
//! judge-only means, labels for samples the run does not have reported, never dropped.

use std::fs;

use serde_json::Value;

use crate::{rageval, repo_root, stderr, stdout};

fn labels(dir: &std::path::Path) -> std::path::PathBuf {
    let mut text = String::new();
    for i in 1..=12 {
        text.push_str(&format!(
            "{{\"id\": \"{i}\", \"label\": {}, \"metric\": \"faithfulness\"}}\n",
            i % 3 != 0
        ));
    }
    text.push_str("{\"id\": \"nope\", \"label\": true, \"metric\": \"faithfulness\"}\n");
    let path = dir.join("labels.jsonl");
    fs::write(&path, text).unwrap();
    path
}

/// `rageval eval` of the bundled FiQA sample with faithfulness (heuristic judge) and
/// rouge_l into `out`, with `labels`.
fn eval_with_labels(
    dir: &std::path::Path,
    out: &str,
    labels: &std::path::Path,
    extra: &[&str],
) -> std::process::Output {
    let data = repo_root().join("examples/fiqa-30.jsonl");
    let mut args = vec![
        "eval",
        data.to_str().unwrap(),
        "--metrics",
        "faithfulness,rouge_l",
        "--judge",
        "heuristic",
        "--out",
        out,
        "--labels",
        labels.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    rageval(dir, &args)
}

#[test]
fn eval_with_labels_and_calibrate_write_the_calibrated_block() {
    let dir = tempfile::tempdir().unwrap();
    let labels = labels(dir.path());
    let output = eval_with_labels(dir.path(), "run", &labels, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("calibrated with human labels (PPI++"),
        "{}",
        stdout(&output)
    );
    let said = stderr(&output);
    assert!(
        said.contains("1 labels in") && said.contains("(id nope)"),
        "{said}"
    );
    assert!(said.contains("note: no labels for rouge_l"), "{said}");
    let summary: Value =
        serde_json::from_str(&fs::read_to_string(dir.path().join("run/summary.json")).unwrap())
            .unwrap();
    let block = &summary["calibrated"]["faithfulness"];
    assert_eq!(block["method"], "ppi++");
    assert_eq!(block["n_labels"], 12);
    let mean = block["mean"].as_f64().unwrap();
    let (low, high) = (
        block["ci95"]["low"].as_f64().unwrap(),
        block["ci95"]["high"].as_f64().unwrap(),
    );
    assert!(low <= mean && mean <= high, "{block}");
    assert_eq!(block["labels_only"]["mean"].as_f64().unwrap(), 8.0 / 12.0);
    // The judge-only mean is the summary's mean of the same cells.
    let judged = summary["metrics"]["faithfulness"]["mean"].as_f64().unwrap();
    assert!((block["judge_only"]["mean"].as_f64().unwrap() - judged).abs() < 1e-12);
    assert!(summary["calibrated"]["rouge_l"].is_null());
    // The reports show the three means side by side.
    let md = fs::read_to_string(dir.path().join("run/report.md")).unwrap();
    assert!(md.contains("## Calibrated with human labels"), "{md}");
    assert!(md.contains("| `faithfulness` |"), "{md}");
    let html = fs::read_to_string(dir.path().join("run/report.html")).unwrap();
    assert!(html.contains("id=\"calibrated\""));
    let mut workbook: calamine::Xlsx<_> =
        calamine::open_workbook(dir.path().join("run/results.xlsx")).unwrap();
    let sheet = calamine::Reader::worksheet_range(&mut workbook, "calibrated").unwrap();
    assert_eq!(
        sheet.get_value((1, 10)),
        Some(&calamine::Data::Float(12.0)),
        "n_labels of faithfulness"
    );

    // `calibrate` on the finished run writes the same block again.
    let again = rageval(
        dir.path(),
        &["calibrate", "run", "--labels", labels.to_str().unwrap()],
    );
    assert!(again.status.success(), "{}", stderr(&again));
    let rewritten: Value =
        serde_json::from_str(&fs::read_to_string(dir.path().join("run/summary.json")).unwrap())
            .unwrap();
    assert_eq!(rewritten["calibrated"], summary["calibrated"]);

    // A labels line that is not a label names its line.
    fs::write(
        dir.path().join("bad.jsonl"),
        "{\"id\": \"1\", \"label\": \"yes\"}\n",
    )
    .unwrap();
    let bad = rageval(dir.path(), &["calibrate", "run", "--labels", "bad.jsonl"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("bad.jsonl:1"), "{}", stderr(&bad));

    // Regression (issue 25 item 8): labels that name no metric advised a flag that does not
    // exist (`--metric`), then exited 0 having calibrated nothing, and wiped the block.
    fs::write(
        dir.path().join("unnamed.jsonl"),
        "{\"id\": \"1\", \"label\": true}\n{\"id\": \"2\", \"label\": false}\n",
    )
    .unwrap();
    let unnamed = rageval(
        dir.path(),
        &["calibrate", "run", "--labels", "unnamed.jsonl"],
    );
    let err = stderr(&unnamed);
    assert_eq!(unnamed.status.code(), Some(2), "{err}");
    assert!(
        err.contains("(pass --label-metric METRIC to say which)"),
        "{err}"
    );
    assert!(
        err.contains("no metric of run could be calibrated with unnamed.jsonl"),
        "{err}"
    );
    let kept: Value =
        serde_json::from_str(&fs::read_to_string(dir.path().join("run/summary.json")).unwrap())
            .unwrap();
    assert_eq!(kept["calibrated"], summary["calibrated"]);
    let named = rageval(
        dir.path(),
        &[
            "calibrate",
            "run",
            "--labels",
            "unnamed.jsonl",
            "--label-metric",
            "faithfulness",
        ],
    );
    assert!(named.status.success(), "{}", stderr(&named));
}

#[test]
fn compare_reads_calibrated_means_where_both_runs_have_labels() {
    let dir = tempfile::tempdir().unwrap();
    // Two runs with the same judge scores; by their labels the second is better (every
    // faithfulness label true against two in three).
    let lenient = dir.path().join("lenient.jsonl");
    let mut text = String::new();
    for i in 1..=12 {
        text.push_str(&format!(
            "{{\"id\": \"{i}\", \"label\": true, \"metric\": \"faithfulness\"}}\n"
        ));
    }
    fs::write(&lenient, text).unwrap();
    for (run, labels) in [("v1", labels(dir.path())), ("v2", lenient)] {
        let output = eval_with_labels(dir.path(), run, &labels, &["-q"]);
        assert!(output.status.success(), "{}", stderr(&output));
    }
    let output = rageval(
        dir.path(),
        &["compare", "v1", "v2", "--xlsx", "compare.xlsx"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let md = stdout(&output);
    // The judge sees no difference; the calibrated means differ by the labels.
    assert!(
        md.contains("| `faithfulness` | ") && md.contains("no clear difference"),
        "{md}"
    );
    assert!(
        md.contains("| `faithfulness` calibrated | 12 / 12 labels |"),
        "{md}"
    );
    assert!(
        md.contains("their difference is read from the calibrated means"),
        "{md}"
    );
    assert!(!md.contains("`rouge_l` calibrated"), "{md}");
    let mut workbook: calamine::Xlsx<_> =
        calamine::open_workbook(dir.path().join("compare.xlsx")).unwrap();
    let sheet = calamine::Reader::worksheet_range(&mut workbook, "versions").unwrap();
    let header: Vec<String> = (0..sheet.width() as u32)
        .map(|c| {
            sheet
                .get_value((0, c))
                .map(|v| v.to_string())
                .unwrap_or_default()
        })
        .collect();
    let at = header
        .iter()
        .position(|h| h == "faithfulness calibrated Δ")
        .expect("calibrated columns");
    let Some(calamine::Data::Float(delta)) = sheet.get_value((2, at as u32)) else {
        panic!("no calibrated Δ for v2: {header:?}");
    };
    assert!(*delta > 0.0, "{delta}");
}
