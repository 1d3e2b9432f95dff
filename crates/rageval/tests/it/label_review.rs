//! `rageval label TESTSET.jsonl`: the page driven by keyboard in headless Chromium; decisions
//! posted to the page's API of the real binary (plain HTTP), a restart that resumes after them, then
//! `--summary`: the rates table (pinned), `rates.json`, and the final set — partial while
//! items are undecided, complete once all are. Bad input exits 2 naming file, line and field.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Stdio};

use serde_json::{Value, json};

use crate::cdp::Browser;
use crate::chromium::screenshot_path;
use crate::snapshots::{transcript, with_filters};
use crate::{command, rageval, stderr};

/// Six items in two categories, as `rageval testset` writes them (a follow-up included).
fn write_testset(path: &Path) {
    let mut text = String::new();
    for (index, category) in [
        "fact",
        "fact",
        "fact",
        "follow_up",
        "follow_up",
        "follow_up",
    ]
    .iter()
    .enumerate()
    {
        let mut row = json!({
            "id": format!("ts-{index:04}"), "question": format!("What is item {index}?"),
            "reference": [format!("Item {index} is a thing.")],
            "reference_context_ids": [format!("c{index}")],
            "reference_contexts": [format!("Chunk {index}: item {index} is a thing.")],
            "reference_statements": [format!("item {index} is a thing")],
            "category": category, "language": "en",
            "sources": [{"chunk_id": format!("c{index}"), "document": "doc.md", "location": "line 1"}],
            "gates": {"supported": "passed"},
        });
        if *category == "follow_up" {
            row["conversation"] = json!([{"role": "user", "content": "Tell me about items."}]);
        }
        text.push_str(&format!("{row}\n"));
    }
    std::fs::write(path, text).unwrap();
}

/// `rageval label TESTSET` serving its review page, with its address.
pub(crate) struct ReviewPage {
    child: Child,
    addr: String,
}

impl ReviewPage {
    fn start(dir: &Path) -> Self {
        Self::of(dir, "testset.jsonl")
    }

    /// The page reviewing `set` (a path from `dir`) as reviewer `lin`.
    pub(crate) fn of(dir: &Path, set: &str) -> Self {
        let mut child = command(dir, &["label", set, "--labeller", "lin", "--port", "0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut url = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut url)
            .unwrap();
        let addr = url
            .trim()
            .trim_start_matches("http://")
            .trim_end_matches('/');
        assert!(addr.starts_with("127.0.0.1:"), "printed {url:?}");
        Self {
            child,
            addr: addr.to_owned(),
        }
    }

    /// One HTTP/1.1 request; the answer's body as JSON.
    pub(crate) fn ask(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let mut stream = TcpStream::connect(&self.addr).unwrap();
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.addr,
            body.len()
        )
        .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        let (head, body) = answer.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 200"), "{head}\n{body}");
        serde_json::from_str(body).unwrap()
    }

    pub(crate) fn decide(&self, id: &str, decision: Value) {
        let mut body = decision;
        body["id"] = json!(id);
        self.ask("POST", "/api/decisions", Some(body));
    }
}

impl Drop for ReviewPage {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn summary(dir: &Path) -> std::process::Output {
    rageval(
        dir,
        &["label", "testset.jsonl", "--labeller", "lin", "--summary"],
    )
}

fn jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_review_through_the_page_gives_rates_and_the_final_set_once_complete() {
    let dir = tempfile::tempdir().unwrap();
    write_testset(&dir.path().join("testset.jsonl"));
    let reject = |reason: &str| json!({"decision": "reject", "reason": reason});
    let page = ReviewPage::start(dir.path());
    page.decide("ts-0000", reject("the chunk does not say this"));
    page.decide("ts-0001", json!({"decision": "accept"}));
    page.decide(
        "ts-0002",
        json!({"decision": "edit", "reference": "Item 2 is a small thing.", "question": "What is item two?"}),
    );
    page.decide("ts-0003", reject("needs the earlier turn"));
    drop(page);

    let partial = summary(dir.path());
    assert_eq!(partial.status.code(), Some(0), "{}", stderr(&partial));
    assert!(stderr(&partial).contains("2 of 6 items have no decision yet"));
    let final_path = dir.path().join("testset.review.lin.final.jsonl");
    let partial_path = dir.path().join("testset.review.lin.final.partial.jsonl");
    assert!(
        !final_path.exists(),
        "no complete-looking set while items are undecided"
    );
    assert_eq!(jsonl(&partial_path).len(), 2);

    // A new session resumes at the first undecided item.
    let page = ReviewPage::start(dir.path());
    assert_eq!(page.ask("GET", "/api/state", None)["start"], 4);
    page.decide("ts-0004", reject("duplicate of ts-0003"));
    page.decide("ts-0005", json!({"decision": "accept"}));
    drop(page);

    let complete = summary(dir.path());
    with_filters(dir.path(), || {
        insta::assert_snapshot!("testset_review_rates", transcript(&complete));
    });
    assert!(
        !partial_path.exists(),
        "the partial set is gone once the final one is written"
    );
    let rows = jsonl(&final_path);
    let ids: Vec<&str> = rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["ts-0001", "ts-0002", "ts-0005"]);
    assert_eq!(rows[1]["question"], "What is item two?");
    assert_eq!(rows[1]["reference"], json!(["Item 2 is a small thing."]));
    assert_eq!(rows[1]["review"], "edited");
    assert_eq!(rows[2]["conversation"][0]["role"], "user");
    // The dataset reader `collect` and `eval` use takes the final set as it is.
    let options = rageval_core::dataset::ReadOptions::default();
    let samples = rageval_core::dataset::read_all(&final_path, &options).unwrap();
    assert_eq!(samples.len(), 3);
    assert_eq!(samples[1].references, ["Item 2 is a small thing."]);
    assert_eq!(samples[1].reference_context_ids, ["c2"]);
    assert_eq!(samples[1].reference_statements, None);
    assert_eq!(
        samples[0].reference_statements,
        Some(vec!["item 1 is a thing".to_owned()])
    );
    let rates: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("testset.review.lin.rates.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(rates["by_category"]["fact"]["rate"], json!(1.0 / 3.0));
    assert_eq!(rates["by_category"]["follow_up"]["rate"], json!(2.0 / 3.0));
    assert_eq!(rates["overall"]["rate"], json!(0.5));
    assert_eq!(rates["unreviewed"], 0);
}

#[test]
fn a_file_that_is_not_a_testset_or_a_review_of_another_set_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("testset.jsonl"),
        "{\"id\": \"a\", \"question\": \"q?\", \"reference\": \"r\"}\n",
    )
    .unwrap();
    let output = summary(dir.path());
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("testset.jsonl:1: field `category`"),
        "{}",
        stderr(&output)
    );

    write_testset(&dir.path().join("testset.jsonl"));
    let output = rageval(
        dir.path(),
        &[
            "label",
            "testset.jsonl",
            "--metric",
            "faithfulness",
            "--summary",
        ],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("--metric is for labelling a run's samples"),
        "{}",
        stderr(&output)
    );
    std::fs::write(
        dir.path().join("testset.review.lin.jsonl"),
        "{\"id\": \"ts-0000\", \"question\": \"Another set's question?\", \"decision\": \"accept\"}\n",
    )
    .unwrap();
    let output = summary(dir.path());
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains(
            "testset.review.lin.jsonl:1: field `question`: item `ts-0000` asks another question"
        ),
        "{}",
        stderr(&output)
    );
}

