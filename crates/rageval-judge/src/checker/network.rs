//! The checker networks with candle: a ModernBERT token classifier (candle has the
//! backbone but no token head, so the head — dense, GELU, LayerNorm, then a linear
//! classifier, as in transformers' `ModernBertForTokenClassification` — is written here)
//! and candle's DeBERTa-v2 sequence classifier. Given token ids, they return logits; what
//! the logits mean is [`super::spec`]'s business, windows and spans [`super::windows`]'s.
//! One sequence at a time: no padding, so no padding mask can differ from the reference's.

use candle_core::{DType, Device, Tensor};
use candle_nn::{LayerNorm, Linear, VarBuilder};
use candle_transformers::models::{debertav2, modernbert};
use serde_json::Value;

use super::spec::{CheckerSpec, Family, Head};

/// A loaded network.
pub(crate) enum Network {
    ModernBertTokens(ModernBertTokenClassifier),
    ModernBertSequence(modernbert::ModernBertForSequenceClassification),
    /// Boxed: candle's DeBERTa-v2 keeps its whole configuration inline (1.7 kB).
    DebertaV2Sequence(Box<debertav2::DebertaV2SeqClassificationModel>),
}

/// Why a network could not be built or run, in words (the caller names the file).
pub(crate) type NetworkError = String;

impl Network {
    /// Builds the network `spec` describes over the weights in `weights`.
    pub(crate) fn load(spec: &CheckerSpec, weights: Vec<u8>) -> Result<Self, NetworkError> {
        let device = Device::Cpu;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &device)
            .map_err(|e| format!("not a safetensors file: {e}"))?;
        let fit = |e: candle_core::Error| format!("does not fit config.json: {e}");
        Ok(match (spec.family, spec.head) {
            (Family::ModernBert, head) => {
                let config = modernbert_config(&spec.config, spec.labels.len())?;
                match head {
                    Head::Tokens => Network::ModernBertTokens(
                        ModernBertTokenClassifier::load(vb, &config, spec.labels.len())
                            .map_err(fit)?,
                    ),
                    Head::Sequence => Network::ModernBertSequence(
                        modernbert::ModernBertForSequenceClassification::load(vb, &config)
                            .map_err(fit)?,
                    ),
                }
            }
            (Family::DebertaV2, _) => {
                let config: debertav2::Config = serde_json::from_value(spec.config.clone())
                    .map_err(|e| format!("config.json is not a DeBERTa-v2 config: {e}"))?;
                Network::DebertaV2Sequence(Box::new(
                    debertav2::DebertaV2SeqClassificationModel::load(
                        vb.pp("deberta"),
                        &config,
                        None,
                    )
                    .map_err(fit)?,
                ))
            }
        })
    }

    /// Logits for one sequence: a row per token (token head) or one row (sequence head).
    /// Probabilities for candle's ModernBERT sequence head, which applies the softmax itself.
    pub(crate) fn forward(
        &self,
        ids: &[u32],
        type_ids: &[u32],
    ) -> candle_core::Result<Vec<Vec<f32>>> {
        let device = Device::Cpu;
        let ids = Tensor::new(ids, &device)?.unsqueeze(0)?;
        let mask = ids.ones_like()?;
        let rows = match self {
            Network::ModernBertTokens(model) => model.forward(&ids, &mask)?.squeeze(0)?,
            Network::ModernBertSequence(model) => model.forward(&ids, &mask)?,
            Network::DebertaV2Sequence(model) => {
                let types = Tensor::new(type_ids, &device)?.unsqueeze(0)?;
                model.forward(&ids, Some(types), Some(mask))?
            }
        };
        rows.to_vec2::<f32>()
    }

    /// Whether [`Network::forward`] gives probabilities already.
    pub(crate) fn gives_probabilities(&self) -> bool {
        matches!(self, Network::ModernBertSequence(_))
    }
}

/// candle's ModernBERT configuration from `config.json`, read field by field: transformers
/// 5 writes the rotary bases under `rope_parameters` (`full_attention`,
/// `sliding_attention`) where earlier versions wrote `global_rope_theta` and
/// `local_rope_theta`.
fn modernbert_config(config: &Value, labels: usize) -> Result<modernbert::Config, NetworkError> {
    let count = |field: &str| -> Result<usize, NetworkError> {
        config[field]
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| format!("config.json: field `{field}` is missing or not a count"))
    };
    let theta = |flat: &str, nested: &str, default: f64| {
        config[flat]
            .as_f64()
            .or_else(|| config["rope_parameters"][nested]["rope_theta"].as_f64())
            .unwrap_or(default)
    };
    let pooling = match config["classifier_pooling"].as_str() {
        Some("mean") => modernbert::ClassifierPooling::MEAN,
        _ => modernbert::ClassifierPooling::CLS,
    };
    let id2label = (0..labels)
        .map(|i| (i.to_string(), format!("LABEL_{i}")))
        .collect::<std::collections::HashMap<_, _>>();
    Ok(modernbert::Config {
        vocab_size: count("vocab_size")?,
        hidden_size: count("hidden_size")?,
        num_hidden_layers: count("num_hidden_layers")?,
        num_attention_heads: count("num_attention_heads")?,
        intermediate_size: count("intermediate_size")?,
        max_position_embeddings: count("max_position_embeddings")?,
        layer_norm_eps: config["norm_eps"]
            .as_f64()
            .or_else(|| config["layer_norm_eps"].as_f64())
            .unwrap_or(1e-5),
        pad_token_id: config["pad_token_id"]
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(0),
        global_attn_every_n_layers: count("global_attn_every_n_layers")?,
        global_rope_theta: theta("global_rope_theta", "full_attention", 160_000.0),
        local_attention: count("local_attention")?,
        local_rope_theta: theta("local_rope_theta", "sliding_attention", 10_000.0),
        classifier_config: Some(modernbert::ClassifierConfig {
            label2id: id2label
                .iter()
                .map(|(k, v)| (v.clone(), k.clone()))
                .collect(),
            id2label,
            classifier_pooling: pooling,
        }),
    })
}

/// ModernBERT with a label per token: backbone, prediction head (dense without bias, GELU,
/// LayerNorm without bias), then a linear classifier with bias.
pub(crate) struct ModernBertTokenClassifier {
    model: modernbert::ModernBert,
    dense: Linear,
    norm: LayerNorm,
    classifier: Linear,
}

impl ModernBertTokenClassifier {
    fn load(
        vb: VarBuilder,
        config: &modernbert::Config,
        labels: usize,
    ) -> candle_core::Result<Self> {
        let hidden = config.hidden_size;
        Ok(ModernBertTokenClassifier {
            model: modernbert::ModernBert::load(vb.clone(), config)?,
            dense: candle_nn::linear_no_bias(hidden, hidden, vb.pp("head.dense"))?,
            norm: candle_nn::layer_norm_no_bias(hidden, config.layer_norm_eps, vb.pp("head.norm"))?,
            classifier: candle_nn::linear(hidden, labels, vb.pp("classifier"))?,
        })
    }

    /// `(batch, tokens, labels)` logits.
    fn forward(&self, ids: &Tensor, mask: &Tensor) -> candle_core::Result<Tensor> {
        self.model
            .forward(ids, mask)?
            .apply(&self.dense)?
            .gelu_erf()?
            .apply(&self.norm)?
            .apply(&self.classifier)
    }
}
