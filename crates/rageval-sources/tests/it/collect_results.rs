//! What `collect` makes of what the system under test gives back, with in-memory retrievers
//! and generators (no shared data, no server): the output ends in question order whatever
//! the completion order; empty results are counted, or failures with `fail_on_empty`; errors
//! that would hit every question stop the run at the first.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rageval_core::Sample;
use rageval_judge::BoxFuture;
use rageval_sources::{
    CollectOptions, CollectReport, ContextSource, EsRetriever, EsSettings, Generated, Generator,
    RagService, Retrieved, Retriever, ServiceSettings, SourceError, Template, collect,
};
use serde_json::{Map, Value};

pub(super) fn sample(id: &str, question: &str) -> Sample {
    Sample {
        id: id.into(),
        question: question.into(),
        ..Default::default()
    }
}

fn samples(n: usize) -> Vec<Sample> {
    (1..=n)
        .map(|i| sample(&i.to_string(), &format!("question {i}")))
        .collect()
}

/// Finds one context per question, none for the ids in `nothing_for`; questions with a
/// lower number take longer, so they finish last.
struct SlowFirst {
    nothing_for: Vec<&'static str>,
}

impl Retriever for SlowFirst {
    fn describe(&self) -> String {
        "test retriever".into()
    }

    fn retrieve<'a>(
        &'a self,
        sample: &'a Sample,
    ) -> BoxFuture<'a, Result<Vec<Retrieved>, SourceError>> {
        Box::pin(async move {
            let n: u64 = sample.id.parse().unwrap_or(0);
            tokio::time::sleep(Duration::from_millis(80u64.saturating_sub(n * 10))).await;
            if self.nothing_for.contains(&sample.id.as_str()) {
                return Ok(Vec::new());
            }
            Ok(vec![Retrieved {
                id: format!("c{}", sample.id),
                text: format!("context of {}", sample.question),
                score: Some(1.0),
                fields: Map::new(),
            }])
        })
    }
}

/// Answers with the first context's text; gives up with an empty answer for the ids in
/// `empty_for`, as the RAG-service client does after its empty-answer retries.
pub(super) struct Echo {
    pub empty_for: Vec<&'static str>,
}

impl Generator for Echo {
    fn describe(&self) -> String {
        "test generator".into()
    }

    fn generate<'a>(
        &'a self,
        sample: &'a Sample,
        contexts: &'a [Retrieved],
    ) -> BoxFuture<'a, Result<Generated, SourceError>> {
        Box::pin(async move {
            if self.empty_for.contains(&sample.id.as_str()) {
                return Err(SourceError::EmptyAnswer {
                    endpoint: "test".into(),
                    attempts: 3,
                    requests: 3,
                });
            }
            Ok(Generated {
                answer: contexts
                    .first()
                    .map_or_else(|| "no idea".into(), |c| c.text.clone()),
                contexts: None,
                attempts: 1,
                details: Map::new(),
            })
        })
    }
}

async fn run(
    questions: Vec<Sample>,
    retriever: impl Retriever + 'static,
    generator: impl Generator + 'static,
    out: &Path,
    fail_on_empty: bool,
) -> Result<CollectReport, SourceError> {
    collect(
        questions,
        ContextSource::Retriever(Arc::new(retriever)),
        Arc::new(generator),
        out,
        &CollectOptions {
            concurrency: 4,
            fail_on_empty,
            cancel: None,
        },
        &|_| {},
    )
    .await
}

