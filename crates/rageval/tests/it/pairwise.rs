//! `rageval pairwise`: versions' answers judged head to head against the testkit mock —
//! both seat orders asked (two requests per pair and question, none again from the cache or
//! the journal), a dry run that sends nothing, a run against itself, a judge that always
//! names the first seat (all flips, all ties), a judge that prefers one version, three
//! versions, and the judges it refuses or that stop it.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rageval_testkit::{MockConfig, Reply};
use serde_json::{Value, json};

use crate::judged::{Endpoint, endpoint};
use crate::{eval_fiqa, rageval, stderr, stdout};

const QUESTIONS: usize = 6;

/// A version's dataset: the same six questions, this version's answers and contexts;
/// answers of the version marked `better` carry the word GOOD.
pub(crate) fn version(dir: &Path, name: &str, better: bool, words: usize) -> PathBuf {
    let mut lines = String::new();
    for i in 0..QUESTIONS {
        let answer = format!(
            "{} answer {i} of {name}{}",
            if better { "GOOD" } else { "plain" },
            " more".repeat(words)
        );
        let mut row = json!({
            "id": format!("q{i}"),
            "question": format!("What is question number {i} about?"),
            "answer": answer,
            "contexts": [format!("{name} passage {i}")],
        });
        if i % 2 == 0 {
            row["reference"] = json!(format!("reference {i}"));
        }
        lines.push_str(&format!("{row}\n"));
    }
    let path = dir.join(format!("{name}.jsonl"));
    fs::write(&path, lines).unwrap();
    path
}

/// Two versions of the same length, the second better, and where their run goes.
fn two_versions(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    (
        version(dir, "v1", false, 0),
        version(dir, "v2", true, 0),
        dir.join("h2h"),
    )
}

fn summary(run: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(run.join("summary.json")).unwrap()).unwrap()
}

fn pairwise(server: &Endpoint, dir: &Path, args: &[&str]) -> std::process::Output {
    let mut all = vec!["pairwise"];
    all.extend(args);
    let flags = server.flags();
    all.extend(flags.iter().map(String::as_str));
    rageval(dir, &all)
}

fn arg(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// A judge that names the answer holding GOOD (its seat), else a tie: it follows content,
/// never the seat.
pub(crate) fn prefers_good() -> MockConfig {
    let script = Arc::new(|body: &Value| {
        let user = body["messages"]
            .as_array()
            .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default()
            .to_owned();
        let (a, b) = user.split_once("Answer B:").unwrap_or((&user, ""));
        let winner = match (a.contains("GOOD"), b.contains("GOOD")) {
            (true, false) => "A",
            (false, true) => "B",
            _ => "tie",
        };
        Reply::Content(json!({"reason": "the GOOD one", "winner": winner}).to_string())
    });
    MockConfig {
        script: Some(script),
        ..MockConfig::default()
    }
}

/// The mock fills an enum with its first value: "A", whatever is shown. Each pair is asked
/// in both orders, so every question flips, every result is a tie and nothing is "better";
/// a rerun asks nothing, and a new run over the same pairs answers from the cache.
#[test]
fn a_judge_that_always_names_the_first_seat_flips_every_question_and_ties_them_all() {
    let dir = tempfile::tempdir().unwrap();
    let (v1, v2) = (
        version(dir.path(), "v1", false, 0),
        version(dir.path(), "v2", true, 3),
    );
    let out = dir.path().join("h2h");
    let server = endpoint(MockConfig::default());
    let args = [arg(&v1), arg(&v2), "--out", arg(&out)];
    let output = pairwise(&server, dir.path(), &args);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        server.mock.stats().chat_requests,
        2 * QUESTIONS as u64,
        "both seat orders of every pair"
    );
    let pair = &summary(&out)["pairs"][0];
    assert_eq!(
        (&pair["wins"], &pair["ties"], &pair["losses"], &pair["n"]),
        (&json!(0), &json!(QUESTIONS), &json!(0), &json!(QUESTIONS))
    );
    assert_eq!(pair["position"]["flip_rate"], json!(1.0));
    assert_eq!(pair["position"]["first_seat_share"], json!(1.0));
    assert_eq!(pair["reading"], "no_clear_difference");
    assert_eq!(pair["win_rate_ci95"], json!([0.5, 0.5]));
    let text = stdout(&output);
    assert!(!text.contains("better"), "{text}");
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("## Questions that flipped"), "{report}");
    // Three questions have a reference: the judge saw it.
    assert_eq!(summary(&out)["with_reference"], json!(3));
    // Read back as what it is (`serve` lists it so).
    match rageval_report::read_run(&out, &rageval_report::any_file).unwrap() {
        rageval_report::AnyRun::Stage(stage) => {
            assert_eq!(stage.kind, rageval_report::RunKind::Pairwise);
            let line = stage.figures.describe();
            assert!(
                line.contains("v1 vs v2: 0 wins, 6 ties, 0 losses"),
                "{line}"
            );
        }
        rageval_report::AnyRun::Scored(_) => panic!("a pairwise run read as a scored run"),
    }

    // A rerun resumes a finished run: nothing asked again.
    let again = pairwise(&server, dir.path(), &args);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(server.mock.stats().chat_requests, 2 * QUESTIONS as u64);
    // A new run over the same pairs: every answer from the cache.
    let fresh = dir.path().join("fresh");
    let cached = pairwise(
        &server,
        dir.path(),
        &[arg(&v1), arg(&v2), "--out", arg(&fresh)],
    );
    assert!(cached.status.success(), "{}", stderr(&cached));
    assert_eq!(server.mock.stats().chat_requests, 2 * QUESTIONS as u64);
    assert_eq!(summary(&fresh)["pairs"][0]["ties"], json!(QUESTIONS));
}

