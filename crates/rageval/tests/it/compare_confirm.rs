//! `compare BASELINE CANDIDATE --gate SPEC --confirm K` end to end (issue 36, item 3)
//! through the testkit mock as the judge of `faithfulness`: a candidate whose drop came
//! from a flaky judge is confirmed away (exit 0), a real drop ("I don't know" answers)
//! still fails after confirming (exit 1); the dry run plans K calls per dropped cell and
//! sends nothing; a cap stops the repeats with exit 3 and the same command resumes them;
//! a judge that never answers exits 4 with no verdict; the candidate run is never written.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use rageval_testkit::{MockConfig, Reply};
use serde_json::{Value, json};

use crate::abstention_citation::every_verdict;
use crate::judged::{Endpoint, endpoint, planned};
use crate::{rageval, stderr, stdout};

/// The judge finds every statement supported unless it says "don't know".
const STEADY: u8 = 0;
/// The judge finds every statement unsupported (the flaky verdicts of one run).
const FLAKY: u8 = 1;
/// The judge never answers.
const SILENT: u8 = 2;

/// Questions in each run; 2 / 2¹² is far under the level, so the gate can fail.
const QUESTIONS: usize = 12;
/// Of those, the candidate's that answer "I don't know." in the real regression.
const ABSTAINING: usize = 8;

fn judge(mode: Arc<AtomicU8>) -> Endpoint {
    endpoint(MockConfig {
        script: Some(Arc::new(move |body: &Value| {
            let behaviour = mode.load(Ordering::SeqCst);
            if behaviour == SILENT {
                return Reply::Hang;
            }
            let name = body["response_format"]["json_schema"]["name"]
                .as_str()
                .unwrap_or_default();
            if !name.starts_with("support_verdicts") {
                return Reply::Schema;
            }
            let prompt = body["messages"].to_string();
            let verdict = if behaviour == FLAKY || prompt.contains("don't know") {
                "not_supported"
            } else {
                "fully_supported"
            };
            every_verdict(body, verdict)
        })),
        hang: Duration::from_secs(3600),
        ..MockConfig::default()
    })
}

/// `QUESTIONS` samples whose answer is its one statement; the first `abstaining` answer
/// "I don't know.".
fn dataset(dir: &Path, name: &str, abstaining: usize) -> PathBuf {
    let text: String = (0..QUESTIONS)
        .map(|i| {
            let answer = if i < abstaining {
                "I don't know.".to_owned()
            } else {
                format!("Fact {i} holds.")
            };
            let row = json!({"id": format!("s{i}"), "question": format!("Does fact {i} hold?"),
                             "contexts": [format!("Fact {i} holds.")], "answer": answer,
                             "answer_statements": [answer]});
            format!("{row}\n")
        })
        .collect();
    let path = dir.join(name);
    fs::write(&path, text).unwrap();
    path
}

