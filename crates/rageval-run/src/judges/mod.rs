//! Who judges a run: the `--judge-*` options and the environment resolved into the run's
//! [`Judges`] ([`resolve`]), what to say about them on stderr and in the manifest, and the
//! typed identity that decides whether a run directory may be resumed by this judge.
//!
//! An endpoint or a pool of them (a model from the flags, `$RAGEVAL_JUDGE_MODEL` or
//! `rageval.toml`) answers every task; so does a GGUF file named by `--judge gguf:PATH`.
//! `--judge checker:DIR --escalate LOW,HIGH` with an endpoint is a cascade (module
//! `cascade`): the checker settles the support verdicts it is sure of, the endpoint the rest.
//! `--judge heuristic` loads no model: what the heuristic judge cannot answer fails.
//! Without either, the offline defaults: verdict tasks to the heuristic judge, statement
//! splitting to its sentence splitter, writing tasks to the embedded GGUF chat model and
//! embeddings to the embedded all-MiniLM-L6-v2 ([`local`]). When the embedded models are not
//! provisioned, tasks that need them fail with the reason, which names
//! `scripts/fetch-models.sh` (no fake answers). Resolving connects to nothing and loads no
//! model.

mod cascade;
pub mod local;

use std::path::PathBuf;

use rageval_judge::BatchStore;
use rageval_judge::config::JudgeFlags;
use rageval_judge::{Cap, Halt, Judge, JudgeSettings, Models, SupportChecker};
use rageval_metrics::{Judges, Requirements};
use rageval_report::{JudgeModel, ModelPrice};
use rageval_tasks::{
    Answerer, EscalationBand, Heuristic, Lang, LangChoice, Policy, Route, TaskJudge, TaskKind,
};
use serde_json::{Value, json};

use crate::error::{Result, RunError};
use crate::identity::JudgeIdentity;
use local::{GGUF_PROMPT_WINDOW, LocalModels};

/// The judge's context window assumed when none is given (`--context-window`).
pub const DEFAULT_CONTEXT_WINDOW: u64 = 32_768;

/// A local judge chosen by name (`--judge`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LocalJudge {
    /// This GGUF chat model answers every task.
    Gguf(PathBuf),
    /// The heuristic judge alone, no model loaded.
    Heuristic,
    /// This checker model folder answers support verdicts; the offline defaults the rest.
    Checker(PathBuf),
}

impl std::str::FromStr for LocalJudge {
    type Err = String;

    /// `gguf:PATH`, `checker:DIR` or `heuristic`: the one parser of `--judge` and of
    /// Python's `Judge(local=...)`.
    fn from_str(text: &str) -> Result<Self, String> {
        match text.split_once(':') {
            Some(("gguf", path)) if !path.is_empty() => Ok(LocalJudge::Gguf(PathBuf::from(path))),
            Some(("checker", dir)) if !dir.is_empty() => {
                Ok(LocalJudge::Checker(PathBuf::from(dir)))
            }
            None if text == "heuristic" => Ok(LocalJudge::Heuristic),
            _ => Err(
                "expected gguf:PATH (a GGUF chat model file), checker:DIR (a checker \
                      model folder) or heuristic"
                    .into(),
            ),
        }
    }
}

/// Everything a user says about the judge: the flags the judge crate resolves, and the
/// choices this crate makes on top of them.
#[derive(Debug, Clone)]
pub struct JudgeOptions {
    /// Endpoint, model, limits, cache, caps (merged with the environment and `rageval.toml`).
    pub flags: JudgeFlags,
    /// `--judge gguf:PATH|checker:DIR|heuristic`.
    pub local: Option<LocalJudge>,
    /// `--models-dir`.
    pub models_dir: Option<PathBuf>,
    /// `--lang`.
    pub lang: LangChoice,
    /// `--context-window`, in tokens.
    pub context_window: u64,
    /// Answers come through batch jobs (`eval --batch`, `--export-requests`,
    /// `--import-responses`): batch prices, no requests- or tokens-per-minute limits, and
    /// a cache that is read and written ([`crate::batch`]).
    pub batch: bool,
    /// `--escalate LOW,HIGH`: with `--judge checker:DIR` and an endpoint, a cascade.
    pub escalate: Option<EscalationBand>,
}

impl Default for JudgeOptions {
    fn default() -> Self {
        JudgeOptions {
            flags: JudgeFlags::default(),
            local: None,
            models_dir: None,
            lang: LangChoice::Auto,
            context_window: DEFAULT_CONTEXT_WINDOW,
            batch: false,
            escalate: None,
        }
    }
}

