//! What a checker folder holds, read from its `config.json` before any weight is loaded:
//! the family (`model_type`), the head (`architectures`), which label means "supported"
//! (`id2label`), and the window the model reads. Everything a run refuses is refused here,
//! with the file and the field named: families rageval does not run, `auto_map` custom
//! code, heads it does not implement, biases candle's ModernBERT cannot load, position
//! embeddings other than XLM-R's absolute ones, the original T5's scaled output head, and
//! label maps that do not say which label is support. It loads nothing and runs no model.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::JudgeError;

/// The files a checker folder must hold.
pub const CONFIG_FILE: &str = "config.json";
/// The tokenizer, in the `tokenizers` library's JSON form.
pub const TOKENIZER_FILE: &str = "tokenizer.json";
/// The weights.
pub const WEIGHTS_FILE: &str = "model.safetensors";

/// Most tokens one window holds (special tokens included), whatever longer window the model
/// was trained on: attention costs grow with the square of the window on two CPU cores.
pub const WINDOW_TOKENS: usize = 512;

/// A model family rageval runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// `model_type: modernbert` (LettuceDetect, TinyLettuce, mmBERT-based detectors).
    ModernBert,
    /// `model_type: deberta-v2` (DeBERTa-v2 and v3: MiniCheck-DeBERTa, FactCG, NLI models).
    DebertaV2,
    /// `model_type: xlm-roberta` (multilingual NLI cross-encoders).
    XlmRoberta,
    /// `model_type: t5` read as MiniCheck-Flan-T5: one decoder step, "1" against "0".
    T5,
}

impl Family {
    /// Every family rageval runs, in the order refusals list them.
    pub const ALL: [Family; 4] = [
        Family::ModernBert,
        Family::DebertaV2,
        Family::XlmRoberta,
        Family::T5,
    ];

    /// The name `config.json` gives it, as manifests and reports show it.
    pub fn name(self) -> &'static str {
        match self {
            Family::ModernBert => "modernbert",
            Family::DebertaV2 => "deberta-v2",
            Family::XlmRoberta => "xlm-roberta",
            Family::T5 => "t5",
        }
    }

    /// The family `config.json`'s `model_type` names, if rageval runs it.
    pub fn from_model_type(model_type: &str) -> Option<Family> {
        Family::ALL
            .into_iter()
            .find(|family| family.name() == model_type)
    }

    /// The families rageval runs, comma-separated, for refusals.
    pub fn names() -> String {
        Family::ALL.map(Family::name).join(", ")
    }
}

/// What the model's head outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Head {
    /// A label per token of the second sequence (the answer or claim): supported or
    /// hallucinated, LettuceDetect's shape.
    Tokens,
    /// One label per (premise, claim) pair: NLI and claim checkers.
    Sequence,
}

impl Head {
    /// `tokens` or `sequence`.
    pub fn name(self) -> &'static str {
        match self {
            Head::Tokens => "tokens",
            Head::Sequence => "sequence",
        }
    }
}

/// A checker folder's configuration, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckerSpec {
    /// The folder.
    pub dir: PathBuf,
    /// The family.
    pub family: Family,
    /// The head.
    pub head: Head,
    /// The labels by index, as `id2label` names them.
    pub labels: Vec<String>,
    /// The index of the label that means supported (for a token head: the supported token).
    pub supported: usize,
    /// Most tokens one window holds: [`WINDOW_TOKENS`], or the model's own bound if less.
    pub window: usize,
    /// The parsed `config.json`, for the family's loader.
    pub config: Value,
}

/// A T5 checker's labels: the texts whose first token it may answer, by index.
pub const T5_LABELS: [&str; 2] = ["0", "1"];

/// Label names (lower case, `-` and spaces as `_`) that mean the claim or token is supported.
const SUPPORTED_NAMES: &[&str] = &[
    "entailment",
    "entailed",
    "supported",
    "support",
    "consistent",
    "faithful",
    "factual",
    "grounded",
];

/// Label names that mean it is not.
const UNSUPPORTED_NAMES: &[&str] = &[
    "not_entailment",
    "non_entailment",
    "neutral",
    "contradiction",
    "hallucinated",
    "hallucination",
    "unsupported",
    "not_supported",
    "inconsistent",
    "unfaithful",
    "not_grounded",
];

impl CheckerSpec {
    /// Reads and checks `dir/config.json` (blocking; reads no weights).
    pub fn read(dir: &Path) -> Result<Self, JudgeError> {
        let path = dir.join(CONFIG_FILE);
        let text = std::fs::read(&path).map_err(|e| refused(&path, e.to_string()))?;
        let config: Value =
            serde_json::from_slice(&text).map_err(|e| refused(&path, format!("not JSON: {e}")))?;
        CheckerSpec::from_config(dir, config)
    }

