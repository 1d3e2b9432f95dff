//! The checker networks with candle: a ModernBERT token classifier (candle has the
//! backbone but no token head, so the head — dense, GELU, LayerNorm, then a linear
//! classifier, as in transformers' `ModernBertForTokenClassification` — is written here),
//! candle's DeBERTa-v2 sequence classifier and candle's XLM-RoBERTa sequence classifier
//! (position ids from `pad_token_id + 1`; a dense, tanh, projection head on `<s>`, as in
//! transformers' `XLMRobertaForSequenceClassification`). Given token ids, they return
//! logits; what the logits mean is [`super::spec`]'s business, windows and spans
//! [`super::windows`]'s. And candle's T5 read as MiniCheck-Flan-T5 reads it: the encoder,
//! then one decoder step from the decoder start token, whose logits for the first tokens of
//! the label texts ("0", "1") are the row returned.
//! One sequence at a time: no padding, so no padding mask can differ from the reference's.

use candle_core::{DType, Device, Tensor};
use candle_nn::{LayerNorm, Linear, VarBuilder};
use candle_transformers::models::{debertav2, modernbert, t5, xlm_roberta};
use serde_json::Value;
use tokenizers::Tokenizer;

use super::spec::{CheckerSpec, Family, Head};

/// A loaded network.
pub(crate) enum Network {
    ModernBertTokens(ModernBertTokenClassifier),
    ModernBertSequence(modernbert::ModernBertForSequenceClassification),
    /// Boxed: candle's DeBERTa-v2 keeps its whole configuration inline (1.7 kB).
    DebertaV2Sequence(Box<debertav2::DebertaV2SeqClassificationModel>),
    XlmRobertaSequence(xlm_roberta::XLMRobertaForSequenceClassification),
    T5Labels(T5LabelReader),
}

/// Why a network could not be built or run, in words (the caller names the file).
pub(crate) type NetworkError = String;

