//! [`MiniLmEmbedder`]: the candle engine behind the `minilm` feature. Encoding runs on
//! tokio's blocking pool, in batches of [`BATCH_SIZE`] inputs of similar length, so the
//! runtime's workers stay free.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use super::{BATCH_SIZE, KIND, MAX_TOKENS, model_name};
use crate::chat::Embedder;
use crate::error::JudgeError;

/// A local sentence-embedding model. Cheap to clone.
#[derive(Clone)]
pub struct MiniLmEmbedder {
    name: String,
    encoder: Arc<Encoder>,
}

struct Encoder {
    dir: PathBuf,
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
}

impl std::fmt::Debug for MiniLmEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MiniLmEmbedder")
            .field("name", &self.name)
            .field("dir", &self.encoder.dir)
            .finish()
    }
}

impl MiniLmEmbedder {
    /// Loads the model in `dir` (reads about 90 MB; blocking). Errors name the file at fault.
    pub fn open(dir: impl AsRef<Path>) -> Result<Self, JudgeError> {
        let dir = dir.as_ref().to_path_buf();
        let fail = |file: &str, reason: String| JudgeError::LocalModel {
            path: dir.join(file).display().to_string(),
            reason,
        };
        let read =
            |file: &str| std::fs::read(dir.join(file)).map_err(|e| fail(file, e.to_string()));

        let config: Config = serde_json::from_slice(&read("config.json")?)
            .map_err(|e| fail("config.json", format!("not a BERT config: {e}")))?;
        let mut tokenizer = Tokenizer::from_bytes(read("tokenizer.json")?)
            .map_err(|e| fail("tokenizer.json", format!("not a tokenizer: {e}")))?;
        // The shipped tokenizer pads every input to 128 tokens and cuts at 128; the model
        // was trained and is used at 256 with padding to the longest input of a batch.
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..PaddingParams::default()
        }));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..TruncationParams::default()
            }))
            .map_err(|e| fail("tokenizer.json", format!("cannot set truncation: {e}")))?;
        let device = Device::Cpu;
        let weights =
            VarBuilder::from_buffered_safetensors(read("model.safetensors")?, DType::F32, &device)
                .map_err(|e| fail("model.safetensors", format!("not a safetensors file: {e}")))?;
        let model = BertModel::load(weights, &config).map_err(|e| {
            fail(
                "model.safetensors",
                format!("does not fit config.json: {e}"),
            )
        })?;
        let name = model_name(&dir);
        Ok(MiniLmEmbedder {
            name,
            encoder: Arc::new(Encoder {
                dir,
                model,
                tokenizer,
                device,
            }),
        })
    }

    /// Embeds `inputs` on the calling thread (blocking); [`Embedder::embed`] runs this on
    /// the blocking pool.
    pub fn embed_blocking(&self, inputs: &[String]) -> Result<Vec<Vec<f32>>, JudgeError> {
        self.encoder.embed_all(inputs)
    }
}

impl Embedder for MiniLmEmbedder {
    fn embedding_kind(&self) -> &str {
        KIND
    }
    fn embedding_model(&self) -> &str {
        &self.name
    }
    async fn embed(&self, inputs: &[String]) -> Result<Vec<Vec<f32>>, JudgeError> {
        let encoder = Arc::clone(&self.encoder);
        let inputs = inputs.to_vec();
        tokio::task::spawn_blocking(move || encoder.embed_all(&inputs))
            .await
            .map_err(|e| JudgeError::Task(format!("embedding task: {e}")))?
    }
}

impl Encoder {
    fn error(&self, reason: String) -> JudgeError {
        JudgeError::LocalModel {
            path: self.dir.display().to_string(),
            reason,
        }
    }

    /// All inputs, batched by length (less padding, same vectors), returned in input order.
    fn embed_all(&self, inputs: &[String]) -> Result<Vec<Vec<f32>>, JudgeError> {
        let mut order: Vec<usize> = (0..inputs.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(inputs[i].len()));
        let mut vectors = vec![Vec::new(); inputs.len()];
        for chunk in order.chunks(BATCH_SIZE) {
            let texts: Vec<&str> = chunk.iter().map(|&i| inputs[i].as_str()).collect();
            let batch = self
                .embed_batch(&texts)
                .map_err(|e| self.error(e.to_string()))?;
            for (&i, vector) in chunk.iter().zip(batch) {
                vectors[i] = vector;
            }
        }
        Ok(vectors)
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, tokenizers::Error> {
        let encodings = self.tokenizer.encode_batch(texts.to_vec(), true)?;
        let column = |field: fn(&tokenizers::Encoding) -> &[u32]| -> candle_core::Result<Tensor> {
            let rows = encodings
                .iter()
                .map(|e| Tensor::new(field(e), &self.device))
                .collect::<candle_core::Result<Vec<_>>>()?;
            Tensor::stack(&rows, 0)
        };
        let ids = column(tokenizers::Encoding::get_ids)?;
        let types = column(tokenizers::Encoding::get_type_ids)?;
        let mask = column(tokenizers::Encoding::get_attention_mask)?;
        let hidden = self.model.forward(&ids, &types, Some(&mask))?;
        // Mean over the real tokens: padded positions weigh zero.
        let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
        let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
        let counts = mask.sum(1)?.clamp(1e-9f32, f32::MAX)?;
        let mean = summed.broadcast_div(&counts)?;
        let norms = mean
            .sqr()?
            .sum_keepdim(1)?
            .sqrt()?
            .clamp(1e-12f32, f32::MAX)?;
        Ok(mean.broadcast_div(&norms)?.to_vec2::<f32>()?)
    }
}
