//! `rageval eval --metrics abstention,citation_faithfulness` end to end through the testkit
//! mock: the dry run plans exactly the calls the run then makes, the journal holds the
//! hand-computed cells, `summary.json` and `report.md` hold abstention's 2×2 table, and
//! `compare` shows its rates per run.

use std::fs;
use std::sync::Arc;

use rageval_testkit::{MockConfig, Reply};
use serde_json::{Value, json};

use crate::judged::{checked_cells, endpoint};
use crate::{rageval, stderr};

/// The mock as a judge that reads markers: an answer with "don't know" or 无法回答
/// declines; contexts support an answer unless the prompt holds "noise" (only contexts
/// do); a support call whose prompt holds "wrong" finds every statement unsupported.
fn judge(body: &Value) -> Reply {
    let name = body["response_format"]["json_schema"]["name"]
        .as_str()
        .unwrap_or_default();
    let prompt = body["messages"].to_string();
    if name.starts_with("abstention") {
        let refused = prompt.contains("don't know") || prompt.contains("无法回答");
        let answer = json!({"reason": "by marker", "refused": refused,
                            "supported": !prompt.contains("noise")});
        return Reply::Content(answer.to_string());
    }
    if name.starts_with("support_verdicts") {
        let verdict = if prompt.contains("wrong") {
            "not_supported"
        } else {
            "fully_supported"
        };
        return every_verdict(body, verdict);
    }
    Reply::Schema
}

