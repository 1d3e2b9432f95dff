//! Resolving `--judge-*` flags and the environment into the run's [`Judges`], and saying on
//! stderr and in the manifest who answers each task.
//!
//! An endpoint (a model from `--judge-model` or `$RAGEVAL_JUDGE_MODEL`) answers every task,
//! with the heuristic judge as the fallback for nothing. Without one, the offline defaults:
//! verdict tasks to the heuristic judge, statement splitting to its sentence splitter, and
//! tasks that need a writing model fail with the reason (no fake answers).

use anyhow::Context as _;
use rageval_judge::settings::{ENV_JUDGE_BASE_URL, ENV_JUDGE_EMBEDDING_MODEL, ENV_JUDGE_MODEL};
use rageval_judge::{
    Cache, CacheMode, EndpointSettings, Judge, JudgeConfig, LimiterConfig, Models, OpenAiBackend,
    default_cache_path,
};
use rageval_metrics::{Judges, Requirements};
use rageval_tasks::{Heuristic, Lang, LangChoice, Policy, TaskJudge, TaskKind};
use serde_json::{Value, json};

use crate::cli::{JudgeArgs, LangArg};

/// The judges of a run and what to say about them.
pub struct JudgeSetup {
    pub judges: Judges,
    /// The chat judge, when an endpoint is configured (its counters go to the manifest).
    pub chat: Option<Judge<Models>>,
    /// For the manifest: endpoint, models, cache, language, routes.
    pub description: Value,
}

impl JudgeSetup {
    /// Whether a chat model answers (its context window then bounds prompts).
    pub fn has_chat_model(&self) -> bool {
        self.chat.is_some()
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

    /// Why these judges cannot give what `requirements` asks, if they cannot.
    pub fn unmet(&self, requirements: &Requirements) -> Option<String> {
        self.judges.unmet(requirements)
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

/// Resolves the judges from the flags, falling back to the environment.
pub fn resolve(args: &JudgeArgs) -> anyhow::Result<JudgeSetup> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let lang = match args.lang {
        LangArg::Auto => LangChoice::Auto,
        LangArg::En => LangChoice::Force(Lang::En),
        LangArg::Zh => LangChoice::Force(Lang::Zh),
    };
    let model = args.judge_model.clone().or_else(|| env(ENV_JUDGE_MODEL));
    let embedding_model = args
        .judge_embedding_model
        .clone()
        .or_else(|| env(ENV_JUDGE_EMBEDDING_MODEL));
    let heuristic = Heuristic::lexical();
    let Some(model) = model else {
        let tasks = TaskJudge::new(Policy::offline()).with_heuristic(heuristic);
        let judges = Judges::new(tasks).with_lang(lang);
        return Ok(JudgeSetup {
            description: json!({
                "kind": "offline",
                "lang": lang_name(args.lang),
                "routes": routes_json(&judges),
                "note": "no judge endpoint: verdicts by the heuristic judge, statements by \
                         its sentence splitter; tasks that need a writing model fail",
            }),
            judges,
            chat: None,
        });
    };
    let base_url = args.judge_base_url.clone();
    let settings = EndpointSettings::from_lookup(|name| {
        if name == ENV_JUDGE_MODEL {
            Some(model.clone())
        } else if name == ENV_JUDGE_BASE_URL && base_url.is_some() {
            base_url.clone()
        } else {
            env(name)
        }
    })
    .context("cannot configure the judge endpoint")?;
    let chat = OpenAiBackend::new(settings.clone()).context("cannot build the judge client")?;
    let mut models = Models::chat(chat);
    if let Some(name) = &embedding_model {
        let mut embedding_settings = settings.clone();
        embedding_settings.model = name.clone();
        let embedder =
            OpenAiBackend::new(embedding_settings).context("cannot build the embedding client")?;
        models = models.with_embedder(embedder);
    }
    let (cache, cache_mode) = open_cache(args)?;
    let config = JudgeConfig {
        limiter: LimiterConfig {
            max_concurrency: usize::try_from(args.concurrency).unwrap_or(usize::MAX),
            ..LimiterConfig::default()
        },
        cache_mode,
        ..JudgeConfig::default()
    };
    let cache_path = cache.as_ref().map(|c| c.path().display().to_string());
    let judge = Judge::new(models, cache, config);
    let tasks = TaskJudge::new(Policy::llm())
        .with_llm(judge.clone())
        .with_heuristic(heuristic);
    let judges = Judges::new(tasks)
        .with_embedder(judge.clone())
        .with_lang(lang);
    let description = json!({
        "kind": "endpoint",
        "endpoint": settings.endpoint_for_display(),
        "model": settings.model,
        "embedding_model": embedding_model,
        "cache": cache_path,
        "cache_mode": format!("{cache_mode:?}").to_lowercase(),
        "concurrency": args.concurrency,
        "context_window": args.context_window,
        "lang": lang_name(args.lang),
        "routes": routes_json(&judges),
    });
    Ok(JudgeSetup {
        judges,
        chat: Some(judge),
        description,
    })
}

/// The shared answer cache, unless `--no-cache`; `--offline` replays it.
fn open_cache(args: &JudgeArgs) -> anyhow::Result<(Option<Cache>, CacheMode)> {
    if args.no_cache {
        return Ok((None, CacheMode::Off));
    }
    let mode = if args.offline {
        CacheMode::Offline
    } else {
        CacheMode::ReadWrite
    };
    let Some(path) = default_cache_path(|name| std::env::var(name).ok()) else {
        if args.offline {
            anyhow::bail!("--offline needs the judge cache, and no cache directory is known");
        }
        return Ok((None, CacheMode::Off));
    };
    let cache = Cache::open(&path)
        .with_context(|| format!("cannot open the judge cache {}", path.display()))?;
    Ok((Some(cache), mode))
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
