//! [`Judge::embed`]: embeddings through the same pipeline as chat calls, cached per input,
//! so a vector already computed is never asked for again and offline mode replays them.

use std::sync::atomic::Ordering;

use serde_json::json;

use super::Judge;
use super::pipeline::{CallSite, Estimate};
use crate::accounting::EMBEDDING_TEMPLATE;
use crate::cache::{CACHE_FORMAT, CacheKey, CacheMode};
use crate::chat::{ChatModel, Embedder, Usage};
use crate::error::JudgeError;
use crate::tokens;

/// Embedding vectors, in input order.
#[derive(Debug, Clone, PartialEq)]
pub struct Embeddings {
    /// One vector per input.
    pub vectors: Vec<Vec<f32>>,
    /// How many came from the cache.
    pub cached: usize,
}

impl<M: ChatModel + Embedder> Judge<M> {
    /// Embeds `inputs` through the pipeline: vectors already in the cache are reused (no
    /// request, no limiter), the rest go out in one request (limited, retried) and are
    /// stored. Offline mode fails on the first missing vector. Vectors come back in input
    /// order.
    pub async fn embed(&self, inputs: &[String]) -> Result<Embeddings, JudgeError> {
        let inner = &self.inner;
        inner.cancel.check()?;
        let mode = inner.config.cache_mode;
        let keys: Vec<CacheKey> = inputs
            .iter()
            .map(|input| {
                CacheKey::of(&json!({
                    "format": CACHE_FORMAT,
                    "backend": inner.model.embedding_kind(),
                    "model": inner.model.embedding_model(),
                    "embedding_input": input,
                }))
            })
            .collect();
        let mut vectors: Vec<Option<Vec<f32>>> = vec![None; inputs.len()];
        if let (Some(cache), CacheMode::ReadWrite | CacheMode::Offline) = (&inner.cache, mode) {
            for (slot, key) in vectors.iter_mut().zip(&keys) {
                *slot = cache.get_vector(*key).await?;
            }
        }
        let missing: Vec<usize> = (0..inputs.len())
            .filter(|&i| vectors[i].is_none())
            .collect();
        let cached = inputs.len() - missing.len();
        inner
            .counters
            .cache_hits
            .fetch_add(cached as u64, Ordering::Relaxed);
        if cached > 0 {
            let model = inner.model.embedding_model();
            let tokens: u64 = (0..inputs.len())
                .filter(|i| vectors[*i].is_some())
                .map(|i| tokens::count_tokens(model, &inputs[i]))
                .sum();
            let usage = Usage::new(tokens, 0);
            inner
                .ledger
                .cached(EMBEDDING_TEMPLATE, cached as u64, usage);
        }
        if let Some(&first) = missing.first() {
            if mode == CacheMode::Offline {
                return Err(JudgeError::OfflineMiss {
                    template: "embedding".into(),
                    key: keys[first].hex(),
                });
            }
            let batch: Vec<String> = missing.iter().map(|&i| inputs[i].clone()).collect();
            let model = &inner.model;
            let name = model.embedding_model();
            let prompt_tokens: u64 = batch.iter().map(|t| tokens::count_tokens(name, t)).sum();
            let used = Usage::new(prompt_tokens, 0);
            let estimate = Estimate {
                limiter_tokens: prompt_tokens,
                budget: used,
            };
            let endpoint = model.endpoint();
            let site = CallSite {
                template: EMBEDDING_TEMPLATE,
                model: name,
                endpoint: &endpoint,
                limits_itself: model.embedding_limits_itself(),
            };
            let batch_ref = &batch;
            let call = self.with_retries(
                site,
                estimate,
                move || model.embed(batch_ref),
                |_| (used, true),
            );
            let fresh = inner.cancel.run(call).await;
            if let Err(error) = &fresh {
                inner.health.failed(error, &model.endpoint(), name);
            }
            let fresh = fresh?;
            if fresh.len() != batch.len() {
                return Err(JudgeError::Protocol {
                    endpoint: inner.model.endpoint(),
                    detail: format!("{} embeddings for {} inputs", fresh.len(), batch.len()),
                });
            }
            let mut to_store = Vec::with_capacity(missing.len());
            for (&i, vector) in missing.iter().zip(fresh) {
                to_store.push((keys[i], vector.clone()));
                vectors[i] = Some(vector);
            }
            if let (Some(cache), CacheMode::ReadWrite) = (&inner.cache, mode) {
                let count = to_store.len() as u64;
                match cache
                    .put_vectors(inner.model.embedding_model().to_owned(), to_store)
                    .await
                {
                    Ok(()) => {
                        inner
                            .counters
                            .cache_writes
                            .fetch_add(count, Ordering::Relaxed);
                    }
                    Err(error) => {
                        tracing::debug!(%error, "embeddings not stored in the cache");
                        inner
                            .counters
                            .cache_write_errors
                            .fetch_add(count, Ordering::Relaxed);
                    }
                }
            }
        }
        Ok(Embeddings {
            vectors: vectors.into_iter().map(Option::unwrap_or_default).collect(),
            cached,
        })
    }
}