/// A `support_verdicts` answer giving each statement the request asks about `verdict`,
/// supported by context 1.
pub fn every_verdict(body: &Value, verdict: &str) -> Reply {
    let schema = &body["response_format"]["json_schema"]["schema"];
    let keys = schema["properties"]["verdicts"]["required"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let verdicts: serde_json::Map<String, Value> = keys
        .iter()
        .filter_map(Value::as_str)
        .map(|key| {
            let item = json!({"reason": "by marker", "supporting_context": 1,
                              "verdict": verdict});
            (key.to_owned(), item)
        })
        .collect();
    Reply::Content(json!({ "verdicts": verdicts }).to_string())
}

/// Five samples, worked by hand:
/// 1. supported, answered, one sentence citing [1], supported → abstention 1, citation 1.
/// 2. supported, answered; "… wrong [2]" unsupported by context 2, "Paris is big [1]"
///    supported → abstention 1, citation 1/2 (two support calls).
/// 3. only noise, declines, cites nothing → abstention 1, citation undefined.
/// 4. only noise, answers citing [3] of one context → abstention 0, citation 0 (no call).
/// 5. supported, declines in Chinese → abstention 0, citation undefined.
///
/// Abstention's table: answered/supported 2, declined/supported 1, answered/unsupported 1,
/// declined/unsupported 1 (the 2×2 of `rageval_core::abstention`'s hand-computed test:
/// recall 1/2 [0.0945, 0.9055], false abstention 1/3, accuracy 3/5 = the mean). Citation
/// faithfulness: mean of 1, 0.5, 0 = 0.5 over 3 scored, 2 undefined. Calls: 5 abstention +
/// 3 support.
const ROWS: [(&str, &[&str], &str); 5] = [
    (
        "s1",
        &["Paris is the capital of France."],
        "Paris is the capital of France [1].",
    ),
    (
        "s2",
        &["Paris is the capital of France.", "Lyon is a wrong city."],
        "Lyon is the capital wrong [2]. Paris is big [1].",
    ),
    ("s3", &["noise about the weather"], "I don't know."),
    ("s4", &["noise only"], "It is 42 [3]."),
    (
        "s5",
        &["The boiling point of water is 100 C."],
        "无法回答。",
    ),
];

#[test]
fn abstention_and_citation_faithfulness_end_to_end() {
    let endpoint = endpoint(MockConfig {
        script: Some(Arc::new(judge)),
        ..MockConfig::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("d.jsonl");
    let text: String = ROWS
        .iter()
        .map(|(id, contexts, answer)| {
            let row = json!({"id": id, "question": "What is asked?", "contexts": contexts,
                             "answer": answer});
            format!("{row}\n")
        })
        .collect();
    fs::write(&data, text).unwrap();
    let args = [
        data.to_str().unwrap(),
        "--metrics",
        "abstention,citation_faithfulness",
        "--out",
        "run",
        "--no-cache",
    ];

    let table = endpoint.dry_run(dir.path(), &args);
    let planned = |label: &str| crate::judged::planned(&table, label);
    assert_eq!(planned("abstention"), 5, "{table}");
    assert_eq!(planned("citation_faithfulness"), 3, "{table}");
    assert_eq!(planned("whole run"), 8, "{table}");

    let output = endpoint.eval(dir.path(), &args);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(endpoint.mock.stats().requests, 8);
    let run = dir.path().join("run");
    let lines = checked_cells(&run, 5, 2);
    let cell = |id: &str, metric: &str| -> Value {
        lines
            .iter()
            .find(|l| l["sample_id"] == id && l["metric"] == metric)
            .cloned()
            .unwrap_or_else(|| panic!("no cell {id} {metric}"))
    };
    for (id, score, quadrant) in [
        ("s1", 1.0, "answered_supported"),
        ("s2", 1.0, "answered_supported"),
        ("s3", 1.0, "abstained_unsupported"),
        ("s4", 0.0, "answered_unsupported"),
        ("s5", 0.0, "abstained_supported"),
    ] {
        let line = cell(id, "abstention");
        assert_eq!(line["value"], score, "{line}");
        assert_eq!(
            line["evidence"]["details"]["abstention_quadrant"], quadrant,
            "{line}"
        );
    }
    for (id, score) in [("s1", 1.0), ("s2", 0.5), ("s4", 0.0)] {
        assert_eq!(cell(id, "citation_faithfulness")["value"], score, "{id}");
    }
    for id in ["s3", "s5"] {
        let line = cell(id, "citation_faithfulness");
        assert_eq!(line["reason"], "the answer cites no source", "{line}");
    }
    let s4 = cell("s4", "citation_faithfulness");
    assert_eq!(
        s4["evidence"]["details"]["dangling_citations"],
        json!(["[3]"]),
        "{s4}"
    );

    let summary: Value =
        serde_json::from_slice(&fs::read(run.join("summary.json")).unwrap()).unwrap();
    let abstention = &summary["metrics"]["abstention"];
    assert_eq!(abstention["mean"], 0.6);
    assert_eq!(
        abstention["abstention"]["table"],
        json!({"answered_supported": 2, "abstained_supported": 1,
               "answered_unsupported": 1, "abstained_unsupported": 1})
    );
    let recall = &abstention["abstention"]["rates"]["abstention_recall"];
    assert_eq!(
        (recall["numerator"].clone(), recall["denominator"].clone()),
        (json!(1), json!(2))
    );
    let [low, high] = [0, 1].map(|i| recall["ci95"][i].as_f64().unwrap());
    assert!(
        (low - 0.0945).abs() < 5e-4 && (high - 0.9055).abs() < 5e-4,
        "{recall}"
    );
    let citation = &summary["metrics"]["citation_faithfulness"];
    assert_eq!(
        (citation["mean"].clone(), citation["n_scored"].clone()),
        (json!(0.5), json!(3))
    );
    assert!(citation.get("abstention").is_none());

    let report = fs::read_to_string(run.join("report.md")).unwrap();
    assert!(report.contains("## Abstention"), "{report}");
    assert!(
        report.contains("| abstention recall | 0.5000 [0.0945, 0.9055] (1/2) |"),
        "{report}"
    );
    let html = fs::read_to_string(run.join("report.html")).unwrap();
    assert!(html.contains("id=\"abstention\""));

    // A second version (the same answers) and the version table.
    let mut again = args.to_vec();
    again[4] = "run2";
    let output = endpoint.eval(dir.path(), &again);
    assert!(output.status.success(), "{}", stderr(&output));
    let compared = rageval(
        dir.path(),
        &[
            "compare",
            "run",
            "run2",
            "--markdown",
            "cmp.md",
            "--json",
            "cmp.json",
        ],
    );
    assert!(compared.status.success(), "{}", stderr(&compared));
    let md = fs::read_to_string(dir.path().join("cmp.md")).unwrap();
    assert!(
        md.contains(
            "abstention recall 0.5000 [0.0945, 0.9055] (1/2) · false abstention rate 0.3333"
        ),
        "{md}"
    );
    let json: Value =
        serde_json::from_slice(&fs::read(dir.path().join("cmp.json")).unwrap()).unwrap();
    assert_eq!(
        json["runs"][1]["metrics"]["abstention"]["abstention"]["table"]["answered_supported"],
        2
    );
    assert_eq!(
        json["runs"][1]["metrics"]["citation_faithfulness"]["mean"],
        0.5
    );
}
