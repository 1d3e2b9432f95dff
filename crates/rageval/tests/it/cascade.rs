//! The cascade end to end (`--judge checker:DIR --escalate LOW,HIGH` with the testkit mock as
//! the chat endpoint), on the tiny random-weight ModernBERT token classifier: the mock is
//! asked exactly the claims whose checker P(supported) lies inside the band, each verdict
//! names its tier, the reports count each tier's claims with their agreement unmeasured,
//! another band is another judge, and a dry run says its estimate is an upper bound.
//!
//! The band 0.08,1 was chosen on the fixture's scores for the first five FiQA samples
//! (0.03 to 0.19 on the mock's statements): both tiers then hold claims. The scores are
//! random weights' and mean nothing; the test asserts the routing, never a value.

use std::fs;
use std::path::Path;
use std::process::Output;
use std::sync::{Arc, Mutex};

use rageval_report::testing::calamine::{Data, Reader, Xlsx, open_workbook};
use rageval_testkit::{MockConfig, Reply};
use serde_json::Value;

use crate::judged::{Endpoint, endpoint};
use crate::snapshots::with_filters;
use crate::{rageval, repo_root, stderr, stdout};

const BAND: (f64, f64) = (0.08, 1.0);

/// The chat requests the mock received, in order.
type Received = Arc<Mutex<Vec<Value>>>;

/// A mock that records every chat request and answers as it does unscripted.
fn recording_endpoint() -> (Endpoint, Received) {
    let received = Received::default();
    let record = received.clone();
    let config = MockConfig {
        script: Some(Arc::new(move |body: &Value| {
            record
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(body.clone());
            Reply::Schema
        })),
        ..MockConfig::default()
    };
    (endpoint(config), received)
}

/// The statement keys (`s1`, `s2`, …) a support-verdicts request's schema requires, or
/// `None` for another request.
fn support_keys(value: &Value) -> Option<Vec<String>> {
    match value {
        Value::Object(map) => {
            if let Some(required) = map
                .get("properties")
                .and_then(|p| p.get("verdicts"))
                .and_then(|v| v.get("required"))
                .and_then(Value::as_array)
            {
                return Some(
                    required
                        .iter()
                        .filter_map(|key| key.as_str().map(str::to_owned))
                        .collect(),
                );
            }
            map.values().find_map(support_keys)
        }
        Value::Array(items) => items.iter().find_map(support_keys),
        _ => None,
    }
}

fn five_fiqa_samples(dir: &Path) -> String {
    let data = dir.join("fiqa-5.jsonl");
    let fiqa = fs::read_to_string(repo_root().join("examples/fiqa-30.jsonl")).unwrap();
    let lines: Vec<&str> = fiqa.lines().take(5).collect();
    fs::write(&data, lines.join("\n") + "\n").unwrap();
    data.display().to_string()
}

