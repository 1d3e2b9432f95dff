//! `rageval index`, `rageval search` and `rageval collect` as a user runs them, and the
//! collected dataset scored by `rageval eval`.
//!
//! Tests on seed S4's kids-coding set read `../shared/validation`, which lives beside the
//! repository on the machines it was developed on; without it they are skipped, saying so
//! on stderr. The others bring their own files.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};

use super::{rageval, repo_root, stderr, stdout};

fn kids() -> PathBuf {
    repo_root().join("../shared/validation/ai-learn-kids-coding-zh")
}

/// Whether `test` must be skipped because the kids-coding set is absent; says why on
/// stderr (written directly, so the harness does not capture it).
fn skip_without_kids(test: &str) -> bool {
    if kids().is_dir() {
        return false;
    }
    let _ = writeln!(
        std::io::stderr().lock(),
        "skipped {test}: {} is absent (the shared validation data is not part of this repository)",
        kids().display()
    );
    true
}

#[test]
fn index_then_search_in_chinese() {
    if skip_without_kids("index_then_search_in_chinese") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let chunks = kids().join("doc_chunks.jsonl");
    let out = rageval(
        dir.path(),
        &["index", chunks.to_str().unwrap(), "--out", "kids.index"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("indexed 1 documents into 125 chunks in kids.index"),
        "{}",
        stdout(&out)
    );

    let out = rageval(
        dir.path(),
        &[
            "search",
            "kids.index",
            "2024年少儿编程市场规模是多少",
            "-k",
            "3",
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let hits: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(hits.len(), 3);
    assert!(
        hits.iter()
            .any(|h| h["text"].as_str().unwrap().contains("488")),
        "{hits:?}"
    );
    assert_eq!(hits[0]["rank"], 1);

    let out = rageval(dir.path(), &["search", "kids.index", "渗透率"]);
    assert!(out.status.success());
    assert!(stdout(&out).starts_with(" 1. "), "{}", stdout(&out));

    let again = rageval(
        dir.path(),
        &["index", chunks.to_str().unwrap(), "--out", "kids.index"],
    );
    assert_eq!(again.status.code(), Some(2));
    assert!(
        stderr(&again).contains("kids.index already exists"),
        "{}",
        stderr(&again)
    );
    assert!(
        stderr(&again).contains("hint: pass --overwrite"),
        "{}",
        stderr(&again)
    );

    let bad = rageval(dir.path(), &["search", ".", "q"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("not a complete rageval index"),
        "{}",
        stderr(&bad)
    );
}

/// A RAG service on a loopback port answering every question with a fixed line, as a
/// streamed `text/plain` body; returns its URL.
fn serve_answers(answer: &'static str) -> String {
    serve(
        "200 OK",
        format!("思考中……\n{answer}\n"),
        std::time::Duration::ZERO,
    )
}

/// A RAG service on a loopback port answering one request at a time, each after `delay`,
/// with `status` and `body`; returns its URL.
pub(crate) fn serve(status: &'static str, body: String, delay: std::time::Duration) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            std::thread::sleep(delay);
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    url
}

#[test]
fn collect_writes_a_dataset_that_eval_scores() {
    if skip_without_kids("collect_writes_a_dataset_that_eval_scores") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let chunks = kids().join("doc_chunks.jsonl");
    let out = rageval(
        dir.path(),
        &["index", chunks.to_str().unwrap(), "--out", "kids.index"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let url = serve_answers("2024年少儿编程市场规模约为488亿元。");
    std::fs::write(
        dir.path().join("sources.toml"),
        format!(
            "[service]\nurl = \"{url}/qa\"\nquery = {{ message = \"{{{{question}}}}\" }}\nresponse = \"lines\"\n\n[local]\nindex = \"kids.index\"\nk = 3\n"
        ),
    )
    .unwrap();
    let questions = kids().join("qa_test_20.json");
    let args = [
        "collect",
        questions.to_str().unwrap(),
        "--retriever",
        "local",
        "--generator",
        "http",
        "--config",
        "sources.toml",
        "--out",
        "data.jsonl",
        "--progress",
    ];
    let out = rageval(dir.path(), &args);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("20 questions, 0 already there, 20 written, 0 failed"),
        "{}",
        stdout(&out)
    );
    // `--progress` asks for plain progress lines; the last one says where the stage ended.
    assert!(
        stderr(&out).contains("collecting 20/20"),
        "{}",
        stderr(&out)
    );
    let text = std::fs::read_to_string(dir.path().join("data.jsonl")).unwrap();
    assert_eq!(text.lines().count(), 20);
    let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(first["answer"], "2024年少儿编程市场规模约为488亿元。");
    assert_eq!(first["contexts"].as_array().unwrap().len(), 3);

    let again = rageval(dir.path(), &args);
    assert!(
        stdout(&again).contains("20 already there, 0 written"),
        "{}",
        stdout(&again)
    );

    let eval = rageval(
        dir.path(),
        &[
            "eval",
            "data.jsonl",
            "--metrics",
            "rouge_l,chrf",
            "--out",
            "run",
        ],
    );
    assert!(eval.status.success(), "{}", stderr(&eval));
    assert!(Path::new(&dir.path().join("run/summary.json")).exists());
}

#[test]
fn collect_names_the_missing_setting() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("s.toml"),
        "[service]\nurl = \"http://127.0.0.1:9/qa\"\nresponse = \"json\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("questions.jsonl"),
        "{\"id\": \"1\", \"question\": \"少儿编程的市场规模是多少\"}\n",
    )
    .unwrap();
    let out = rageval(
        dir.path(),
        &[
            "collect",
            "questions.jsonl",
            "--retriever",
            "es",
            "--config",
            "s.toml",
            "--out",
            "d.jsonl",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("s.toml: [service] answer_path: missing"),
        "{}",
        stderr(&out)
    );
    assert!(!dir.path().join("d.jsonl").exists());
}

/// `--embed-model` embeds every chunk at the endpoint of `RAGEVAL_JUDGE_BASE_URL` (the
/// testkit mock here); vector and hybrid search embed the query with the model the index
/// records, and `collect` ranks the same way.
#[test]
fn endpoint_embeddings_serve_vector_and_hybrid_search() {
    if skip_without_kids("endpoint_embeddings_serve_vector_and_hybrid_search") {
        return;
    }
    let mock = super::judged::endpoint(rageval_testkit::MockConfig::default());
    let dir = tempfile::tempdir().unwrap();
    let chunks = kids().join("doc_chunks.jsonl");
    let with_endpoint = |args: &[&str]| {
        super::command(dir.path(), args)
            .env("RAGEVAL_JUDGE_BASE_URL", &mock.mock.base_url)
            .output()
            .unwrap()
    };
    let out = with_endpoint(&[
        "index",
        chunks.to_str().unwrap(),
        "--out",
        "kids.index",
        "--embed-model",
        "mock-embed",
        "--progress",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("embedded with mock-embed (8 dimensions)"),
        "{}",
        stdout(&out)
    );
    // Regression (issue 25 item 8): embedding ran for minutes with nothing on stderr.
    let err = stderr(&out);
    assert!(
        err.contains("embedding 125 chunks with mock-embed"),
        "{err}"
    );
    assert!(
        err.contains("embedding 125/125, 0 failed, 8 model calls"),
        "{err}"
    );
    assert_eq!(mock.mock.stats().embedding_inputs, 125, "every chunk once");

    for ranking in ["vector", "hybrid"] {
        let before = mock.mock.stats().embedding_inputs;
        let out = with_endpoint(&[
            "search",
            "kids.index",
            "2024年少儿编程市场规模是多少",
            "-k",
            "3",
            "--ranking",
            ranking,
            "--json",
        ]);
        assert!(out.status.success(), "{ranking}: {}", stderr(&out));
        assert_eq!(stdout(&out).lines().count(), 3, "{ranking}");
        assert_eq!(
            mock.mock.stats().embedding_inputs,
            before + 1,
            "{ranking}: the query is embedded"
        );
    }

    let questions = kids().join("qa_test_20.json");
    let flags = mock.flags();
    let mut args = super::s4_pipeline::baseline_collect(questions.to_str().unwrap(), "kids.index");
    args.extend([
        "--ranking",
        "hybrid",
        "-k",
        "2",
        "--samples",
        "3",
        "--out",
        "data.jsonl",
    ]);
    args.extend(flags.iter().map(String::as_str));
    let before = mock.mock.stats().embedding_inputs;
    let out = with_endpoint(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(mock.mock.stats().embedding_inputs, before + 3);
    let data = std::fs::read_to_string(dir.path().join("data.jsonl")).unwrap();
    assert_eq!(data.lines().count(), 3);
    assert!(data.contains("hybrid"), "the retriever is named: {data}");
}

/// `--embed-model minilm` embeds every chunk with the embedded all-MiniLM-L6-v2 (no
/// endpoint); the index records it, and vector and hybrid search load it again by itself.
/// The first 24 of the set's 125 chunks: embedding all of them on two cores took about 40
/// CPU seconds, in every CI run, and showed nothing more.
#[test]
fn the_embedded_minilm_serves_vector_and_hybrid_search_without_an_endpoint() {
    if skip_without_kids("the_embedded_minilm_serves_vector_and_hybrid_search_without_an_endpoint")
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let all = std::fs::read_to_string(kids().join("doc_chunks.jsonl")).unwrap();
    let chunks = dir.path().join("doc_chunks.jsonl");
    let first: String = all
        .lines()
        .take(24)
        .map(|line| format!("{line}\n"))
        .collect();
    std::fs::write(&chunks, first).unwrap();
    let out = super::rageval(
        dir.path(),
        &[
            "index",
            chunks.to_str().unwrap(),
            "--out",
            "kids.index",
            "--embed-model",
            "minilm",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("(384 dimensions)"),
        "{}",
        stdout(&out)
    );
    let manifest =
        std::fs::read_to_string(dir.path().join("kids.index/rageval-index.json")).unwrap();
    assert!(manifest.contains("\"minilm\""), "{manifest}");
    for ranking in ["vector", "hybrid"] {
        let out = super::rageval(
            dir.path(),
            &[
                "search",
                "kids.index",
                "What is the market size of kids coding education?",
                "-k",
                "3",
                "--ranking",
                ranking,
                "--json",
            ],
        );
        assert!(out.status.success(), "{ranking}: {}", stderr(&out));
        assert_eq!(stdout(&out).lines().count(), 3, "{ranking}");
    }
}

fn write_bytes(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::write(dir.join(name), bytes).unwrap();
}

/// The documents a user has: a Chinese PDF printed by Chromium whose text layer uses radical
/// code points (rageval-sources' fixture), a GBK text file, an image saved as `.txt`, an
/// empty Markdown file. The undecodable and the empty file are counted, not fatal, and
/// `search "少儿"` finds both Chinese documents.
#[test]
fn regression_index_reads_documents_as_users_have_them_and_counts_what_it_cannot() {
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    std::fs::copy(
        repo_root().join("crates/rageval-sources/tests/fixtures/kangxi-radicals.pdf"),
        docs.join("report.pdf"),
    )
    .unwrap();
    // "家长对少儿编程教育的认知程度逐年提高。" in GBK (encoded by Python's `gbk` codec).
    let gbk: &[u8] = b"\xbc\xd2\xb3\xa4\xb6\xd4\xc9\xd9\xb6\xf9\xb1\xe0\xb3\xcc\xbd\xcc\xd3\xfd\xb5\xc4\xc8\xcf\xd6\xaa\xb3\xcc\xb6\xc8\xd6\xf0\xc4\xea\xcc\xe1\xb8\xdf\xa1\xa3";
    write_bytes(&docs, "survey.txt", gbk);
    write_bytes(&docs, "photo.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR");
    write_bytes(&docs, "empty.md", b"");

    let out = rageval(dir.path(), &["index", "docs", "--out", "idx"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let summary = stdout(&out);
    assert!(
        summary.starts_with("indexed 3 documents into 2 chunks in idx (")
            && summary.trim_end().ends_with("; 1 empty, 1 skipped"),
        "{summary}"
    );
    let notes = stderr(&out);
    assert!(
        notes.contains("warning: skipped docs/photo.txt: binary data"),
        "{notes}"
    );
    assert!(
        notes.contains("warning: docs/empty.md has no text"),
        "{notes}"
    );
    assert!(
        notes.contains("note: read docs/survey.txt as GBK"),
        "{notes}"
    );

    let out = rageval(dir.path(), &["search", "idx", "少儿", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let texts: Vec<String> = stdout(&out)
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["text"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert!(
        texts
            .iter()
            .any(|t| t.contains("少儿编程教育：人工智能时代，家长")),
        "{texts:?}"
    );
    assert!(
        texts
            .iter()
            .any(|t| t == "家长对少儿编程教育的认知程度逐年提高。"),
        "{texts:?}"
    );

    std::fs::remove_file(docs.join("survey.txt")).unwrap();
    std::fs::remove_file(docs.join("report.pdf")).unwrap();
    let out = rageval(dir.path(), &["index", "docs", "--out", "idx2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("nothing to index: of 2 files, 1 have no text and 1 cannot be read"),
        "{}",
        stderr(&out)
    );
}

/// In `dir`: `report` indexed as `idx`, a `sources.toml` naming a service that answers
/// "约488亿元。" to every question (streamed lines), and `questions` as `questions.jsonl`.
fn local_index_and_service(dir: &Path, report: &str, questions: &str) {
    write_bytes(dir, "report.txt", report.as_bytes());
    let out = rageval(dir, &["index", "report.txt", "--out", "idx"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let url = serve_answers("约488亿元。");
    std::fs::write(
        dir.join("sources.toml"),
        format!("[service]\nurl = \"{url}/qa\"\nquery = {{ message = \"{{{{question}}}}\" }}\nresponse = \"lines\"\n"),
    )
    .unwrap();
    std::fs::write(dir.join("questions.jsonl"), questions).unwrap();
}

/// A question the retriever finds nothing for is written and counted in the summary line
/// with a warning; `--fail-on-empty` makes it a failure (exit code 2, left out). A complete
/// output is in question order.
#[test]
fn regression_zero_hits_are_a_counted_warning_and_fail_on_empty_an_error() {
    let dir = tempfile::tempdir().unwrap();
    local_index_and_service(
        dir.path(),
        "少儿编程教育市场规模约为488亿元。\n\n家长对编程教育的认知程度逐年提高。\n",
        "{\"id\": \"q1\", \"question\": \"少儿编程市场规模\"}\n\
         {\"id\": \"q2\", \"question\": \"xyzzy plugh\"}\n\
         {\"id\": \"q3\", \"question\": \"家长的认知\"}\n",
    );
    let collect = |out: &str, extra: &[&str]| {
        let mut args = vec![
            "collect",
            "questions.jsonl",
            "--retriever",
            "local",
            "--index",
            "idx",
            "--config",
            "sources.toml",
            "--out",
            out,
        ];
        args.extend_from_slice(extra);
        rageval(dir.path(), &args)
    };

    let out = collect("data.jsonl", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("3 questions, 0 already there, 3 written, 0 failed; 1 without contexts, 0 with an empty answer"),
        "{}",
        stdout(&out)
    );
    assert!(
        stderr(&out).contains("warning: 1 question (id q2) got no contexts from the retriever"),
        "{}",
        stderr(&out)
    );
    let ids: Vec<String> = std::fs::read_to_string(dir.path().join("data.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(ids, ["q1", "q2", "q3"]);

    let out = collect("strict.jsonl", &["--fail-on-empty"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("3 questions, 0 already there, 2 written, 1 failed"),
        "{}",
        stdout(&out)
    );
    assert!(
        stderr(&out).contains("1 question (id q2) failed: local index")
            && stderr(&out).contains("returned no contexts"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("strict.jsonl is not complete"),
        "{}",
        stderr(&out)
    );
}

/// A settings file named by `--config` or `RAGEVAL_CONFIG` that does not exist is reported
/// as such (it used to read as an empty file: "[service] url: missing"); a TOML error shows
/// its line and column with a caret.
#[test]
fn regression_a_missing_settings_file_is_named_and_toml_errors_show_where() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("questions.jsonl"),
        "{\"id\": \"1\", \"question\": \"少儿编程\"}\n",
    )
    .unwrap();
    let args = [
        "collect",
        "questions.jsonl",
        "--retriever",
        "http",
        "--out",
        "d.jsonl",
    ];
    let out = super::command(dir.path(), &args)
        .env("RAGEVAL_CONFIG", "absent.toml")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("absent.toml: no such settings file (named by RAGEVAL_CONFIG)"),
        "{}",
        stderr(&out)
    );
    let mut with_flag = args.to_vec();
    with_flag.extend(["--config", "absent.toml"]);
    let out = rageval(dir.path(), &with_flag);
    assert!(
        stderr(&out).contains("absent.toml: no such settings file (named by --config)"),
        "{}",
        stderr(&out)
    );

    std::fs::write(
        dir.path().join("bad.toml"),
        "[service]\nurl = \"http://127.0.0.1:9/qa\"\nresponse = lines\n",
    )
    .unwrap();
    let mut with_bad = args.to_vec();
    with_bad.extend(["--config", "bad.toml"]);
    let out = rageval(dir.path(), &with_bad);
    assert_eq!(out.status.code(), Some(2));
    let text = stderr(&out);
    assert!(text.contains("bad.toml:3:12: "), "{text}");
    assert!(
        text.contains("3 | response = …\n  |            ^"),
        "{text}"
    );
    assert!(!dir.path().join("d.jsonl").exists());
}

/// Questions `q1`..`qN` as JSON lines in `dir/questions.jsonl`.
pub(crate) fn write_questions(dir: &Path, n: usize) {
    let text: String = (1..=n)
        .map(|i| format!("{{\"id\": \"q{i}\", \"question\": \"少儿编程市场规模 {i}\"}}\n"))
        .collect();
    std::fs::write(dir.join("questions.jsonl"), text).unwrap();
}

/// `dir/sources.toml` naming the service at `url`, which answers with JSON and the
/// contexts it used ([`SERVICE_ANSWER`]).
pub(crate) fn write_service_settings(dir: &Path, url: &str) {
    std::fs::write(
        dir.join("sources.toml"),
        format!(
            "[service]\nurl = \"{url}/qa\"\nquery = {{ message = \"{{{{question}}}}\" }}\n\
             response = \"json\"\nanswer_path = \"answer\"\ncontexts_path = \"contexts\"\n\
             max_attempts = 1\n"
        ),
    )
    .unwrap();
}

/// An answer of the service [`write_service_settings`] describes.
pub(crate) const SERVICE_ANSWER: &str =
    r#"{"answer": "约488亿元。", "contexts": ["少儿编程教育市场规模约为488亿元。"]}"#;

/// Issue 25, item 4: a collect in which every question failed left a 0-byte output file,
/// which reads as a finished collection of nothing. Now nothing is written, exit code 2,
/// and stderr says where the failures are.
#[test]
fn regression_issue_25_collect_with_every_question_failing_writes_no_file() {
    let dir = tempfile::tempdir().unwrap();
    write_questions(dir.path(), 3);
    let url = serve(
        "400 Bad Request",
        "no such route".into(),
        std::time::Duration::ZERO,
    );
    write_service_settings(dir.path(), &url);
    let out = rageval(
        dir.path(),
        &[
            "collect",
            "questions.jsonl",
            "--retriever",
            "http",
            "--config",
            "sources.toml",
            "--out",
            "data.jsonl",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        !dir.path().join("data.jsonl").exists(),
        "an empty output file was left"
    );
    let text = stderr(&out);
    assert!(
        text.contains("3 questions (ids q") && text.contains("failed: http://127.0.0.1:"),
        "{text}"
    );
    assert!(
        text.contains("/qa answered http 400: no such route"),
        "{text}"
    );
    assert!(
        text.contains(
            "error: nothing was collected: every question asked failed (the failures are listed above), so data.jsonl was not written"
        ),
        "{text}"
    );
    assert!(
        stdout(&out).contains("data.jsonl: 3 questions, 0 already there, 0 written, 3 failed"),
        "{}",
        stdout(&out)
    );
}

/// Issue 25, item 4: with zero hits, `--fail-on-empty` advised "run the same command
/// again", which finds nothing again. Now the hint names the retriever's settings to check.
#[test]
fn regression_issue_25_fail_on_empty_zero_hits_hint_names_the_retriever_settings() {
    let dir = tempfile::tempdir().unwrap();
    local_index_and_service(
        dir.path(),
        "少儿编程教育市场规模约为488亿元。\n",
        "{\"id\": \"q1\", \"question\": \"xyzzy plugh\"}\n",
    );
    let out = rageval(
        dir.path(),
        &[
            "collect",
            "questions.jsonl",
            "--retriever",
            "local",
            "--index",
            "idx",
            "--config",
            "sources.toml",
            "--out",
            "data.jsonl",
            "--fail-on-empty",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let text = stderr(&out);
    assert!(!text.contains("run the same command again"), "{text}");
    assert!(
        text.contains(
            "hint: asked again with the same settings, the 1 question with an empty result would get nothing again: check the index name and the query's fields and filters ([local] index idx, k "
        ),
        "{text}"
    );
    assert!(
        stdout(&out).contains("1 question, 0 already there"),
        "{}",
        stdout(&out)
    );
}

/// `index --embed-model e5` embeds Chinese chunks with the embedded multilingual-e5-small,
/// says so, and vector search ranks the chunk about the question above an unrelated one.
/// Skips, saying why, when scripts/fetch-models.sh has not fetched the model.
#[test]
fn the_embedded_e5_indexes_and_searches_chinese_chunks() {
    let installed = rageval_judge::ModelFiles::locate(None)
        .map(|files| {
            let e5 = files.dir.join(rageval_judge::e5::DIR_NAME);
            e5.join(rageval_judge::e5::FILE_NAME)
        })
        .ok()
        .filter(|file| file.is_file());
    if installed.is_none() {
        eprintln!(
            "skipped the_embedded_e5_indexes_and_searches_chinese_chunks: \
             multilingual-e5-small is not installed; run scripts/fetch-models.sh"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    write_bytes(
        &docs,
        "coding.txt",
        "孩子学习编程通常从图形化语言Scratch开始，再过渡到Python。".as_bytes(),
    );
    write_bytes(
        &docs,
        "weather.txt",
        "今天天气晴朗，适合去公园散步。".as_bytes(),
    );
    let out = super::rageval(
        dir.path(),
        &["index", "docs", "--out", "zh.index", "--embed-model", "e5"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("multilingual-e5-small (384 dimensions)"),
        "{}",
        stdout(&out)
    );
    let out = super::rageval(
        dir.path(),
        &[
            "search",
            "zh.index",
            "孩子学编程从什么语言开始",
            "-k",
            "2",
            "--ranking",
            "vector",
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let first = stdout(&out).lines().next().unwrap_or_default().to_string();
    assert!(first.contains("coding.txt"), "{}", stdout(&out));
}
