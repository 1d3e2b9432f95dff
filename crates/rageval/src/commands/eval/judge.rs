//! Resolving `--judge-*` flags and the environment into the run's [`Judges`], and saying on
//! stderr and in the manifest who answers each task.
//!
//! An endpoint or a pool of them (a model from `--judge-model`, `$RAGEVAL_JUDGE_MODEL` or
//! `rageval.toml`) answers every task; so does a GGUF file named by `--judge gguf:PATH`.
//! `--judge heuristic` loads no model: what the heuristic judge cannot answer fails.
//! Without either, the offline defaults: verdict tasks to the heuristic judge, statement
//! splitting to its sentence splitter, writing tasks to the embedded GGUF chat model and
//! embeddings to the embedded all-MiniLM-L6-v2 (`crate::judge::local`). When the embedded
//! models are not provisioned, tasks that need them fail with the reason, which names
//! `scripts/fetch-models.sh` (no fake answers).

use anyhow::Context as _;
use rageval_judge::config::JudgeSettings;
use rageval_judge::{Judge, Models};
use rageval_metrics::{Judges, Requirements};
use rageval_tasks::{Heuristic, Lang, LangChoice, Policy, Route, TaskJudge, TaskKind};
use serde_json::{Value, json};

use crate::cli::{JudgeArgs, LangArg, LocalJudge};
use crate::judge::local::{GGUF_PROMPT_WINDOW, LocalModels};

/// The judges of a run and what to say about them.
pub struct JudgeSetup {
    pub judges: Judges,
    /// The chat judge, when an endpoint or a local model is configured (its counters go to
    /// the manifest).
    pub chat: Option<Judge<Models>>,
    /// How a sample's contexts are bounded for the chat model's prompts.
    pub window: Window,
    /// Why tasks that need the embedded models cannot run, when they are not provisioned.
    pub missing_models: Option<String>,
    /// For the manifest: endpoint, models, cache, language, routes.
    pub description: Value,
    /// Most judge calls in flight (the limiter's ceiling); twice as many samples are scored
    /// at once.
    pub concurrency: usize,
}

impl JudgeSetup {
    /// Whether a chat model answers (its context window then bounds prompts).
    pub fn has_chat_model(&self) -> bool {
        self.chat.is_some()
    }

    /// The prompt window in tokens that a sample's contexts are cut to fit, given
    /// `--context-window` (`requested`); `None` when no cut applies.
    pub fn window(&self, requested: u64) -> Option<usize> {
        let window = match self.window {
            _ if !self.has_chat_model() => return None,
            Window::Requested => requested,
            Window::AtMost(cap) => cap.min(requested),
            Window::Uncut => return None,
        };
        Some(usize::try_from(window).unwrap_or(usize::MAX))
    }

    /// One line per task the metrics need: who answers it and how well it measured.
    pub fn route_lines(&self, needed: &[TaskKind]) -> Vec<String> {
        let Some(tasks) = self.judges.tasks() else {
            return Vec::new();
        };
        tasks
            .describe()
            .into_iter()
            .filter(|route| needed.contains(&route.task))
            .map(|route| route.summary())
            .collect()
    }

    /// Why these judges cannot give what `requirements` asks, if they cannot (naming
    /// `scripts/fetch-models.sh` when the embedded models are missing).
    pub fn unmet(&self, requirements: &Requirements) -> Option<String> {
        let why = self.judges.unmet(requirements)?;
        Some(match &self.missing_models {
            Some(missing) => format!("{why}: {missing}"),
            None => why,
        })
    }

    /// Counters of the chat judge so far, for the manifest.
    pub fn stats(&self) -> Value {
        match &self.chat {
            None => Value::Null,
            Some(judge) => {
                let stats = judge.stats();
                json!({
                    "attempts": stats.attempts,
                    "failed_attempts": stats.failed_attempts,
                    "retries": stats.retries,
                    "cache_hits": stats.cache_hits,
                    "cache_writes": stats.cache_writes,
                    "schema_fallbacks": stats.schema_fallbacks,
                    "rungs": judge.rung_counts(),
                })
            }
        }
    }
}

/// How a sample's contexts are bounded for the chat model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// To `--context-window` (an endpoint's model).
    Requested,
    /// To `--context-window`, at most this many tokens (a local model's own bound).
    AtMost(u64),
    /// Not cut: the chat model reads only prompts without contexts' bulk, or fails a prompt
    /// too long for it with the reason, while the heuristic judge reads every context.
    Uncut,
}

/// Resolves the judges from the flags, the environment and `rageval.toml`
/// (`crate::judge::settings`: flags over env over file over defaults).
pub fn resolve(args: &JudgeArgs) -> anyhow::Result<JudgeSetup> {
    let lang = match args.lang {
        LangArg::Auto => LangChoice::Auto,
        LangArg::En => LangChoice::Force(Lang::En),
        LangArg::Zh => LangChoice::Force(Lang::Zh),
    };
    let settings = crate::judge::settings(args)?;
    match settings.model.clone().filter(|_| settings.has_endpoint()) {
        Some(model) if args.local_judge.is_none() => endpoint(args, &settings, model, lang),
        _ => local(args, &settings, lang),
    }
}