fn cascade_args(data: &str, band: &str, out: &Path, mock: &Endpoint) -> Vec<String> {
    let checker =
        repo_root().join("crates/rageval-judge/tests/fixtures/checkers/modernbert-tokens");
    let mut args: Vec<String> = [
        "eval",
        data,
        "--judge",
        &format!("checker:{}", checker.display()),
        "--escalate",
        band,
        "--metrics",
        "faithfulness",
        "--out",
        &out.display().to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(mock.flags());
    args
}

/// The P(supported) a verdict's reason quotes.
fn quoted_support(reason: &str) -> f64 {
    let after = reason
        .split("checker P(supported) ")
        .nth(1)
        .unwrap_or_else(|| panic!("no checker score in {reason}"));
    let number: String = after
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    number.parse().unwrap()
}

#[test]
fn the_chat_judge_is_asked_exactly_the_claims_inside_the_band() {
    let dir = tempfile::tempdir().unwrap();
    let data = five_fiqa_samples(dir.path());
    let out = dir.path().join("run");
    let (mock, received) = recording_endpoint();
    let args = cascade_args(&data, "0.08,1", &out, &mock);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();

    // A dry run plans the chat judge alone, and says it is an upper bound.
    let dry = rageval(dir.path(), &[&args[..], &["--dry-run"]].concat());
    assert!(dry.status.success(), "{}", stderr(&dry));
    let said = format!("{}{}", stdout(&dry), stderr(&dry));
    assert!(said.contains("cascade: an upper bound"), "{said}");
    assert!(said.contains("model calls (at most)"), "{said}");
    let planned_claims: usize = said
        .lines()
        .find(|line| line.trim_start().starts_with("whole run"))
        .and_then(|line| line.split_whitespace().last())
        .and_then(|claims| claims.parse().ok())
        .unwrap_or_else(|| panic!("no checker claims on the whole-run row: {said}"));
    assert_eq!(
        mock.mock.stats().chat_requests,
        0,
        "a dry run sent a request"
    );
    let planned_calls: u64 = said
        .lines()
        .find(|line| line.trim_start().starts_with("whole run"))
        .and_then(|line| line.split_whitespace().nth(2))
        .and_then(|calls| calls.parse().ok())
        .unwrap_or_else(|| panic!("no whole-run row in {said}"));

    let output = rageval(dir.path(), &args);
    assert!(output.status.success(), "{}", stderr(&output));
    // The dry run's figure is an upper bound.
    let made_calls = mock.mock.stats().chat_requests;
    assert!(
        made_calls <= planned_calls,
        "{made_calls} calls, {planned_calls} planned"
    );

    // Each verdict names its tier and quotes the checker's score; the score puts it there.
    let results = fs::read_to_string(out.join("results.jsonl")).unwrap();
    let mut by_checker = 0;
    let mut escalated: Vec<String> = Vec::new();
    for line in results.lines() {
        let cell: Value = serde_json::from_str(line).unwrap();
        let verdicts = cell["evidence"]["verdicts"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for verdict in verdicts {
            let reason = verdict["reason"].as_str().unwrap();
            let support = quoted_support(reason);
            let inside = support >= BAND.0 && support <= BAND.1;
            if reason.starts_with("escalated to the chat judge") {
                assert!(inside, "{reason}");
                escalated.push(verdict["text"].as_str().unwrap().to_owned());
            } else {
                assert!(reason.starts_with("settled by the checker"), "{reason}");
                assert!(!inside, "{reason}");
                by_checker += 1;
            }
        }
    }
    assert!(by_checker > 0 && !escalated.is_empty(), "{results}");
    // The dry run counted the claims the checker scores (the planner's split, an estimate
    // of the chat model's: some).
    assert!(planned_claims > 0, "{said}");

    // The mock was asked those claims and no other: as many statement keys as escalated
    // claims, each escalated statement in a support-verdicts request.
    let received = received.lock().unwrap().clone();
    let support_requests: Vec<&Value> = received
        .iter()
        .filter(|body| support_keys(body).is_some())
        .collect();
    let asked: usize = support_requests
        .iter()
        .filter_map(|body| support_keys(body))
        .map(|keys| keys.len())
        .sum();
    assert_eq!(asked, escalated.len());
    let support_text: String = support_requests.iter().map(|b| b.to_string()).collect();
    for statement in &escalated {
        let quoted = serde_json::to_string(statement).unwrap();
        assert!(
            support_text.contains(quoted.trim_matches('"')),
            "{statement} was not asked"
        );
    }

    // The reports count each tier's claims, their agreement unmeasured.
    let summary: Value =
        serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let tally = &summary["judge"]["tasks"]["support_verdicts"];
    assert_eq!(tally["claims_by_checker"], by_checker, "{summary}");
    assert_eq!(tally["claims_by_chat"], escalated.len(), "{summary}");
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    let total = by_checker + escalated.len();
    assert!(
        report.contains(&format!(
            "cascade: of {total} claims, {by_checker} settled by the checker model"
        )),
        "{report}"
    );
    assert!(report.contains("unmeasured until judge-check"), "{report}");
    assert!(stdout(&output).contains(&format!(
        "cascade: of {total} claims, {by_checker} settled by the checker model"
    )));
    pin_what_the_reports_say(dir.path(), &out, &output, by_checker, escalated.len());
    let manifest = fs::read_to_string(out.join("manifest.json")).unwrap();
    assert!(manifest.contains("\"escalation\""), "{manifest}");

    // Another band is another judge: the run is not resumed.
    let other = cascade_args(&data, "0.1,1", &out, &mock);
    let other: Vec<&str> = other.iter().map(String::as_str).collect();
    let refused = rageval(dir.path(), &other);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("in 0.08,1 to the chat model"),
        "{}",
        stderr(&refused)
    );
}

/// The judge's kind, the cascade line and the task table's columns, as report.md,
/// report.html, results.xlsx's summary sheet and the terminal's judge line say them; the
/// tier counts and shares (asserted above against the verdicts) become placeholders, so the
/// pin holds the wording whatever the random weights score.
fn pin_what_the_reports_say(
    dir: &Path,
    out: &Path,
    output: &Output,
    by_checker: usize,
    by_chat: usize,
) {
    let total = by_checker + by_chat;
    let share = |count: usize| format!("({:.1}%)", count as f64 * 100.0 / total as f64);
    let placeholders = |text: &str| {
        text.replace(&format!("of {total} claims"), "of [TOTAL] claims")
            .replace(&format!(", {by_checker} settled"), ", [CHECKER] settled")
            .replace(&format!(" {by_chat} escalated"), " [CHAT] escalated")
            .replace(&share(by_checker), "([SHARE])")
            .replace(&share(by_chat), "([SHARE])")
    };
    let said = |line: &str| {
        line.starts_with("- judge:")
            || line.starts_with("judge ")
            || line.contains("checker model: ")
            || line.starts_with("checker model ")
            || line.contains("cascade")
            || line.contains("task")
    };
    let markdown = fs::read_to_string(out.join("report.md")).unwrap();
    let markdown = markdown
        .split("## Judge")
        .nth(1)
        .unwrap()
        .split("\n## ")
        .next()
        .unwrap();
    let html = fs::read_to_string(out.join("report.html")).unwrap();
    let html = html
        .split("<h2 id=\"judge\">")
        .nth(1)
        .unwrap()
        .split("<h2")
        .next()
        .unwrap();
    let html_text: String = html
        .replace("</tr>", "\n")
        .replace("</p>", "\n")
        .replace("</td>", " ")
        .replace("</th>", " ")
        .replace("&#39;", "'")
        .split('<')
        .map(|piece| piece.split_once('>').map_or(piece, |(_, text)| text))
        .collect();
    let mut workbook: Xlsx<_> = open_workbook(out.join("results.xlsx")).unwrap();
    let summary = workbook.worksheet_range("summary").unwrap();
    let workbook_row: Vec<String> = summary
        .rows()
        .filter(|row| {
            row.first()
                .is_some_and(|cell| matches!(cell, Data::String(text) if text == "judge cascade"))
        })
        .flat_map(|row| {
            row.iter()
                .map(|cell| cell.to_string())
                .filter(|c| !c.is_empty())
        })
        .collect();
    let terminal = stdout(output);
    let judge_line = terminal
        .lines()
        .find(|line| line.starts_with("judge: "))
        .unwrap();
    let pinned = format!(
        "--- report.md\n{}\n--- report.html\n{}\n--- results.xlsx summary\n{}\n--- terminal\n{}\n",
        markdown
            .lines()
            .filter(|l| said(l))
            .collect::<Vec<_>>()
            .join("\n"),
        html_text
            .lines()
            .map(str::trim)
            .filter(|l| said(l))
            .collect::<Vec<_>>()
            .join("\n"),
        workbook_row.join(" | "),
        judge_line
            .split("; ")
            .skip(1)
            .collect::<Vec<_>>()
            .join("; "),
    );
    with_filters(dir, || {
        insta::assert_snapshot!("cascade_reports", placeholders(&pinned))
    });
}

#[test]
fn escalate_needs_a_checker_and_an_endpoint() {
    let dir = tempfile::tempdir().unwrap();
    let data = five_fiqa_samples(dir.path());
    let checker =
        repo_root().join("crates/rageval-judge/tests/fixtures/checkers/modernbert-tokens");
    let no_endpoint = rageval(
        dir.path(),
        &[
            "eval",
            &data,
            "--judge",
            &format!("checker:{}", checker.display()),
            "--escalate",
            "--metrics",
            "faithfulness",
        ],
    );
    assert!(!no_endpoint.status.success());
    assert!(
        stderr(&no_endpoint).contains("--escalate needs a chat endpoint"),
        "{}",
        stderr(&no_endpoint)
    );
    let bad_band = rageval(
        dir.path(),
        &[
            "eval",
            &data,
            "--judge",
            "heuristic",
            "--escalate",
            "0.9,0.1",
        ],
    );
    assert_eq!(bad_band.status.code(), Some(2), "{}", stderr(&bad_band));
}
