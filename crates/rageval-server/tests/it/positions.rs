//! A run of conversation turns and retrieval-hop rows (issue 37): its run page and its JSON
//! show the per-conversation and per-hop figures `summary.json` holds.

use rageval_core::{Evidence, Outcome};
use rageval_report::testing::write_run;
use rageval_report::{ConversationTally, HopTally};

use crate::{get, server};

/// Two conversations of one and two turns; each turn's trace retrieved twice.
#[tokio::test]
async fn a_run_page_and_its_json_show_conversation_and_hop_figures() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("runs");
    let run = root.join("traces");
    let score = |value| Outcome::score(value, Evidence::default());
    let turns = [
        ("lyon-1", "s-lyon", 1.0),
        ("lyon-2", "s-lyon", 0.5),
        ("mars-1", "s-mars", 0.25),
    ];
    let mut results = Vec::new();
    let (mut conversations, mut hops) = (ConversationTally::default(), HopTally::default());
    for (trace, session, value) in turns {
        results.push((trace.to_owned(), "context_relevance", score(value)));
        conversations.add(session, "context_relevance", &score(value));
        for (hop, value) in [(1, 0.25), (2, 0.75)] {
            let id = format!("{trace}:hop:{hop}");
            hops.add(&id, hop, "context_relevance", &score(value));
            results.push((id, "context_relevance", score(value)));
        }
    }
    write_run(&run, "d1", &results);
    let path = run.join("summary.json");
    let mut summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    summary["conversations"] = serde_json::to_value(conversations.finish()).unwrap();
    summary["hops"] = serde_json::to_value(hops.finish()).unwrap();
    std::fs::write(&path, summary.to_string()).unwrap();

    let app = server(dir.path(), None);
    let json = get(&app, "/api/runs/traces").await.json();
    let summary = &json["summary"];
    assert_eq!(summary["conversations"]["conversations"], 2, "{json}");
    assert_eq!(summary["hops"]["rows"], 6, "{json}");
    assert_eq!(
        summary["hops"]["metrics"]["context_relevance"]["later"]["mean"],
        0.75
    );
    let html = get(&app, "/runs/traces").await.body;
    assert!(html.contains("<h2>Conversations</h2>"), "{html}");
    // (1.0 + 0.5) / 2 for s-lyon, 0.25 for s-mars: 0.5 over the two conversations.
    assert!(
        html.contains(
            "<td>context_relevance</td><td class=\"num\">2</td><td class=\"num\">0.5000</td>"
        ),
        "{html}"
    );
    assert!(html.contains("<h2>Retrieval hops</h2>"), "{html}");
    assert!(
        html.contains(
            "<td>context_relevance</td><td class=\"num\">3</td><td class=\"num\">0.2500</td>\
             <td class=\"num\">3</td><td class=\"num\">0.7500</td>"
        ),
        "{html}"
    );
}
