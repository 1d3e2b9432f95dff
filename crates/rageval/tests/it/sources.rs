//! `rageval index`, `rageval search` and `rageval collect` as a user runs them, and the
//! collected dataset scored by `rageval eval`.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;

use super::{rageval, repo_root, stderr, stdout};

fn kids() -> std::path::PathBuf {
    repo_root().join("../shared/validation/ai-learn-kids-coding-zh")
}

#[test]
fn index_then_search_in_chinese() {
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
            let body = format!("思考中……\n{answer}\n");
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    url
}

#[test]
fn collect_writes_a_dataset_that_eval_scores() {
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
    ];
    let out = rageval(dir.path(), &args);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("20 questions, 0 already there, 20 written, 0 failed"),
        "{}",
        stdout(&out)
    );
    assert!(stderr(&out).contains("collected 20/20"), "{}", stderr(&out));
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
    let questions = kids().join("qa_test_20.json");
    let out = rageval(
        dir.path(),
        &[
            "collect",
            questions.to_str().unwrap(),
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
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("embedded with mock-embed (8 dimensions)"),
        "{}",
        stdout(&out)
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
#[test]
fn the_embedded_minilm_serves_vector_and_hybrid_search_without_an_endpoint() {
    let dir = tempfile::tempdir().unwrap();
    let chunks = kids().join("doc_chunks.jsonl");
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