    /// Checks a parsed configuration of the folder `dir`.
    pub fn from_config(dir: &Path, config: Value) -> Result<Self, JudgeError> {
        let path = dir.join(CONFIG_FILE);
        let fail = |reason: String| refused(&path, reason);
        let model_type = config["model_type"]
            .as_str()
            .ok_or_else(|| fail("field `model_type` is missing or not a string".into()))?;
        if config.get("auto_map").is_some() {
            return Err(fail(format!(
                "`{model_type}` needs its own Python code (field `auto_map`), which rageval does \
                 not run; rageval runs {} checkers",
                Family::names()
            )));
        }
        let family = Family::from_model_type(model_type).ok_or_else(|| {
            fail(format!(
                "model_type `{model_type}` is not a checker family rageval runs ({})",
                Family::names()
            ))
        })?;
        let architecture = config["architectures"][0].as_str().ok_or_else(|| {
            fail("field `architectures` is missing: it names the model's head".into())
        })?;
        let head = head(family, architecture).map_err(&fail)?;
        unloadable(family, &config).map_err(&fail)?;
        let (labels, supported) = if family == Family::T5 {
            // MiniCheck-Flan-T5 answers "1" (supported) or "0" in its first output token.
            (T5_LABELS.map(str::to_owned).to_vec(), 1)
        } else {
            let labels = labels(&config).map_err(&fail)?;
            let supported = supported_label(head, &labels).map_err(&fail)?;
            (labels, supported)
        };
        let window = match family {
            // Relative position buckets: no position limit.
            Family::T5 => WINDOW_TOKENS,
            _ => config["max_position_embeddings"]
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| fail("field `max_position_embeddings` is missing".into()))?
                .saturating_sub(position_offset(family, &config))
                .min(WINDOW_TOKENS),
        };
        Ok(CheckerSpec {
            dir: dir.to_path_buf(),
            family,
            head,
            labels,
            supported,
            window,
            config,
        })
    }
}

/// The head `architecture` names for `family`, or why rageval does not run it.
fn head(family: Family, architecture: &str) -> Result<Head, String> {
    match (family, architecture) {
        (Family::T5, "T5ForConditionalGeneration") => Ok(Head::Sequence),
        (Family::T5, a) => Err(format!(
            "architecture `{a}` is not a head rageval runs for t5 \
             (T5ForConditionalGeneration, read as MiniCheck-Flan-T5)"
        )),
        (Family::ModernBert, a) if a.ends_with("ForTokenClassification") => Ok(Head::Tokens),
        (_, a) if a.ends_with("ForSequenceClassification") => Ok(Head::Sequence),
        (_, a) => Err(format!(
            "architecture `{a}` is not a head rageval runs for {} (sequence \
             classification{})",
            family.name(),
            if family == Family::ModernBert {
                ", token classification"
            } else {
                ""
            }
        )),
    }
}

/// Why candle's network for `family` would compute something else than the checkpoint's,
/// if it would.
fn unloadable(family: Family, config: &Value) -> Result<(), String> {
    match family {
        Family::ModernBert => {
            // candle's ModernBERT has no biases in attention, MLP, norms or the head's dense
            // layer (ModernBERT's defaults); a checkpoint with them would load wrong.
            for field in ["attention_bias", "mlp_bias", "norm_bias", "classifier_bias"] {
                if config[field].as_bool() == Some(true) {
                    return Err(format!(
                        "field `{field}` is true: rageval's ModernBERT has no such biases"
                    ));
                }
            }
        }
        Family::XlmRoberta => {
            // candle's XLM-R adds absolute position embeddings only.
            if let Some(kind) = config
                .get("position_embedding_type")
                .and_then(Value::as_str)
                .filter(|&kind| kind != "absolute")
            {
                return Err(format!(
                    "field `position_embedding_type` is `{kind}`: rageval's XLM-RoBERTa has \
                     absolute position embeddings only"
                ));
            }
        }
        Family::T5 if t5_scales_decoder_outputs(config) => {
            return Err(
                "the decoder's outputs are scaled before the output layer (the \
                        original T5's head: `tie_word_embeddings` true, or \
                        `scale_decoder_outputs` true): rageval runs T5 v1.1 / Flan-T5 \
                        checkers, whose head is not scaled"
                    .into(),
            );
        }
        Family::DebertaV2 | Family::T5 => {}
    }
    Ok(())
}

/// Whether a T5 checkpoint scales its decoder's output by `1/sqrt(d_model)` before the output
/// layer: transformers 5 writes `scale_decoder_outputs`; earlier versions read
/// `tie_word_embeddings` for it (false for T5 v1.1 and Flan-T5, true for the original T5).
pub fn t5_scales_decoder_outputs(config: &Value) -> bool {
    config["scale_decoder_outputs"]
        .as_bool()
        .or_else(|| config["tie_word_embeddings"].as_bool())
        .unwrap_or(true)
}

