//! [`SupportChecker`]: a small fact-checking model a team brings (`--judge checker:DIR`),
//! run in-process with candle, answering whether a claim is supported by contexts.
//!
//! DIR holds `config.json`, `tokenizer.json` and `model.safetensors`; `model_type` picks the
//! family ([`spec`]): ModernBERT with a token head (LettuceDetect: a hallucination label per
//! claim token, so unsupported spans), ModernBERT, DeBERTa-v2 or XLM-RoBERTa with a sequence
//! head (NLI and claim checkers, multilingual ones with XLM-R: P(supported)), and T5 read as
//! MiniCheck-Flan-T5 (P(supported) from its first output token, "1" against "0"). Opening reads the configuration and hashes the weights
//! (the SHA-256 names the model in run identities); the weights load on the first check,
//! on the blocking pool. Long contexts are read in overlapping windows ([`windows`]).
//!
//! The networks need the `checker` feature (candle and tokenizers); without it a folder
//! still opens and names itself, and every check fails saying so. This module knows no
//! task: `rageval-tasks` turns a [`ClaimCheck`] into a verdict.

#[cfg(feature = "checker")]
mod engine;
#[cfg(feature = "checker")]
mod network;
pub mod spec;
pub mod windows;

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use sha2::{Digest, Sha256};

pub use spec::{CheckerSpec, Family, Head};

use crate::error::JudgeError;

/// What a checker said about one claim.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimCheck {
    /// P(supported) in [0, 1], over the windows ([`windows::combine`]).
    pub support: f64,
    /// The context whose window supported it best.
    pub context: Option<usize>,
    /// The claim's text the model marked as unsupported (token heads only).
    pub unsupported_spans: Vec<String>,
    /// Windows read.
    pub windows: usize,
}

/// A network's raw output for one (first, second) pair: the token ids it read and a row of
/// logits per token (token head) or one row (sequence head).
#[derive(Debug, Clone, PartialEq)]
pub struct PairLogits {
    /// The tokenizer's ids, special tokens included.
    pub ids: Vec<u32>,
    /// The logits.
    pub rows: Vec<Vec<f32>>,
}

/// A checker model folder, loaded on first use. Cheap to clone.
#[derive(Clone)]
pub struct SupportChecker {
    inner: Arc<Inner>,
}

struct Inner {
    spec: CheckerSpec,
    name: String,
    sha256: String,
    #[cfg(feature = "checker")]
    engine: tokio::sync::OnceCell<Arc<engine::Engine>>,
}

impl std::fmt::Debug for SupportChecker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SupportChecker")
            .field("dir", &self.inner.spec.dir)
            .field("family", &self.inner.spec.family)
            .field("head", &self.inner.spec.head)
            .field("sha256", &self.inner.sha256)
            .finish()
    }
}

impl SupportChecker {
    /// Checks `dir`'s configuration (refusing what rageval cannot run) and hashes its weights
    /// (blocking: about a second per 500 MB). Loads no weights.
    pub fn open(dir: impl AsRef<Path>) -> Result<Self, JudgeError> {
        let dir = dir.as_ref();
        let spec = CheckerSpec::read(dir)?;
        let tokenizer = dir.join(spec::TOKENIZER_FILE);
        if !tokenizer.is_file() {
            return Err(JudgeError::LocalModel {
                path: tokenizer.display().to_string(),
                reason: "missing: a checker folder holds config.json, tokenizer.json and \
                         model.safetensors"
                    .into(),
            });
        }
        let sha256 = sha256_file(&dir.join(spec::WEIGHTS_FILE))?;
        let name = dir.file_name().map_or_else(
            || "checker".to_owned(),
            |n| n.to_string_lossy().into_owned(),
        );
        Ok(SupportChecker {
            inner: Arc::new(Inner {
                spec,
                name,
                sha256,
                #[cfg(feature = "checker")]
                engine: tokio::sync::OnceCell::new(),
            }),
        })
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.inner.spec.dir
    }

    /// The folder's name, as the model is known in manifests.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The family.
    pub fn family(&self) -> Family {
        self.inner.spec.family
    }

    /// The head.
    pub fn head(&self) -> Head {
        self.inner.spec.head
    }

    /// The SHA-256 of `model.safetensors`, lower-case hex.
    pub fn sha256(&self) -> &str {
        &self.inner.sha256
    }

    /// The checked configuration.
    pub fn spec(&self) -> &CheckerSpec {
        &self.inner.spec
    }

    /// `claim` against `contexts`, on the blocking pool (loading the model first if needed).
    pub async fn check(&self, contexts: &[String], claim: &str) -> Result<ClaimCheck, JudgeError> {
        #[cfg(feature = "checker")]
        {
            let engine = self.engine().await?;
            let (contexts, claim) = (contexts.to_vec(), claim.to_owned());
            tokio::task::spawn_blocking(move || engine.check(&contexts, &claim))
                .await
                .map_err(|e| JudgeError::Task(format!("checker task: {e}")))?
        }
        #[cfg(not(feature = "checker"))]
        {
            let _ = (contexts, claim);
            Err(self.unbuilt())
        }
    }

    /// The network's raw output for one pair (blocking; loads the model if needed): what the
    /// fixture tests compare with the reference implementation.
    pub fn pair_logits_blocking(
        &self,
        first: &str,
        second: &str,
    ) -> Result<PairLogits, JudgeError> {
        #[cfg(feature = "checker")]
        {
            let engine = match self.inner.engine.get() {
                Some(engine) => Arc::clone(engine),
                None => Arc::new(engine::Engine::load(self.inner.spec.clone())?),
            };
            engine.pair_logits(first, second)
        }
        #[cfg(not(feature = "checker"))]
        {
            let _ = (first, second);
            Err(self.unbuilt())
        }
    }

    #[cfg(feature = "checker")]
    async fn engine(&self) -> Result<Arc<engine::Engine>, JudgeError> {
        self.inner
            .engine
            .get_or_try_init(|| async {
                let spec = self.inner.spec.clone();
                tokio::task::spawn_blocking(move || engine::Engine::load(spec).map(Arc::new))
                    .await
                    .map_err(|e| JudgeError::Task(format!("loading a checker: {e}")))?
            })
            .await
            .cloned()
    }

    #[cfg(not(feature = "checker"))]
    fn unbuilt(&self) -> JudgeError {
        JudgeError::NotBuilt {
            feature: "checker",
            what: "checker models: candle",
            path: self.dir().display().to_string(),
        }
    }
}

/// SHA-256 of a file, streamed.
fn sha256_file(path: &Path) -> Result<String, JudgeError> {
    let fail = |e: std::io::Error| JudgeError::LocalModel {
        path: path.display().to_string(),
        reason: e.to_string(),
    };
    let mut file = std::fs::File::open(path).map_err(fail)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let read = file.read(&mut buffer).map_err(fail)?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect())
}
