//! The embedded models, opened on first use. A run whose metrics never ask the local chat
//! model or the embedder pays nothing for them (no load, no memory), while the names that
//! enter cache keys, routes and manifests are known before loading. Loading runs on the
//! blocking pool; a load that fails fails that call with an error naming the file, and the
//! next call tries again. Which files to use is the caller's choice ([`crate::ModelFiles`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::sync::OnceCell;

use crate::chat::{ChatModel, ChatRequest, ChatResponse, Embedder};
#[cfg(feature = "minilm")]
use crate::e5::{self, E5Embedder};
use crate::error::JudgeError;
#[cfg(feature = "gguf")]
use crate::gguf::{self, GgufChat, GgufOptions};
#[cfg(feature = "minilm")]
use crate::minilm::{self, MiniLmEmbedder};

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
