//! `rageval testset` on the S4 article's Chinese chunks (shared/validation's
//! ai-learn-kids-coding-zh) through the testkit mock: Chinese questions, gold chunk ids that
//! exist, shares printed against the plan, no duplicates, drops counted; the dry run sends
//! and writes nothing; a cap stops it (exit 3) and the rerun ends equal to an uncapped run;
//! the set goes through `index`, `collect --generator baseline` and `eval` unedited.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rageval_core::testset::minhash::{DEFAULT_NEAR_DUPLICATE, Deduplicator};
use rageval_testkit::{MockConfig, Reply};
use serde_json::{Value, json};

use crate::judged::{Endpoint, endpoint};
use crate::s4_pipeline::baseline_collect;
use crate::{rageval, repo_root, stderr, stdout};

fn kids_chunks() -> PathBuf {
    repo_root().join("../shared/validation/ai-learn-kids-coding-zh/doc_chunks.jsonl")
}

fn jsonl(path: &Path) -> Vec<Value> {
    fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// The mock as a generator would meet it: schema-driven answers, except that the
/// closed-book check knows the answer only for questions naming a year (年) or Python (those
/// items are dropped by the closed-book gate), and no nearby chunk answers an unanswerable
/// question.
fn generator_mock() -> Endpoint {
    endpoint(MockConfig {
        script: Some(Arc::new(|body: &Value| {
            let system = body["messages"][0]["content"].as_str().unwrap_or_default();
            let user = body["messages"][1]["content"].as_str().unwrap_or_default();
            let closed_book = ["只凭你自己的知识", "from your own knowledge alone"];
            if closed_book.iter().any(|marker| system.contains(marker)) {
                let known = user.contains('年') || user.contains("Python");
                let answer = if known { user } else { "" };
                return Reply::Content(json!({"answer": answer, "known": known}).to_string());
            }
            let from_passages = [
                "只根据给定的段落回答问题",
                "You answer a question using only the given passages",
            ];
            if from_passages.iter().any(|marker| system.contains(marker)) {
                return Reply::Content(json!({"answer": "", "found": false}).to_string());
            }
            let writer = ["测试集中的一个条目", "one item of a test set"];
            if writer.iter().any(|marker| system.contains(marker)) {
                return Reply::Content(written_item(body, user).to_string());
            }
            Reply::Schema
        })),
        ..MockConfig::default()
    })
}

/// An item as a writer would draft it from the passages: the longest line of the passages
/// asked about, answered by itself (a follow-up opens with the same line).
fn written_item(body: &Value, user: &str) -> Value {
    let line = user
        .lines()
        .filter(|l| !l.contains("<<<") && !l.contains(">>>"))
        .max_by_key(|l| l.chars().count())
        .unwrap_or_default()
        .trim();
    let asked: String = line.chars().take(40).collect();
    let mut item = json!({"question": format!("{asked}?"), "answer": line, "key_points": [line]});
    if body.to_string().contains("opening_question") {
        item["opening_question"] = json!(format!("{asked}?"));
        item["opening_answer"] = json!(line);
    }
    item
}

fn testset(dir: &Path, mock: &Endpoint, out: &str, extra: &[&str]) -> std::process::Output {
    let source = kids_chunks();
    let mut args = vec![
        "testset",
        source.to_str().unwrap(),
        "--size",
        "24",
        "--out",
        out,
    ];
    args.extend(extra);
    let flags = mock.flags();
    args.extend(flags.iter().map(String::as_str));
    rageval(dir, &args)
}

fn cjk_share(text: &str) -> f64 {
    let letters: Vec<char> = text.chars().filter(|c| c.is_alphabetic()).collect();
    let han = letters
        .iter()
        .filter(|c| rageval_core::text::language::is_han(**c))
        .count();
    han as f64 / letters.len().max(1) as f64
}

#[test]
fn testset_writes_gated_chinese_items_from_the_kids_chunks() {
    if crate::skip_without_shared("testset_writes_gated_chinese_items_from_the_kids_chunks") {
        return;
    }
    let mock = generator_mock();
    let dir = tempfile::tempdir().unwrap();
    let output = testset(dir.path(), &mock, "ts", &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let printed = stdout(&output);
    for needle in [
        "planned",
        "dropped by gate:",
        "fact",
        "multi_hop",
        "unanswerable",
    ] {
        assert!(printed.contains(needle), "{needle:?} not in {printed}");
    }
    let items = jsonl(&dir.path().join("ts/testset.jsonl"));
    assert!(!items.is_empty(), "{printed}");
    let chinese = items
        .iter()
        .filter(|i| cjk_share(i["question"].as_str().unwrap()) > 0.5)
        .count();
    assert!(
        chinese * 100 >= items.len() * 99,
        "{chinese} of {}",
        items.len()
    );
    let ids: HashSet<String> = jsonl(&kids_chunks())
        .iter()
        .map(|c| c["uuid"].as_str().unwrap().to_owned())
        .collect();
    let mut dedup = Deduplicator::new(DEFAULT_NEAR_DUPLICATE);
    for item in &items {
        for id in item["reference_context_ids"].as_array().unwrap() {
            assert!(ids.contains(id.as_str().unwrap()), "{item}");
        }
        let question = item["question"].as_str().unwrap();
        assert_eq!(
            dedup.offer(item["id"].as_str().unwrap(), question),
            None,
            "{item}"
        );
        assert!(item["gates"]["not_duplicate"] == "passed", "{item}");
    }
    // Every planned slot is written, dropped by one counted gate, or failed by the judge.
    let summary: Value =
        serde_json::from_str(&fs::read_to_string(dir.path().join("ts/summary.json")).unwrap())
            .unwrap();
    let summary = &summary["summary"];
    let dropped: u64 = summary["dropped"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_u64().unwrap())
        .sum();
    let accounted =
        summary["written"].as_u64().unwrap() + dropped + summary["judge_failed"].as_u64().unwrap();
    assert_eq!(accounted, summary["planned"].as_u64().unwrap(), "{summary}");
    assert!(
        summary["dropped"]["closed_book"].as_u64().unwrap() > 0,
        "{summary}"
    );
    let manifest = fs::read_to_string(dir.path().join("ts/manifest.json")).unwrap();
    assert!(manifest.contains("write_test_item") && manifest.contains("mock-chat"));

    // The set as it is: indexed chunks retrieved and answered by the baseline, then scored
    // against its gold chunk ids.
    let index = rageval(
        dir.path(),
        &[
            "index",
            kids_chunks().to_str().unwrap(),
            "--out",
            "kids.index",
        ],
    );
    assert!(index.status.success(), "{}", stderr(&index));
    let mut collect = baseline_collect("ts/testset.jsonl", "kids.index");
    collect.extend(["--out", "collected.jsonl"]);
    let flags = mock.flags();
    collect.extend(flags.iter().map(String::as_str));
    let collected = rageval(dir.path(), &collect);
    assert!(collected.status.success(), "{}", stderr(&collected));
    let eval = rageval(
        dir.path(),
        &[
            "eval",
            "collected.jsonl",
            "--metrics",
            "id_context_recall",
            "--judge",
            "heuristic",
            "--out",
            "ev",
        ],
    );
    assert!(eval.status.success(), "{}", stderr(&eval));
    let cells = jsonl(&dir.path().join("ev/results.jsonl"));
    let scored = cells.iter().filter(|c| c["status"] == "score").count();
    assert!(scored > 0, "{cells:?}");

    // Follow-ups keep their opening turn through collect, and eval reads it as history:
    // the judge is shown the conversation when it checks a follow-up's claims (issue 37).
    let follow_ups = jsonl(&dir.path().join("collected.jsonl"))
        .iter()
        .filter(|row| row["category"] == "follow_up")
        .inspect(|row| assert_eq!(row["history"][0]["role"], "user", "{row}"))
        .count();
    assert!(follow_ups > 0, "no follow-up among the collected items");
    let shown = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&shown);
    let judge = endpoint(MockConfig {
        script: Some(Arc::new(move |body: &Value| {
            let prompt = body["messages"].to_string();
            if ["Earlier turns of the conversation", "对话中此前的各轮"]
                .iter()
                .any(|marker| prompt.contains(marker))
            {
                counted.fetch_add(1, Ordering::SeqCst);
            }
            Reply::Schema
        })),
        ..MockConfig::default()
    });
    let args = [
        "collected.jsonl",
        "--metrics",
        "faithfulness",
        "--out",
        "ev-history",
    ];
    let eval = judge.eval(dir.path(), &args);
    assert!(eval.status.success(), "{}", stderr(&eval));
    let shown = shown.load(Ordering::SeqCst);
    assert!(
        (1..=follow_ups).contains(&shown),
        "{shown} prompts showed a conversation, {follow_ups} follow-ups"
    );
}

#[test]
fn testset_dry_run_sends_and_writes_nothing() {
    if crate::skip_without_shared("testset_dry_run_sends_and_writes_nothing") {
        return;
    }
    let mock = generator_mock();
    let dir = tempfile::tempdir().unwrap();
    let output = testset(dir.path(), &mock, "ts", &["--dry-run"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("write_test_item"),
        "{}",
        stdout(&output)
    );
    assert_eq!(mock.mock.stats().chat_requests, 0);
    assert!(!dir.path().join("ts").exists());
    assert!(!dir.path().join("runs").exists());
}

#[test]
fn testset_capped_then_resumed_equals_an_uncapped_run() {
    if crate::skip_without_shared("testset_capped_then_resumed_equals_an_uncapped_run") {
        return;
    }
    let mock = generator_mock();
    let whole = tempfile::tempdir().unwrap();
    let output = testset(whole.path(), &mock, "ts", &[]);
    assert!(output.status.success(), "{}", stderr(&output));

    let parts = tempfile::tempdir().unwrap();
    let capped = testset(parts.path(), &mock, "ts", &["--max-calls", "20"]);
    assert_eq!(capped.status.code(), Some(3), "{}", stderr(&capped));
    assert!(!parts.path().join("ts/testset.jsonl").exists());
    // The stop counts items, not questions.
    assert!(!stderr(&capped).contains("question"), "{}", stderr(&capped));
    let resumed = testset(parts.path(), &mock, "ts", &[]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert!(
        stderr(&resumed).contains("resuming"),
        "{}",
        stderr(&resumed)
    );
    let read = |dir: &Path| fs::read_to_string(dir.join("ts/testset.jsonl")).unwrap();
    assert_eq!(read(whole.path()), read(parts.path()));
}

#[test]
fn testset_needs_a_writing_judge_and_readable_shares() {
    let dir = tempfile::tempdir().unwrap();
    let chunks = dir.path().join("chunks.jsonl");
    fs::write(
        &chunks,
        "{\"id\": \"c1\", \"text\": \"Scratch is a visual programming language for children, made at \
         the MIT Media Lab and first released in 2007.\"}\n",
    )
    .unwrap();
    let chunks = chunks.to_str().unwrap();
    let output = rageval(dir.path(), &["testset", chunks, "--judge", "heuristic"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("--judge-model"),
        "{}",
        stderr(&output)
    );
    let output = rageval(dir.path(), &["testset", chunks, "--shares", "trivia=1"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("trivia"), "{}", stderr(&output));
    assert!(!dir.path().join("runs").exists());
}

#[test]
fn testset_reads_an_english_folder_and_a_local_index() {
    let mock = generator_mock();
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs");
    fs::create_dir(&docs).unwrap();
    let paragraph = |topic: &str, n: usize| {
        format!(
            "The {topic} course number {n} teaches children aged eight to twelve how to build \
             small games, and each lesson lasts forty-five minutes with a teacher present.\n\n"
        )
    };
    let text = |topic: &str| (1..=4).map(|n| paragraph(topic, n)).collect::<String>();
    fs::write(docs.join("scratch.md"), text("Scratch")).unwrap();
    fs::write(docs.join("python.md"), text("Python")).unwrap();
    let flags = mock.flags();
    let run = |source: &str, out: &str| {
        let mut args = vec!["testset", source, "--size", "6", "--out", out];
        args.extend(["--chunk-size", "200", "--chunk-overlap", "0"]);
        args.extend(flags.iter().map(String::as_str));
        rageval(dir.path(), &args)
    };
    let output = run("docs", "from-folder");
    assert!(output.status.success(), "{}", stderr(&output));
    let lines = jsonl(&dir.path().join("from-folder/items.jsonl"));
    assert_eq!(lines.len(), 6);
    assert!(lines.iter().all(|l| l["language"] == "en"), "{lines:?}");
    let documents: HashSet<&str> = lines
        .iter()
        .flat_map(|l| l["chunk_ids"].as_array().unwrap())
        .map(|id| id.as_str().unwrap().split('#').next().unwrap())
        .collect();
    assert_eq!(
        documents.len(),
        2,
        "both documents are covered: {documents:?}"
    );
    let manifest = fs::read_to_string(dir.path().join("from-folder/manifest.json")).unwrap();
    assert!(manifest.contains("write_test_item.en@"), "{manifest}");

    let index = rageval(
        dir.path(),
        &[
            "index",
            "docs",
            "--out",
            "docs.index",
            "--chunk-size",
            "200",
            "--chunk-overlap",
            "0",
        ],
    );
    assert!(index.status.success(), "{}", stderr(&index));
    let output = run("docs.index", "from-index");
    assert!(output.status.success(), "{}", stderr(&output));
    // The same chunks, read from the index: the same plan and the same set.
    let read = |out: &str| fs::read_to_string(dir.path().join(out).join("testset.jsonl")).unwrap();
    assert_eq!(read("from-folder"), read("from-index"));
}

#[test]
fn testset_counts_unusable_judge_answers_and_never_writes_them() {
    if crate::skip_without_shared("testset_counts_unusable_judge_answers_and_never_writes_them") {
        return;
    }
    // Half the answers garbage, drawn from this seed: one item's every attempt is garbage
    // (4 answers). With seed 0 three items failed, 12 garbage answers that, finishing in a
    // row on a loaded machine, halted the judge as unusable (`UNUSABLE_HALT_AFTER`) before
    // any summary was written, as it should.
    let mock = endpoint(MockConfig {
        garbage_rate: 0.5,
        seed: 5,
        ..MockConfig::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let output = testset(dir.path(), &mock, "ts", &[]);
    let said = || format!("exit {:?}: {}", output.status.code(), stderr(&output));
    let summary = fs::read_to_string(dir.path().join("ts/summary.json"))
        .unwrap_or_else(|e| panic!("summary.json: {e}; {}", said()));
    let summary: Value =
        serde_json::from_str(&summary).unwrap_or_else(|e| panic!("{e}: {}", said()));
    let summary = &summary["summary"];
    let failed = jsonl(&dir.path().join("ts/items.jsonl"))
        .iter()
        .filter(|l| l.get("error").is_some())
        .count() as u64;
    assert_eq!(summary["judge_failed"].as_u64(), Some(failed), "{summary}");
    assert!(failed > 0, "{summary}");
    let written = jsonl(&dir.path().join("ts/testset.jsonl")).len() as u64;
    assert_eq!(summary["written"].as_u64(), Some(written), "{summary}");
}

/// A writer whose every question leans on the passage ("根据上文"): the self-contained gate
/// drops each item, and a set with no item is an error (exit 1) naming the files to read,
/// not a success a script would go on from.
#[test]
fn testset_that_keeps_no_item_exits_1_saying_why() {
    if crate::skip_without_shared("testset_that_keeps_no_item_exits_1_saying_why") {
        return;
    }
    let mock = endpoint(MockConfig {
        script: Some(Arc::new(|body: &Value| {
            let system = body["messages"][0]["content"].as_str().unwrap_or_default();
            let writer = ["测试集中的一个条目", "one item of a test set"];
            if writer.iter().any(|marker| system.contains(marker)) {
                let mut item = json!({"question": "根据上文，这说明了什么？",
                                      "answer": "说明了市场规模。", "key_points": ["市场规模"]});
                if body.to_string().contains("opening_question") {
                    item["opening_question"] = json!("根据上文，市场如何？");
                    item["opening_answer"] = json!("在增长。");
                }
                return Reply::Content(item.to_string());
            }
            Reply::Schema
        })),
        ..MockConfig::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let output = testset(dir.path(), &mock, "ts", &[]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let said = stderr(&output);
    assert!(said.contains("no item passed the gates"), "{said}");
    assert!(said.contains("items.jsonl"), "{said}");
    assert!(
        stdout(&output).contains("self_contained 24"),
        "{}",
        stdout(&output)
    );
    assert!(jsonl(&dir.path().join("ts/testset.jsonl")).is_empty());
}

/// Three English documents on different subjects, one paragraph each.
fn write_three_documents(docs: &Path) {
    fs::create_dir(docs).unwrap();
    for (name, text) in [
        (
            "scratch.md",
            "Scratch lessons for children aged eight to twelve run on Saturday mornings in the \
             library hall, and each lesson lasts forty-five minutes with a teacher present.",
        ),
        (
            "robots.md",
            "The robotics club builds small wheeled machines from kits, meets every Wednesday \
             evening in the school workshop and takes part in a regional contest each spring.",
        ),
        (
            "python.md",
            "Python workshops for teenagers cover loops, lists and simple web pages; every \
             student writes a short quiz game and presents it to parents in the final week.",
        ),
    ] {
        fs::write(docs.join(name), text).unwrap();
    }
}

/// Issue 37's chain as a user runs it: `testset` writes follow-up items with their opening
/// turn; the reviewer reads each on the review page (which shows the conversation so far),
/// accepts one, edits another's reference and rejects the third; `label --summary` writes
/// the final set; `index` and `collect --generator baseline` answer the approved items; and
/// `eval` through the mock reads each follow-up's history: the claims are judged in a
/// prompt that shows the conversation, the context check judges the question resolved
/// through it (recorded in the evidence), and the summary counts each follow-up as a
/// conversation with its turn marked.
#[test]
fn follow_ups_go_from_testset_through_review_to_eval_with_their_history() {
    let mock = generator_mock();
    let dir = tempfile::tempdir().unwrap();
    write_three_documents(&dir.path().join("docs"));
    let flags = mock.flags();
    let mut args = vec!["testset", "docs", "--size", "3", "--shares", "follow_up=1"];
    args.extend(["--out", "ts", "--chunk-size", "400", "--chunk-overlap", "0"]);
    args.extend(flags.iter().map(String::as_str));
    let output = rageval(dir.path(), &args);
    assert!(output.status.success(), "{}", stderr(&output));
    let items = jsonl(&dir.path().join("ts/testset.jsonl"));
    let ids: Vec<&str> = items.iter().map(|i| i["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 3, "{}", stdout(&output));
    for item in &items {
        assert_eq!(item["category"], "follow_up", "{item}");
        assert_eq!(item["conversation"][0]["role"], "user", "{item}");
        assert_eq!(item["conversation"][1]["role"], "assistant", "{item}");
    }

    let page = crate::label_review::ReviewPage::of(dir.path(), "ts/testset.jsonl");
    let state = page.ask("GET", "/api/state", None);
    let shown = &state["items"][0]["item"]["history"];
    assert_eq!(
        shown[0][0], "user",
        "the page shows the opening turn: {state}"
    );
    assert_eq!(
        shown[0][1], items[0]["conversation"][0]["content"],
        "{state}"
    );
    page.decide(ids[0], json!({"decision": "accept"}));
    let edited = "Forty-five minutes, with a teacher present.";
    page.decide(ids[1], json!({"decision": "edit", "reference": edited}));
    page.decide(
        ids[2],
        json!({"decision": "reject", "reason": "asks what the opening asked"}),
    );
    drop(page);
    let args = [
        "label",
        "ts/testset.jsonl",
        "--labeller",
        "lin",
        "--summary",
    ];
    let summary = rageval(dir.path(), &args);
    assert!(summary.status.success(), "{}", stderr(&summary));
    let approved = "ts/testset.review.lin.final.jsonl";
    assert_eq!(jsonl(&dir.path().join(approved)).len(), 2);

    let args = [
        "index",
        "docs",
        "--out",
        "docs.index",
        "--chunk-size",
        "400",
    ];
    let index = rageval(dir.path(), &args);
    assert!(index.status.success(), "{}", stderr(&index));
    let shown = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&shown);
    let judge = endpoint(MockConfig {
        script: Some(Arc::new(move |body: &Value| {
            if body["messages"]
                .to_string()
                .contains("Earlier turns of the conversation")
            {
                counted.fetch_add(1, Ordering::SeqCst);
            }
            Reply::Schema
        })),
        ..MockConfig::default()
    });
    let mut collect = baseline_collect(approved, "docs.index");
    collect.extend(["--out", "collected.jsonl"]);
    let flags = judge.flags();
    collect.extend(flags.iter().map(String::as_str));
    let collected = rageval(dir.path(), &collect);
    assert!(collected.status.success(), "{}", stderr(&collected));
    for row in jsonl(&dir.path().join("collected.jsonl")) {
        assert_eq!(row["history"][0]["role"], "user", "{row}");
        assert_eq!(row["turn"], 2, "{row}");
    }

    let args = [
        "collected.jsonl",
        "--metrics",
        "faithfulness,context_relevance",
        "--out",
        "ev",
    ];
    let eval = judge.eval(dir.path(), &args);
    assert!(eval.status.success(), "{}", stderr(&eval));
    // Per follow-up: its claims judged, and its question made standalone, each in a prompt
    // that shows the conversation.
    assert_eq!(shown.load(Ordering::SeqCst), 2 * 2);
    let cells = jsonl(&dir.path().join("ev/results.jsonl"));
    for id in &ids[..2] {
        let cell = |metric: &str| {
            cells
                .iter()
                .find(|c| c["sample_id"] == *id && c["metric"] == metric)
                .unwrap_or_else(|| panic!("no {metric} cell for {id}: {cells:?}"))
        };
        let relevance = cell("context_relevance");
        assert!(
            relevance["evidence"]["details"]["resolved_question"].is_string(),
            "{relevance}"
        );
        let faithfulness = cell("faithfulness");
        assert!(
            faithfulness["evidence"]["details"]["turn_lapse"].is_boolean(),
            "{faithfulness}"
        );
    }
    let summary: Value =
        serde_json::from_str(&fs::read_to_string(dir.path().join("ev/summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["conversations"]["conversations"], 2, "{summary}");
}
