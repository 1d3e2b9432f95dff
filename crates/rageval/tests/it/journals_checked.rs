//! Journals are checked on read (issue 40, item 12): a line no metric wrote — a score out
//! of its metric's range, a huge one, a metric the run does not have, a sample its data
//! does not hold — stops a resumed run and every reader with exit 2, naming the file and
//! line and saying what to do, and the run's summary is left as it was.

use std::fs;

use crate::{eval_fiqa, rageval, repo_root, stderr};

const METRICS: &str = "exact_match,rouge_l";

/// The journal line each case puts in place of the second (sample 1's `rouge_l`), and what
/// the refusal must say about it.
const BAD_LINES: [(&str, &str); 5] = [
    (
        r#"{"sample_id":"1","metric":"rouge_l","status":"score","value":1e308}"#,
        "has the score 1e308, outside",
    ),
    (
        r#"{"sample_id":"1","metric":"rouge_l","status":"score","value":-0.5}"#,
        "has the score -0.5, outside its range [0, 1]",
    ),
    (
        r#"{"sample_id":"1","metric":"exact_match","status":"score","value":-5.0}"#,
        "has the score -5, outside",
    ),
    (
        r#"{"sample_id":"1","metric":"bleu","status":"score","value":0.5}"#,
        "`bleu` is not one of the run's",
    ),
    (
        r#"{"sample_id":"no-such-sample","metric":"exact_match","status":"score","value":1.0}"#,
        "`no-such-sample` is not in the run's data",
    ),
];

#[test]
fn regression_issue_40_journal_lines_no_metric_wrote_are_refused_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    eval_fiqa(dir.path(), METRICS, &run);
    let journal = run.join("results.jsonl");
    let clean = fs::read_to_string(&journal).unwrap();
    let summary = fs::read(run.join("summary.json")).unwrap();
    let with_line_2 = |bad: &str| {
        let mut lines: Vec<&str> = clean.lines().collect();
        lines[1] = bad;
        format!("{}\n", lines.join("\n"))
    };
    let data = repo_root().join("examples/fiqa-30.jsonl");
    let eval = [
        "eval",
        data.to_str().unwrap(),
        "--metrics",
        METRICS,
        "--out",
        "run",
    ];
    for (bad, said) in BAD_LINES {
        fs::write(&journal, with_line_2(bad)).unwrap();
        let resumed = rageval(dir.path(), &eval);
        let message = stderr(&resumed);
        assert_eq!(resumed.status.code(), Some(2), "{bad}: {message}");
        assert!(
            message.contains("results.jsonl:2:") && message.contains(said),
            "{bad}: the refusal names the file, the line and the fault: {message}"
        );
        assert!(message.contains("delete it"), "{bad}: {message}");
        assert_eq!(
            fs::read(run.join("summary.json")).unwrap(),
            summary,
            "{bad}: the summary is left as it was"
        );
    }
    // A reader of the finished run (reports, compare, serve) refuses a score no metric
    // gives, though it knows no metric's own range.
    let finished = dir.path().join("finished");
    eval_fiqa(dir.path(), METRICS, &finished);
    fs::write(finished.join("results.jsonl"), with_line_2(BAD_LINES[0].0)).unwrap();
    let report = rageval(dir.path(), &["report", "finished"]);
    assert_eq!(report.status.code(), Some(2), "{}", stderr(&report));
    assert!(
        stderr(&report).contains("results.jsonl:2:"),
        "{}",
        stderr(&report)
    );
}