/// How the process environment is read (`std::env::var(..).ok()` in the binary; a map in
/// tests and bindings).
pub type Env<'a> = &'a (dyn Fn(&str) -> Option<String> + Sync);

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
    /// The endpoints, as shown in the manifest (no credentials; empty without one).
    pub endpoints: Vec<String>,
    /// The GGUF file that answers or writes, when one does.
    pub gguf: Option<PathBuf>,
    /// In batch mode, the store the chat model answers from (its counts correct the books).
    pub batch: Option<BatchStore>,
    /// What embeds in place of an endpoint that names no embedding model, as a note for the
    /// console: the embedded all-MiniLM-L6-v2, when it is installed.
    pub embedding_fallback: Option<String>,
    routing: Routing,
    models: Vec<JudgeModel>,
    heuristic: Heuristic,
    lang: LangChoice,
    context_window: u64,
}

/// Why a run stops before its work is done, as the judge says it.
#[derive(Debug, Clone, PartialEq)]
pub enum Stop {
    /// Cancelled (Ctrl-C): resumable.
    Cancelled,
    /// A cap (`--max-calls`, `--max-cost`) refused a call: resumable with a larger cap.
    CapReached(Cap),
    /// The judge refuses or cannot answer calls: resumable once it answers.
    JudgeUnavailable(Halt),
    /// Batch mode with `--export-requests`: the next stage's requests were written to
    /// `files` for another engine to answer; resumable with their answers
    /// (`--import-responses`).
    RequestsExported {
        files: Vec<PathBuf>,
        requests: usize,
    },
}

/// Which tasks the chat judge answers, and whether it embeds.
#[derive(Debug, Clone)]
struct Routing {
    kind: &'static str,
    policy: Policy,
    /// The chat judge answers the tasks routed to a model (false for the offline default:
    /// it only embeds).
    chats: bool,
    embeds: bool,
    /// The checker model answering support verdicts (`--judge checker:DIR`).
    checker: Option<SupportChecker>,
    /// A dry run's judges: the checker's work is counted, never done.
    checker_planned: bool,
    /// With a checker and a chat model: the band of checker scores escalated to the chat
    /// model.
    escalation: Option<EscalationBand>,
}

/// What to do when a task needs a model that writes and none was named.
pub const WRITER_HINT: &str = "name a model that writes: --judge-model NAME with \
    --judge-base-url URL (or RAGEVAL_JUDGE_MODEL and RAGEVAL_JUDGE_BASE_URL), or --judge \
    gguf:PATH for a local GGUF chat model you choose";

impl JudgeSetup {
    /// Whether a chat model answers (its context window then bounds prompts).
    pub fn has_chat_model(&self) -> bool {
        self.chat.is_some()
    }

    /// The prompt window in tokens that a sample's contexts are cut to fit (from
    /// `--context-window`); `None` when no cut applies.
    pub fn window(&self) -> Option<usize> {
        let window = match self.window {
            _ if !self.has_chat_model() => return None,
            Window::Requested => self.context_window,
            Window::AtMost(cap) => cap.min(self.context_window),
            Window::Uncut => return None,
        };
        Some(usize::try_from(window).unwrap_or(usize::MAX))
    }

    /// Prompt tokens one call may fill: `--context-window`, bounded by a local chat model's
    /// own window.
    pub fn prompt_window(&self) -> u64 {
        self.window().map_or(self.context_window, |w| {
            u64::try_from(w).unwrap_or(u64::MAX)
        })
    }

    /// The task router, in the run's language choice.
    pub fn tasks(&self) -> Option<TaskJudge> {
        self.judges
            .tasks()
            .cloned()
            .map(|tasks| tasks.with_lang(self.lang))
    }

    /// Why the run must stop, if it must: the judge was cancelled, a cap refused a call, or
    /// the judge was halted as unavailable.
    pub fn stop(&self) -> Option<Stop> {
        let chat = self.chat.as_ref()?;
        if chat.cancel_token().is_cancelled() {
            return Some(Stop::Cancelled);
        }
        if let Some(halt) = chat.halted() {
            return Some(Stop::JudgeUnavailable(halt));
        }
        chat.budget_refusal().map(Stop::CapReached)
    }

    /// Cancels the chat judge: calls in flight abort, later calls fail (Ctrl-C).
    pub fn cancel(&self) {
        if let Some(chat) = &self.chat {
            chat.cancel();
        }
    }

