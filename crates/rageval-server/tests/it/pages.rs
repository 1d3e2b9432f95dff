//! The HTML pages: what they show, and that they stay self-contained.

use axum::http::StatusCode;
use rageval_report::testing::{scores, write_run};
use rageval_report::{RunData, render_html};

use crate::{ROUTES, fixture, get, server};

/// Every page the server renders for the fixture.
const PAGES: [&str; 5] = [
    "/",
    "/runs/base",
    "/runs/base?metric=faithfulness&min=0.58&max=0.72",
    "/runs/base/report",
    "/compare?run=base&run=shifted",
];

#[tokio::test]
async fn the_index_lists_runs_with_their_means_and_a_compare_form() {
    let dir = fixture();
    let app = server(dir.path(), None);
    let answer = get(&app, "/").await;
    assert_eq!(answer.status, StatusCode::OK);
    assert!(answer.header("content-type").starts_with("text/html"));
    let html = answer.body;
    assert!(html.contains("<a href=\"/runs/base\">base</a>"));
    assert!(html.contains("<code>faithfulness</code> 0.6000"));
    assert!(html.contains("<code>faithfulness</code> 0.7000"));
    assert!(html.contains("<input type=\"checkbox\" name=\"run\" value=\"shifted\""));
    assert!(html.contains("<form action=\"/compare\" method=\"get\">"));
    assert!(html.contains("running or stopped"));
    assert!(html.contains("<span class=\"bad\">unreadable</span>"));
    assert!(!html.contains(".hidden") && !html.contains("not-a-run") && !html.contains("escape"));
}

#[tokio::test]
async fn a_run_page_filters_samples_by_a_metric_range() {
    let dir = fixture();
    let app = server(dir.path(), None);
    let html = get(&app, "/runs/base?metric=faithfulness&min=0.58&max=0.72")
        .await
        .body;
    assert!(
        html.contains(
            "<p class=\"count\"><b>24</b> of 40 samples: faithfulness from 0.58 to 0.72</p>"
        ),
        "{html}"
    );
    assert!(html.contains("<option value=\"faithfulness\" selected>"));
    assert!(html.contains("value=\"0.58\""));
    // Rows link to the drill-down in the run's full report.
    assert!(html.contains("<a href=\"/runs/base/report#s2\"><code>q2</code></a>"));
    assert!(!html.contains("#s0\""), "q0 scores 0.5 and is filtered out");
    // The summary is the report's.
    assert!(html.contains("<table class=\"summary\">"));

    let html = get(&app, "/runs/base?metric=context_recall&status=undefined")
        .await
        .body;
    assert!(html.contains("<b>1</b> of 40 samples: context_recall undefined"));
    assert!(html.contains("title=\"undefined: no reference contexts\""));

    let all = get(&app, "/runs/base").await.body;
    assert!(all.contains("<b>40</b> of 40 samples: every sample"));
}

#[tokio::test]
async fn the_report_is_the_stored_file_or_rendered_from_the_run() {
    let dir = fixture();
    let app = server(dir.path(), None);
    let rendered = get(&app, "/runs/base/report").await;
    assert_eq!(rendered.status, StatusCode::OK);
    assert!(rendered.body.contains("<h1>rageval report: base</h1>"));
    assert!(rendered.body.contains("The dataset was not available"));
    std::fs::write(
        dir.path().join("runs/base/report.html"),
        "<p>as eval wrote it</p>",
    )
    .unwrap();
    assert_eq!(
        get(&app, "/runs/base/report").await.body,
        "<p>as eval wrote it</p>"
    );
}

#[tokio::test]
async fn the_compare_page_shows_rageval_compare_s_tables() {
    let dir = fixture();
    let app = server(dir.path(), None);
    let answer = get(&app, "/compare?run=base&run=shifted").await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    let html = answer.body;
    assert!(html.contains("<h1>rageval compare: base vs shifted</h1>"));
    assert!(html.contains("<h2>base → shifted</h2>"));
    assert!(html.contains("<td class=\"num\">+0.1000</td>"));
    assert!(html.contains("<td class=\"good\">higher</td>"));

    // Two versions over different datasets (other hashes) compare question by question.
    let versions = get(&app, "/compare?run=base&run=other-data").await;
    assert_eq!(versions.status, StatusCode::OK, "{}", versions.body);
    assert!(
        versions
            .body
            .contains("base and other-data: 40 of 40 questions paired")
    );

    // A run without the last question: refused unless only the shared ones are compared.
    let mut fewer = scores(0.0);
    fewer.retain(|(id, _, _)| id != "q39");
    write_run(&dir.path().join("runs/fewer"), "d3", &fewer);
    let refused = get(&app, "/compare?run=base&run=fewer").await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert!(
        refused.body.contains("share 39 of 40 questions"),
        "{}",
        refused.body
    );
    assert!(refused.body.contains("<p class=\"error\">"));
    let common = get(&app, "/compare?run=base&run=fewer&common=1").await;
    assert_eq!(common.status, StatusCode::OK, "{}", common.body);
    assert!(
        common
            .body
            .contains("Only the 39 questions every run holds are compared")
    );
    let lenient = get(&app, "/compare?run=base&run=fewer&min_overlap=0.9").await;
    assert_eq!(lenient.status, StatusCode::OK, "{}", lenient.body);
}