#[test]
fn a_dry_run_estimates_both_orders_and_sends_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (v1, v2, out) = two_versions(dir.path());
    let server = endpoint(MockConfig::default());
    let output = pairwise(
        &server,
        dir.path(),
        &[arg(&v1), arg(&v2), "--out", arg(&out), "--dry-run"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(server.mock.stats().requests, 0);
    assert!(!out.exists());
    let text = stdout(&output);
    assert!(text.contains("compare_answers"), "{text}");
    assert!(text.contains(&(2 * QUESTIONS).to_string()), "{text}");
}

/// Identical answers are a tie without a call: win rate ½, its interval ½.
#[test]
fn a_run_against_itself_has_a_win_rate_interval_holding_one_half() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    eval_fiqa(dir.path(), "exact_match", &run);
    let out = dir.path().join("self");
    let server = endpoint(MockConfig::default());
    let output = pairwise(
        &server,
        dir.path(),
        &[
            arg(&run),
            arg(&run),
            "--name",
            "before",
            "--name",
            "after",
            "--out",
            arg(&out),
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let pair = &summary(&out)["pairs"][0];
    assert_eq!(pair["n"], json!(30));
    let [low, high] = [0, 1].map(|i| pair["win_rate_ci95"][i].as_f64().unwrap());
    assert!(low <= 0.5 && 0.5 <= high, "{pair}");
    assert_eq!(pair["a"], "before");
    assert_eq!(server.mock.stats().chat_requests, 0);
}

/// A judge that follows the content: the better version wins every question in both
/// orders, no flip; with three versions every pair is judged and strengths order them.
#[test]
fn a_judge_that_follows_the_content_finds_the_better_version_of_three() {
    let dir = tempfile::tempdir().unwrap();
    let v1 = version(dir.path(), "v1", false, 0);
    let v2 = version(dir.path(), "v2", true, 1);
    let v3 = version(dir.path(), "v3", false, 2);
    let out = dir.path().join("h2h");
    let server = endpoint(prefers_good());
    let output = pairwise(
        &server,
        dir.path(),
        &[arg(&v1), arg(&v2), arg(&v3), "--out", arg(&out)],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(server.mock.stats().chat_requests, 3 * 2 * QUESTIONS as u64);
    let summary = summary(&out);
    let pairs = summary["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 3);
    let v1_v2 = &pairs[0];
    assert_eq!((&v1_v2["a"], &v1_v2["b"]), (&json!("v1"), &json!("v2")));
    assert_eq!(v1_v2["losses"], json!(QUESTIONS));
    assert_eq!(v1_v2["reading"], "b_better");
    assert_eq!(v1_v2["position"]["flips"], json!(0));
    // 6 of 6 decisive: p = 2 / 2⁶.
    assert!((v1_v2["p_value"].as_f64().unwrap() - 2.0 / 64.0).abs() < 1e-12);
    let strengths: Vec<f64> = summary["strengths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["strength"].as_f64().unwrap())
        .collect();
    assert!(
        strengths[1] > strengths[0] && strengths[1] > strengths[2],
        "{strengths:?}"
    );
    assert!(stdout(&output).contains("v2 better"), "{}", stdout(&output));
}

/// A reasoning judge — thinking before its verdict, in the answer or in a field of its
/// own, the thinking holding a draft verdict of the same schema — is read as a plain one:
/// the verdicts after the thinking decide, so the better version still wins every question.
#[test]
fn a_reasoning_judge_gives_the_verdicts_of_a_plain_one() {
    for modes in ["think", "field"] {
        let dir = tempfile::tempdir().unwrap();
        let (v1, v2, out) = two_versions(dir.path());
        let server = endpoint(MockConfig {
            reasoning: modes.parse().unwrap(),
            ..prefers_good()
        });
        let output = pairwise(
            &server,
            dir.path(),
            &[arg(&v1), arg(&v2), "--out", arg(&out)],
        );
        assert!(output.status.success(), "{modes}: {}", stderr(&output));
        let stats = server.mock.stats();
        assert_eq!(stats.chat_requests, 2 * QUESTIONS as u64, "{modes}");
        assert!(stats.reasoning_tokens > 0, "{modes}: the mock thought");
        let pair = &summary(&out)["pairs"][0];
        assert_eq!(pair["losses"], json!(QUESTIONS), "{modes}: {pair}");
        assert_eq!(pair["reading"], "b_better", "{modes}: {pair}");
        assert_eq!(pair["position"]["flips"], json!(0), "{modes}: {pair}");
    }
}

/// A judge whose every answer is unusable (not JSON, or JSON cut in half) never answered:
/// the run halts early with exit 4, writes no summary, and counts no question as a tie.
#[test]
fn a_judge_whose_every_answer_is_unusable_stops_it_with_exit_4() {
    let dir = tempfile::tempdir().unwrap();
    let (v1, v2, out) = two_versions(dir.path());
    let server = endpoint(MockConfig {
        garbage_rate: 1.0,
        ..MockConfig::default()
    });
    let output = pairwise(
        &server,
        dir.path(),
        &[arg(&v1), arg(&v2), "--out", arg(&out)],
    );
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(4), "{text}");
    assert!(text.contains("unusable answers in a row"), "{text}");
    assert!(!out.join("summary.json").exists());
    let journaled = fs::read_to_string(out.join("pairwise.jsonl")).unwrap_or_default();
    assert_eq!(journaled.lines().count(), 0, "journaled: {journaled}");
}

#[test]
fn without_a_chat_judge_it_says_so_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let (v1, v2, _) = two_versions(dir.path());
    let output = rageval(
        dir.path(),
        &["pairwise", arg(&v1), arg(&v2), "--judge", "heuristic"],
    );
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let text = stderr(&output);
    assert!(text.contains("pairwise judging"), "{text}");
    assert!(text.contains("--judge-model"), "{text}");
}

/// A judge that refuses every call (401) never answered: exit 4, resumable.
#[test]
fn a_dead_judge_stops_the_run_with_exit_4() {
    let dir = tempfile::tempdir().unwrap();
    let (v1, v2, _) = two_versions(dir.path());
    let server = endpoint(MockConfig {
        api_key: Some("the-right-key".into()),
        ..MockConfig::default()
    });
    let out = dir.path().join("h2h");
    let output = pairwise(
        &server,
        dir.path(),
        &[arg(&v1), arg(&v2), "--out", arg(&out)],
    );
    assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
    assert!(!out.join("summary.json").exists());
}

/// A cap stops the run resumably (exit 3) without journaling a half-asked question; the
/// rerun asks only what is left, so every pair is still asked twice in all.
#[test]
fn a_cap_stops_it_resumably_and_the_rerun_asks_only_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let (v1, v2, out) = two_versions(dir.path());
    let server = endpoint(MockConfig::default());
    let capped = pairwise(
        &server,
        dir.path(),
        &[
            arg(&v1),
            arg(&v2),
            "--out",
            arg(&out),
            "--max-calls",
            "5",
            "--questions-at-once",
            "1",
        ],
    );
    assert_eq!(capped.status.code(), Some(3), "{}", stderr(&capped));
    assert!(!out.join("summary.json").exists());
    let journaled = fs::read_to_string(out.join("pairwise.jsonl")).unwrap();
    assert_eq!(
        journaled.lines().count(),
        2,
        "two whole questions, none half"
    );
    let rest = pairwise(
        &server,
        dir.path(),
        &[arg(&v1), arg(&v2), "--out", arg(&out)],
    );
    assert!(rest.status.success(), "{}", stderr(&rest));
    assert_eq!(summary(&out)["pairs"][0]["n"], json!(QUESTIONS));
    assert!(server.mock.stats().chat_requests <= 2 * QUESTIONS as u64 + 1);
}

/// A judge that always names the first seat, with its reason, so every question flips.
fn names_the_first_seat() -> MockConfig {
    MockConfig {
        script: Some(Arc::new(|_: &Value| {
            Reply::Content(
                json!({"reason": "the first <one> reads better", "winner": "A"}).to_string(),
            )
        })),
        ..MockConfig::default()
    }
}

/// A finished two-version run whose every question flipped, in `dir/runs/h2h`.
pub(crate) fn flipped_run(dir: &Path) -> PathBuf {
    let (v1, v2) = (version(dir, "v1", false, 0), version(dir, "v2", true, 3));
    let out = dir.join("runs").join("h2h");
    let server = endpoint(names_the_first_seat());
    let output = pairwise(
        &server,
        dir,
        &[
            arg(&v1),
            arg(&v2),
            "--name",
            "V1.0",
            "--name",
            "V1.1",
            "--out",
            arg(&out),
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    out
}

/// `report.html` says what `report.md` says — the head-to-head table, the length bias, the
/// flipped questions with both reasons, the judge's calls — on the shared page, every text
/// from the data escaped.
#[test]
fn report_html_shows_the_head_to_head_table_and_the_flipped_questions() {
    let dir = tempfile::tempdir().unwrap();
    let out = flipped_run(dir.path());
    let html = fs::read_to_string(out.join("report.html")).unwrap();
    let markdown = fs::read_to_string(out.join("report.md")).unwrap();
    for heading in [
        "Head to head",
        "Length bias",
        "Questions that flipped",
        "Judge",
    ] {
        assert!(html.contains(&format!("<h2>{heading}</h2>")), "{heading}");
        assert!(markdown.contains(&format!("## {heading}")), "{heading}");
    }
    assert!(html.contains("the first &lt;one&gt; reads better"));
    assert!(!html.contains("<one>"));
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r"(?s)<style>.*</style>", "<style>[STYLE]</style>");
    settings.bind(|| {
        crate::snapshots::with_filters(dir.path(), || {
            insta::assert_snapshot!("pairwise_report_html", html);
        });
    });
}

/// `results.xlsx`: the head-to-head table, and one row per question with both answers,
/// both verdicts with their reasons, the result and the flip.
#[test]
fn results_xlsx_holds_the_table_and_every_verdict_beside_both_answers() {
    use calamine::{Data, Reader, Xlsx, open_workbook};
    let dir = tempfile::tempdir().unwrap();
    let out = flipped_run(dir.path());
    let mut workbook: Xlsx<_> = open_workbook(out.join("results.xlsx")).unwrap();
    assert_eq!(workbook.sheet_names(), ["head_to_head", "verdicts"]);
    let table = workbook.worksheet_range("head_to_head").unwrap();
    assert_eq!(
        first_row(&table),
        rageval_report::HEAD_TO_HEAD_SHEET_COLUMNS
    );
    let row: Vec<Data> = table.rows().nth(1).unwrap().to_vec();
    assert_eq!(row[0], Data::String("V1.0".into()));
    assert_eq!(row[2], Data::Float(QUESTIONS as f64));
    assert_eq!(
        row[4],
        Data::Float(QUESTIONS as f64),
        "every question a tie"
    );
    assert_eq!(
        row[12],
        Data::Float(QUESTIONS as f64),
        "every question flipped"
    );

    let verdicts = workbook.worksheet_range("verdicts").unwrap();
    let rows: Vec<Vec<String>> = verdicts
        .rows()
        .map(|r| r.iter().map(Data::to_string).collect())
        .collect();
    assert_eq!(rows[0], rageval_report::VERDICTS_SHEET_COLUMNS);
    assert_eq!(rows.len(), 1 + QUESTIONS);
    let first = &rows[1];
    assert_eq!(first[0], "q0");
    assert_eq!(first[1], "What is question number 0 about?");
    assert_eq!(first[4], "plain answer 0 of v1");
    assert_eq!(first[5], "GOOD answer 0 of v2 more more more");
    // With V1.0 seated first the judge named V1.0, with V1.1 first it named V1.1.
    assert_eq!(
        [&first[6], &first[8], &first[10], &first[11]],
        ["V1.0", "V1.1", "tie", "true"]
    );
    assert_eq!(first[7], "the first <one> reads better");
}

/// A sheet's first row (its header) as text.
pub(crate) fn first_row(sheet: &calamine::Range<calamine::Data>) -> Vec<String> {
    sheet
        .rows()
        .next()
        .map(|row| row.iter().map(calamine::Data::to_string).collect())
        .unwrap_or_default()
}
