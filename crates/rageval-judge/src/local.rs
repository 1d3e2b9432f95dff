//! The embedded models, opened on first use. A run whose metrics never ask the local chat
//! model or the embedder pays nothing for them (no load, no memory), while the names that
//! enter cache keys, routes and manifests are known before loading. Loading runs on the
//! blocking pool; a load that fails fails that call with an error naming the file, and the
//! next call tries again. Which files to use is the caller's choice ([`crate::ModelFiles`]).
//!
//! [`gguf_chat`], [`minilm_embedder`] and [`e5_embedder`] exist in every build, so callers
//! need no feature of their own: a build without `gguf` refuses a GGUF model at once
//! ([`JudgeError::NotBuilt`]), and one without `minilm` gives embedders whose every call
//! fails saying so, as a checker does without `checker`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::sync::OnceCell;

use crate::chat::Embedder;
#[cfg(feature = "gguf")]
use crate::chat::{ChatModel, ChatRequest, ChatResponse};
#[cfg(feature = "minilm")]
use crate::e5::E5Embedder;
use crate::error::JudgeError;
#[cfg(feature = "gguf")]
use crate::gguf;
#[cfg(feature = "gguf")]
use crate::gguf::GgufChat;
use crate::gguf::GgufOptions;
#[cfg(feature = "minilm")]
use crate::minilm::MiniLmEmbedder;
use crate::models::{AnyChatModel, AnyEmbedder};
use crate::{e5, minilm};

/// A GGUF model asked of a build without the `gguf` feature.
#[cfg(any(test, not(feature = "gguf")))]
fn gguf_not_built(path: &Path) -> JudgeError {
    JudgeError::NotBuilt {
        feature: "gguf",
        what: "the in-process GGUF chat model: llama.cpp, a C++ build",
        path: path.display().to_string(),
    }
}

/// An embedding asked of a build without the `minilm` feature.
#[cfg(any(test, not(feature = "minilm")))]
fn minilm_not_built(path: &Path) -> JudgeError {
    JudgeError::NotBuilt {
        feature: "minilm",
        what: "the embedded MiniLM and e5 embedders: candle",
        path: path.display().to_string(),
    }
}

/// The GGUF chat model at `path`, loaded by its first call. With the `gguf` feature the file
/// is checked now (it exists and is a GGUF file); without it the model is refused now, so a
/// run never starts on a judge this build cannot run.
pub fn gguf_chat(path: impl AsRef<Path>, options: GgufOptions) -> Result<AnyChatModel, JudgeError> {
    #[cfg(feature = "gguf")]
    {
        OnFirstUse::gguf(path, options).map(AnyChatModel::new)
    }
    #[cfg(not(feature = "gguf"))]
    {
        let _ = options;
        Err(gguf_not_built(path.as_ref()))
    }
}

/// The all-MiniLM-L6-v2 folder `dir`, loaded by the first embedding call.
pub fn minilm_embedder(dir: impl AsRef<Path>) -> AnyEmbedder {
    #[cfg(feature = "minilm")]
    {
        AnyEmbedder::new(OnFirstUse::minilm(dir))
    }
    #[cfg(not(feature = "minilm"))]
    {
        let dir = dir.as_ref();
        NotBuiltEmbedder::any(minilm::KIND, minilm::model_name(dir), dir)
    }
}

/// The multilingual-e5-small folder `dir` (holding `e5-small-q4.bin`), loaded by the first
/// embedding call.
pub fn e5_embedder(dir: impl AsRef<Path>) -> AnyEmbedder {
    #[cfg(feature = "minilm")]
    {
        AnyEmbedder::new(OnFirstUse::e5(dir))
    }
    #[cfg(not(feature = "minilm"))]
    {
        let dir = dir.as_ref();
        NotBuiltEmbedder::any(e5::KIND, e5::model_name(dir), dir)
    }
}

/// An embedded embedder in a build without the `minilm` feature: it names itself as the
/// real one would (so routes and manifests read the same) and fails every call.
#[cfg(not(feature = "minilm"))]
#[derive(Debug)]
struct NotBuiltEmbedder {
    kind: &'static str,
    name: String,
    path: PathBuf,
}