/// Regression: pages showed where the server's files lie (the runs directory, run
/// directories, a dataset's absolute path). They show run names and relative paths only.
#[tokio::test]
async fn pages_and_answers_show_no_absolute_path() {
    let dir = fixture();
    let root = dir.path().join("runs");
    let dataset = dir.path().join("data").join("kids.jsonl");
    let manifest_path = root.join("base/manifest.json");
    let mut manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
    manifest["dataset"]["path"] = dataset.display().to_string().into();
    std::fs::write(&manifest_path, manifest.to_string()).unwrap();
    let run = RunData::load(&root.join("base")).unwrap();
    std::fs::write(root.join("base/report.html"), render_html(&run, &[])).unwrap();
    std::fs::write(root.join("broken/summary.json"), "{").unwrap();
    let app = server(dir.path(), None);
    let absolute = dir.path().display().to_string();
    for uri in ROUTES
        .into_iter()
        .chain(["/runs/running", "/api/runs/broken"])
    {
        let answer = get(&app, uri).await;
        assert!(
            !answer.body.contains(&absolute),
            "{uri} shows {absolute}: {}",
            answer.body
        );
    }
    assert!(get(&app, "/runs/base").await.body.contains("kids.jsonl"));
    assert!(
        get(&app, "/runs/base/report")
            .await
            .body
            .contains("kids.jsonl")
    );
    let listing = get(&app, "/").await.body;
    assert!(listing.contains("in <code>runs</code>"), "{listing}");
}

#[tokio::test]
async fn pages_load_nothing_from_elsewhere_and_say_so_in_their_headers() {
    let dir = fixture();
    let app = server(dir.path(), None);
    for uri in PAGES {
        let answer = get(&app, uri).await;
        assert_eq!(answer.status, StatusCode::OK, "{uri}");
        let html = answer.body.replace("http://www.w3.org/2000/svg", "");
        for forbidden in [
            "<script", "<link", "src=\"", "http://", "https://", "url(", "@import",
        ] {
            assert!(!html.contains(forbidden), "{uri} holds {forbidden}");
        }
        let policy = answer.header("content-security-policy");
        assert!(policy.starts_with("default-src 'none'"), "{uri}: {policy}");
        assert_eq!(answer.header("x-content-type-options"), "nosniff");
    }
    let missing = get(&app, "/nowhere").await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert!(missing.body.contains("no page at /nowhere"));
}

/// A run page names the judge of each judged metric and its measured agreement, as the
/// run's report.html does, and marks a mean whose judge's figures reach chance.
#[tokio::test]
async fn a_run_page_names_each_judged_metric_s_judge_and_its_agreement() {
    let dir = fixture();
    let manifest_path = dir.path().join("runs/base/manifest.json");
    let mut manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest_path).unwrap()).unwrap();
    for metric in manifest["metrics"].as_array_mut().unwrap() {
        if metric["name"] == "faithfulness" {
            metric["judges"] = serde_json::json!([{
                "task": "support_verdicts",
                "answered_by": "heuristic content_word_overlap v3",
                "measured": [{"dataset": "DuReader zh", "measure": "pairwise accuracy",
                              "value": 0.52, "count": 219, "unit": "pairs"}]
            }]);
        }
    }
    std::fs::write(&manifest_path, manifest.to_string()).unwrap();
    let app = server(dir.path(), None);
    let html = get(&app, "/runs/base").await.body;
    assert!(
        html.contains(
            "support_verdicts: heuristic content_word_overlap v3 — DuReader zh pairwise \
             accuracy 0.52 [0.45, 0.59] (219 pairs)"
        ),
        "{html}"
    );
    assert!(html.contains("(interval includes chance)"));
}
