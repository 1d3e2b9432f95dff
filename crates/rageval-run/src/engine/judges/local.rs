//! The embedded models of a run without an endpoint: the GGUF chat model named by `--judge
//! gguf:PATH`, all-MiniLM-L6-v2 and, for Chinese text, multilingual-e5-small from the
//! models folder, which
//! is `--models-dir`, else `$RAGEVAL_MODELS_DIR`, else the search order of
//! `rageval_judge::model_files` (docs/local-models.md). Nothing is loaded here: each model
//! loads on its first call, so a run that needs neither pays nothing.
//!
//! Without an endpoint the judges are these models (`setup`): with `--judge gguf:PATH`
//! that model answers every task; with `--judge checker:DIR` the checker answers support
//! verdicts; otherwise the offline policy routes verdicts to the heuristic judge.

use std::path::PathBuf;

use rageval_judge::gguf::{DEFAULT_GGUF_CONTEXT, GgufOptions};
use rageval_judge::local::{e5_embedder, gguf_chat, minilm_embedder};
use rageval_judge::model_files::ENV_MODELS_DIR;
use rageval_judge::{CacheMode, Judge, JudgeSettings, ModelFiles, Models, SupportChecker, e5};
use rageval_report::JudgeModel;
use rageval_tasks::{Heuristic, Policy, Route, TaskKind};
use serde_json::{Value, json};

use super::cascade::checker_json;
use super::{
    Env, JudgeOptions, JudgeSetup, LocalJudge, Routing, Window, judges_over, lang_name, routes_json,
};
use crate::engine::error::{Result, RunError};

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

/// The embedded models: with `--judge gguf:PATH` that model answers every task; without it,
/// the offline policy.
pub(super) fn setup(
    options: &JudgeOptions,
    env: Env<'_>,
    settings: JudgeSettings,
    build: impl FnOnce(&JudgeSettings, Option<&Models>) -> Result<Judge<Models>>,
) -> Result<JudgeSetup> {
    let lang = options.lang;
    let mut local = LocalModels::find(options, env)?;
    let chosen = matches!(options.local, Some(LocalJudge::Gguf(_)));
    let heuristic_only = options.local == Some(LocalJudge::Heuristic);
    let checker = match &options.local {
        Some(LocalJudge::Checker(dir)) => {
            Some(SupportChecker::open(dir).map_err(RunError::Checker)?)
        }
        _ => None,
    };
    if !chosen {
        // The embedded GGUF model writes too poorly to be used unasked: without a model
        // named, tasks that need one say how to name one instead.
        local.models.chat = None;
        local.gguf = None;
    }
    let judge = match local.any() {
        true => Some(build(&settings, Some(&local.models))?),
        false => None,
    };
    let routing = Routing {
        kind: match (chosen, heuristic_only) {
            (true, _) => "local",
            (false, true) => "heuristic",
            (false, false) if checker.is_some() => "checker",
            (false, false) => "offline",
        },
        policy: if chosen {
            Policy::llm()
        } else {
            offline_policy()
        },
        chats: chosen,
        embeds: local.models.embedder.is_some(),
        checker,
        checker_planned: false,
        escalation: None,
    };
    let heuristic = Heuristic::lexical();
    let mut judges = judges_over(judge.clone(), &routing, heuristic.clone(), lang);
    if let Some(chinese) = local.chinese_embedder(&settings)? {
        judges = judges.with_chinese_embedder(chinese);
    }
    let note = local_note(chosen, heuristic_only, routing.checker.is_some(), &local);
    let description = json!({
        "kind": routing.kind,
        "models": local.describe(),
        "cache": settings.cache_path.as_ref().map(|p| p.display().to_string()),
        "cache_mode": format!("{:?}", settings.cache_mode).to_lowercase(),
        "context_window": chosen.then(|| options.context_window.min(GGUF_PROMPT_WINDOW)),
        "lang": lang_name(lang),
        "routes": routes_json(&judges),
        "note": note,
        "checker": routing.checker.as_ref().map(checker_json),
    });
    let models = local_models(&local);
    Ok(JudgeSetup {
        embedding_fallback: None,
        window: if chosen {
            Window::AtMost(GGUF_PROMPT_WINDOW)
        } else {
            Window::Uncut
        },
        chat: judge.filter(|_| local.models.chat.is_some()),
        gguf: local.gguf.filter(|_| local.models.chat.is_some()),
        missing_models: local.missing,
        judges,
        description,
        concurrency: settings.limits.max_concurrency,
        endpoints: Vec::new(),
        batch: None,
        routing,
        models,
        heuristic,
        lang,
        context_window: options.context_window,
    })
}

/// What the manifest says of a local judge: who answers which tasks.
fn local_note(
    chosen: bool,
    heuristic_only: bool,
    checker: bool,
    local: &LocalModels,
) -> &'static str {
    match (chosen, &local.missing) {
        (true, _) => "a local GGUF chat model answers every task",
        (false, _) if checker => {
            "--judge checker: support verdicts by the checker model (agreement unmeasured \
             until judge-check measures it), statements by the heuristic's sentence \
             splitter, other verdicts by the heuristic judge"
        }
        (false, _) if heuristic_only => {
            "--judge heuristic: verdicts by the heuristic judge, statements by its sentence \
             splitter; tasks that need a writing model or embeddings fail"
        }
        (false, None) => {
            "no judge endpoint: verdicts by the heuristic judge, statements by its sentence \
             splitter, embeddings by the embedded all-MiniLM-L6-v2; tasks that need a model \
             that writes (generated questions, entities, answers) need one named \
             (--judge-model, or --judge gguf:PATH)"
        }
        (false, Some(_)) => {
            "no judge endpoint and no embedded models: verdicts by the heuristic judge, \
             statements by its sentence splitter; tasks that need a model that writes or \
             embeddings fail"
        }
    }
}

/// The embedded models found, as the manifest lists them. They cost nothing per call: no
/// price, so no cost is claimed.
fn local_models(local: &LocalModels) -> Vec<JudgeModel> {
    let file_name = |path: &Option<std::path::PathBuf>| {
        path.as_ref()
            .and_then(|p| p.file_name())
            .map(|name| name.to_string_lossy().into_owned())
    };
    [
        (
            "chat",
            local
                .models
                .chat
                .is_some()
                .then(|| file_name(&local.gguf))
                .flatten(),
        ),
        (
            "embedding",
            local
                .models
                .embedder
                .is_some()
                .then(|| file_name(&local.minilm))
                .flatten(),
        ),
        (
            "embedding:zh",
            local
                .models
                .embedder
                .is_some()
                .then(|| file_name(&local.e5))
                .flatten(),
        ),
    ]
    .into_iter()
    .filter_map(|(role, model)| {
        Some(JudgeModel {
            role: role.into(),
            model: model?,
            price: None,
        })
    })
    .collect()
}

/// [`Policy::offline`], except that statements are split into sentences by the heuristic
/// judge (its measured figures, `rageval_tasks::measured`, were taken on sentence
/// statements): without a model named, no task is routed to a model.
fn offline_policy() -> Policy {
    let mut policy = Policy::offline();
    policy
        .overrides
        .insert(TaskKind::SplitStatements, Route::Heuristic);
    policy
}