    /// Who answers, as a run directory records it to refuse resuming with another judge.
    /// Hashes the GGUF file when one answers (a few hundred milliseconds for a small model).
    pub fn identity(&self) -> Result<JudgeIdentity> {
        JudgeIdentity::of(self)
    }

    /// The endpoints, models and routes behind the identity.
    pub(crate) fn routes(&self) -> Vec<(TaskKind, Option<Answerer>)> {
        self.judges
            .tasks()
            .map(|tasks| {
                tasks
                    .describe()
                    .into_iter()
                    .map(|route| (route.task, route.answered_by))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The embedding model's name, when one embeds: the endpoint's, or the embedded
    /// all-MiniLM-L6-v2 standing in for it.
    pub(crate) fn embedding_model(&self) -> Option<&str> {
        self.description["embedding_model"]
            .as_str()
            .or_else(|| self.description["embedding_fallback"].as_str())
    }

    /// The chat model's name, when an endpoint answers.
    pub(crate) fn model_name(&self) -> Option<&str> {
        self.description["model"].as_str()
    }

    /// Who answers each task `metric` asks, with the figures measured for that
    /// implementation in the metric's setting (`rageval_metrics::measured_for`): the
    /// manifest's `metrics[].judges`, which the reports show beside the metric's score.
    pub fn metric_judges(
        &self,
        metric: &dyn rageval_metrics::Metric,
    ) -> Vec<rageval_report::TaskJudgeRecord> {
        let Some(tasks) = self.judges.tasks() else {
            return Vec::new();
        };
        let routes = tasks.describe();
        metric
            .requirements()
            .tasks
            .iter()
            .filter_map(|task| routes.iter().find(|route| route.task == *task))
            .map(|route| rageval_report::TaskJudgeRecord {
                task: route.task.to_string(),
                answered_by: route.who(),
                measured: rageval_metrics::measured_for(metric, route.measured.clone())
                    .into_iter()
                    .map(|m| rageval_report::MeasuredFigure {
                        dataset: m.dataset,
                        measure: m.measure,
                        value: m.value,
                        count: m.count,
                        unit: m.unit,
                        kind: m.kind,
                    })
                    .collect(),
            })
            .collect()
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
            .map(|route| match self.routing.escalation {
                Some(band) if route.task == TaskKind::SupportVerdicts => format!(
                    "{}; claims it scores within {band} escalated to the chat model {}",
                    route.summary(),
                    self.model_name().unwrap_or("?")
                ),
                _ => route.summary(),
            })
            .collect()
    }

    /// Why these judges cannot give what `requirements` asks, if they cannot (naming
    /// `scripts/fetch-models.sh` when the embedded models are missing).
    pub fn unmet(&self, requirements: &Requirements) -> Option<String> {
        let why = self.judges.unmet(requirements)?;
        let writes = requirements
            .tasks
            .iter()
            .any(|task| task.family() == rageval_tasks::TaskFamily::Generation);
        Some(match &self.missing_models {
            Some(missing) => format!("{why}: {missing}"),
            None if !self.routing.chats && writes => format!("{why}; {WRITER_HINT}"),
            None => why,
        })
    }

    /// Whether the judge behind every verdict task of `metric` has measured agreement above
    /// chance on text of `lang`'s script, counting only the figures that speak for this
    /// metric (`rageval_metrics::measured_for`, the rule the reports' judge lines use):
    /// `Ok(())`, or why not. A task answered by a model has no figures here (`rageval
    /// judge-check` measures it), so it is unmeasured.
    pub fn agreement_above_chance(
        &self,
        metric: &dyn rageval_metrics::Metric,
        lang: Lang,
    ) -> Result<(), String> {
        let routes = self
            .judges
            .tasks()
            .map(TaskJudge::describe)
            .unwrap_or_default();
        for task in &metric.requirements().tasks {
            if task.family() != rageval_tasks::TaskFamily::Verdict {
                continue;
            }
            let Some(route) = routes.iter().find(|r| r.task == *task) else {
                continue;
            };
            let figures: Vec<_> = rageval_metrics::measured_for(metric, route.measured.clone())
                .into_iter()
                .filter(|m| measured_script(&m.dataset) == lang)
                .collect();
            if figures.is_empty() {
                return Err(match &route.answered_by {
                    // A checker's figures are judge-check's to measure; none are published.
                    Some(Answerer::Checker(_)) => format!(
                        "{task} by {}: agreement with people unmeasured",
                        route.who()
                    ),
                    _ => format!("{task}: agreement with people unmeasured for this metric"),
                });
            }
            if let Some(chance) = figures.iter().find(|m| !above_chance(m.value, m.count)) {
                return Err(format!("{task}: {chance}, at chance"));
            }
        }
        Ok(())
    }

    /// Whether the judges are the offline ones (no chat model named; a checker's agreement
    /// is unmeasured until `judge-check` measures it): the default metrics are then only
    /// those whose judge measured above chance.
    pub fn is_offline(&self) -> bool {
        matches!(self.routing.kind, "offline" | "heuristic" | "checker")
    }

    /// The band of checker scores escalated to the chat model, when checker and chat
    /// model cascade.
    pub fn escalation(&self) -> Option<EscalationBand> {
        self.routing.escalation
    }

    /// The checker model answering support verdicts, when one does.
    pub fn checker(&self) -> Option<&SupportChecker> {
        self.routing.checker.as_ref()
    }

    /// The same routing as [`JudgeSetup::judges`] over another chat judge (`None`: the
    /// heuristic judge alone), e.g. a dry run's planning judge.
    pub fn judges_over(&self, judge: Option<Judge<Models>>) -> Judges {
        judges_over(judge, &self.routing, self.heuristic.clone(), self.lang)
    }

    /// Has [`JudgeSetup::judges_over`] plan the checker's work instead of doing it (a dry
    /// run: each statement it would score is counted, the model is not run).
    pub fn plan_checker(&mut self) {
        self.routing.checker_planned = true;
    }

    /// `endpoint`, `local`, `offline`, `heuristic` or `checker`, as the manifest's
    /// `settings.judge.kind` says.
    pub fn kind(&self) -> &'static str {
        self.routing.kind
    }

    /// The models that answer, with their prices (`None` where the table has none).
    pub fn models(&self) -> Vec<JudgeModel> {
        self.models.clone()
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
                    "cache_hits_other_endpoint": stats.cache_hits_other_origin,
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

/// The judge settings of `options`: flags over the environment over `rageval.toml` over
/// defaults (docs/configuration.md), in batch mode with batch prices and no per-minute
/// limits. Reads the settings file; connects to nothing.
pub fn settings(options: &JudgeOptions, env: Env<'_>) -> Result<JudgeSettings> {
    let mut settings =
        JudgeSettings::resolve(&options.flags, env).map_err(RunError::JudgeSettings)?;
    if options.batch {
        crate::batch::judge::for_batch(&mut settings)?;
    }
    Ok(settings)
}

/// Resolves the judges from the options, the environment and `rageval.toml`.
pub fn resolve(options: &JudgeOptions, env: Env<'_>) -> Result<JudgeSetup> {
    resolve_with(options, env, |settings, local| {
        match local {
            Some(models) => settings.build_with(models.clone()),
            None => settings.build(),
        }
        .map_err(RunError::Judge)
    })
}

/// [`resolve`] with the chat judge made by `build` from the settings and, without an
/// endpoint, the embedded models found (a dry run makes one that answers locally, loads no
/// model and opens no cache).
pub fn resolve_with(
    options: &JudgeOptions,
    env: Env<'_>,
    build: impl FnOnce(&JudgeSettings, Option<&Models>) -> Result<Judge<Models>>,
) -> Result<JudgeSetup> {
    let settings = settings(options, env)?;
    let cascade = cascade::requested(options, &settings)?;
    let mut setup = match settings.model.clone().filter(|_| settings.has_endpoint()) {
        Some(model) if options.local.is_none() || cascade.is_some() => {
            endpoint(options, settings, model, cascade, build)?
        }
        _ => local(options, env, settings, build)?,
    };
    setup.context_window = options.context_window;
    for route in setup.route_lines(&TaskKind::ALL) {
        tracing::debug!(route, "judge routing");
    }
    Ok(setup)
}

/// Every task to the configured endpoints; in a cascade, support verdicts to the checker
/// first.
fn endpoint(
    options: &JudgeOptions,
    settings: JudgeSettings,
    model: String,
    cascade: Option<(SupportChecker, EscalationBand)>,
    build: impl FnOnce(&JudgeSettings, Option<&Models>) -> Result<Judge<Models>>,
) -> Result<JudgeSetup> {
    let lang = options.lang;
    let judge = build(&settings, None)?;
    let heuristic = Heuristic::lexical();
    let (checker, escalation) = cascade.unzip();
    let mut routing = Routing {
        kind: if checker.is_some() {
            "cascade"
        } else {
            "endpoint"
        },
        policy: Policy::llm(),
        chats: true,
        embeds: settings.embedding_model.is_some(),
        checker,
        checker_planned: false,
        escalation,
    };
    let mut judges = judges_over(Some(judge.clone()), &routing, heuristic.clone(), lang);
    let fallback = match &settings.embedding_model {
        Some(_) => None,
        None => EmbeddingFallback::find(options, &settings)?,
    };
    if let Some(fallback) = &fallback {
        judges = judges.with_embedder(fallback.judge.clone());
        routing.embeds = true;
    }
    let endpoints: Vec<String> = settings
        .endpoints
        .iter()
        .map(|e| e.settings.endpoint_for_display())
        .collect();
    let description = json!({
        "kind": routing.kind,
        "endpoints": &endpoints,
        "model": model,
        "embedding_model": settings.embedding_model,
        "embedding_fallback": fallback.as_ref().map(|fallback| &fallback.model),
        "cache": settings.cache_path.as_ref().map(|p| p.display().to_string()),
        "cache_mode": format!("{:?}", settings.cache_mode).to_lowercase(),
        "concurrency": settings.limits.max_concurrency,
        "requests_per_minute": settings.limits.requests_per_minute,
        "tokens_per_minute": settings.limits.tokens_per_minute,
        "max_calls": settings.budget.max_calls,
        "max_cost_usd": settings.budget.max_cost_usd,
        "context_window": options.context_window,
        "lang": lang_name(lang),
        "routes": routes_json(&judges),
        "checker": routing.checker.as_ref().map(checker_json),
        "escalation": routing.escalation.map(cascade::band_json),
    });
    // The embedded model standing in for embeddings is not among the priced models: it costs
    // nothing per call (the manifest names it as `embedding_fallback`).
    let models = [
        ("chat", settings.model.as_ref()),
        ("embedding", settings.embedding_model.as_ref()),
    ]
    .into_iter()
    .filter_map(|(role, model)| {
        let model = model?;
        Some(JudgeModel {
            role: role.into(),
            model: model.clone(),
            price: settings.prices.get(model).map(|p| ModelPrice {
                prompt_per_million: p.prompt_per_million,
                completion_per_million: p.completion_per_million,
            }),
        })
    })
    .collect();
    Ok(JudgeSetup {
        embedding_fallback: fallback.map(|fallback| fallback.note()),
        judges,
        chat: Some(judge),
        window: Window::Requested,
        missing_models: None,
        description,
        concurrency: settings.limits.max_concurrency,
        endpoints,
        gguf: None,
        batch: None,
        routing,
        models,
        heuristic,
        lang,
        context_window: options.context_window,
    })
}

/// The embedded all-MiniLM-L6-v2, embedding for an endpoint judge that names no embedding
/// model (semantic similarity and answer relevance would fail without one).
struct EmbeddingFallback {
    judge: Judge<Models>,
    /// The model's name as the manifest and the identity record it.
    model: String,
}

impl EmbeddingFallback {
    /// The embedded model, when installed (`scripts/fetch-models.sh`); a models folder that
    /// was named and is not there is an error, as it is without an endpoint. The judge has
    /// no cache (the vectors cost nothing to make again) and so a dry run opens none; its
    /// model loads on first use, so a run that embeds nothing never loads it.
    fn find(options: &JudgeOptions, settings: &JudgeSettings) -> Result<Option<Self>> {
        let named = options.models_dir.is_some();
        let files = match rageval_judge::ModelFiles::locate(options.models_dir.as_deref()) {
            Ok(files) => files,
            Err(error) if named => return Err(RunError::Models(error)),
            Err(_) => return Ok(None),
        };
        let embedder = rageval_judge::local::minilm_embedder(&files.minilm);
        let model = rageval_judge::Embedder::embedding_model(&embedder).to_owned();
        let mut uncached = settings.clone();
        uncached.cache_mode = rageval_judge::CacheMode::Off;
        let judge = uncached
            .build_with(Models {
                chat: None,
                embedder: Some(embedder),
            })
            .map_err(RunError::Judge)?;
        Ok(Some(EmbeddingFallback { judge, model }))
    }

    fn note(&self) -> String {
        format!(
            "embeddings by the embedded {} (the endpoint judge names no embedding model: \
             --judge-embedding-model NAME for the endpoint's own)",
            self.model
        )
    }
}

/// The embedded models: with `--judge gguf:PATH` that model answers every task; without it,
/// the offline policy.
fn local(
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

/// A checker model as the manifest records it.
fn checker_json(checker: &SupportChecker) -> Value {
    json!({
        "dir": checker.dir().display().to_string(),
        "family": checker.family().name(),
        "head": checker.head().name(),
        "model": checker.name(),
        "sha256": checker.sha256(),
        "agreement": "unmeasured: run rageval judge-check on labelled data",
    })
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

/// The script a measured figure was taken on: `(zh script` or `(en script` in its data
/// set's name, else English (WikiEval, Cranfield).
fn measured_script(dataset: &str) -> Lang {
    if dataset.contains("(zh script") {
        Lang::Zh
    } else {
        Lang::En
    }
}

/// Whether an accuracy-like figure `value` over `count` items is above chance (0.5): the
/// lower end of its 95% Wilson interval is.
pub fn above_chance(value: f64, count: usize) -> bool {
    rageval_core::stats::wilson(value, count).is_some_and(|interval| interval.low > 0.5)
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

/// Who answers what, by `routing`, over `judge` (`None`: the heuristic judge alone).
fn judges_over(
    judge: Option<Judge<Models>>,
    routing: &Routing,
    heuristic: Heuristic,
    lang: LangChoice,
) -> Judges {
    let mut tasks = TaskJudge::new(routing.policy.clone()).with_heuristic(heuristic);
    if let Some(checker) = &routing.checker {
        tasks = tasks.with_checker(checker.clone());
    }
    if routing.checker_planned {
        tasks = tasks.with_checker_planned();
    }
    let Some(judge) = judge else {
        return Judges::new(tasks).with_lang(lang);
    };
    if let (Some(checker), Some(cache), false) =
        (&routing.checker, judge.cache(), routing.checker_planned)
    {
        // The checker's checks share the judge's answer cache. Its tokenizer was found by
        // `SupportChecker::open`; should it not read now, the checks go uncached.
        if let Ok(cache) = rageval_tasks::CheckerCache::new(cache.clone(), checker) {
            tasks = tasks.with_checker_cache(cache);
        }
    }
    if routing.chats {
        tasks = tasks.with_llm(judge.clone());
    }
    if let Some(band) = routing.escalation {
        tasks = tasks.with_escalation(band);
    }
    let judges = Judges::new(tasks).with_lang(lang);
    if routing.embeds {
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

fn lang_name(lang: LangChoice) -> &'static str {
    match lang {
        LangChoice::Auto => "auto",
        LangChoice::Force(rageval_tasks::Lang::En) => "en",
        LangChoice::Force(rageval_tasks::Lang::Zh) => "zh",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One parser serves `--judge` and Python's `Judge(local=...)` (issue 24, item 7).
    #[test]
    fn a_local_judge_is_a_gguf_path_or_the_heuristic() {
        assert_eq!(
            "gguf:/m/a b.gguf".parse(),
            Ok(LocalJudge::Gguf(PathBuf::from("/m/a b.gguf")))
        );
        assert_eq!("heuristic".parse(), Ok(LocalJudge::Heuristic));
        assert_eq!(
            "checker:/m/lettuce".parse(),
            Ok(LocalJudge::Checker(PathBuf::from("/m/lettuce")))
        );
        for bad in [
            "gguf:",
            "gguf",
            "heuristics",
            "onnx:/m",
            "checker:",
            "checker",
        ] {
            assert!(bad.parse::<LocalJudge>().is_err(), "{bad}");
        }
    }

    /// Wilson lower bounds worked by hand: 10/10 → 0.722; 0.86 of 52 → 0.737; 0.50 of 514
    /// → 0.457; 0.52 of 3,844 pairs → 0.504.
    #[test]
    fn above_chance_means_the_interval_clears_one_half() {
        assert!(above_chance(1.0, 10));
        assert!(above_chance(0.86, 52));
        assert!(!above_chance(0.50, 514));
        assert!(above_chance(0.52, 3_844));
        assert!(!above_chance(0.7, 5));
        assert!(!above_chance(0.9, 0));
    }

    #[test]
    fn figures_name_their_script() {
        assert_eq!(
            measured_script("RGB zh refine (zh script, held-out)"),
            Lang::Zh
        );
        assert_eq!(
            measured_script("UHGEval zh (en script, held-out)"),
            Lang::En
        );
        assert_eq!(measured_script("WikiEval"), Lang::En);
    }
}