/// Every task to the configured endpoints.
fn endpoint(
    args: &JudgeArgs,
    settings: &JudgeSettings,
    model: String,
    lang: LangChoice,
) -> anyhow::Result<JudgeSetup> {
    let judge = settings.build().context("cannot build the judge")?;
    let tasks = TaskJudge::new(Policy::llm())
        .with_llm(judge.clone())
        .with_heuristic(Heuristic::lexical());
    let mut judges = Judges::new(tasks).with_lang(lang);
    if settings.embedding_model.is_some() {
        judges = judges.with_embedder(judge.clone());
    }
    let endpoints: Vec<String> = settings
        .endpoints
        .iter()
        .map(|e| e.settings.endpoint_for_display())
        .collect();
    let description = json!({
        "kind": "endpoint",
        "endpoints": endpoints,
        "model": model,
        "embedding_model": settings.embedding_model,
        "cache": settings.cache_path.as_ref().map(|p| p.display().to_string()),
        "cache_mode": format!("{:?}", settings.cache_mode).to_lowercase(),
        "concurrency": settings.limits.max_concurrency,
        "requests_per_minute": settings.limits.requests_per_minute,
        "tokens_per_minute": settings.limits.tokens_per_minute,
        "max_calls": settings.budget.max_calls,
        "max_cost_usd": settings.budget.max_cost_usd,
        "context_window": args.context_window,
        "lang": lang_name(args.lang),
        "routes": routes_json(&judges),
    });
    Ok(JudgeSetup {
        judges,
        chat: Some(judge),
        window: Window::Requested,
        missing_models: None,
        description,
        concurrency: settings.limits.max_concurrency,
    })
}

/// The embedded models: with `--judge gguf:PATH` that model answers every task; without it,
/// the offline policy.
fn local(
    args: &JudgeArgs,
    settings: &JudgeSettings,
    lang: LangChoice,
) -> anyhow::Result<JudgeSetup> {
    let local = LocalModels::find(args)?;
    let judge = match local.any() {
        true => Some(
            settings
                .build_with(local.models.clone())
                .context("cannot build the judge")?,
        ),
        false => None,
    };
    let chosen = matches!(args.local_judge, Some(LocalJudge::Gguf(_)));
    let heuristic_only = args.local_judge == Some(LocalJudge::Heuristic);
    let mut tasks = TaskJudge::new(if chosen {
        Policy::llm()
    } else {
        offline_policy()
    })
    .with_heuristic(Heuristic::lexical());
    let judges = match &judge {
        Some(judge) => {
            tasks = tasks.with_llm(judge.clone());
            Judges::new(tasks).with_embedder(judge.clone())
        }
        None => Judges::new(tasks),
    }
    .with_lang(lang);
    let note = match (chosen, &local.missing) {
        (true, _) => "a local GGUF chat model answers every task",
        (false, _) if heuristic_only => {
            "--judge heuristic: verdicts by the heuristic judge, statements by its sentence \
             splitter; tasks that need a writing model or embeddings fail"
        }
        (false, None) => {
            "no judge endpoint: verdicts by the heuristic judge, statements by its sentence \
             splitter, writing tasks by the embedded GGUF chat model, embeddings by the \
             embedded all-MiniLM-L6-v2"
        }
        (false, Some(_)) => {
            "no judge endpoint and no embedded models: verdicts by the heuristic judge, \
             statements by its sentence splitter; tasks that need a writing model or \
             embeddings fail"
        }
    };
    let description = json!({
        "kind": match (chosen, heuristic_only) {
            (true, _) => "local",
            (false, true) => "heuristic",
            (false, false) => "offline",
        },
        "models": local.describe(),
        "cache": settings.cache_path.as_ref().map(|p| p.display().to_string()),
        "cache_mode": format!("{:?}", settings.cache_mode).to_lowercase(),
        "context_window": chosen.then(|| args.context_window.min(GGUF_PROMPT_WINDOW)),
        "lang": lang_name(args.lang),
        "routes": routes_json(&judges),
        "note": note,
    });
    Ok(JudgeSetup {
        window: if chosen {
            Window::AtMost(GGUF_PROMPT_WINDOW)
        } else {
            Window::Uncut
        },
        chat: judge.filter(|_| local.models.chat.is_some()),
        missing_models: local.missing,
        judges,
        description,
        concurrency: settings.limits.max_concurrency,
    })
}

/// [`Policy::offline`], except that statements are split into sentences by the heuristic
/// judge: its measured figures (`rageval_tasks::measured`) were taken on sentence
/// statements, and a sub-billion-parameter GGUF model splits text less reliably than it.
fn offline_policy() -> Policy {
    let mut policy = Policy::offline();
    policy
        .overrides
        .insert(TaskKind::SplitStatements, Route::Heuristic);
    policy
}

fn routes_json(judges: &Judges) -> Value {
    judges
        .tasks()
        .map(|tasks| serde_json::to_value(tasks.describe()).unwrap_or(Value::Null))
        .unwrap_or(Value::Null)
}

fn lang_name(lang: LangArg) -> &'static str {
    match lang {
        LangArg::Auto => "auto",
        LangArg::En => "en",
        LangArg::Zh => "zh",
    }
}