/// Position ids a family does not give to tokens. RoBERTa's count from `pad_token_id + 1`
/// (fairseq's convention), so XLM-R's 514 positions hold 512 tokens.
fn position_offset(family: Family, config: &Value) -> usize {
    match family {
        Family::XlmRoberta => config["pad_token_id"]
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(1)
            .saturating_add(1),
        Family::ModernBert | Family::DebertaV2 | Family::T5 => 0,
    }
}

fn refused(path: &Path, reason: String) -> JudgeError {
    JudgeError::LocalModel {
        path: path.display().to_string(),
        reason,
    }
}

/// `id2label` as a list by index; every index from 0 present. Without the field, the two
/// unnamed labels transformers gives by default (transformers 5 leaves that map out of the
/// file it writes).
fn labels(config: &Value) -> Result<Vec<String>, String> {
    let Some(map) = config.get("id2label").filter(|map| !map.is_null()) else {
        return Ok(vec!["LABEL_0".to_owned(), "LABEL_1".to_owned()]);
    };
    let map = map
        .as_object()
        .ok_or("field `id2label` is not a map from index to label")?;
    let mut labels = vec![None; map.len()];
    for (index, name) in map {
        let slot = index
            .parse::<usize>()
            .ok()
            .and_then(|i| labels.get_mut(i))
            .ok_or_else(|| {
                format!(
                    "field `id2label` has key `{index}`, not an index below {}",
                    map.len()
                )
            })?;
        let name = name
            .as_str()
            .ok_or_else(|| format!("field `id2label.{index}` is not a string"))?;
        *slot = Some(name.to_owned());
    }
    if labels.len() < 2 {
        return Err("field `id2label` names fewer than two labels".into());
    }
    Ok(labels.into_iter().flatten().collect())
}