#[cfg(not(feature = "minilm"))]
impl NotBuiltEmbedder {
    fn any(kind: &'static str, name: String, path: &Path) -> AnyEmbedder {
        AnyEmbedder::new(NotBuiltEmbedder {
            kind,
            name,
            path: path.to_path_buf(),
        })
    }
}

#[cfg(not(feature = "minilm"))]
impl Embedder for NotBuiltEmbedder {
    fn embedding_kind(&self) -> &str {
        self.kind
    }
    fn embedding_model(&self) -> &str {
        &self.name
    }
    async fn embed(&self, _inputs: &[String]) -> Result<Vec<Vec<f32>>, JudgeError> {
        Err(minilm_not_built(&self.path))
    }
}

type Opener<T> = Arc<dyn Fn(&Path) -> Result<T, JudgeError> + Send + Sync>;

/// A local model loaded by the first call that needs it.
pub struct OnFirstUse<T> {
    kind: &'static str,
    name: String,
    path: PathBuf,
    open: Opener<T>,
    loaded: OnceCell<T>,
}

impl<T> std::fmt::Debug for OnFirstUse<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OnFirstUse")
            .field("kind", &self.kind)
            .field("path", &self.path)
            .field("loaded", &self.loaded.initialized())
            .finish()
    }
}

impl<T: Send + Sync + 'static> OnFirstUse<T> {
    /// The model file or folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    async fn get(&self) -> Result<&T, JudgeError> {
        self.loaded
            .get_or_try_init(|| async {
                let (open, path) = (Arc::clone(&self.open), self.path.clone());
                tokio::task::spawn_blocking(move || open(&path))
                    .await
                    .map_err(|e| JudgeError::Task(format!("loading a local model: {e}")))?
            })
            .await
    }
}

#[cfg(feature = "gguf")]
impl OnFirstUse<GgufChat> {
    /// The GGUF chat model at `path`, checked now (it exists and is a GGUF file) and loaded
    /// by the first chat call.
    pub fn gguf(path: impl AsRef<Path>, options: GgufOptions) -> Result<Self, JudgeError> {
        let path = path.as_ref().to_path_buf();
        gguf::check_gguf_header(&path)?;
        Ok(OnFirstUse {
            kind: gguf::KIND,
            name: gguf::model_name(&path),
            path,
            open: Arc::new(move |path: &Path| GgufChat::open(path, options.clone())),
            loaded: OnceCell::new(),
        })
    }
}

#[cfg(feature = "gguf")]
impl ChatModel for OnFirstUse<GgufChat> {
    fn kind(&self) -> &str {
        self.kind
    }
    fn model(&self) -> &str {
        &self.name
    }
    fn endpoint(&self) -> String {
        self.path.display().to_string()
    }
    fn supports_response_schema(&self) -> bool {
        true
    }
    /// Every request gets a fresh sampler: greedy, or seeded with the request's seed (0
    /// when none), over a cleared cache.
    fn answers_repeat(&self) -> bool {
        true
    }
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, JudgeError> {
        self.get().await?.chat(request).await
    }
}

#[cfg(feature = "minilm")]
impl OnFirstUse<MiniLmEmbedder> {
    /// The all-MiniLM-L6-v2 folder `dir`, loaded by the first embedding call.
    pub fn minilm(dir: impl AsRef<Path>) -> Self {
        let path = dir.as_ref().to_path_buf();
        OnFirstUse {
            kind: minilm::KIND,
            name: minilm::model_name(&path),
            path,
            open: Arc::new(|dir: &Path| MiniLmEmbedder::open(dir)),
            loaded: OnceCell::new(),
        }
    }
}

#[cfg(feature = "minilm")]
impl OnFirstUse<E5Embedder> {
    /// The multilingual-e5-small folder `dir` (holding `e5-small-q4.bin`), loaded by the
    /// first embedding call.
    pub fn e5(dir: impl AsRef<Path>) -> Self {
        let path = dir.as_ref().to_path_buf();
        OnFirstUse {
            kind: e5::KIND,
            name: e5::model_name(&path),
            path,
            open: Arc::new(|dir: &Path| E5Embedder::open(dir)),
            loaded: OnceCell::new(),
        }
    }
}

