//! `rageval rank`, `reference` and `pipeline`: the offline judge on RGB's Chinese refine set
//! (read in place from ../shared, never copied), reference answers under a small window with
//! ten times more context than fits, the pipeline end to end against the testkit mock, and
//! bad input.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rageval_report::testing::calamine::{Data, Reader, Xlsx, open_workbook};
use rageval_testkit::{MockConfig, Reply};
use serde_json::{Value, json};

use crate::judged::endpoint;
use crate::{rageval, repo_root, stderr, stdout};

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap()
}

fn jsonl(path: &Path) -> Vec<Value> {
    fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The first `questions` rows of RGB zh_refine as a dataset: positive and negative passages
/// shuffled (seeded) into one retriever order, the positives' ids as gold context ids.
fn rgb_dataset(dir: &Path, questions: usize) -> PathBuf {
    let source = repo_root().join("../shared/validation/rgb/zh_refine.json");
    let text = fs::read_to_string(&source).unwrap();
    let mut state: u64 = 20_240_601;
    let mut next = |bound: usize| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((state >> 33) as usize) % bound
    };
    let mut lines = String::new();
    for line in text.lines().take(questions) {
        let row: Value = serde_json::from_str(line).unwrap();
        let mut contexts: Vec<Value> = Vec::new();
        for (kind, key) in [("p", "positive"), ("n", "negative")] {
            for (i, passage) in row[key].as_array().unwrap().iter().enumerate() {
                contexts.push(json!({"id": format!("{kind}{i}"), "text": passage}));
            }
        }
        for i in (1..contexts.len()).rev() {
            contexts.swap(i, next(i + 1));
        }
        let gold: Vec<&str> = contexts
            .iter()
            .filter_map(|c| c["id"].as_str().filter(|id| id.starts_with('p')))
            .collect();
        let sample = json!({
            "id": row["id"], "question": row["query"], "contexts": contexts,
            "reference_context_ids": gold,
        });
        lines.push_str(&format!("{sample}\n"));
    }
    let path = dir.join("rgb.jsonl");
    fs::write(&path, lines).unwrap();
    path
}

