//! `report.html` and the `rageval serve` pages as a browser shows them: each is rendered in
//! headless Chromium, and the numbers in the rendered DOM must be the run's `summary.json`,
//! `results.jsonl` and comparison. Screenshots are kept under `target/tmp/browser/`.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use rageval_core::Outcome;
use rageval_report::testing::{scores, write_run};
use rageval_report::{CompareSettings, Comparison, RunData, Summary};

use crate::chromium::{render, screenshot_path, table_rows, text};
use crate::eval_fiqa;

/// Scores the FiQA example into `out` with metrics that score, and one (`id_mrr`) that is
/// undefined on every sample, so the page has both kinds of number.
fn fiqa_run(dir: &Path, out: &Path) -> RunData {
    eval_fiqa(dir, "rouge_l,bleu,chrf,exact_match,id_mrr", out);
    RunData::load(out).unwrap()
}

fn four(value: Option<f64>) -> String {
    value.map_or_else(|| "—".into(), |v| format!("{v:.4}"))
}

/// The summary table in `dom` shows exactly `summary`: every metric in order, with its
/// mean, interval and counts.
fn assert_summary_shown(dom: &str, summary: &Summary) {
    let rows = table_rows(dom, "summary");
    let names: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(names, summary.metric_order);
    for row in &rows {
        let m = &summary.metrics[&row[0]];
        let interval = m
            .ci95
            .map_or_else(|| "—".into(), |[l, h]| format!("[{l:.4}, {h:.4}]"));
        assert_eq!(
            row[1..6],
            [
                four(m.mean),
                interval,
                m.n_scored.to_string(),
                m.n_undefined.to_string(),
                m.n_failed.to_string()
            ],
            "{}",
            row[0]
        );
    }
}

/// The per-sample table in `dom` shows each listed sample's outcomes as the journal holds
/// them; `first_metric` is the column of the first metric.
fn assert_samples_shown(dom: &str, run: &RunData, first_metric: usize) -> Vec<Vec<String>> {
    let rows = table_rows(dom, "per-sample");
    let outcomes = run.outcomes();
    let metrics = run.metric_names();
    for row in &rows {
        let id = row[0].as_str();
        for (metric, cell) in metrics.iter().zip(&row[first_metric..]) {
            let expected = match outcomes[&(id, metric.as_str())] {
                Outcome::Score { value, .. } => format!("{value:.4}"),
                Outcome::Undefined { .. } => "undefined".into(),
                Outcome::Failed { .. } => "failed".into(),
            };
            assert_eq!(cell, &expected, "{id} {metric}");
        }
    }
    rows
}

#[test]
fn report_html_shows_the_summary_and_the_journal() {
    let dir = tempfile::tempdir().unwrap();
    let run = fiqa_run(dir.path(), &dir.path().join("fiqa"));
    let page = run.path.join("report.html");
    let dom = render(
        &format!("file://{}", page.display()),
        &screenshot_path("report"),
        1800,
    );
    assert_summary_shown(&dom, &run.summary);
    // Columns: sample, question, then one per metric.
    let rows = assert_samples_shown(&dom, &run, 2);
    assert_eq!(rows.len(), 30);
    assert!(
        rows[0][1].starts_with("How to deposit a cheque"),
        "{:?}",
        rows[0]
    );
    assert_eq!(dom.matches("<details class=\"sample\"").count(), 30);
    assert!(dom.contains("30 × sample has no retrieved_context_ids"));
    // What the browser built holds nothing that runs or loads.
    for forbidden in ["<script", "<link", "<iframe", "src=\"http"] {
        assert!(!dom.contains(forbidden), "the page holds {forbidden}");
    }
}

/// `rageval serve` on a free loopback port, stopped when dropped.
struct Serving {
    child: Child,
    url: String,
}

impl Serving {
    fn start(runs: &Path) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_rageval"))
            .args(["serve", runs.to_str().unwrap(), "--bind", "127.0.0.1:0"])
            .env_remove(rageval_server::ENV_SERVE_TOKEN)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stderr.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("rageval serve: listening on ")
            .unwrap_or_else(|| panic!("unexpected first line: {line}"))
            .to_string();
        Self { child, url }
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn serve_pages_show_the_runs_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    let fiqa = fiqa_run(dir.path(), &runs.join("fiqa"));
    write_run(&runs.join("base"), "d1", &scores(0.0));
    write_run(&runs.join("shifted"), "d1", &scores(0.1));
    let server = Serving::start(&runs);

    // The index: every run, its means as summary.json has them.
    let dom = render(&server.url, &screenshot_path("serve-index"), 700);
    let rows = table_rows(&dom, "runs");
    let names: Vec<&str> = rows.iter().map(|r| r[1].as_str()).collect();
    assert_eq!(names, ["base", "fiqa", "shifted"]);
    let fiqa_row = &rows[1];
    for metric in &fiqa.summary.metric_order {
        let shown = format!("{metric} {}", four(fiqa.summary.metrics[metric].mean));
        assert!(
            fiqa_row[6].contains(&shown),
            "{shown} not in {}",
            fiqa_row[6]
        );
    }

