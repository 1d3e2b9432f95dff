//! `rageval label`: a person labels by keyboard in headless Chromium, reloads, resumes where
//! they left off, and the file the page wrote is one `judge-check` and `calibrate` read.
//! The screenshot is kept under `target/tmp/browser/`.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};

use serde_json::{Value, json};

use crate::cdp::Browser;
use crate::chromium::screenshot_path;
use crate::{command, eval_fiqa, rageval, stderr};

/// `rageval label` running, with the URL it printed.
struct LabelPage {
    child: Child,
    url: String,
}

impl LabelPage {
    /// Labels 8 samples of `run` (seed 5) as `labeller`, with `more` flags.
    fn start(dir: &Path, run: &str, labeller: &str, more: &[&str]) -> Self {
        let mut full = vec![
            "label",
            run,
            "--samples",
            "8",
            "--seed",
            "5",
            "--labeller",
            labeller,
            "--port",
            "0",
        ];
        full.extend_from_slice(more);
        let mut child = command(dir, &full)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut url = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut url)
            .unwrap();
        let url = url.trim().to_owned();
        assert!(url.starts_with("http://127.0.0.1:"), "printed {url:?}");
        Self { child, url }
    }
}

impl Drop for LabelPage {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `<main>`'s state and 1-based position, and whether the judge's part is shown.
const WHERE: &str = "(() => { const m = document.getElementById('labelling'); \
     return m ? [m.dataset.state, Number(m.dataset.position), \
     !document.getElementById('judge').hidden] : null; })()";

fn at(state: &str, position: usize, judge_shown: bool) -> Value {
    json!([state, position, judge_shown])
}

#[test]
fn label_five_by_keyboard_reload_resume_and_the_file_feeds_judge_check_and_calibrate() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    eval_fiqa(dir.path(), "faithfulness", &run);
    let run_arg = run.to_str().unwrap();
    let page = LabelPage::start(dir.path(), run_arg, "lin", &[]);
    let mut browser = Browser::start();
    browser.call(
        "Emulation.setDeviceMetricsOverride",
        json!({"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": false}),
    );
    browser.navigate(&page.url);
    // Faithfulness scores are fractions: graded 1–5; the judge's verdict is not shown yet.
    browser.wait_for(WHERE, &at("unlabelled", 1, false));
    assert_eq!(
        browser.eval("document.getElementById('judge-score').textContent"),
        json!("")
    );
    let mut ids = Vec::new();
    for (step, grade) in ["5", "4", "3", "2", "1"].into_iter().enumerate() {
        let position = step + 1;
        ids.push(browser.eval("document.getElementById('question').textContent"));
        browser.press(grade);
        browser.wait_for(WHERE, &at("saved", position, true));
        let score = browser.eval("document.getElementById('judge-score').textContent");
        assert!(score.as_str().unwrap().starts_with("Score "), "{score}");
        // Next by → and by n, alternately; b goes back to a saved item, its verdict shown.
        if step == 2 {
            browser.press("b");
            browser.wait_for(WHERE, &at("saved", position - 1, true));
            browser.press("ArrowRight");
            browser.wait_for(WHERE, &at("saved", position, true));
        }
        browser.press(if step % 2 == 0 { "ArrowRight" } else { "n" });
        browser.wait_for(WHERE, &at("unlabelled", position + 1, false));
    }
    browser.reload();
    browser.wait_for(WHERE, &at("unlabelled", 6, false));
    assert_eq!(
        browser.eval("document.getElementById('progress').textContent"),
        json!("Item 6 of 8 · 5 labelled")
    );
    browser.screenshot(&screenshot_path("label-resumed"));

    // A second labeller, in Chinese, has a file of their own and starts at the first item.
    let other = LabelPage::start(dir.path(), run_arg, "wu", &["--lang", "zh"]);
    browser.navigate(&other.url);
    browser.wait_for(WHERE, &at("unlabelled", 1, false));
    assert_eq!(
        browser.eval("document.getElementById('labelling').lang"),
        json!("zh")
    );
    assert_eq!(
        browser.eval("document.getElementById('question-heading').textContent"),
        json!("问题")
    );
    browser.press("3");
    browser.wait_for(WHERE, &at("saved", 1, true));
    browser.screenshot(&screenshot_path("label-zh-saved"));
    drop(browser);
    drop(page);
    drop(other);

    let labels = run.join("labels/lin.faithfulness.jsonl");
    let lines: Vec<Value> = std::fs::read_to_string(&labels)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 5);
    let grades: Vec<&Value> = lines.iter().map(|l| &l["grade"]).collect();
    assert_eq!(
        grades,
        [&json!(5), &json!(4), &json!(3), &json!(2), &json!(1)]
    );
    let questions: Vec<&Value> = lines.iter().map(|l| &l["question"]).collect();
    assert_eq!(questions, ids.iter().collect::<Vec<_>>());
    assert!(
        lines
            .iter()
            .all(|l| l["labeller"] == "lin" && l["metric"] == "faithfulness")
    );
    let wu = std::fs::read_to_string(run.join("labels/wu.faithfulness.jsonl")).unwrap();
    assert_eq!(wu.lines().count(), 1);

    // judge-check's reader takes the file as graded items with the page's fields as metadata.
    let items = rageval_run::commands::judge_check::labels::read_jsonl(&labels, None).unwrap();
    assert_eq!(items.len(), 5);
    assert!(items.iter().all(|item| item.metadata["labeller"] == "lin"));
    let checked = rageval(
        dir.path(),
        &[
            "judge-check",
            labels.to_str().unwrap(),
            "--metric",
            "faithfulness",
            "--out",
            dir.path().join("check").to_str().unwrap(),
        ],
    );
    assert!(checked.status.success(), "{}", stderr(&checked));

    // calibrate matches the labels to the run's samples by id.
    let calibrated = rageval(
        dir.path(),
        &[
            "calibrate",
            run_arg,
            "--labels",
            labels.to_str().unwrap(),
            "--label-scale",
            "1..5",
        ],
    );
    assert!(calibrated.status.success(), "{}", stderr(&calibrated));
    let summary: Value =
        serde_json::from_slice(&std::fs::read(run.join("summary.json")).unwrap()).unwrap();
    assert_eq!(
        summary["calibrated"]["faithfulness"]["n_labels"],
        json!(5),
        "{summary}"
    );
}
