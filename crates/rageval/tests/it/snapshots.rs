//! What people read, pinned: the summary table and its footer, a dry run's estimate,
//! progress lines in a log, errors with their hints, a stopped run's message, `rank`'s
//! figures and `report.md`. Filters mask what differs between machines and runs (temporary
//! paths, times, rates, ports). To accept a changed text on purpose:
//! `INSTA_UPDATE=always cargo test -p rageval --test it snapshots`, then read the diff.

use std::path::Path;
use std::process::Output;

use rageval_testkit::MockConfig;

use crate::judged::endpoint;
use crate::{rageval, repo_root, stderr, stdout};

/// Runs `assertions` with the filters every snapshot here needs; `dir` is the test's
/// temporary directory.
pub(crate) fn with_filters(dir: &Path, assertions: impl FnOnce()) {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("snapshots");
    settings.set_prepend_module_to_snapshot(false);
    let dir = regex_escape(&dir.display().to_string());
    let root = regex_escape(&repo_root().display().to_string());
    settings.add_filter(&dir, "[DIR]");
    settings.add_filter(&root, "[REPO]");
    settings.add_filter(r"127\.0\.0\.1:\d+", "127.0.0.1:[PORT]");
    settings.add_filter(r"\d+\.\d+/s", "[RATE]/s");
    settings.add_filter(r"eta \d+[smh][0-9smh]*", "eta [ETA]");
    settings.add_filter(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "[TIME]");
    settings.add_filter(r"SHA-256 [0-9a-f]{12}…", "SHA-256 [SHA]…");
    settings.bind(assertions);
}

fn regex_escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let special = "\\.+*?()|[]{}^$#&-~".contains(c);
            special
                .then_some('\\')
                .into_iter()
                .chain(std::iter::once(c))
        })
        .collect()
}

fn fiqa() -> String {
    repo_root()
        .join("examples/fiqa-30.jsonl")
        .display()
        .to_string()
}

/// Exit code, stdout and stderr, as a person sees them.
pub(crate) fn transcript(output: &Output) -> String {
    format!(
        "exit code: {:?}\n--- stdout\n{}--- stderr\n{}",
        output.status.code(),
        stdout(output),
        stderr(output)
    )
}

