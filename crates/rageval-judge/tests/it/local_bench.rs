//! Speed of the embedded models, for BENCHMARKS.md rather than as a gate: ignored by default.
//! Run with `benches/local-models/run.sh` (release profile), or
//! `cargo test --release -p rageval-judge --test it -- --ignored --nocapture local_bench`.
//! Prints one `bench:` line per measurement.

use std::time::Instant;

use rageval_judge::{
    ChatModel, ChatRequest, E5Embedder, E5Role, GgufChat, GgufOptions, Judge, JudgeConfig, Message,
    MiniLmEmbedder, ModelFiles, Models, Sampling, StructuredRequest, TemplateId,
};
use serde_json::{Value, json};

const RUNS: usize = 3;

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn story(max_tokens: u32) -> ChatRequest {
    ChatRequest {
        messages: vec![Message::user(
            "Write a long story about a lighthouse keeper and a storm.",
        )],
        sampling: Sampling {
            max_tokens: Some(max_tokens),
            ..Sampling::default()
        },
        response_schema: None,
    }
}

/// A faithfulness-style verdict: statement, context, a reason and a 0/1 verdict.
fn verdict(i: usize) -> StructuredRequest {
    let facts = [
        (
            "The Eiffel Tower is in Paris and was finished in 1889.",
            "The Eiffel Tower was finished in 1889.",
        ),
        (
            "Interest on savings accounts is usually paid monthly.",
            "Savings interest is paid once a decade.",
        ),
        (
            "Photosynthesis turns light into chemical energy in glucose.",
            "Plants store light energy as glucose.",
        ),
        (
            "The 2008 crisis began with the US housing bubble.",
            "The 2008 crisis started in the housing market.",
        ),
        (
            "Python was created by Guido van Rossum.",
            "Python was created by James Gosling.",
        ),
    ];
    let (context, statement) = facts[i % facts.len()];
    StructuredRequest {
        template: TemplateId::new("bench.verdict", 1),
        messages: vec![
            Message::system(
                "Judge whether the statement can be inferred from the context. Give a short \
                 reason, then verdict 1 if it can and 0 if it cannot.",
            ),
            Message::user(format!("Context: {context}\nStatement: {statement}")),
        ],
        schema: json!({
            "type": "object",
            "properties": {
                "reason": {"type": "string", "minLength": 1, "maxLength": 80},
                "verdict": {"type": "integer", "minimum": 0, "maximum": 1}
            },
            "required": ["reason", "verdict"],
            "additionalProperties": false
        }),
        sampling: Sampling {
            max_tokens: Some(80),
            ..Sampling::default()
        },
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "measurement, not a gate"]
async fn local_bench_gguf() {
    let files = ModelFiles::locate(None).expect("models");
    for threads in [1, 2] {
        let options = GgufOptions {
            threads,
            ..GgufOptions::default()
        };
        let start = Instant::now();
        let chat = GgufChat::open(&files.gguf, options).expect("open");
        println!(
            "bench: gguf load threads={threads} {:.3} s",
            start.elapsed().as_secs_f64()
        );
        chat.chat(&story(4)).await.expect("warm-up");

        // Decode speed: the difference between 129 and 1 generated tokens on one prompt.
        let mut rates = Vec::new();
        for _ in 0..RUNS {
            let start = Instant::now();
            chat.chat(&story(1)).await.expect("1 token");
            let one = start.elapsed().as_secs_f64();
            let start = Instant::now();
            let long = chat.chat(&story(129)).await.expect("129 tokens");
            let many = start.elapsed().as_secs_f64();
            assert_eq!(long.usage.completion_tokens, 129);
            rates.push(128.0 / (many - one));
        }
        println!(
            "bench: gguf decode threads={threads} {:.1} tokens/s (median of {RUNS})",
            median(rates)
        );

        // Verdict-sized structured calls through the whole pipeline (no cache).
        let judge = Judge::new(Models::chat(chat), None, JudgeConfig::default());
        let mut seconds = Vec::new();
        let mut tokens = Vec::new();
        for i in 0..10 {
            let start = Instant::now();
            let answer = judge.ask::<Value>(&verdict(i)).await.expect("verdict");
            seconds.push(start.elapsed().as_secs_f64());
            tokens.push((answer.usage.prompt_tokens, answer.usage.completion_tokens));
        }
        let prompt = tokens.iter().map(|t| t.0).sum::<u64>() as f64 / tokens.len() as f64;
        let completion = tokens.iter().map(|t| t.1).sum::<u64>() as f64 / tokens.len() as f64;
        println!(
            "bench: gguf verdict threads={threads} median {:.3} s per call, mean {prompt:.0} prompt + {completion:.1} completion tokens (10 calls)",
            median(seconds)
        );
    }
}

/// The texts of `examples/fiqa-30.jsonl` (questions, answers, references, contexts).
fn fiqa_texts() -> Vec<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/fiqa-30.jsonl");
    let mut texts = Vec::new();
    for line in std::fs::read_to_string(path).expect("fiqa").lines() {
        let row: Value = serde_json::from_str(line).expect("json line");
        for key in ["user_input", "response", "reference", "retrieved_contexts"] {
            match &row[key] {
                Value::String(text) => texts.push(text.clone()),
                Value::Array(items) => {
                    texts.extend(items.iter().filter_map(|v| v.as_str().map(str::to_owned)))
                }
                _ => {}
            }
        }
    }
    texts
}