/// `<main>`'s state and 1-based position.
const WHERE: &str = "(() => { const m = document.getElementById('review'); \
     return m ? [m.dataset.state, Number(m.dataset.position)] : null; })()";

#[test]
fn review_by_keyboard_reload_and_resume() {
    let dir = tempfile::tempdir().unwrap();
    write_testset(&dir.path().join("testset.jsonl"));
    let page = ReviewPage::start(dir.path());
    let mut browser = Browser::start();
    browser.navigate(&format!("http://{}/", page.addr));
    browser.wait_for(WHERE, &json!(["undecided", 1]));
    assert_eq!(
        browser.eval("document.getElementById('contexts').textContent"),
        json!("[c0] Chunk 0: item 0 is a thing.")
    );
    browser.press("a");
    browser.wait_for(WHERE, &json!(["undecided", 2]));
    browser.press("r");
    browser.wait_for(WHERE, &json!(["editing", 2]));
    browser.eval(
        "document.getElementById('reject-reason').value = 'not in the chunk'; \
         document.getElementById('reject-form').requestSubmit()",
    );
    browser.wait_for(WHERE, &json!(["undecided", 3]));
    browser.press("e");
    browser.wait_for(WHERE, &json!(["editing", 3]));
    browser.eval(
        "document.getElementById('edit-reference').value = 'Item 2 is a small thing.'; \
         document.getElementById('edit-form').requestSubmit()",
    );
    browser.wait_for(WHERE, &json!(["undecided", 4]));
    browser.reload();
    browser.wait_for(WHERE, &json!(["undecided", 4]));
    assert_eq!(
        browser.eval("document.getElementById('progress').textContent"),
        json!("Item 4 of 6 · 3 decided")
    );
    browser.press("b");
    browser.wait_for(WHERE, &json!(["saved", 3]));
    assert_eq!(
        browser.eval("document.getElementById('reference').textContent"),
        json!("Item 2 is a small thing.")
    );
    assert_eq!(
        browser.eval("document.getElementById('status').textContent"),
        json!("Decided: edited (as generated: Item 2 is a thing.)")
    );
    browser.screenshot(&screenshot_path("review-resumed"));
    drop(browser);
    drop(page);
    let lines = jsonl(&dir.path().join("testset.review.lin.jsonl"));
    let decisions: Vec<&Value> = lines.iter().map(|l| &l["decision"]).collect();
    assert_eq!(
        decisions,
        [&json!("accept"), &json!("reject"), &json!("edit")]
    );
    assert_eq!(lines[1]["reason"], "not in the chunk");
    assert_eq!(lines[2]["reference"], "Item 2 is a small thing.");
    assert!(
        lines[2].get("edited_question").is_none(),
        "the question was not changed"
    );
}