#[test]
fn the_summary_table_and_its_footer() {
    let dir = tempfile::tempdir().unwrap();
    let output = rageval(
        dir.path(),
        &[
            "eval",
            &fiqa(),
            "--metrics",
            "faithfulness,context_recall,rouge_l",
            "--judge",
            "heuristic",
            "--samples",
            "5",
            "--out",
            "run",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    with_filters(dir.path(), || {
        insta::assert_snapshot!("summary_table", stdout(&output));
        let report = std::fs::read_to_string(dir.path().join("run/report.md")).unwrap();
        insta::assert_snapshot!("report_md", report);
    });
}

#[test]
fn a_dry_run_table() {
    let dir = tempfile::tempdir().unwrap();
    // Nothing listens there: a dry run sends nothing anyway.
    let output = rageval(
        dir.path(),
        &[
            "eval",
            &fiqa(),
            "--metrics",
            "faithfulness,context_recall,answer_relevance,rouge_l",
            "--samples",
            "5",
            "--judge-base-url",
            "http://127.0.0.1:1/v1",
            "--judge-model",
            "gpt-4o-mini",
            "--dry-run",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    with_filters(dir.path(), || {
        insta::assert_snapshot!("dry_run_eval", transcript(&output));
    });
}

#[test]
fn progress_lines_in_a_log() {
    let dir = tempfile::tempdir().unwrap();
    let output = rageval(
        dir.path(),
        &[
            "eval",
            &fiqa(),
            "--metrics",
            "rouge_l",
            "--out",
            "run",
            "--progress",
            "-q",
        ],
    );
    // `-q` silences notes; progress lines still need `--progress` and no terminal: with
    // both, nothing but errors reaches stderr.
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(stderr(&output), "");
    let output = rageval(
        dir.path(),
        &[
            "eval",
            &fiqa(),
            "--metrics",
            "rouge_l",
            "--out",
            "run2",
            "--progress",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let said = stderr(&output);
    let progress: Vec<&str> = said.lines().filter(|l| l.starts_with("scoring ")).collect();
    with_filters(dir.path(), || {
        insta::assert_snapshot!("progress_lines", progress.join("\n"));
    });
}

#[test]
fn errors_with_their_hints() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(
        &bad,
        "{\"question\": \"q\", \"answer\": \"a\", \"reference\": \"r\"}\n{\"question\": 7}\n",
    )
    .unwrap();
    let unknown_metric = rageval(dir.path(), &["eval", &fiqa(), "--metrics", "faithfullness"]);
    let bad_line = rageval(
        dir.path(),
        &["eval", bad.to_str().unwrap(), "--metrics", "rouge_l"],
    );
    let first = rageval(
        dir.path(),
        &["eval", &fiqa(), "--metrics", "rouge_l", "--out", "run"],
    );
    assert!(first.status.success(), "{}", stderr(&first));
    let other_metrics = rageval(
        dir.path(),
        &["eval", &fiqa(), "--metrics", "chrf", "--out", "run"],
    );
    let no_writer = rageval(dir.path(), &["reference", &fiqa(), "--samples", "2"]);
    with_filters(dir.path(), || {
        insta::assert_snapshot!("error_unknown_metric", transcript(&unknown_metric));
        insta::assert_snapshot!("error_bad_line", transcript(&bad_line));
        insta::assert_snapshot!("error_resume_refused", transcript(&other_metrics));
        insta::assert_snapshot!("error_no_writing_model", transcript(&no_writer));
    });
}

#[test]
fn a_stopped_run_says_why_and_how_to_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let mock = endpoint(MockConfig::default());
    let mut capped = vec![
        "eval".to_string(),
        fiqa(),
        "--metrics".into(),
        "faithfulness".into(),
        "--samples".into(),
        "6".into(),
        "--concurrency".into(),
        "1".into(),
        "--out".into(),
        "run".into(),
        "--max-calls".into(),
        "2".into(),
    ];
    capped.extend(mock.flags());
    let args: Vec<&str> = capped.iter().map(String::as_str).collect();
    let output = rageval(dir.path(), &args);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    // Give up on the unreachable judge after one quick retry.
    std::fs::write(
        dir.path().join("rageval.toml"),
        "[judge.retries]\nmax_attempts = 2\nbase_delay_secs = 0.01\n",
    )
    .unwrap();
    let unreachable = rageval(
        dir.path(),
        &[
            "eval",
            &fiqa(),
            "--metrics",
            "faithfulness",
            "--samples",
            "2",
            "--out",
            "down",
            "--judge-base-url",
            "http://127.0.0.1:1/v1",
            "--judge-model",
            "m",
            "-q",
        ],
    );
    with_filters(dir.path(), || {
        // Which samples were in flight when the cap refused a call depends on timing.
        let mut settings = insta::Settings::clone_current();
        // One cell or several: "1 cell was" and "3 cells were" both read as "[N] cells were".
        settings.add_filter(
            r"\d+ cells? (was|were) journaled",
            "[N] cells were journaled",
        );
        settings.add_filter(r"\d+ cells? (is|are) left", "[N] cells are left");
        settings.add_filter(r"(?m)^judge: .*$", "judge: [this session's calls]");
        settings.bind(|| {
            insta::assert_snapshot!("stopped_by_a_cap", transcript(&output));
        });
        insta::assert_snapshot!("stopped_judge_unreachable", transcript(&unreachable));
    });
}

#[test]
fn rank_figures() {
    let dir = tempfile::tempdir().unwrap();
    let output = rageval(
        dir.path(),
        &[
            "rank",
            &fiqa(),
            "--samples",
            "4",
            "--judge",
            "heuristic",
            "--out",
            "ranked",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    with_filters(dir.path(), || {
        insta::assert_snapshot!("rank_figures", stdout(&output));
    });
}

/// `metrics explain` lists only the figures measured for the metric's own tasks in its
/// setting: answer_correctness judges the answer against the reference, so faithfulness's
/// support-verdict figures (answers against contexts) are not its own.
#[test]
fn metrics_explain_shows_only_the_metric_s_own_figures() {
    let dir = tempfile::tempdir().unwrap();
    for metric in ["faithfulness", "answer_correctness"] {
        let output = rageval(dir.path(), &["metrics", "explain", metric]);
        assert!(output.status.success(), "{}", stderr(&output));
        with_filters(dir.path(), || {
            insta::assert_snapshot!(format!("explain_{metric}"), stdout(&output));
        });
    }
}

/// Issue 25, item 4: `collect --show-settings` printed a Rust `Debug` struct of the
/// service and nothing of Elasticsearch's. Now aligned `key  value` lines per source,
/// credentials named by kind and masked.
#[test]
fn regression_issue_25_collect_show_settings_is_readable_and_has_elasticsearch() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("query.json"),
        r#"{"query": {"match": {"content": "{{question}}"}}}"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("sources.toml"),
        "[elasticsearch]\nurl = \"http://elastic:hunter2@127.0.0.1:9200/\"\nindex = \"news\"\n\
         query_template = \"query.json\"\ntext_field = \"content\"\nsize = 20\n\
         source_excludes = [\"embedding\"]\nuser = \"elastic\"\npassword = \"hunter2\"\n\n\
         [service]\nurl = \"http://127.0.0.1:9/qa?token=abc\"\nmethod = \"POST\"\n\
         headers = { Authorization = \"Bearer {{env.RAG_TOKEN}}\" }\n\
         body = { message = \"{{question}}\" }\nresponse = \"json\"\nanswer_path = \"data.answer\"\n",
    )
    .unwrap();
    let output = super::command(
        dir.path(),
        &[
            "collect",
            "questions.jsonl",
            "--retriever",
            "es",
            "--config",
            "sources.toml",
            "--out",
            "data.jsonl",
            "--show-settings",
        ],
    )
    .env("RAG_TOKEN", "tok-secret")
    .output()
    .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    for secret in ["hunter2", "tok-secret", "abc"] {
        assert!(!text.contains(secret), "{secret} shown: {text}");
    }
    with_filters(dir.path(), || {
        insta::assert_snapshot!("collect_show_settings", transcript(&output));
    });
}
