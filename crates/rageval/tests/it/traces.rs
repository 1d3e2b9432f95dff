//! `rageval eval --format openinference|langfuse`: a trace export scored as a dataset, the
//! traces without a retriever span named on stderr.

use std::path::{Path, PathBuf};
use std::process::Output;

use rageval_testkit::MockConfig;
use serde_json::Value;

use crate::judged::{checked_cells, endpoint, planned};
use crate::{rageval, repo_root, stderr};

/// The trace fixtures' folder.
pub fn fixtures() -> PathBuf {
    repo_root().join("crates/rageval-core/tests/fixtures/datasets/traces")
}

/// `rageval eval DATA --format FORMAT --metrics METRICS --judge heuristic --out run` in `dir`.
pub fn heuristic_eval(dir: &Path, data: &Path, format: &str, metrics: &str) -> Output {
    let args = [
        "eval",
        data.to_str().unwrap(),
        "--format",
        format,
        "--metrics",
        metrics,
        "--judge",
        "heuristic",
        "--out",
        "run",
    ];
    rageval(dir, &args)
}

#[test]
fn trace_exports_are_scored_and_skipped_traces_are_named() {
    for (file, format, skipped) in [
        (
            "phoenix_spans.jsonl",
            "openinference",
            "c4d5e6f708194a2bb3c4d5e6f7081920",
        ),
        ("langfuse_traces.json", "langfuse", "lf-trace-003"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let data = fixtures().join(file);
        let output = heuristic_eval(dir.path(), &data, format, "context_relevance");
        assert!(output.status.success(), "{}", stderr(&output));
        let err = stderr(&output);
        assert!(
            err.contains(&format!(
                "note: 1 traces skipped, they have no retriever span: {skipped}"
            )),
            "{err}"
        );
        checked_cells(&dir.path().join("run"), 2, 1);
    }
}

/// The Phoenix export of three sessions with two retriever spans per trace
/// (`phoenix_sessions.jsonl`): five answer rows (turns of three conversations) and ten hop
/// rows. Hop rows are scored for their contexts; metrics that need an answer are undefined
/// there. `summary.json`, `report.md` and `report.html` carry per-conversation and per-hop
/// figures.
#[test]
fn sessions_and_hops_of_a_phoenix_export_are_scored_per_turn_and_per_hop() {
    let data = fixtures().join("phoenix_sessions.jsonl");
    let dir = tempfile::tempdir().unwrap();
    let output = heuristic_eval(
        dir.path(),
        &data,
        "openinference",
        "context_relevance,faithfulness",
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let run = dir.path().join("run");
    let cells = checked_cells(&run, 15, 2);
    let cell = |id: &str, metric: &str| -> &Value {
        cells
            .iter()
            .find(|c| c["sample_id"] == id && c["metric"] == metric)
            .unwrap_or_else(|| panic!("no {metric} cell for {id}"))
    };
    assert_eq!(cell("lyon-2:hop:1", "faithfulness")["status"], "undefined");
    assert_eq!(
        cell("lyon-2:hop:1", "faithfulness")["reason"],
        "sample has no response"
    );
    assert_eq!(cell("lyon-2:hop:1", "context_relevance")["status"], "score");

    let summary: Value =
        serde_json::from_slice(&std::fs::read(run.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["samples"], 15, "{summary}");
    assert_eq!(summary["conversations"]["conversations"], 3, "{summary}");
    assert_eq!(
        summary["conversations"]["metrics"]["faithfulness"]["conversations"],
        3
    );
    let hops = &summary["hops"];
    assert_eq!(hops["rows"], 10, "{hops}");
    let relevance = &hops["metrics"]["context_relevance"];
    assert_eq!(relevance["first"]["scored"], 5, "{relevance}");
    assert_eq!(relevance["later"]["scored"], 5, "{relevance}");
    let faithfulness = &hops["metrics"]["faithfulness"];
    assert_eq!(
        (
            &faithfulness["first"]["undefined"],
            &faithfulness["later"]["undefined"]
        ),
        (&Value::from(5), &Value::from(5)),
        "{faithfulness}"
    );
    assert!(
        faithfulness["first"].get("mean").is_none(),
        "{faithfulness}"
    );
    // Which hops the answer was shown, by hand from the fixture: mars-1 records no LLM
    // input (unknown); lyon-1 and tea-1 used both hops, lyon-2 only its second, mars-2
    // only its first (its passage with the white space changed).
    assert_eq!(
        hops["used_by_answer"],
        serde_json::json!({"first": [3, 4], "later": [3, 4]}),
        "{hops}"
    );

    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(
        report.contains("## Conversations\n\n3 conversations"),
        "{report}"
    );
    assert!(
        report.contains("## Retrieval hops\n\n10 hop rows"),
        "{report}"
    );
    assert!(
        report.contains("| faithfulness | 0 | — | 0 | — | 10 | 0 |"),
        "{report}"
    );
    assert!(
        report.contains("shown the contexts of 3 of 4 first hops and 3 of 4 later hops"),
        "{report}"
    );
    let html = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(html.contains("<h2>Conversations</h2>"), "{html}");
    assert!(html.contains("<h2>Retrieval hops</h2>"), "{html}");
}

/// Through the mock: the dry run plans the hop rows' calls too, the run makes exactly those,
/// a cap stops it resumably (exit 3) and the resumed run asks no more than the plan.
#[test]
fn hop_rows_are_planned_capped_and_resumed_like_any_row() {
    let endpoint = endpoint(MockConfig::default());
    let data = fixtures().join("phoenix_sessions.jsonl");
    let dir = tempfile::tempdir().unwrap();
    let args = [
        data.to_str().unwrap(),
        "--format",
        "openinference",
        "--metrics",
        "context_relevance,faithfulness",
        "--out",
        "run",
        "--no-cache",
    ];
    let table = endpoint.dry_run(dir.path(), &args);
    let plan = planned(&table, "whole run");
    // context_relevance asks once per context: the answer rows hold 8 contexts, the hop rows
    // 11; faithfulness splits and judges on the 5 answer rows only (2 calls each); the 2
    // answer rows that follow an earlier trace of their session have their question made
    // standalone first (hop rows carry no history).
    assert_eq!(plan, 8 + 11 + 5 * 2 + 2, "{table}");
    let whole = endpoint.eval(dir.path(), &[&args[..6], &["whole", "--no-cache"]].concat());
    assert!(whole.status.success(), "{}", stderr(&whole));
    assert_eq!(
        endpoint.mock.stats().requests,
        plan,
        "calls other than planned"
    );

    let capped = endpoint.eval(dir.path(), &[&args[..], &["--max-calls", "4"]].concat());
    assert_eq!(capped.status.code(), Some(3), "{}", stderr(&capped));
    let sent = endpoint.mock.stats().requests;
    let resumed = endpoint.eval(dir.path(), &args);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    let asked = endpoint.mock.stats().requests - sent;
    assert!(asked <= plan, "{asked} > {plan}");
    checked_cells(&dir.path().join("run"), 15, 2);
}

/// A session id of another shape stops the run before anything is scored: exit 2, naming
/// the file, the span's line and the field.
#[test]
fn a_bad_session_id_exits_2_naming_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("spans.jsonl");
    std::fs::write(
        &data,
        "{\"context\": {\"trace_id\": \"t1\", \"span_id\": \"r\"}, \"span_kind\": \"RETRIEVER\", \
         \"attributes\": {\"input.value\": \"Who?\", \"session.id\": false}}\n",
    )
    .unwrap();
    let output = heuristic_eval(dir.path(), &data, "openinference", "context_relevance");
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output)
            .contains("spans.jsonl:1: field `session.id (trace `t1`)`: expected a session id"),
        "{}",
        stderr(&output)
    );
}