impl Network {
    /// Builds the network `spec` describes over the weights in `weights` (`tokenizer` names
    /// a T5 checker's label tokens).
    pub(crate) fn load(
        spec: &CheckerSpec,
        weights: Vec<u8>,
        tokenizer: &Tokenizer,
    ) -> Result<Self, NetworkError> {
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
            (Family::XlmRoberta, _) => Network::XlmRobertaSequence(
                xlm_roberta::XLMRobertaForSequenceClassification::new(
                    spec.labels.len(),
                    &xlm_roberta_config(&spec.config)?,
                    vb,
                )
                .map_err(fit)?,
            ),
            (Family::T5, _) => {
                Network::T5Labels(T5LabelReader::load(spec, vb, tokenizer).map_err(fit)?)
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
            // XLM-R's tokenizer hands the model no token types: every token is of type 0
            // (its one type embedding), whatever the tokenizer's template says.
            Network::XlmRobertaSequence(model) => model.forward(&ids, &mask, &ids.zeros_like()?)?,
            Network::T5Labels(reader) => reader.forward(&ids)?,
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
    let count = |field: &str| config_count(config, field, None);
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

/// candle's XLM-RoBERTa configuration from `config.json`, read field by field with
/// transformers' defaults: transformers 5 leaves fields at their defaults out of the file,
/// and candle's own reader requires every one (dropouts included, which inference ignores).
fn xlm_roberta_config(config: &Value) -> Result<xlm_roberta::Config, NetworkError> {
    let count = |field: &str, default: Option<usize>| config_count(config, field, default);
    let hidden_act = match config.get("hidden_act") {
        None => candle_nn::Activation::Gelu,
        Some(name) => serde_json::from_value(name.clone())
            .map_err(|e| format!("config.json: field `hidden_act`: {e}"))?,
    };
    Ok(xlm_roberta::Config {
        hidden_size: count("hidden_size", None)?,
        layer_norm_eps: config["layer_norm_eps"].as_f64().unwrap_or(1e-5),
        attention_probs_dropout_prob: 0.0,
        hidden_dropout_prob: 0.0,
        num_attention_heads: count("num_attention_heads", None)?,
        position_embedding_type: "absolute".to_owned(),
        intermediate_size: count("intermediate_size", None)?,
        hidden_act,
        num_hidden_layers: count("num_hidden_layers", None)?,
        vocab_size: count("vocab_size", None)?,
        max_position_embeddings: count("max_position_embeddings", None)?,
        type_vocab_size: count("type_vocab_size", Some(1))?,
        pad_token_id: count("pad_token_id", Some(1))?
            .try_into()
            .map_err(|_| "config.json: field `pad_token_id` is too large".to_owned())?,
    })
}

/// `config.json`'s count `field`, or `default` where the field is absent or null.
fn config_count(
    config: &Value,
    field: &str,
    default: Option<usize>,
) -> Result<usize, NetworkError> {
    match config.get(field).filter(|value| !value.is_null()) {
        Some(value) => value.as_u64().and_then(|n| usize::try_from(n).ok()),
        None => default,
    }
    .ok_or_else(|| format!("config.json: field `{field}` is missing or not a count"))
}

/// A T5 checker as MiniCheck-Flan-T5 is read: encoder, one decoder step, the logits of the
/// label tokens. Behind a lock: candle's T5 runs with `&mut self`.
pub(crate) struct T5LabelReader {
    model: std::sync::Mutex<t5::T5ForConditionalGeneration>,
    decoder_start: u32,
    /// Per label of the spec, the first token of its text.
    label_tokens: Vec<u32>,
}

impl T5LabelReader {
    fn load(
        spec: &CheckerSpec,
        vb: VarBuilder,
        tokenizer: &Tokenizer,
    ) -> candle_core::Result<Self> {
        let fail = |reason: String| candle_core::Error::Msg(reason);
        let mut config: t5::Config = serde_json::from_value(spec.config.clone())
            .map_err(|e| fail(format!("config.json is not a T5 config: {e}")))?;
        // Unscaled output layer (checked in spec): candle's untied head. transformers 5 saves
        // no `lm_head.weight` (it ties it to the shared embeddings), T5 v1.1 checkpoints do.
        config.tie_word_embeddings = false;
        config.use_cache = false;
        let vb = if vb.contains_tensor("lm_head.weight") {
            vb
        } else {
            vb.rename_f(|name| match name {
                "lm_head.weight" => "shared.weight".to_owned(),
                other => other.to_owned(),
            })
        };
        let label_tokens = spec
            .labels
            .iter()
            .map(|label| {
                tokenizer
                    .encode(label.as_str(), false)
                    .map_err(|e| fail(format!("tokenizing the label `{label}`: {e}")))?
                    .get_ids()
                    .first()
                    .copied()
                    .ok_or_else(|| fail(format!("the label `{label}` gives no token")))
            })
            .collect::<candle_core::Result<Vec<_>>>()?;
        let decoder_start = config
            .decoder_start_token_id
            .unwrap_or(config.pad_token_id)
            .try_into()
            .map_err(|_| fail("`decoder_start_token_id` is too large".into()))?;
        Ok(T5LabelReader {
            model: std::sync::Mutex::new(t5::T5ForConditionalGeneration::load(vb, &config)?),
            decoder_start,
            label_tokens,
        })
    }

    /// `(1, labels)`: the label tokens' logits at the first decoder step.
    fn forward(&self, ids: &Tensor) -> candle_core::Result<Tensor> {
        let mut model = self
            .model
            .lock()
            .map_err(|_| candle_core::Error::Msg("a T5 run panicked earlier".into()))?;
        model.clear_kv_cache();
        let start = Tensor::new(&[[self.decoder_start]], ids.device())?;
        let logits = model.forward(ids, &start)?;
        let labels = Tensor::new(self.label_tokens.as_slice(), ids.device())?;
        logits.index_select(&labels, 1)
    }
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