    // A run's page, its samples filtered to a range of one metric.
    let url = format!("{}runs/fiqa?metric=rouge_l&min=0.2&max=0.4", server.url);
    let dom = render(&url, &screenshot_path("serve-run"), 2000);
    assert_summary_shown(&dom, &fiqa.summary);
    let in_range: Vec<&str> = fiqa
        .sample_ids()
        .into_iter()
        .filter(|id| {
            fiqa.scores("rouge_l")
                .get(id)
                .is_some_and(|v| (0.2..=0.4).contains(v))
        })
        .collect();
    assert!(!in_range.is_empty() && in_range.len() < 30);
    // Columns: sample, then one per metric (the server does not read the dataset).
    let rows = assert_samples_shown(&dom, &fiqa, 1);
    let shown: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(shown, in_range);
    let count = &dom[dom.find("<p class=\"count\">").unwrap()..];
    assert!(
        text(&count[..count.find("</p>").unwrap()])
            .starts_with(&format!("{} of 30 samples", in_range.len())),
        "{count}"
    );

    // The comparison: the version table and the pair's Δ, interval and p as computed.
    let url = format!("{}compare?run=base&run=shifted", server.url);
    let dom = render(&url, &screenshot_path("serve-compare"), 1200);
    let loaded = ["base", "shifted"].map(|name| RunData::load(&runs.join(name)).unwrap());
    let comparison = Comparison::build(&loaded, CompareSettings::default()).unwrap();
    let rows = table_rows(&dom, "deltas");
    for (row, delta) in rows.iter().zip(&comparison.pairs[0].deltas) {
        let [low, high] = delta.ci95.unwrap();
        assert_eq!(row[0], delta.metric);
        assert_eq!(row[1], delta.n_paired.to_string());
        assert_eq!(row[4], format!("{:+.4}", delta.delta.unwrap()));
        assert_eq!(row[5], format!("[{low:+.4}, {high:+.4}]"));
        assert_eq!(row[6], format!("{:.4}", delta.p_value.unwrap()));
    }
    assert_eq!(rows[0][7], "higher");
    assert_eq!(rows[1][7], "no clear difference");
}

#[test]
fn a_judge_check_report_and_run_page_lead_with_the_agreement() {
    let dir = tempfile::tempdir().unwrap();
    crate::judge_check::write_curie_pairs(dir.path());
    let output = crate::rageval(
        dir.path(),
        &[
            "judge-check",
            "labels.jsonl",
            "--metric",
            "faithfulness",
            "--out",
            "runs/curie",
        ],
    );
    assert!(output.status.success(), "{}", crate::stderr(&output));
    let run = RunData::load(&dir.path().join("runs/curie")).unwrap();
    let agreement = run.agreement.clone().unwrap();
    let page = run.path.join("report.html");
    let dom = render(
        &format!("file://{}", page.display()),
        &screenshot_path("judge-check-report"),
        1400,
    );
    let assert_agreement_shown = |dom: &str| {
        assert!(dom.find("id=\"agreement\"").unwrap() < dom.find("id=\"summary\"").unwrap());
        let rows = table_rows(dom, "agreement");
        let names: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
        assert_eq!(names, agreement.figures.keys().collect::<Vec<_>>());
        for row in &rows {
            let figure = agreement.figures[&row[0]];
            let ci = figure.ci95.unwrap();
            assert_eq!(row[1], format!("{:.4}", figure.value));
            assert_eq!(row[2], format!("[{:.4}, {:.4}]", ci.low, ci.high));
        }
        // The one pair the judge got wrong, with its two samples and their scores.
        let wrong = table_rows(dom, "disagreements");
        assert_eq!(wrong.len(), 2, "{wrong:?}");
        assert_eq!(wrong[0][..3], ["wrong", "b is better", "disagree"]);
        let scores = &agreement.verdicts[3].scores;
        assert_eq!(wrong[0][3..5], ["wrong/a".to_string(), four(scores[0])]);
        assert_eq!(wrong[1][..2], ["wrong/b".to_string(), four(scores[1])]);
    };
    assert_agreement_shown(&dom);
    // The sample links reach the drill-downs on the same page.
    let index = run
        .sample_ids()
        .iter()
        .position(|id| *id == "wrong/a")
        .unwrap();
    assert!(dom.contains(&format!("<a href=\"#s{index}\"><code>wrong/a</code></a>")));
    assert!(dom.contains(&format!("<details class=\"sample\" id=\"s{index}\"")));

    let server = Serving::start(&dir.path().join("runs"));
    let dom = render(
        &format!("{}runs/curie", server.url),
        &screenshot_path("serve-judge-check"),
        1400,
    );
    assert_agreement_shown(&dom);
    assert!(dom.contains(&format!("<a href=\"/runs/curie/report#s{index}\">")));
}