/// `eval DATA --metrics faithfulness --out runs/NAME --no-cache` against the mock.
fn eval(judge: &Endpoint, dir: &Path, data: &Path, name: &str) -> PathBuf {
    let out = dir.join("runs").join(name);
    let output = judge.eval(
        dir,
        &[
            data.to_str().unwrap(),
            "--metrics",
            "faithfulness",
            "--out",
            out.to_str().unwrap(),
            "--no-cache",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    out
}

/// `compare BASELINE CANDIDATE --gate faithfulness=0.05 EXTRA… JUDGE FLAGS…`.
fn gate(judge: &Endpoint, dir: &Path, runs: [&Path; 2], extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "compare",
        runs[0].to_str().unwrap(),
        runs[1].to_str().unwrap(),
        "--gate",
        "faithfulness=0.05",
        "--permutations",
        "999",
    ];
    args.extend_from_slice(extra);
    let flags = judge.flags();
    args.extend(flags.iter().map(String::as_str));
    rageval(dir, &args)
}

/// Every file of a run directory with its bytes, to show it was not written.
fn snapshot(run: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<_> = fs::read_dir(run)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            let bytes = fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    files.sort();
    files
}

#[test]
fn a_flaky_drop_is_confirmed_away_and_a_real_one_still_fails() {
    let mode = Arc::new(AtomicU8::new(STEADY));
    let judge = judge(Arc::clone(&mode));
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let good = dataset(dir, "good.jsonl", 0);
    let base = eval(&judge, dir, &good, "base");
    mode.store(FLAKY, Ordering::SeqCst);
    let flaky = eval(&judge, dir, &good, "flaky");
    mode.store(STEADY, Ordering::SeqCst);
    let idk = eval(&judge, dir, &dataset(dir, "idk.jsonl", ABSTAINING), "idk");

    // Without --confirm, the flaky run fails the gate.
    let unconfirmed = gate(&judge, dir, [&base, &flaky], &[]);
    assert_eq!(
        unconfirmed.status.code(),
        Some(1),
        "{}",
        stderr(&unconfirmed)
    );

    // The dry run plans 3 calls for each of the 12 dropped cells and sends nothing.
    let before = judge.mock.stats().requests;
    let dry = gate(
        &judge,
        dir,
        [&base, &flaky],
        &[
            "--confirm",
            "3",
            "--confirm-out",
            "confirm-flaky",
            "--dry-run",
        ],
    );
    assert_eq!(dry.status.code(), Some(0), "{}", stderr(&dry));
    assert_eq!(
        judge.mock.stats().requests,
        before,
        "a dry run sent a request"
    );
    assert!(
        !dir.join("confirm-flaky").exists(),
        "a dry run wrote its directory"
    );
    let table = stdout(&dry);
    assert!(table.contains("confirm (dry run): 12 cells"), "{table}");
    assert_eq!(planned(&table, "whole run"), 36, "{table}");

    // Inside the candidate run: refused.
    let inside = flaky.join("confirm");
    let refused = gate(
        &judge,
        dir,
        [&base, &flaky],
        &["--confirm", "3", "--confirm-out", inside.to_str().unwrap()],
    );
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("lies inside the candidate run"));

    // A cap stops the repeats (exit 3, no verdict); the same command resumes them.
    let untouched = snapshot(&flaky);
    let comment = dir.join("gate.md");
    let confirm = [
        "--confirm",
        "3",
        "--confirm-out",
        "confirm-flaky",
        "--comment",
        comment.to_str().unwrap(),
    ];
    let capped = gate(
        &judge,
        dir,
        [&base, &flaky],
        &[&confirm[..], &["--max-calls", "5"]].concat(),
    );
    assert_eq!(capped.status.code(), Some(3), "{}", stderr(&capped));
    assert!(
        stderr(&capped).contains("the gate has no verdict"),
        "{}",
        stderr(&capped)
    );
    assert!(!comment.exists(), "a stopped confirmation wrote a comment");
    let requests = judge.mock.stats().requests;
    let confirmed = gate(&judge, dir, [&base, &flaky], &confirm);
    assert_eq!(confirmed.status.code(), Some(0), "{}", stderr(&confirmed));
    assert_eq!(
        judge.mock.stats().requests - requests,
        36 - 5,
        "resumed, not redone"
    );
    let out = stdout(&confirmed);
    assert!(
        out.contains(
            "gate: no significant change\n  confirmed: 12 cells judged again 3 times each (the \
             median of the repeats), 12 changed; before confirming: regression: flaky \
             significantly worse than base"
        ),
        "{out}"
    );
    // Asked with the candidate's judge settings: no difference to warn of.
    assert!(
        !stderr(&confirmed).contains("warning: confirm:"),
        "{}",
        stderr(&confirmed)
    );
    let md = fs::read_to_string(&comment).unwrap();
    assert!(
        md.contains("confirmed: 12 cells judged again 3 times each"),
        "{md}"
    );
    let lines = fs::read_to_string(dir.join("confirm-flaky/confirmed.jsonl")).unwrap();
    let first: Value = serde_json::from_str(lines.lines().next().unwrap()).unwrap();
    assert_eq!(first["repeats"], json!([1.0, 1.0, 1.0]), "{first}");
    assert_eq!(
        (first["before"].as_f64(), first["confirmed"].as_f64()),
        (Some(0.0), Some(1.0))
    );
    assert_eq!(snapshot(&flaky), untouched, "the candidate run was written");

    // A real drop: the 8 abstaining answers stay unsupported however often asked.
    let real = gate(
        &judge,
        dir,
        [&base, &idk],
        &["--confirm", "3", "--confirm-out", "confirm-idk"],
    );
    assert_eq!(real.status.code(), Some(1), "{}", stderr(&real));
    let out = stdout(&real);
    assert!(
        out.contains(&format!(
            "  confirmed: {ABSTAINING} cells judged again 3 times each (the median of the \
             repeats), 0 changed"
        )),
        "{out}"
    );

    // A judge that never answers: exit 4, no verdict.
    mode.store(SILENT, Ordering::SeqCst);
    let silent = gate(
        &judge,
        dir,
        [&base, &idk],
        &[
            "--confirm",
            "1",
            "--confirm-out",
            "confirm-silent",
            "--timeout",
            "2",
        ],
    );
    assert_eq!(silent.status.code(), Some(4), "{}", stderr(&silent));
    assert!(
        stderr(&silent).contains("the gate has no verdict"),
        "{}",
        stderr(&silent)
    );
}