#[test]
fn rank_orders_rgb_positives_above_negatives_with_the_offline_judge() {
    if crate::skip_without_shared(
        "rank_orders_rgb_positives_above_negatives_with_the_offline_judge",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = rgb_dataset(dir.path(), 12);
    let out = dir.path().join("ranked");
    let output = rageval(
        dir.path(),
        &[
            "rank",
            data.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("judge auroc"),
        "{}",
        stdout(&output)
    );

    let rankings = jsonl(&out.join("rankings.jsonl"));
    assert_eq!(rankings.len(), 12);
    for line in &rankings {
        let n = line["ranking"]["grades"].as_array().unwrap().len();
        let mut indices: Vec<u64> = line["ranking"]["indices"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i.as_u64().unwrap())
            .collect();
        indices.sort_unstable();
        assert_eq!(indices, (0..n as u64).collect::<Vec<_>>());
        assert!(line["ranking"]["rounds"].as_u64().unwrap() <= 4);
        assert!(
            line["agreement"]["spearman"].is_number() || line["agreement"]["spearman"].is_null()
        );
    }
    let summary = read_json(&out.join("summary.json"));
    let gold = &summary["summary"]["gold"];
    let judge = gold["judge"]["auroc"]["mean"].as_f64().unwrap();
    let retriever = gold["retriever"]["auroc"]["mean"].as_f64().unwrap();
    // Measured: 0.87 for the heuristic judge on the first 20 questions; a shuffled retriever
    // order is near 0.5.
    assert!(judge >= 0.75, "judge AUROC {judge}");
    assert!(
        judge > retriever + 0.2,
        "judge {judge} vs retriever {retriever}"
    );
    assert_eq!(summary["settings"]["algorithm"], "listwise");
    assert_eq!(summary["settings"]["grade_batch"], 10);
    assert_eq!(summary["summary"]["calls"]["failed"], 0);

    // The seed's insertion sort on the same judge: many more sequential rounds.
    let insertion = dir.path().join("insertion");
    let output = rageval(
        dir.path(),
        &[
            "rank",
            data.to_str().unwrap(),
            "--out",
            insertion.to_str().unwrap(),
            "--algorithm",
            "insertion",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let slow = read_json(&insertion.join("summary.json"));
    assert!(slow["summary"]["rounds"]["max"].as_u64().unwrap() > 20);
    assert_eq!(slow["settings"]["algorithm"], "insertion");

    // Run again, the finished run is resumed: nothing to rank, the same figures. With other
    // settings the directory is refused, never overwritten by accident.
    let again = rageval(
        dir.path(),
        &[
            "rank",
            data.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(
        stderr(&again).contains("12 finished questions kept"),
        "{}",
        stderr(&again)
    );
    assert_eq!(jsonl(&out.join("rankings.jsonl")), rankings);
    let output = rageval(
        dir.path(),
        &[
            "rank",
            data.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--algorithm",
            "insertion",
        ],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("its algorithm was listwise, now insertion")
            && stderr(&output).contains("--overwrite"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn bad_data_is_an_input_error_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("bad.jsonl");
    fs::write(
        &data,
        "{\"question\": \"q\", \"contexts\": [\"a\"]}\n{not json\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let output = rageval(
        dir.path(),
        &[
            "rank",
            data.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("bad.jsonl"), "{}", stderr(&output));
    assert!(!out.exists() && !dir.path().join("out.partial").exists());
}

#[test]
fn reference_needs_a_writing_judge() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("d.jsonl");
    fs::write(&data, "{\"question\": \"q\", \"contexts\": [\"a\"]}\n").unwrap();
    // The heuristic judge alone: no embedded model either.
    let output = rageval(
        dir.path(),
        &["reference", data.to_str().unwrap(), "--judge", "heuristic"],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("--judge-model"),
        "{}",
        stderr(&output)
    );
}

/// Prompt tokens of a chat request as `rageval_judge::tokens::prompt_tokens` counts them
/// (messages with framing, the schema, reply priming), in the o200k encoding.
fn request_tokens(body: &Value) -> u64 {
    let count = |text: &str| rageval_judge::tokens::count_tokens("mock-chat", text);
    let messages: u64 = body["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .map(|m| 3 + count(m["content"].as_str().unwrap_or_default()))
                .sum()
        })
        .unwrap_or(0);
    let schema = body
        .pointer("/response_format/json_schema/schema")
        .map_or(0, |s| count(&s.to_string()));
    messages + schema + 3
}

#[test]
fn reference_with_ten_windows_of_context_never_sends_an_over_long_prompt() {
    let largest = Arc::new(AtomicU64::new(0));
    let seen = Arc::clone(&largest);
    let long_answer = "该段落给出的部分答案。".repeat(22);
    let script = Arc::new(move |body: &Value| {
        seen.fetch_max(request_tokens(body), Ordering::SeqCst);
        let schema = body
            .pointer("/response_format/json_schema/schema")
            .map(Value::to_string)
            .unwrap_or_default();
        let answer = if schema.contains("\"found\"") {
            json!({"answer": long_answer, "found": true})
        } else {
            json!({"answer": long_answer})
        };
        Reply::Content(answer.to_string())
    });
    let server = endpoint(MockConfig {
        script: Some(script),
        ..MockConfig::default()
    });
    let dir = tempfile::tempdir().unwrap();
    // 2,000-token window, 1,500 for prompts; about 20,000 tokens of context per question,
    // one context alone three times the window.
    let paragraph = |i: usize| format!("第{i}段：公司的主营业务是软件开发和技术服务。");
    let contexts: Vec<String> = (0..40)
        .map(|i| paragraph(i).repeat(if i == 7 { 300 } else { 30 }))
        .collect();
    let rows = [
        json!({"question": "主营业务是什么？", "contexts": contexts, "answer": "软件"}),
        json!({"question": "a/b: what?", "contexts": contexts}),
        json!({"question": "a/b: what?", "contexts": contexts[..5]}),
    ];
    let data = dir.path().join("d.jsonl");
    let text: String = rows.iter().map(|r| format!("{r}\n")).collect();
    fs::write(&data, text).unwrap();
    let window_total: u64 = contexts
        .iter()
        .map(|c| rageval_judge::tokens::count_tokens("mock-chat", c))
        .sum();
    assert!(window_total > 10 * 2_000, "{window_total}");

    for mode in ["slow", "fast"] {
        let out = dir.path().join(mode);
        let mut args = vec![
            "reference",
            data.to_str().unwrap(),
            "--mode",
            mode,
            "--out",
            out.to_str().unwrap(),
            "--context-window",
            "2000",
            "--answer-tokens",
            "500",
        ];
        let flags = server.flags();
        args.extend(flags.iter().map(String::as_str));
        let output = rageval(dir.path(), &args);
        assert!(output.status.success(), "{mode}: {}", stderr(&output));
        let max = largest.swap(0, Ordering::SeqCst);
        assert!(
            max > 0 && max <= 1_500,
            "{mode}: largest prompt {max} tokens"
        );

        let lines = jsonl(&out.join("references.jsonl"));
        assert_eq!(lines.len(), 3);
        let reference = &lines[0]["reference"];
        assert!(reference["largest_prompt_tokens"].as_u64().unwrap() <= 1_500);
        assert!(
            reference["rounds"].as_u64().unwrap() >= 3,
            "{mode}: {reference}"
        );
        // The long context was split into pieces answered separately.
        let parts = reference["partial_answers"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|p| p["pieces"].as_array().unwrap().clone())
            .filter(|piece| piece["context"] == 7)
            .count();
        assert!(parts >= 3, "{mode}: context 7 in {parts} pieces");

        let gt = read_json(&out.join("GT_主营业务是什么？.json"));
        assert_eq!(gt["question"], "主营业务是什么？");
        assert_eq!(gt["contexts"].as_array().unwrap().len(), 40);
        assert!(!gt["ground_truth"].as_str().unwrap().is_empty());
        let full = read_json(&out.join("FULL_主营业务是什么？.json"));
        assert_eq!(full["answer"], "软件");
        // Same question twice: safe, distinct names; no FULL_ without an answer.
        assert!(out.join("GT_a_b_ what_.json").is_file());
        assert!(out.join("GT_a_b_ what_~2.json").is_file());
        assert!(!out.join("FULL_a_b_ what_.json").exists());
    }
}

/// The `quality=X` numbers of a request's user message, in the order shown.
fn qualities(body: &Value) -> Vec<f64> {
    let user = body["messages"][1]["content"].as_str().unwrap_or_default();
    user.split("quality=")
        .skip(1)
        .filter_map(|rest| rest.split(' ').next()?.trim_end_matches('.').parse().ok())
        .collect()
}

#[test]
fn rank_batches_and_windows_fit_a_small_window_and_garbage_orders_fail() {
    let largest = Arc::new(AtomicU64::new(0));
    let seen = Arc::clone(&largest);
    let script = Arc::new(move |body: &Value| {
        seen.fetch_max(request_tokens(body), Ordering::SeqCst);
        let properties = body
            .pointer("/response_format/json_schema/schema/properties")
            .cloned()
            .unwrap_or_default();
        let found = qualities(body);
        let keys = |n: usize| (1..=n).map(|i| format!("p{i}"));
        let reply = if properties.get("grades").is_some() {
            let grades: serde_json::Map<String, Value> = keys(found.len())
                .zip(&found)
                .map(|(key, q)| {
                    let grade = ((q * 4.0).floor() as u64).min(3);
                    (key, json!({"reason": "by quality", "relevance": grade}))
                })
                .collect();
            json!({ "grades": grades })
        } else if found.first().is_some_and(|&q| q > 0.95) {
            // Garbage: a window led by the best passage gets a repeated key.
            json!({"reason": "twice", "order": vec!["p1"; found.len()]})
        } else {
            let mut order: Vec<usize> = (0..found.len()).collect();
            order.sort_by(|&a, &b| found[b].total_cmp(&found[a]));
            let order: Vec<String> = order.iter().map(|i| format!("p{}", i + 1)).collect();
            json!({"reason": "by quality", "order": order})
        };
        Reply::Content(reply.to_string())
    });
    let server = endpoint(MockConfig {
        script: Some(script),
        ..MockConfig::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let filler = "The report covers revenue, customers and products for the year. ".repeat(4);
    let contexts: Vec<String> = (0..40)
        .map(|i| {
            let quality = ((i * 17) % 40) as f64 / 40.0 + 0.01;
            format!("passage {i}: quality={quality:.3} {filler}")
        })
        .collect();
    let data = dir.path().join("d.jsonl");
    let row = json!({"id": "q1", "question": "What was the revenue?", "contexts": contexts});
    fs::write(&data, format!("{row}\n")).unwrap();
    let out = dir.path().join("ranked");
    // 2,500-token window: 1,476 for a prompt after the 1,024 kept for the answer.
    let mut args = vec![
        "rank",
        data.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--context-window",
        "2500",
        "--no-cache",
    ];
    let flags = server.flags();
    args.extend(flags.iter().map(String::as_str));
    let output = rageval(dir.path(), &args);
    assert!(output.status.success(), "{}", stderr(&output));
    let max = largest.load(Ordering::SeqCst);
    assert!(max > 0 && max <= 1_476, "largest prompt {max} tokens");

    let ranking = &jsonl(&out.join("rankings.jsonl"))[0]["ranking"];
    let batches = ranking["grade_batches"].as_array().unwrap();
    let largest_batch = batches.iter().map(|b| b.as_array().unwrap().len()).max();
    assert!(
        batches.len() > 4 && largest_batch.is_some_and(|n| (2..10).contains(&n)),
        "{} batches, the largest of {largest_batch:?}",
        batches.len()
    );
    let windows = ranking["windows"].as_array().unwrap();
    assert!(
        windows
            .iter()
            .all(|w| w["shown"].as_array().unwrap().len() < 10)
    );
    // Graded by quality: 30 of the 40 are useful; windows led by the best passage failed
    // and were recorded, the rest ordered.
    assert_eq!(ranking["good"].as_array().unwrap().len(), 30);
    let failed = windows
        .iter()
        .filter(|w| w["forward"]["failed"].is_string() || w["reversed"]["failed"].is_string())
        .count();
    assert!(
        failed > 0 && failed < windows.len(),
        "{failed} of {}",
        windows.len()
    );
    assert!(
        windows
            .iter()
            .filter_map(|w| w["forward"]["failed"].as_str())
            .all(|e| e.contains("`p1` twice")),
        "{windows:?}"
    );
    assert_eq!(
        ranking["calls"]["failed"].as_u64().unwrap(),
        windows
            .iter()
            .map(|w| ["forward", "reversed"]
                .iter()
                .filter(|k| w[**k]["failed"].is_string())
                .count() as u64)
            .sum::<u64>()
    );
    // The top of the judged order is the best passages (quality > 0.75 graded 3).
    let top: Vec<u64> = ranking["good"].as_array().unwrap()[..3]
        .iter()
        .map(|i| i.as_u64().unwrap())
        .collect();
    assert!(
        top.iter().all(|&i| ((i * 17) % 40) as f64 / 40.0 >= 0.75),
        "{top:?}"
    );
}

/// Also the regression of issue 25 item 1: `dataset.jsonl` kept only bare context strings
/// (no retriever ids or scores, so the workbook's `context_ids` column was empty), dropped
/// the data's own columns and replaced its reference without a word.
#[test]
fn pipeline_ranks_writes_references_and_evaluates_the_top_k() {
    let server = endpoint(MockConfig::default());
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("d.jsonl");
    let rows = [
        json!({"id": "q1", "question": "主营业务是什么？", "answer": "软件开发。",
               "company_name": "某公司", "reference": "软件开发和技术服务。",
               "contexts": [{"id": "es-17", "text": "公司主营软件开发。", "score": 3.5},
                            {"id": "es-4", "text": "天气很好。", "score": 2.0},
                            {"id": "es-9", "text": "公司还做技术服务。", "score": 1.25}]}),
        json!({"id": "q2", "question": "Who founded it?", "answer": "Ada.",
               "contexts": ["Ada founded the company.", "It rains.", "Founded in 1990."]}),
    ];
    let text: String = rows.iter().map(|r| format!("{r}\n")).collect();
    fs::write(&data, text).unwrap();
    let out = dir.path().join("p");
    let mut args = vec![
        "pipeline",
        data.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--top-k",
        "2",
        "--metrics",
        "faithfulness,context_recall",
    ];
    let flags = server.flags();
    args.extend(flags.iter().map(String::as_str));
    let output = rageval(dir.path(), &args);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(jsonl(&out.join("rank/rankings.jsonl")).len(), 2);
    assert!(out.join("reference/GT_主营业务是什么？.json").is_file());
    assert!(out.join("reference/FULL_Who founded it_.json").is_file());
    let dataset = jsonl(&out.join("dataset.jsonl"));
    assert!(
        dataset.iter().all(|row| row["reference"].is_array()),
        "{dataset:?}"
    );
    assert_eq!(dataset[0]["contexts"][0]["id"], "es-17", "{}", dataset[0]);
    assert_eq!(dataset[0]["contexts"][2]["score"], 1.25, "{}", dataset[0]);
    assert_eq!(dataset[0]["company_name"], "某公司", "{}", dataset[0]);
    assert_eq!(
        dataset[0]["data_reference"],
        json!(["软件开发和技术服务。"])
    );
    assert_ne!(dataset[0]["reference"], json!(["软件开发和技术服务。"]));
    assert!(dataset[1].get("data_reference").is_none(), "{}", dataset[1]);
    assert!(
        stderr(&output).contains("1 of 2 questions had a reference of their own in the data"),
        "{}",
        stderr(&output)
    );
    let summary = read_json(&out.join("eval/summary.json"));
    assert_eq!(summary["samples"], 2, "{summary}");
    // The eval run's human files show the retriever against the judge, per question.
    let html = fs::read_to_string(out.join("eval/report.html")).unwrap();
    assert!(html.contains("id=\"rank-agreement\""), "no rank agreement");
    let md = fs::read_to_string(out.join("eval/report.md")).unwrap();
    assert!(md.contains("Retriever versus judge"), "{md}");
    let mut workbook: Xlsx<_> = open_workbook(out.join("eval/results.xlsx")).unwrap();
    let sheet = workbook.worksheet_range("rank_agreement").unwrap();
    let ids: Vec<String> = sheet.rows().skip(1).map(|row| row[0].to_string()).collect();
    assert!(
        ids.contains(&"q1".into()) && ids.contains(&"q2".into()),
        "{ids:?}"
    );
    // The samples sheet carries each question beside its scores, in the dataset's order.
    let samples = workbook.worksheet_range("samples").unwrap();
    assert_eq!(
        samples.get_value((0, 1)),
        Some(&Data::String("question".into()))
    );
    assert_eq!(
        samples.get_value((1, 1)),
        Some(&Data::String("主营业务是什么？".into()))
    );
    // The retriever's ids of the two contexts that were scored (`--top-k 2`).
    assert_eq!(
        samples.get_value((1, 4)),
        Some(&Data::String("es-17, es-4".into()))
    );
}

/// Issue 25, item 7: rank's progress moved only when a question was done (`0/20, 0/s` for
/// minutes on a slow judge). Now the judge's calls are counted while the question is in
/// flight.
#[test]
fn regression_issue_25_rank_progress_counts_judge_calls_within_a_question() {
    let server = endpoint(MockConfig {
        latency: Duration::from_millis(300),
        ..MockConfig::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let contexts: Vec<String> = (1..=12)
        .map(|i| format!("Context {i} says the company sells software."))
        .collect();
    let row = json!({"id": "q1", "question": "What does it sell?", "contexts": contexts});
    fs::write(dir.path().join("d.jsonl"), format!("{row}\n")).unwrap();
    let mut args = vec![
        "rank",
        "d.jsonl",
        "--out",
        "r",
        "--grade-batch",
        "1",
        "--concurrency",
        "2",
        "--progress",
    ];
    let flags = server.flags();
    args.extend(flags.iter().map(String::as_str));
    let output = rageval(dir.path(), &args);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stderr(&output);
    let calls_before_the_question_ended = text.lines().any(|line| {
        line.strip_prefix("ranking 0/1, 0 failed, ")
            .and_then(|rest| rest.split(' ').next())
            .and_then(|calls| calls.parse::<u64>().ok())
            .is_some_and(|calls| calls > 0)
    });
    assert!(calls_before_the_question_ended, "{text}");
}

/// Issue 25, item 7: after the reference stage the pipeline printed the judge's cumulative
/// line (rank's calls included) as if it were the stage's own; and "1 questions".
#[test]
fn regression_issue_25_pipeline_stages_count_their_own_judge_calls_in_the_singular() {
    let server = endpoint(MockConfig::default());
    let dir = tempfile::tempdir().unwrap();
    let row = json!({"id": "q1", "question": "Who founded it?", "answer": "Ada.",
                     "contexts": ["Ada founded the company.", "It rains.", "Founded in 1990."]});
    fs::write(dir.path().join("d.jsonl"), format!("{row}\n")).unwrap();
    let mut args = vec![
        "pipeline",
        "d.jsonl",
        "--out",
        "p",
        "--top-k",
        "2",
        "--metrics",
        "faithfulness",
    ];
    let flags = server.flags();
    args.extend(flags.iter().map(String::as_str));
    let output = rageval(dir.path(), &args);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = crate::stdout(&output);
    assert!(!text.contains("1 questions"), "{text}");
    assert!(text.contains("ranked 1 question with listwise"), "{text}");
    // Rank and reference share one judge, whose books run from the pipeline's start: the
    // reference stage's manifest counted the rank stage's calls again. Each stage's
    // manifest now holds its own, and together they are every request the judge received.
    let calls = |stage: &str| {
        let manifest = read_json(&dir.path().join(format!("p/{stage}/manifest.json")));
        manifest["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["judge"]["total"]["calls"].as_u64().unwrap())
            .sum::<u64>()
    };
    let (rank, reference, eval) = (calls("rank"), calls("reference"), calls("eval"));
    assert!(
        rank > 0 && reference > 0 && eval > 0,
        "{rank} {reference} {eval}"
    );
    assert_eq!(
        rank + reference + eval,
        server.mock.stats().chat_requests,
        "rank {rank}, reference {reference}, eval {eval}"
    );
    let judge_lines: Vec<&str> = text.lines().filter(|l| l.starts_with("judge: ")).collect();
    assert!(
        judge_lines[1].starts_with(&format!("judge: {reference} model calls")),
        "{text}"
    );
}

/// Issue 25, item 7: rank's dry run printed one figure, every context ordered, which
/// overestimated a real run's calls by 29%; and "rank 1 questions". It now gives the range
/// too: from grading alone (no context useful) to the table's total.
#[test]
fn regression_issue_25_rank_dry_run_gives_the_range_of_calls() {
    let dir = tempfile::tempdir().unwrap();
    let contexts: Vec<String> = (1..=25)
        .map(|i| format!("Context {i} says the company sells software."))
        .collect();
    let row = json!({"id": "q1", "question": "What does it sell?", "contexts": contexts});
    fs::write(dir.path().join("d.jsonl"), format!("{row}\n")).unwrap();
    let output = rageval(
        dir.path(),
        &[
            "rank",
            "d.jsonl",
            "--dry-run",
            "--judge-model",
            "gpt-4o-mini",
            "--judge-base-url",
            "http://127.0.0.1:9/v1",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.starts_with("dry run (rank 1 question);"), "{text}");
    let calls_of = |label: &str| -> u64 {
        text.lines()
            .find(|l| l.split_whitespace().next() == Some(label))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no {label} row: {text}"))
    };
    let (grading, total) = (calls_of("grade_relevance_batch"), calls_of("total"));
    assert!(grading < total, "{text}");
    assert!(
        text.contains(&format!("rank makes {grading} to {total} model calls, "))
            && text.contains("the fewest if the judge grades no context useful (grading alone)"),
        "{text}"
    );
}