/// Issue 39 item 9: the comparison page's version table with five metrics, each later
/// version's Δ, interval, p and reading under its mean, fits a 1,400-pixel window: the
/// table does not scroll sideways.
#[test]
fn regression_issue_39_five_metrics_fit_the_version_table_at_1400_pixels() {
    let dir = tempfile::tempdir().unwrap();
    let metrics = [
        "faithfulness",
        "context_precision",
        "context_recall",
        "answer_relevance",
        "answer_correctness",
    ];
    for (name, shift) in [("base", 0.0), ("candidate", -0.2)] {
        let mut cells = Vec::new();
        for i in 0..30 {
            for (m, metric) in metrics.iter().enumerate() {
                let value =
                    (((i * 7 + m * 3) % 10) as f64 / 10.0 + shift * (m % 3) as f64).clamp(0.0, 1.0);
                cells.push((format!("q{i}"), *metric, Outcome::bare(value)));
            }
        }
        write_run(&dir.path().join(name), "sha", &cells);
    }
    let loaded = ["base", "candidate"].map(|name| RunData::load(&dir.path().join(name)).unwrap());
    let comparison = Comparison::build(&loaded, CompareSettings::default()).unwrap();
    let page = dir.path().join("compare.html");
    std::fs::write(&page, rageval_report::render_compare_html(&comparison)).unwrap();

    let mut browser = crate::cdp::Browser::start();
    browser.call(
        "Emulation.setDeviceMetricsOverride",
        serde_json::json!({"width": 1400, "height": 900, "deviceScaleFactor": 1, "mobile": false}),
    );
    browser.navigate(&format!("file://{}", page.display()));
    let widths = "(() => { const t = document.querySelector('table.versions'); \
         if (!t) return null; const w = t.parentElement; \
         return [t.querySelectorAll('thead th').length, w.scrollWidth, w.clientWidth]; })()";
    browser.wait_for(
        "document.querySelector('table.versions') !== null",
        &serde_json::json!(true),
    );
    let [columns, scroll, client] = serde_json::from_value::<[u64; 3]>(browser.eval(widths))
        .expect("the version table's widths");
    browser.screenshot(&screenshot_path("compare-five-metrics-1400"));
    assert_eq!(columns, 8, "run, five metrics, judge calls, cost");
    assert!(
        scroll <= client,
        "the version table scrolls sideways: {scroll} px wide in {client} px"
    );
}

/// A `pairwise` run's `report.html` at 1,400 pixels: the page does not scroll sideways, and
/// no table does either (the head-to-head table's thirteen columns fit).
#[test]
fn a_pairwise_report_fits_1400_pixels() {
    let dir = tempfile::tempdir().unwrap();
    let run = crate::pairwise::flipped_run(dir.path());
    let page = run.join("report.html");
    let mut browser = crate::cdp::Browser::start();
    browser.call(
        "Emulation.setDeviceMetricsOverride",
        serde_json::json!({"width": 1400, "height": 900, "deviceScaleFactor": 1, "mobile": false}),
    );
    browser.navigate(&format!("file://{}", page.display()));
    browser.wait_for(
        "document.querySelectorAll('table').length > 0",
        &serde_json::json!(true),
    );
    let widths = "(() => { const d = document.documentElement; \
         const boxes = [...document.querySelectorAll('div.wide')]; \
         return [boxes.length, d.scrollWidth, d.clientWidth, \
         boxes.filter(b => b.scrollWidth > b.clientWidth).length]; })()";
    let [tables, scroll, client, overflowing] =
        serde_json::from_value::<[u64; 4]>(browser.eval(widths)).expect("the page's widths");
    browser.screenshot(&screenshot_path("pairwise-report-1400"));
    assert_eq!(tables, 3, "versions, head to head, flipped questions");
    assert!(
        scroll <= client,
        "the page scrolls sideways: {scroll} px in {client} px"
    );
    assert_eq!(overflowing, 0, "a table scrolls sideways");
}

/// `rageval serve`'s page of a `pairwise` run shows its head-to-head table and the
/// questions that flipped with both reasons, and no absolute path.
#[test]
fn serve_shows_a_pairwise_run_s_head_to_head_table_and_flipped_questions() {
    let dir = tempfile::tempdir().unwrap();
    crate::pairwise::flipped_run(dir.path());
    let server = Serving::start(&dir.path().join("runs"));
    let dom = render(
        &format!("{}runs/h2h", server.url),
        &screenshot_path("serve-pairwise"),
        1400,
    );
    for heading in ["Head to head", "Length bias", "Questions that flipped"] {
        assert!(
            dom.contains(&format!("<h2>{heading}</h2>")),
            "{heading}: {dom}"
        );
    }
    assert!(
        dom.contains("<td>V1.0</td><td>V1.1</td><td class=\"num\">6</td>"),
        "{dom}"
    );
    assert!(dom.contains("the first &lt;one&gt; reads better"), "{dom}");
    assert!(
        !dom.contains(&dir.path().display().to_string()),
        "an absolute path: {dom}"
    );
}
