//! Resolving `--judge-*` flags and the environment into the run's [`Judges`], and saying on
//! stderr and in the manifest who answers each task.
//!
//! An endpoint or a pool of them (a model from `--judge-model`, `$RAGEVAL_JUDGE_MODEL` or
//! `rageval.toml`) answers every task. Without one, the offline defaults:
//! verdict tasks to the heuristic judge, statement splitting to its sentence splitter, and
//! tasks that need a writing model fail with the reason (no fake answers).

use anyhow::Context as _;
use rageval_judge::{Cap, Judge, JudgeSettings, Models};
use rageval_metrics::{Judges, Requirements};
use rageval_report::{JudgeModel, ModelPrice};
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
    /// Most judge calls in flight (the limiter's ceiling); twice as many samples are scored
    /// at once.
    pub concurrency: usize,
    /// The endpoints, as shown in the manifest (no credentials; empty when offline).
    pub endpoints: Vec<String>,
    /// The resolved settings (a dry run builds its planning judges from them).
    pub settings: JudgeSettings,
    heuristic: Heuristic,
    lang: LangChoice,
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

    /// The same routing as [`JudgeSetup::judges`] over another chat judge (`None`: the
    /// offline defaults), e.g. a dry run's planning judge.
    pub fn judges_over(&self, judge: Option<Judge<Models>>) -> Judges {
        judges_over(judge, self.heuristic.clone(), self.lang, &self.settings)
    }

    /// The judge cap (`--max-calls`, `--max-cost`) that has refused a call, if one has.
    pub fn cap_reached(&self) -> Option<Cap> {
        self.chat.as_ref().and_then(Judge::budget_refusal)
    }

    /// `endpoint` or `offline`, as the manifest's `settings.judge.kind` says.
    pub fn kind(&self) -> &'static str {
        if self.chat.is_some() {
            "endpoint"
        } else {
            "offline"
        }
    }

    /// The models that answer, with their prices (`None` where the table has none).
    pub fn models(&self) -> Vec<JudgeModel> {
        let settings = &self.settings;
        if self.chat.is_none() {
            return Vec::new();
        }
        [
            ("chat", &settings.model),
            ("embedding", &settings.embedding_model),
        ]
        .into_iter()
        .filter_map(|(role, model)| {
            let model = model.as_ref()?;
            Some(JudgeModel {
                role: role.into(),
                model: model.clone(),
                price: settings.prices.get(model).map(|p| ModelPrice {
                    prompt_per_million: p.prompt_per_million,
                    completion_per_million: p.completion_per_million,
                }),
            })
        })
        .collect()
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

/// Resolves the judges from the flags, the environment and `rageval.toml`
/// (`crate::judge::settings`: flags over env over file over defaults).
pub fn resolve(args: &JudgeArgs) -> anyhow::Result<JudgeSetup> {
    resolve_with(args, |settings| {
        settings.build().context("cannot build the judge")
    })
}

/// [`resolve`] with the chat judge made by `build` from the settings, when an endpoint is
/// configured (a dry run makes one that answers locally and opens no cache).
pub fn resolve_with(
    args: &JudgeArgs,
    build: impl FnOnce(&JudgeSettings) -> anyhow::Result<Judge<Models>>,
) -> anyhow::Result<JudgeSetup> {
    let lang = match args.lang {
        LangArg::Auto => LangChoice::Auto,
        LangArg::En => LangChoice::Force(Lang::En),
        LangArg::Zh => LangChoice::Force(Lang::Zh),
    };
    let settings = crate::judge::settings(args)?;
    let heuristic = Heuristic::lexical();
    let Some(model) = settings.model.clone().filter(|_| settings.has_endpoint()) else {
        let judges = judges_over(None, heuristic.clone(), lang, &settings);
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
            concurrency: settings.limits.max_concurrency,
            endpoints: Vec::new(),
            settings,
            heuristic,
            lang,
        });
    };
    let judge = build(&settings)?;
    let judges = judges_over(Some(judge.clone()), heuristic.clone(), lang, &settings);
    let endpoints: Vec<String> = settings
        .endpoints
        .iter()
        .map(|e| e.settings.endpoint_for_display())
        .collect();
    let description = json!({
        "kind": "endpoint",
        "endpoints": &endpoints,
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
        description,
        concurrency: settings.limits.max_concurrency,
        endpoints,
        settings,
        heuristic,
        lang,
    })
}

/// Who answers what: with a chat judge, every task goes to it (verdicts the heuristic
/// judge could answer too); without one, the offline defaults.
fn judges_over(
    judge: Option<Judge<Models>>,
    heuristic: Heuristic,
    lang: LangChoice,
    settings: &JudgeSettings,
) -> Judges {
    let Some(judge) = judge else {
        let tasks = TaskJudge::new(Policy::offline()).with_heuristic(heuristic);
        return Judges::new(tasks).with_lang(lang);
    };
    let tasks = TaskJudge::new(Policy::llm())
        .with_llm(judge.clone())
        .with_heuristic(heuristic);
    let judges = Judges::new(tasks).with_lang(lang);
    if settings.embedding_model.is_some() {
        judges.with_embedder(judge)
    } else {
        judges
    }
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
