//! Issue 39, the workflows' last 5%: what a user reads at the end of a command, pinned
//! with the filters of [`crate::snapshots`]. Each test is named after its item.

use crate::snapshots::{transcript, with_filters};
use crate::{rageval, repo_root, stderr};

fn fiqa() -> String {
    repo_root()
        .join("examples/fiqa-30.jsonl")
        .display()
        .to_string()
}

/// Item 12: `eval --no-reports` ended with a dangling `wrote ` line, and a run of
/// model-free metrics printed `judge: 0 model calls, $0.000000` about a judge it never needed.
#[test]
fn regression_issue_39_no_reports_and_model_free_metrics_end_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let output = rageval(
        dir.path(),
        &[
            "eval",
            &fiqa(),
            "--metrics",
            "bleu,rouge_l",
            "--samples",
            "5",
            "--no-reports",
            "--out",
            "run",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    with_filters(dir.path(), || {
        insta::assert_snapshot!("issue_39_no_reports_model_free", transcript(&output));
    });
}

/// A directory with a one-chunk local index `idx`, 30 questions and a `rageval.toml` that
/// gives up on a failing judge quickly.
fn collect_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name);
    std::fs::write(at("report.txt"), "少儿编程教育市场规模约为488亿元。\n").unwrap();
    let indexed = rageval(dir.path(), &["index", "report.txt", "--out", "idx"]);
    assert!(indexed.status.success(), "{}", stderr(&indexed));
    let questions: String = (1..=30)
        .map(|i| format!("{{\"id\": \"q{i}\", \"question\": \"少儿编程市场规模 {i}\"}}\n"))
        .collect();
    std::fs::write(at("questions.jsonl"), questions).unwrap();
    std::fs::write(
        at("rageval.toml"),
        "[judge.retries]\nmax_attempts = 2\nbase_delay_secs = 0.01\nmax_delay_secs = 0.05\n",
    )
    .unwrap();
    dir
}

/// Item 6: `collect --generator baseline` stopped by a judge that answers nothing said "the
/// records written so far stay in g-collect.jsonl … (with a larger cap, or once the judge
/// answers)", though no file was written and no cap was set.
#[test]
fn regression_issue_39_collect_stopped_by_the_judge_says_what_is_true() {
    let dir = collect_dir();
    let mock = crate::judged::endpoint(rageval_testkit::MockConfig {
        fail_rate: 1.0,
        ..rageval_testkit::MockConfig::default()
    });
    let mut args = crate::s4_pipeline::baseline_collect("questions.jsonl", "idx");
    args.extend(["--out", "g-collect.jsonl", "--concurrency", "1"]);
    let flags = mock.flags();
    args.extend(flags.iter().map(String::as_str));
    let output = rageval(dir.path(), &args);
    assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
    assert!(!dir.path().join("g-collect.jsonl").exists());
    let said = stderr(&output);
    let stop = said
        .lines()
        .find(|l| l.starts_with("stopped:"))
        .unwrap_or(&said);
    assert!(
        stop.ends_with(
            ". No record was written to g-collect.jsonl; run the same command again once the \
             judge answers (check the endpoint, model and credentials) to ask every question."
        ),
        "{said}"
    );
    assert!(!stop.contains("cap"), "{said}");
}

/// Item 7: no built-in price for `o1` and `o3-mini`, so `--max-cost` was refused for the
/// reasoning models docs/reasoning-judges.md recommends; the gpt-5 family and `o4-mini`
/// must keep theirs, dated snapshots included.
#[test]
fn regression_issue_39_max_cost_works_for_the_reasoning_models() {
    let dir = tempfile::tempdir().unwrap();
    for model in [
        "o1",
        "o3-mini",
        "o3-mini-2025-01-31",
        "o4-mini",
        "gpt-5",
        "gpt-5-mini-2025-08-07",
        "gpt-5-nano",
    ] {
        // Nothing listens there: a dry run sends nothing.
        let output = rageval(
            dir.path(),
            &[
                "eval",
                &fiqa(),
                "--metrics",
                "faithfulness",
                "--samples",
                "2",
                "--judge-base-url",
                "http://127.0.0.1:1/v1",
                "--judge-model",
                model,
                "--max-cost",
                "1",
                "--dry-run",
            ],
        );
        assert!(output.status.success(), "{model}: {}", stderr(&output));
        let said = crate::stdout(&output);
        assert!(said.contains('$'), "{model}: no cost in {said}");
    }
}

