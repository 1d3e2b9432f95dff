//! The embedded models of a run without an endpoint: the GGUF chat model named by `--judge
//! gguf:PATH`, all-MiniLM-L6-v2 and, for Chinese text, multilingual-e5-small from the
//! models folder, which
//! is `--models-dir`, else `$RAGEVAL_MODELS_DIR`, else the search order of
//! `rageval_judge::model_files` (docs/local-models.md). Nothing is loaded here: each model
//! loads on its first call, so a run that needs neither pays nothing.

use std::path::PathBuf;

use rageval_judge::gguf::{DEFAULT_GGUF_CONTEXT, GgufOptions};
use rageval_judge::local::{e5_embedder, gguf_chat, minilm_embedder};
use rageval_judge::model_files::ENV_MODELS_DIR;
use rageval_judge::{CacheMode, Judge, JudgeSettings, ModelFiles, Models, e5};
use serde_json::{Value, json};

use super::{Env, JudgeOptions, LocalJudge};
use crate::error::{Result, RunError};

/// The embedded models found for a run.
pub struct LocalModels {
    /// The chat model and the embedder, either absent when not found.
    pub models: Models,
    /// The GGUF chat model file named by `--judge gguf:PATH`.
    pub gguf: Option<PathBuf>,
    /// The all-MiniLM-L6-v2 folder.
    pub minilm: Option<PathBuf>,
    /// The multilingual-e5-small folder, when its file is there: it embeds Chinese text.
    pub e5: Option<PathBuf>,
    /// Why the embedded models are missing, when the search found no models folder (the
    /// reason names `scripts/fetch-models.sh`).
    pub missing: Option<String>,
}

/// Prompt tokens a sample's material may fill when the GGUF model judges: a quarter of its
/// context window (SmolLM2's 8,192), leaving room for the template, the answer (512) and the
/// gap between the binary's token estimate and the model's own tokenizer, which on Chinese
/// text counts about twice as many tokens.
pub const GGUF_PROMPT_WINDOW: u64 = DEFAULT_GGUF_CONTEXT as u64 / 4;

impl LocalModels {
    /// Finds the models; none found is an error only when the folder was named
    /// (`--models-dir` or `$RAGEVAL_MODELS_DIR`), else a reason kept in `missing`. With
    /// `--judge heuristic`, none are wanted.
    pub fn find(options: &JudgeOptions, env: Env<'_>) -> Result<Self> {
        let chosen = match &options.local {
            Some(LocalJudge::Heuristic) => {
                return Ok(LocalModels {
                    models: Models::default(),
                    gguf: None,
                    minilm: None,
                    e5: None,
                    missing: None,
                });
            }
            Some(LocalJudge::Gguf(path)) => Some(path.clone()),
            Some(LocalJudge::Checker(_)) | None => None,
        };
        let named =
            options.models_dir.is_some() || env(ENV_MODELS_DIR).is_some_and(|dir| !dir.is_empty());
        let (files, missing) = match ModelFiles::locate(options.models_dir.as_deref()) {
            Ok(files) => (Some(files), None),
            Err(error) if named => return Err(RunError::Models(error)),
            Err(error) => (None, Some(error.to_string())),
        };
        // Only a model named with `--judge gguf:PATH` is opened: the models folder's 135M
        // model writes too poorly to be used unasked, and a build without the `gguf`
        // feature refuses only a model that was asked for.
        let gguf = chosen;
        let e5 = files
            .as_ref()
            .map(|f| f.dir.join(e5::DIR_NAME))
            .filter(|dir| dir.join(e5::FILE_NAME).is_file());
        let minilm = files.map(|f| f.minilm);
        let chat = match &gguf {
            Some(path) => Some(gguf_chat(path, GgufOptions::default()).map_err(RunError::Models)?),
            None => None,
        };
        let embedder = minilm.as_ref().map(minilm_embedder);
        Ok(LocalModels {
            models: Models { chat, embedder },
            gguf,
            minilm,
            e5,
            missing,
        })
    }

    /// The judge that embeds Chinese text (uncached: its vectors cost nothing to make
    /// again), when multilingual-e5-small is installed and MiniLM embeds the rest.
    pub fn chinese_embedder(&self, settings: &JudgeSettings) -> Result<Option<Judge<Models>>> {
        let Some(dir) = self.e5.as_ref().filter(|_| self.models.embedder.is_some()) else {
            return Ok(None);
        };
        let mut uncached = settings.clone();
        uncached.cache_mode = CacheMode::Off;
        let models = Models {
            chat: None,
            embedder: Some(e5_embedder(dir)),
        };
        uncached
            .build_with(models)
            .map(Some)
            .map_err(RunError::Judge)
    }

    /// Whether any model was found.
    pub fn any(&self) -> bool {
        self.models.chat.is_some() || self.models.embedder.is_some()
    }

    /// For the run manifest.
    pub fn describe(&self) -> Value {
        let path = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
        json!({
            "chat_model": path(&self.gguf),
            "embedding_model": path(&self.minilm),
            "embedding_model_zh": path(&self.e5),
            "missing": self.missing,
        })
    }
}
