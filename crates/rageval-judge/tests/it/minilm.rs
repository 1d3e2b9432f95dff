//! The embedded all-MiniLM-L6-v2 embedder against reference vectors from sentence-transformers
//! (`tests/fixtures/minilm-reference.json`, written by
//! `scripts/reference/minilm_reference.py`; package versions recorded inside it).

use std::sync::OnceLock;

use rageval_judge::{Embedder, Judge, JudgeConfig, MiniLmEmbedder, ModelFiles, Models};
use serde::Deserialize;

/// The greatest allowed difference of any one component from the reference.
const TOLERANCE: f32 = 1e-5;

#[derive(Deserialize)]
struct Reference {
    max_seq_length: usize,
    model_safetensors_sha256: String,
    sentences: Vec<ReferenceSentence>,
}

#[derive(Deserialize)]
struct ReferenceSentence {
    text: String,
    untruncated_tokens: usize,
    vector: Vec<f32>,
}

fn reference() -> Reference {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/minilm-reference.json"
    );
    let text = std::fs::read_to_string(path).expect("reference fixture");
    serde_json::from_str(&text).expect("reference fixture is JSON")
}

fn embedder() -> &'static MiniLmEmbedder {
    static EMBEDDER: OnceLock<MiniLmEmbedder> = OnceLock::new();
    EMBEDDER.get_or_init(|| {
        let files = ModelFiles::locate(None).unwrap_or_else(|e| panic!("{e}"));
        MiniLmEmbedder::open(&files.minilm).unwrap_or_else(|e| panic!("{e}"))
    })
}

fn max_difference(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vectors_match_sentence_transformers_to_1e_5() {
    let reference = reference();
    assert_eq!(reference.max_seq_length, rageval_judge::minilm::MAX_TOKENS);
    assert_eq!(
        reference.model_safetensors_sha256,
        "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        "the fixture was made with other weights than scripts/fetch-models.sh installs"
    );
    assert!(reference.sentences.len() >= 20);
    assert!(
        reference
            .sentences
            .iter()
            .any(|s| s.untruncated_tokens > 300),
        "the fixture must exercise truncation"
    );
    assert!(reference.sentences.iter().any(|s| s.text.is_empty()));

    let texts: Vec<String> = reference.sentences.iter().map(|s| s.text.clone()).collect();
    let judge = Judge::new(
        Models::embedder(embedder().clone()),
        None,
        JudgeConfig::default(),
    );
    let vectors = judge.embed(&texts).await.expect("embed").vectors;
    assert_eq!(vectors.len(), texts.len());
    let mut largest = 0f32;
    for (sentence, vector) in reference.sentences.iter().zip(&vectors) {
        assert_eq!(vector.len(), 384);
        let difference = max_difference(vector, &sentence.vector);
        largest = largest.max(difference);
        assert!(
            difference <= TOLERANCE,
            "{:?}: max difference {difference:e}",
            sentence.text
        );
    }
    println!("minilm: largest difference from sentence-transformers {largest:e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vector_does_not_depend_on_its_batch() {
    let reference = reference();
    let embedder = embedder();
    assert_eq!(
        (embedder.embedding_kind(), embedder.embedding_model()),
        ("minilm", "all-MiniLM-L6-v2")
    );
    // Alone (no padding) and beside the longest sentence (padded to 256 tokens).
    let long = reference
        .sentences
        .iter()
        .max_by_key(|s| s.untruncated_tokens)
        .expect("sentences");
    for sentence in reference.sentences.iter().take(5) {
        let alone = embedder
            .embed(std::slice::from_ref(&sentence.text))
            .await
            .expect("alone");
        let padded = embedder
            .embed(&[long.text.clone(), sentence.text.clone()])
            .await
            .expect("padded");
        assert!(
            max_difference(&alone[0], &padded[1]) <= TOLERANCE,
            "{:?}",
            sentence.text
        );
        assert!(max_difference(&padded[0], &long.vector) <= TOLERANCE);
    }
    assert!(embedder.embed(&[]).await.expect("no inputs").is_empty());
}

#[test]
fn a_folder_without_the_model_fails_naming_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let message = MiniLmEmbedder::open(dir.path())
        .expect_err("empty")
        .to_string();
    assert!(message.contains("config.json"), "{message}");

    let files = ModelFiles::locate(None).unwrap_or_else(|e| panic!("{e}"));
    for file in ["config.json", "tokenizer.json"] {
        std::fs::copy(files.minilm.join(file), dir.path().join(file)).expect("copy");
    }
    std::fs::write(dir.path().join("model.safetensors"), b"not weights").expect("write");
    let message = MiniLmEmbedder::open(dir.path())
        .expect_err("bad weights")
        .to_string();
    assert!(message.contains("model.safetensors"), "{message}");
}