/// Tool calls from OpenInference `TOOL` spans against the expected ones in the root span's
/// metadata (`phoenix_tools.jsonl`, any order): made get_weather {city: "paris "}, search,
/// convert {to: "f"}; expected get_weather {city: "Paris"}, convert {to: "F"}. Selection:
/// 2 · 2 pairs ÷ (2 expected + 3 made) = 0.8; arguments agree once normalised (1.0), not
/// exactly (0.0).
#[test]
fn tool_spans_are_scored_against_the_expected_calls() {
    let dir = tempfile::tempdir().unwrap();
    let output = heuristic_eval(
        dir.path(),
        &fixtures().join("phoenix_tools.jsonl"),
        "openinference",
        "tool_selection,tool_argument_correctness,tool_argument_correctness:exact",
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let cells = checked_cells(&dir.path().join("run"), 1, 3);
    let values: Vec<(&str, f64)> = cells
        .iter()
        .map(|c| (c["metric"].as_str().unwrap(), c["value"].as_f64().unwrap()))
        .collect();
    assert_eq!(
        values,
        [
            ("tool_selection", 0.8),
            ("tool_argument_correctness", 1.0),
            ("tool_argument_correctness:exact", 0.0),
        ]
    );
}

/// `rageval compare` of two versions of the Phoenix sessions export: the candidate answers
/// the second Mars turn with what nothing backs and the first hop of the first Mars turn
/// retrieves a passage about tea. The comparison shows both runs' per-conversation means, the conversation that
/// moved, each run's share of conversations with a lapsing turn, and first-hop against
/// later-hop figures side by side, in Markdown, HTML and JSON.
#[test]
fn compare_shows_conversations_and_hops_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    let baseline = fixtures().join("phoenix_sessions.jsonl");
    let text = std::fs::read_to_string(&baseline).unwrap();
    let changed = text
        .replace(
            "Deimos orbits Mars in about 30 hours.",
            "Deimos is made of cheese and glows at night.",
        )
        .replace(
            "Mars has two small moons, Phobos and Deimos.",
            "Green tea grows on misty hillsides.",
        );
    assert_ne!(changed, text, "the fixture still holds the replaced texts");
    let candidate = dir.path().join("candidate.jsonl");
    std::fs::write(&candidate, changed).unwrap();
    for (data, out) in [(&baseline, "v1"), (&candidate, "v2")] {
        let args = [
            "eval",
            data.to_str().unwrap(),
            "--format",
            "openinference",
            "--metrics",
            "context_relevance,faithfulness",
            "--judge",
            "heuristic",
            "--out",
            out,
        ];
        let output = rageval(dir.path(), &args);
        assert!(output.status.success(), "{}", stderr(&output));
    }
    let args = [
        "compare",
        "v1",
        "v2",
        "--json",
        "compare.json",
        "--html",
        "compare.html",
    ];
    let output = rageval(dir.path(), &args);
    assert!(output.status.success(), "{}", stderr(&output));
    let markdown = crate::stdout(&output);
    let sections = markdown
        .find("## v1 → v2: conversations")
        .map(|at| &markdown[at..])
        .unwrap_or_else(|| panic!("no conversations section: {markdown}"));
    crate::snapshots::with_filters(dir.path(), || {
        insta::assert_snapshot!("compare_conversations_and_hops", sections);
    });
    let json: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("compare.json")).unwrap()).unwrap();
    let pair = &json["pairs"][0];
    let faithfulness = pair["conversations"]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == "faithfulness")
        .unwrap_or_else(|| panic!("no faithfulness over conversations: {pair}"));
    assert_eq!(
        faithfulness["moved"][0]["conversation_id"], "s-mars",
        "{faithfulness}"
    );
    assert_eq!(pair["hops"]["baseline_rows"], 10, "{pair}");
    let html = std::fs::read_to_string(dir.path().join("compare.html")).unwrap();
    assert!(html.contains("<h2>v1 → v2: conversations</h2>"), "{html}");
    assert!(html.contains("<h2>v1 → v2: retrieval hops</h2>"), "{html}");
}