fn ids_in(out: &Path) -> Vec<String> {
    std::fs::read_to_string(out)
        .unwrap()
        .lines()
        .map(|l| {
            let value: Value = serde_json::from_str(l).unwrap();
            value["id"].as_str().unwrap().to_owned()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_the_output_ends_in_question_order_not_completion_order() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("data.jsonl");
    // An earlier run's records: question 5, and a record of an id that is not a question.
    std::fs::write(
        &out,
        "{\"id\": \"old\", \"question\": \"gone\"}\n{\"id\": \"5\", \"question\": \"question 5\", \"answer\": \"kept\"}\n",
    )
    .unwrap();
    let no_empty = || Echo {
        empty_for: Vec::new(),
    };
    let report = run(
        samples(8),
        SlowFirst {
            nothing_for: Vec::new(),
        },
        no_empty(),
        &out,
        false,
    )
    .await
    .unwrap();
    assert_eq!((report.already_done, report.written), (1, 7));
    assert!(report.complete);
    assert_eq!(
        ids_in(&out),
        ["1", "2", "3", "4", "5", "6", "7", "8", "old"]
    );
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        text.contains("\"answer\": \"kept\""),
        "records are moved, not rewritten"
    );
    assert!(
        std::fs::read_dir(dir.path()).unwrap().count() == 1,
        "no staging file is left"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_zero_hits_and_empty_answers_are_counted_or_failed() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("data.jsonl");
    let retriever = || SlowFirst {
        nothing_for: vec!["2", "4"],
    };
    let generator = || Echo {
        empty_for: vec!["3"],
    };
    let report = run(samples(5), retriever(), generator(), &out, false)
        .await
        .unwrap();
    assert_eq!((report.written, report.failed.len()), (5, 0));
    let mut without = report.without_contexts.clone();
    without.sort();
    assert_eq!(without, ["2", "4"]);
    assert_eq!(report.empty_answers, ["3"]);
    let records: Vec<Value> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The dataset writes no `contexts` key for a sample without contexts.
    assert!(
        records[1]
            .get("contexts")
            .is_none_or(|c| c == &Value::Array(Vec::new())),
        "{}",
        records[1]
    );
    assert_eq!(records[2]["answer"], "");

    let strict = dir.path().join("strict.jsonl");
    let report = run(samples(5), retriever(), generator(), &strict, true)
        .await
        .unwrap();
    assert_eq!(report.written, 2);
    assert!(!report.complete);
    let mut failed: Vec<(String, String)> = report
        .failed
        .iter()
        .map(|(id, e)| (id.clone(), e.to_string()))
        .collect();
    failed.sort();
    assert_eq!(
        failed,
        [
            ("2".into(), "test retriever returned no contexts".into()),
            (
                "3".into(),
                "test generator gave an empty answer 3 times".into()
            ),
            ("4".into(), "test retriever returned no contexts".into()),
        ]
    );
    let mut written = ids_in(&strict);
    written.sort();
    assert_eq!(written, ["1", "5"], "nothing that looks complete");
}

/// A loopback URL where nothing listens.
fn closed_port_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    url
}

/// Counts the questions it was asked.
struct Counting(AtomicUsize);

impl Generator for Counting {
    fn describe(&self) -> String {
        "counting".into()
    }

    fn generate<'a>(
        &'a self,
        _: &'a Sample,
        _: &'a [Retrieved],
    ) -> BoxFuture<'a, Result<Generated, SourceError>> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { unreachable!("the retriever fails first") })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_that_hit_every_question_stop_at_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let template = Template::json(
        r#"{"query": {"bool": {"must": [{"match_phrase": {"collection": "{{company_name}}"}}]}}}"#,
        "s3-query.json",
    )
    .unwrap();

    // A placeholder the questions have no column for.
    let settings = EsSettings::new(closed_port_url(), "news", template.clone(), "content");
    let out = dir.path().join("a.jsonl");
    let err = run(
        samples(20),
        EsRetriever::new(settings).unwrap(),
        Counting(AtomicUsize::new(0)),
        &out,
        false,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&err, SourceError::MissingVariable { name, .. } if name == "company_name"),
        "{err:?}"
    );
    assert!(!out.exists(), "no record, no file");

    // Elasticsearch down: connections refused, after the retries.
    let mut settings = EsSettings::new(closed_port_url(), "news", template, "content");
    settings.retry.base_delay = Duration::from_millis(1);
    let with_company: Vec<Sample> = samples(20)
        .into_iter()
        .map(|mut s| {
            s.metadata.insert("company_name".into(), "东方航空".into());
            s
        })
        .collect();
    let err = run(
        with_company,
        EsRetriever::new(settings).unwrap(),
        Counting(AtomicUsize::new(0)),
        &dir.path().join("b.jsonl"),
        false,
    )
    .await
    .unwrap_err();
    assert!(err.is_fatal(), "{err:?}");
    let hint = err.hint().unwrap();
    assert!(
        hint.starts_with("nothing answers at http://127.0.0.1:"),
        "{hint}"
    );

    // The RAG service down.
    let mut service = ServiceSettings::new(Template::text(&closed_port_url(), "url").unwrap());
    service.retry.base_delay = Duration::from_millis(1);
    let err = collect(
        samples(20),
        ContextSource::Generator,
        Arc::new(RagService::new(service).unwrap()),
        &dir.path().join("c.jsonl"),
        &CollectOptions::default(),
        &|_| {},
    )
    .await
    .unwrap_err();
    assert!(err.is_fatal() && err.hint().is_some(), "{err:?}");
}

/// Fails every question with an error that is not fatal (a 400 for this question), as a
/// service that rejects each request does.
struct Rejecting;

impl Generator for Rejecting {
    fn describe(&self) -> String {
        "rejecting".into()
    }

    fn generate<'a>(
        &'a self,
        _: &'a Sample,
        _: &'a [Retrieved],
    ) -> BoxFuture<'a, Result<Generated, SourceError>> {
        Box::pin(async {
            Err(SourceError::Status {
                endpoint: "rejecting".into(),
                status: 400,
                first_line: "bad request".into(),
                retry_after: None,
            })
        })
    }
}

/// Issue 25, item 4: a collect in which every question failed left a 0-byte output file,
/// which reads as a finished collection of nothing. Now no record means no file; an
/// earlier run's file is left as it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_issue_25_every_question_failing_leaves_no_output_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sub/data.jsonl");
    let retriever = || SlowFirst {
        nothing_for: Vec::new(),
    };
    let report = run(samples(3), retriever(), Rejecting, &out, false)
        .await
        .unwrap();
    assert_eq!((report.written, report.failed.len()), (0, 3));
    assert!(!report.complete);
    assert!(!out.exists(), "an empty output file was left");

    let earlier = "{\"id\": \"1\", \"question\": \"question 1\", \"answer\": \"kept\"}\n";
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    std::fs::write(&out, earlier).unwrap();
    let report = run(samples(3), retriever(), Rejecting, &out, false)
        .await
        .unwrap();
    assert_eq!((report.already_done, report.failed.len()), (1, 2));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), earlier);
}
