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
//!
//! - this module: [`JudgeSetup`] (the run's judges and what to say about them), [`Stop`],
//!   [`resolve`];
//! - `options`: [`JudgeOptions`], [`LocalJudge`], [`Env`]; `endpoint`: the judges with an
//!   endpoint (and a cascade, `cascade`); [`local`]: the embedded models and the offline
//!   routing; `measured`: agreement with people, per task; `tasks`: the router of a
//!   command's own tasks and [`require_writer`].

mod cascade;
mod endpoint;
pub mod local;
mod measured;
mod options;
mod tasks;

pub use measured::above_chance;
pub use options::{DEFAULT_CONTEXT_WINDOW, Env, JudgeOptions, LocalJudge};
pub(crate) use tasks::no_judge;
pub use tasks::require_writer;

use std::path::PathBuf;

use rageval_judge::BatchStore;
use rageval_judge::{Cap, Halt, Judge, JudgeSettings, Models, SupportChecker};
use rageval_metrics::{Judges, Requirements};
use rageval_report::JudgeModel;
use rageval_tasks::{Answerer, EscalationBand, Heuristic, LangChoice, Policy, TaskJudge, TaskKind};
use serde_json::{Value, json};

use crate::engine::error::{Result, RunError};
use crate::engine::identity::JudgeIdentity;

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
                    "cache_write_errors": stats.cache_write_errors,
                    "schema_fallbacks": stats.schema_fallbacks,
                    "cache_hits_other_endpoint": stats.cache_hits_other_origin,
                    "cut_off_resends": stats.cut_off_retries,
                    "rungs": judge.rung_counts(),
                })
            }
        }
    }

    /// Notes [`cut_off_warning`](Self::cut_off_warning) the first time there is one in a
    /// run (`warned` remembers that it was given).
    pub fn warn_cut_off_once(
        &self,
        warned: &std::cell::Cell<bool>,
        observer: &dyn crate::engine::observe::Observer,
    ) {
        if let Some(warning) = self.cut_off_warning().filter(|_| !warned.get()) {
            warned.set(true);
            observer.note(warning);
        }
    }

    /// What the person must know when replies were cut off at `--judge-max-tokens` while
    /// the model was thinking and sent again without the cap: each such call cost two (the
    /// cut-off thinking is billed too). `None` when none was.
    pub fn cut_off_warning(&self) -> Option<String> {
        let resends = self.chat.as_ref()?.stats().cut_off_retries;
        (resends > 0).then(|| {
            format!(
                "warning: {} cut off at the --judge-max-tokens cap while the judge was \
                 thinking, and sent again without the cap ({} more, the cut-off thinking \
                 billed too): raise --judge-max-tokens, or leave it out",
                crate::engine::words::counted_were(resends as usize, "calls"),
                crate::engine::words::counted(resends as usize, "calls")
            )
        })
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
        crate::engine::batch::judge::for_batch(&mut settings)?;
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
            endpoint::setup(options, settings, model, cascade, build)?
        }
        _ => local::setup(options, env, settings, build)?,
    };
    setup.context_window = options.context_window;
    for route in setup.route_lines(&TaskKind::ALL) {
        tracing::debug!(route, "judge routing");
    }
    Ok(setup)
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