#[test]
#[ignore = "measurement, not a gate"]
fn local_bench_minilm() {
    let files = ModelFiles::locate(None).expect("models");
    let embedder = MiniLmEmbedder::open(&files.minilm).expect("open");
    let reference_path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/minilm-reference.json"
    );
    let reference: Value =
        serde_json::from_str(&std::fs::read_to_string(reference_path).expect("fixture"))
            .expect("json");
    let sentences: Vec<String> = reference["sentences"]
        .as_array()
        .expect("sentences")
        .iter()
        .filter_map(|s| s["text"].as_str().map(str::to_owned))
        .filter(|t| t.len() < 200)
        .collect();
    let short: Vec<String> = sentences
        .iter()
        .cycle()
        .take(sentences.len() * 16)
        .cloned()
        .collect();
    for (name, texts) in [("short sentences", short), ("fiqa-30 texts", fiqa_texts())] {
        embedder.embed_blocking(&texts[..8]).expect("warm-up");
        let rates: Vec<f64> = (0..RUNS)
            .map(|_| {
                let start = Instant::now();
                embedder.embed_blocking(&texts).expect("embed");
                texts.len() as f64 / start.elapsed().as_secs_f64()
            })
            .collect();
        println!(
            "bench: minilm {name} ({} texts, batch 32) {:.1} texts/s (median of {RUNS})",
            texts.len(),
            median(rates)
        );
    }
}

/// multilingual-e5-small against MiniLM on the same texts: e5's reference texts (Chinese,
/// English, mixed) and fiqa-30's, one after the other on the calling thread.
#[test]
#[ignore = "measurement, not a gate"]
fn local_bench_e5() {
    let files = ModelFiles::locate(None).expect("models");
    let start = Instant::now();
    let e5 = E5Embedder::open(files.dir.join(rageval_judge::e5::DIR_NAME)).expect("open e5");
    println!("bench: e5 load {:.2} s", start.elapsed().as_secs_f64());
    let minilm = MiniLmEmbedder::open(&files.minilm).expect("open minilm");
    let reference_path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/e5-reference.json"
    );
    let reference: Value =
        serde_json::from_str(&std::fs::read_to_string(reference_path).expect("fixture"))
            .expect("json");
    let mixed: Vec<String> = reference["texts"]
        .as_array()
        .expect("texts")
        .iter()
        .filter_map(|t| t["text"].as_str().map(str::to_owned))
        .cycle()
        .take(9 * 8)
        .collect();
    for (name, texts) in [
        ("e5 reference texts", mixed),
        ("fiqa-30 texts", fiqa_texts()),
    ] {
        let time = |embed: &dyn Fn(&[String])| {
            embed(&texts[..4]);
            let rates: Vec<f64> = (0..RUNS)
                .map(|_| {
                    let start = Instant::now();
                    embed(&texts);
                    texts.len() as f64 / start.elapsed().as_secs_f64()
                })
                .collect();
            median(rates)
        };
        let e5_rate = time(&|t: &[String]| {
            e5.embed_blocking(t, E5Role::Query).expect("e5 embed");
        });
        let minilm_rate = time(&|t: &[String]| {
            minilm.embed_blocking(t).expect("minilm embed");
        });
        println!(
            "bench: {name} ({} texts): e5 {e5_rate:.1} texts/s, minilm {minilm_rate:.1} texts/s \
             (median of {RUNS})",
            texts.len()
        );
    }
}