/// Item 13: the figure printed under the table for the offline judge was the lowest over its
/// own sets alone (faithfulness 0.71 [0.70, 0.72]); now the spread across the sets it was
/// measured on, and "at or near chance on some data" where a set's interval reaches 0.5.
#[test]
fn regression_issue_39_the_offline_judge_line_gives_the_spread_across_its_sets() {
    let dir = tempfile::tempdir().unwrap();
    let output = rageval(
        dir.path(),
        &[
            "eval",
            &fiqa(),
            "--metrics",
            "faithfulness,context_relevance",
            "--judge",
            "heuristic",
            "--samples",
            "3",
            "--no-reports",
            "--out",
            "run",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let said = crate::stdout(&output);
    let line = |metric: &str| {
        let start = format!("judge of {metric}: ");
        said.lines()
            .find(|l| l.starts_with(&start))
            .unwrap_or_else(|| panic!("no line for {metric} in {said}"))
            .to_string()
    };
    let faithfulness = line("faithfulness");
    assert!(
        faithfulness.contains("0.71–0.95 across 4 sets held out by set"),
        "{faithfulness}"
    );
    assert!(!faithfulness.contains("chance"), "{faithfulness}");
    let relevance = line("context_relevance");
    assert!(
        relevance.ends_with("; at or near chance on some data"),
        "{relevance}"
    );
}

/// Item 10: `--max-calls` and `--max-cost` help on `rank`, `reference` and `testset` said
/// "`eval` then keeps its finished cells"; each command's help now says what each keeps.
#[test]
fn regression_issue_39_cap_help_says_what_each_command_keeps() {
    let dir = tempfile::tempdir().unwrap();
    for command in ["rank", "reference", "testset", "collect", "eval"] {
        let output = rageval(dir.path(), &[command, "--help"]);
        assert!(output.status.success(), "{command}: {}", stderr(&output));
        let help = crate::stdout(&output);
        assert!(!help.contains("`eval` then keeps"), "{command}: {help}");
        assert!(
            help.contains("rank, reference, pairwise: questions; testset: items; collect: records"),
            "{command}: {help}"
        );
    }
}

/// Item 11: docs/testset.md's commands read `../shared/validation/…`, which a user's clone
/// does not have: every file its commands name is in the repository.
#[test]
fn regression_issue_39_testset_docs_name_files_in_the_repository() {
    let docs = std::fs::read_to_string(repo_root().join("docs/testset.md")).unwrap();
    let mut named = 0;
    for word in docs.split_whitespace() {
        assert!(
            !word.contains("shared/validation"),
            "{word} is not in a clone"
        );
        let word = word.trim_matches(|c: char| "`(),:.".contains(c));
        if word.starts_with("examples/") {
            assert!(
                repo_root().join(word).exists(),
                "{word} is not in the repository"
            );
            named += 1;
        }
    }
    assert!(named >= 3, "the commands name {named} example files");
}

/// Item 5: after a judge that never answered usably stopped `testset`, the rerun kept the
/// slots that failed before the stop ("2 finished questions kept", one at a time with
/// `--concurrency 1`) unless `--retry-failed` was given: a slot no judge ever answered is
/// not a finished item.
#[test]
fn regression_issue_39_a_judge_halted_as_unusable_leaves_no_finished_testset_item() {
    let dir = collect_dir();
    let mock = crate::judged::endpoint(rageval_testkit::MockConfig {
        garbage_rate: 1.0,
        ..rageval_testkit::MockConfig::default()
    });
    let chunks = repo_root().join("examples/kids-coding-zh-chunks.jsonl");
    let flags = mock.flags();
    let testset = || {
        let mut args = vec![
            "testset",
            chunks.to_str().unwrap(),
            "--size",
            "12",
            "--concurrency",
            "1",
            "--out",
            "ts",
        ];
        args.extend(flags.iter().map(String::as_str));
        rageval(dir.path(), &args)
    };
    let first = testset();
    assert_eq!(first.status.code(), Some(4), "{}", stderr(&first));
    let journal = std::fs::read_to_string(dir.path().join("ts/items.jsonl")).unwrap_or_default();
    assert_eq!(journal.lines().count(), 0, "journaled: {journal}");
    let again = testset();
    assert_eq!(again.status.code(), Some(4), "{}", stderr(&again));
    assert!(
        stderr(&again).contains("0 finished items kept"),
        "{}",
        stderr(&again)
    );
}

/// Item 4: with a judge that copies fragments of its prompt, drafts whose "question" is the
/// prompt's fence marker, `2023/10` or `12%` passed `self_contained` and the judged gates;
/// now the `is_question` gate drops them before any judged gate is asked.
#[test]
fn regression_issue_39_drafts_that_are_not_questions_are_dropped_first() {
    let dir = tempfile::tempdir().unwrap();
    let fragments = ["<<<DATA-21db3f69 passage 2", "2023/10", "12%"];
    let mock = crate::judged::endpoint(rageval_testkit::MockConfig {
        script: Some(std::sync::Arc::new(move |body: &serde_json::Value| {
            let system = body["messages"][0]["content"].as_str().unwrap_or_default();
            let user = body["messages"][1]["content"].as_str().unwrap_or_default();
            let writer = ["测试集中的一个条目", "one item of a test set"];
            if writer.iter().any(|marker| system.contains(marker)) {
                let question = fragments[user.len() % fragments.len()];
                let mut item = serde_json::json!({"question": question, "answer": "约488亿元",
                    "key_points": ["约488亿元"]});
                if body.to_string().contains("opening_question") {
                    item["opening_question"] = serde_json::json!(question);
                    item["opening_answer"] = serde_json::json!("约488亿元");
                }
                return rageval_testkit::Reply::Content(item.to_string());
            }
            rageval_testkit::Reply::Schema
        })),
        ..rageval_testkit::MockConfig::default()
    });
    let chunks = repo_root().join("examples/kids-coding-zh-chunks.jsonl");
    let mut args = vec![
        "testset",
        chunks.to_str().unwrap(),
        "--size",
        "6",
        "--out",
        "ts",
    ];
    let flags = mock.flags();
    args.extend(flags.iter().map(String::as_str));
    let output = rageval(dir.path(), &args);
    let journal = std::fs::read_to_string(dir.path().join("ts/items.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = journal
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 6, "{}", stderr(&output));
    for line in &lines {
        assert_eq!(line["gates"][0][0], "is_question", "{line}");
        assert_eq!(line["gates"][0][1]["outcome"], "failed", "{line}");
        assert_eq!(line["gates"].as_array().unwrap().len(), 1, "{line}");
    }
    let kept = std::fs::read_to_string(dir.path().join("ts/testset.jsonl")).unwrap_or_default();
    assert!(fragments.iter().all(|f| !kept.contains(f)), "kept: {kept}");
}

/// Three Chinese samples with an answer and a reference.
fn chinese_answers(dir: &std::path::Path) -> std::path::PathBuf {
    let rows = [
        (
            "2023年少儿编程市场规模是多少？",
            "约488亿元。",
            "市场规模约为488亿元。",
        ),
        (
            "少儿编程的主要机构有哪些？",
            "童程童美和编程猫。",
            "主要机构包括童程童美、编程猫等。",
        ),
        (
            "家长为什么重视编程教育？",
            "因为能培养逻辑思维。",
            "家长认为编程能锻炼孩子的逻辑思维。",
        ),
    ];
    let text: String = rows
        .iter()
        .map(|(q, a, r)| {
            serde_json::json!({"question": q, "response": a, "reference": r}).to_string() + "\n"
        })
        .collect();
    let path = dir.join("zh.jsonl");
    std::fs::write(&path, text).unwrap();
    path
}

/// Item 2: `semantic_similarity` on Chinese text depended on the judge setup: with no
/// judge, multilingual-e5-small embedded it; with an endpoint judge that names no embedding
/// model, the English all-MiniLM-L6-v2 did (mean 0.342 against 0.846), and nothing said
/// which. Now the same embedder scores each language either way, and each cell's evidence
/// and the manifest's metric entry name it.
#[test]
fn regression_issue_39_chinese_is_embedded_by_one_model_whatever_the_judge() {
    let dir = tempfile::tempdir().unwrap();
    let data = chinese_answers(dir.path());
    let data = data.to_str().unwrap();
    let offline = rageval(
        dir.path(),
        &[
            "eval",
            data,
            "--metrics",
            "semantic_similarity",
            "--out",
            "offline",
        ],
    );
    assert!(offline.status.success(), "{}", stderr(&offline));
    // The endpoint names no embedding model, as in the issue.
    let mock = crate::judged::endpoint(rageval_testkit::MockConfig::default());
    let endpoint = rageval(
        dir.path(),
        &[
            "eval",
            data,
            "--metrics",
            "semantic_similarity",
            "--out",
            "endpoint",
            "--judge-base-url",
            &mock.mock.base_url,
            "--judge-model",
            "mock-chat",
        ],
    );
    assert!(endpoint.status.success(), "{}", stderr(&endpoint));
    let cells = |run: &str| -> Vec<serde_json::Value> {
        std::fs::read_to_string(dir.path().join(run).join("results.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let (offline, endpoint) = (cells("offline"), cells("endpoint"));
    assert_eq!(offline.len(), 3);
    for (a, b) in offline.iter().zip(&endpoint) {
        assert_eq!(a["value"], b["value"], "{a} against {b}");
        for cell in [a, b] {
            assert_eq!(
                cell["evidence"]["details"]["embedder"], "multilingual-e5-small",
                "{cell}"
            );
        }
    }
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("endpoint/manifest.json")).unwrap(),
    )
    .unwrap();
    let judges = &manifest["metrics"][0]["judges"];
    assert!(
        judges.to_string().contains("embeddings of Chinese text")
            && judges.to_string().contains("multilingual-e5-small"),
        "{judges}"
    );
}

/// Item 8: `--judge checker:nowhere` said only "nowhere/config.json: No such file or
/// directory"; now it says what is missing, what a checker folder holds and how to get one.
#[test]
fn regression_issue_39_a_missing_checker_folder_says_what_it_must_hold() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("half")).unwrap();
    std::fs::write(dir.path().join("half/config.json"), "{}").unwrap();
    for (folder, said) in [
        ("nowhere", "nowhere is not a folder"),
        ("half", "half has no model.safetensors, tokenizer.json"),
    ] {
        let judge = format!("checker:{folder}");
        let output = rageval(
            dir.path(),
            &[
                "eval",
                &fiqa(),
                "--metrics",
                "faithfulness",
                "--judge",
                &judge,
            ],
        );
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        let text = stderr(&output);
        for needle in [
            said,
            "A checker folder holds config.json",
            "huggingface-cli download KRLabsOrg/lettucedect-base-modernbert-en-v1",
        ] {
            assert!(text.contains(needle), "{needle:?} not in {text}");
        }
    }
}

/// Item 9: `compare` had no `--metrics` (two pipelines gave a 26-column table), and "Moved
/// most" listed ids alone; now `--metrics` picks the columns and each moved sample shows its
/// question, cut short.
#[test]
fn regression_issue_39_compare_picks_its_metrics_and_names_questions() {
    let dir = tempfile::tempdir().unwrap();
    let rows: Vec<String> = std::fs::read_to_string(fiqa())
        .unwrap()
        .lines()
        .take(5)
        .map(str::to_owned)
        .collect();
    let worse: Vec<String> = rows
        .iter()
        .map(|row| {
            let mut value: serde_json::Value = serde_json::from_str(row).unwrap();
            value["response"] = serde_json::json!("I do not know.");
            value.to_string()
        })
        .collect();
    std::fs::write(dir.path().join("a.jsonl"), rows.join("\n") + "\n").unwrap();
    std::fs::write(dir.path().join("b.jsonl"), worse.join("\n") + "\n").unwrap();
    for (data, out) in [("a.jsonl", "ra"), ("b.jsonl", "rb")] {
        let args = [
            "eval",
            data,
            "--metrics",
            "bleu,rouge_l,exact_match",
            "--out",
            out,
        ];
        let output = rageval(dir.path(), &args);
        assert!(output.status.success(), "{}", stderr(&output));
    }
    let output = rageval(dir.path(), &["compare", "ra", "rb", "--metrics", "rouge_l"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let said = crate::stdout(&output);
    assert!(
        !said.contains("bleu") && !said.contains("exact_match"),
        "{said}"
    );
    assert!(said.contains("Moved most, `rouge_l`: `"), "{said}");
    assert!(
        said.contains("“How to deposit a cheque issued to an associate in my busines…”"),
        "{said}"
    );
    let refused = rageval(
        dir.path(),
        &["compare", "ra", "rb", "--metrics", "faithfulness"],
    );
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("bleu, rouge_l, exact_match"),
        "{}",
        stderr(&refused)
    );
}