/// Which label index means supported. Named labels decide (exactly one must mean supported,
/// every other one not). Unnamed labels (`LABEL_0`, `LABEL_1`) are read only for a
/// two-label token head, by LettuceDetect's convention (0 supported, 1 hallucinated); for a
/// sequence head they are ambiguous (checkers differ) and refused.
pub fn supported_label(head: Head, labels: &[String]) -> Result<usize, String> {
    let normal = |label: &str| label.trim().to_lowercase().replace(['-', ' '], "_");
    let generic = labels
        .iter()
        .enumerate()
        .all(|(i, label)| normal(label) == format!("label_{i}"));
    if generic {
        return match (head, labels.len()) {
            (Head::Tokens, 2) => Ok(0),
            _ => Err(format!(
                "field `id2label` names its labels only by number ({}), so which one means \
                 supported is ambiguous; name them in config.json (e.g. entailment / \
                 not_entailment, supported / hallucinated)",
                labels.join(", ")
            )),
        };
    }
    let mut supported = Vec::new();
    for (index, label) in labels.iter().enumerate() {
        let name = normal(label);
        if SUPPORTED_NAMES.contains(&name.as_str()) {
            supported.push(index);
        } else if !UNSUPPORTED_NAMES.contains(&name.as_str()) {
            return Err(format!(
                "label `{label}` of field `id2label` says neither supported ({}) nor not \
                 supported ({})",
                SUPPORTED_NAMES.join(", "),
                UNSUPPORTED_NAMES.join(", ")
            ));
        }
    }
    match supported.as_slice() {
        [index] => Ok(*index),
        [] => Err(format!(
            "no label of field `id2label` ({}) means supported",
            labels.join(", ")
        )),
        _ => Err(format!(
            "more than one label of field `id2label` ({}) means supported",
            labels.join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn spec(config: Value) -> Result<CheckerSpec, String> {
        CheckerSpec::from_config(Path::new("/m"), config).map_err(|e| e.to_string())
    }

    fn nli(model_type: &str) -> Value {
        json!({
            "model_type": model_type,
            "architectures": ["DebertaV2ForSequenceClassification"],
            "id2label": {"0": "entailment", "1": "neutral", "2": "contradiction"},
            "max_position_embeddings": 512,
        })
    }

    #[test]
    fn an_nli_model_is_supported_by_its_entailment_label() {
        let spec = spec(nli("deberta-v2")).unwrap();
        assert_eq!(
            (spec.family, spec.head, spec.supported),
            (Family::DebertaV2, Head::Sequence, 0)
        );
        let mut reordered = nli("deberta-v2");
        reordered["id2label"] = json!({"0": "CONTRADICTION", "1": "Neutral", "2": "Entailment"});
        assert_eq!(self::spec(reordered).unwrap().supported, 2);
    }

    #[test]
    fn an_xlm_roberta_window_leaves_out_the_positions_before_the_first_token() {
        let mut config = nli("xlm-roberta");
        config["architectures"] = json!(["XLMRobertaForSequenceClassification"]);
        config["max_position_embeddings"] = json!(514);
        config["pad_token_id"] = json!(1);
        let spec = self::spec(config.clone()).unwrap();
        assert_eq!(
            (spec.family, spec.head, spec.supported, spec.window),
            (Family::XlmRoberta, Head::Sequence, 0, 512)
        );
        config["max_position_embeddings"] = json!(130);
        assert_eq!(self::spec(config.clone()).unwrap().window, 128);
        config["position_embedding_type"] = json!("relative_key");
        let error = self::spec(config.clone()).unwrap_err();
        assert!(error.contains("`relative_key`"), "{error}");
        config["position_embedding_type"] = json!("absolute");
        assert!(self::spec(config.clone()).is_ok());
        config["architectures"] = json!(["XLMRobertaForTokenClassification"]);
        let error = self::spec(config).unwrap_err();
        assert!(error.contains("for xlm-roberta"), "{error}");
    }

    #[test]
    fn a_t5_checker_is_read_as_minicheck_and_the_original_t5_head_is_refused() {
        let mut config = json!({
            "model_type": "t5",
            "architectures": ["T5ForConditionalGeneration"],
            "tie_word_embeddings": false,
        });
        let spec = self::spec(config.clone()).unwrap();
        assert_eq!(
            (spec.family, spec.head, spec.labels.clone(), spec.supported),
            (
                Family::T5,
                Head::Sequence,
                vec!["0".to_owned(), "1".to_owned()],
                1
            )
        );
        assert_eq!(spec.window, WINDOW_TOKENS);
        // transformers 5 ties always and says whether it scales.
        config["tie_word_embeddings"] = json!(true);
        let error = self::spec(config.clone()).unwrap_err();
        assert!(error.contains("scaled"), "{error}");
        config["scale_decoder_outputs"] = json!(false);
        assert!(self::spec(config.clone()).is_ok());
        config["architectures"] = json!(["T5EncoderModel"]);
        assert!(self::spec(config).unwrap_err().contains("`T5EncoderModel`"));
    }

    #[test]
    fn lettucedetect_labels_are_read_by_its_convention_for_token_heads_only() {
        let tokens = json!({
            "model_type": "modernbert",
            "architectures": ["ModernBertForTokenClassification"],
            "id2label": {"0": "LABEL_0", "1": "LABEL_1"},
            "max_position_embeddings": 8192,
        });
        let spec = spec(tokens.clone()).unwrap();
        assert_eq!(
            (spec.head, spec.supported, spec.window),
            (Head::Tokens, 0, WINDOW_TOKENS)
        );
        let mut unnamed = tokens.clone();
        unnamed.as_object_mut().unwrap().remove("id2label");
        assert_eq!(self::spec(unnamed).unwrap().labels, ["LABEL_0", "LABEL_1"]);
        let mut sequence = tokens;
        sequence["architectures"] = json!(["ModernBertForSequenceClassification"]);
        let error = self::spec(sequence).unwrap_err();
        assert!(error.contains("ambiguous"), "{error}");
    }

    #[test]
    fn ambiguous_or_unknown_label_maps_are_refused() {
        for (labels, says) in [
            (
                json!({"0": "entailment", "1": "supported"}),
                "more than one",
            ),
            (json!({"0": "neutral", "1": "contradiction"}), "no label"),
            (json!({"0": "entailment", "1": "maybe"}), "`maybe`"),
            (json!({"0": "entailment"}), "fewer than two"),
            (json!({"0": "entailment", "5": "neutral"}), "key `5`"),
        ] {
            let mut config = nli("deberta-v2");
            config["id2label"] = labels;
            let error = spec(config).unwrap_err();
            assert!(error.contains(says), "{error}");
        }
    }

    #[test]
    fn other_families_and_custom_code_are_refused_by_name() {
        let error = spec(nli("eurobert")).unwrap_err();
        assert!(
            error.contains("model_type `eurobert`")
                && error.contains("(modernbert, deberta-v2, xlm-roberta, t5)"),
            "{error}"
        );
        let mut custom = nli("deberta-v2");
        custom["auto_map"] = json!({"AutoModel": "modeling_hhem.HHEM"});
        let error = spec(custom).unwrap_err();
        assert!(
            error.contains("`deberta-v2` needs its own Python code"),
            "{error}"
        );
        let mut biased = nli("modernbert");
        biased["architectures"] = json!(["ModernBertForSequenceClassification"]);
        biased["norm_bias"] = json!(true);
        assert!(spec(biased).unwrap_err().contains("`norm_bias`"));
        let error = spec(json!({"architectures": []})).unwrap_err();
        assert!(
            error.contains("/m/config.json") && error.contains("`model_type`"),
            "{error}"
        );
    }
}
