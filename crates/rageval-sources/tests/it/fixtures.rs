//! Shared test data: paths into `../shared/validation`, the kids-coding chunks and
//! questions, and a small deterministic embedder.
//!
//! `../shared/validation` lives beside this repository on the machines it was developed on,
//! not in it (the kids-coding set's licence is not stated, so it is not copied here). Tests
//! that read it start with [`skip_without_kids`], which says on stderr why they are skipped
//! when the folder is absent, so `cargo test` passes in a clone without it.

use std::io::Write as _;
use std::path::PathBuf;

use rageval_judge::{Embedder, JudgeError};
use serde_json::Value;

/// The workspace root.
pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Seed S4's test set: `../shared/validation/ai-learn-kids-coding-zh/`.
pub fn kids_dir() -> PathBuf {
    workspace().join("../shared/validation/ai-learn-kids-coding-zh")
}

/// Whether `test` must be skipped because seed S4's test set is absent; says so on stderr
/// (written directly, so the test harness does not capture it).
pub fn skip_without_kids(test: &str) -> bool {
    let dir = kids_dir();
    if dir.is_dir() {
        return false;
    }
    let _ = writeln!(
        std::io::stderr().lock(),
        "skipped {test}: {} is absent (the shared validation data is not part of this repository)",
        dir.display()
    );
    true
}

/// One chunk of the kids-coding report as the seed's pipeline split it.
#[derive(Debug, Clone)]
pub struct KidsChunk {
    pub uuid: String,
    pub text: String,
    pub line_from: usize,
    pub line_to: usize,
}

pub fn kids_chunks() -> Vec<KidsChunk> {
    read_jsonl(&kids_dir().join("doc_chunks.jsonl"))
        .into_iter()
        .map(|v| KidsChunk {
            uuid: v["uuid"].as_str().unwrap().to_owned(),
            text: v["text"].as_str().unwrap().to_owned(),
            line_from: v["loc"]["lines"]["from"].as_u64().unwrap() as usize,
            line_to: v["loc"]["lines"]["to"].as_u64().unwrap() as usize,
        })
        .collect()
}

/// The 100 generated questions, each with the uuid of the chunk it was written from.
pub fn kids_questions() -> Vec<(String, String)> {
    read_jsonl(&kids_dir().join("qa_test_100.jsonl"))
        .into_iter()
        .map(|v| {
            (
                v["question"].as_str().unwrap().to_owned(),
                v["uuid"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

pub fn read_jsonl(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A deterministic embedder for tests: character bigram counts hashed into 512 dimensions.
/// Texts sharing many bigrams get close vectors, which is all hybrid ranking needs to show.
#[derive(Debug, Clone, Default)]
pub struct BigramEmbedder {
    pub model: &'static str,
}

pub const DIMS: usize = 512;

pub fn bigram_vector(text: &str) -> Vec<f32> {
    let chars: Vec<char> = text.chars().filter(|c| c.is_alphanumeric()).collect();
    let mut v = vec![0f32; DIMS];
    for pair in chars.windows(2) {
        let h = (pair[0] as u64)
            .wrapping_mul(31)
            .wrapping_add(pair[1] as u64);
        v[(h.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 55) as usize] += 1.0;
    }
    v
}

impl Embedder for BigramEmbedder {
    fn embedding_kind(&self) -> &str {
        "test"
    }

    fn embedding_model(&self) -> &str {
        if self.model.is_empty() {
            "bigram-512"
        } else {
            self.model
        }
    }

    async fn embed(&self, inputs: &[String]) -> Result<Vec<Vec<f32>>, JudgeError> {
        Ok(inputs.iter().map(|t| bigram_vector(t)).collect())
    }
}
