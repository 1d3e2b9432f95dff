//! The judges of a run with an endpoint: every task to the configured endpoints (or a pool
//! of them); in a cascade, support verdicts to the checker first. An endpoint that names no
//! embedding model embeds with the embedded all-MiniLM-L6-v2 when it is installed.

use rageval_judge::{Judge, JudgeSettings, Models, SupportChecker};
use rageval_report::{JudgeModel, ModelPrice};
use rageval_tasks::{EscalationBand, Heuristic, Policy};
use serde_json::json;

use super::cascade::{self, checker_json};
use super::{JudgeOptions, JudgeSetup, Routing, Window, judges_over, lang_name, routes_json};
use crate::engine::error::{Result, RunError};

/// Every task to the configured endpoints; in a cascade, support verdicts to the checker
/// first.
pub(super) fn setup(
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
