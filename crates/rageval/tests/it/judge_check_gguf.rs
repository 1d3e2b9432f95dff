//! `rageval judge-check --judge gguf:PATH` end to end on a CI-sized subset of each shared
//! set, with the embedded SmolLM2 model that `scripts/fetch-models.sh` provisions: every
//! run completes, names the local judge in its manifest and reports its figures. Each
//! subset is one source record cut to one or two items with clipped texts (ten model calls
//! in all), because the model takes seconds a call on two shared cores. Answers are capped
//! at 128 tokens: the four sets the model answers need under 70 a call, and on the UHGEval
//! item, which it never splits into statements, it would otherwise ramble to its 512-token
//! default twice (the calls are most of this test's CPU, and it runs in every CI run).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::{rageval, repo_root, stderr};

fn gguf() -> PathBuf {
    repo_root().join("models/SmolLM2-135M-Instruct.Q4_1.gguf")
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The first `n` characters of `text`.
fn clip(text: &str, n: usize) -> String {
    text.chars().take(n).collect()
}

/// The first JSON line of a shared file.
fn first_line(file: &str) -> Value {
    let text = std::fs::read_to_string(shared(file)).unwrap();
    serde_json::from_str(text.lines().next().unwrap()).unwrap()
}

fn shared(file: &str) -> PathBuf {
    repo_root().join("../shared/validation").join(file)
}

/// Writes, under `dir`, a one- or two-item subset of each shared set in its own format (read from
/// `shared/validation` at test time, never copied into the repository), texts clipped so
/// that each judge call is short: `(labels path, --format, metric, label shape)`.
fn subsets(dir: &Path) -> Vec<(PathBuf, &'static str, &'static str, &'static str)> {
    let write = |name: &str, text: String| {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    };
    let rgb = first_line("rgb/en_fact.json");
    let first = |v: &Value| clip(v.as_array().map_or(v, |a| &a[0]).as_str().unwrap(), 200);
    let rgb = json!({"query": rgb["query"], "answer": rgb["answer"],
                     "positive": [first(&rgb["positive"])], "negative": [first(&rgb["negative"])]});
    let dureader = first_line("dureader-2.0-demo-zh/search.dev.slim.jsonl");
    let documents: Vec<Value> = [true, false]
        .into_iter()
        .filter_map(|selected| {
            let doc = dureader["documents"]
                .as_array()?
                .iter()
                .find(|d| d["is_selected"] == selected)?;
            Some(json!({"title": doc["title"], "is_selected": selected,
                        "paragraphs": [clip(doc["paragraphs"][0].as_str()?, 120)]}))
        })
        .collect();
    let dureader = json!({"question": dureader["question"], "documents": documents});
    let mut uhgeval = first_line("uhgeval-zh/dataset_uhgeval_concise.jsonl");
    uhgeval["newsBeginning"] = json!(clip(uhgeval["newsBeginning"].as_str().unwrap(), 120));
    uhgeval["newsRemainder"] = json!(clip(uhgeval["newsRemainder"].as_str().unwrap_or(""), 120));
    let annotations: Vec<Value> = uhgeval["annotations"].as_array().unwrap()[..1].to_vec();
    uhgeval["annotations"] = json!(annotations);
    // Cranfield: query 1 and its first two judged abstracts.
    let qrels = std::fs::read_to_string(shared("cranfield/qrels.tsv")).unwrap();
    let judged: Vec<&str> = qrels.lines().skip(1).take(2).collect();
    let ids: Vec<&str> = judged
        .iter()
        .map(|l| l.split('\t').nth(1).unwrap())
        .collect();
    let docs: String = std::fs::read_to_string(shared("cranfield/docs.jsonl"))
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|d| ids.contains(&d["doc_id"].as_str().unwrap_or("")))
        .map(|d| {
            format!(
                "{}\n",
                json!({"doc_id": d["doc_id"], "text": clip(d["text"].as_str().unwrap(), 200)})
            )
        })
        .collect();
    let query = std::fs::read_to_string(shared("cranfield/queries.jsonl")).unwrap();
    write(
        "cranfield/queries.jsonl",
        format!("{}\n", query.lines().next().unwrap()),
    );
    write("cranfield/docs.jsonl", docs);
    let qrels_head = qrels.lines().next().unwrap();
    write(
        "cranfield/qrels.tsv",
        format!("{qrels_head}\n{}\n", judged.join("\n")),
    );
    vec![
        (
            shared("wikieval/WikiEval_samples_10.jsonl"),
            "wikieval",
            "answer_relevance:rubric",
            "pairwise",
        ),
        (
            write("uhgeval.jsonl", format!("{uhgeval}\n")),
            "uhgeval",
            "faithfulness",
            "binary",
        ),
        (
            write("rgb.json", format!("{rgb}\n")),
            "rgb",
            "context_relevance",
            "binary",
        ),
        (
            write("dureader.jsonl", format!("{dureader}\n")),
            "dureader",
            "context_relevance",
            "binary",
        ),
        (
            dir.join("cranfield"),
            "cranfield",
            "context_relevance",
            "graded",
        ),
    ]
}

#[test]
fn every_shared_set_runs_with_the_gguf_judge() {
    if crate::skip_without_shared("every_shared_set_runs_with_the_gguf_judge") {
        return;
    }
    let model = gguf();
    assert!(
        model.is_file(),
        "{} is missing: run scripts/fetch-models.sh",
        model.display()
    );
    let judge = format!("gguf:{}", model.display());
    let dir = tempfile::tempdir().unwrap();
    for (labels, format, metric, shape) in subsets(dir.path()) {
        let output = rageval(
            dir.path(),
            &[
                "judge-check",
                labels.to_str().unwrap(),
                "--format",
                format,
                "--metric",
                metric,
                "--samples",
                "1",
                "--judge",
                &judge,
                "--out",
                format,
                "--judge-max-tokens",
                "128",
            ],
        );
        assert!(output.status.success(), "{format}: {}", stderr(&output));
        let run = dir.path().join(format);
        let manifest = read_json(&run.join("manifest.json"));
        assert_eq!(manifest["status"], "complete", "{format}");
        assert_eq!(manifest["settings"]["judge"]["kind"], "local", "{format}");
        let agreement = read_json(&run.join("agreement.json"));
        assert_eq!(agreement["shape"], shape, "{format}: {agreement}");
        let items = agreement["items"].as_u64().unwrap();
        assert!(items > 0, "{format}");
        // Every item is accounted for: scored, or left out and counted.
        let verdicts = agreement["verdicts"].as_array().unwrap().len() as u64;
        assert_eq!(items, verdicts, "{format}");
    }
}