/// Every embedded embedder, loaded by its first call.
impl<T: Embedder> Embedder for OnFirstUse<T> {
    fn embedding_kind(&self) -> &str {
        self.kind
    }
    fn embedding_model(&self) -> &str {
        &self.name
    }
    async fn embed(&self, inputs: &[String]) -> Result<Vec<Vec<f32>>, JudgeError> {
        self.get().await?.embed(inputs).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a build without llama.cpp says of a GGUF model (tested in every build): the
    /// file and the feature, as an error that is neither retried nor a stop.
    #[test]
    fn a_gguf_model_in_a_build_without_llama_cpp_is_refused_naming_the_feature() {
        let error = gguf_not_built(Path::new("models/judge.gguf"));
        assert_eq!(
            error.to_string(),
            "models/judge.gguf: this rageval was built without the `gguf` feature (the \
             in-process GGUF chat model: llama.cpp, a C++ build)"
        );
        assert!(!error.is_retryable() && !error.is_stop());
        let error = minilm_not_built(Path::new("models/all-MiniLM-L6-v2"));
        assert!(
            error.to_string().ends_with(
                "without the `minilm` feature (the embedded MiniLM and e5 embedders: candle)"
            ),
            "{error}"
        );
    }

    /// The default build has no llama.cpp: a GGUF model asked for is refused at once, before
    /// any run could start on it.
    #[cfg(not(feature = "gguf"))]
    #[test]
    fn without_the_gguf_feature_a_gguf_model_is_refused_at_once() {
        let error = gguf_chat("models/judge.gguf", GgufOptions::default()).unwrap_err();
        assert!(
            matches!(
                error,
                JudgeError::NotBuilt {
                    feature: "gguf",
                    ..
                }
            ),
            "{error:?}"
        );
    }

    /// The GGUF judge over a file holding `bytes` (checked by its header, never loaded here).
    #[cfg(feature = "gguf")]
    fn gguf_judge_over(bytes: &str) -> Result<AnyChatModel, JudgeError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("judge.gguf");
        std::fs::write(&path, bytes).unwrap();
        gguf_chat(&path, GgufOptions::default())
    }

    #[cfg(feature = "gguf")]
    #[test]
    fn with_the_gguf_feature_a_file_that_is_no_gguf_model_is_refused_by_its_header() {
        let error = gguf_judge_over("not a model").unwrap_err();
        assert!(error.to_string().contains("not a GGUF file"), "{error}");
    }

    /// The GGUF judge as a run holds it (type-erased, loaded by its first call) says that
    /// its answers repeat, so a failed climb is not asked again; the check loads nothing.
    #[cfg(feature = "gguf")]
    #[test]
    fn the_gguf_judge_says_its_answers_repeat_without_loading_the_model() {
        let judge = gguf_judge_over("GGUF and nothing a model needs").unwrap();
        assert!(judge.answers_repeat());
        let models = crate::Models {
            chat: Some(judge),
            embedder: None,
        };
        assert!(models.answers_repeat());
        assert!(
            !crate::Models::default().answers_repeat(),
            "no model, no promise"
        );
    }

    /// Without `minilm` the embedders still name themselves (routes and manifests read the
    /// same) and every call fails naming the feature.
    #[cfg(not(feature = "minilm"))]
    #[tokio::test]
    async fn without_the_minilm_feature_the_embedders_name_themselves_and_fail_every_call() {
        for (embedder, kind, name) in [
            (
                minilm_embedder("models/all-MiniLM-L6-v2"),
                minilm::KIND,
                "all-MiniLM-L6-v2",
            ),
            (
                e5_embedder("models/multilingual-e5-small"),
                e5::KIND,
                "multilingual-e5-small",
            ),
        ] {
            assert_eq!(
                (embedder.embedding_kind(), embedder.embedding_model()),
                (kind, name)
            );
            let error = embedder.embed(&["text".to_owned()]).await.unwrap_err();
            assert!(
                matches!(
                    error,
                    JudgeError::NotBuilt {
                        feature: "minilm",
                        ..
                    }
                ),
                "{error:?}"
            );
        }
    }
}
