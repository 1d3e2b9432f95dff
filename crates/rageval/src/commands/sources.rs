//! What `index`, `search` and `collect` share: a tokio runtime for the network and model
//! calls, the embedding model of a local index, and notes on stderr.

use std::io::Write;

use anyhow::{Context as _, bail};
use rageval_judge::settings::ENV_JUDGE_MODEL;
use rageval_judge::{AnyEmbedder, EndpointSettings, OpenAiBackend};
use rageval_sources::{LocalIndex, Ranking};

use crate::cli::RankingArg;

/// A runtime for one command; two worker threads are plenty for I/O-bound work.
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

pub fn ranking(arg: RankingArg) -> Ranking {
    match arg {
        RankingArg::Bm25 => Ranking::Bm25,
        RankingArg::Vector => Ranking::Vector,
        RankingArg::Hybrid => Ranking::Hybrid,
    }
}

/// `model` on the OpenAI-compatible endpoint the judge's environment names (base URL, key,
/// headers from the `RAGEVAL_JUDGE_*` variables).
fn openai_embedder(model: &str) -> anyhow::Result<AnyEmbedder> {
    let settings = EndpointSettings::from_lookup(|name| {
        if name == ENV_JUDGE_MODEL {
            Some(model.to_owned())
        } else {
            std::env::var(name).ok()
        }
    })?;
    Ok(AnyEmbedder::new(OpenAiBackend::new(settings)?))
}

/// The backend kind of an OpenAI-compatible embedding endpoint, as index manifests record it.
pub const ENDPOINT_EMBEDDER: &str = "openai";

/// The embedder of backend `kind` with `model`: the one place where `index`, `search` and
/// `collect` turn a backend kind (a flag, or an index manifest's `embedding.kind`) into an
/// embedder. An embedded model plugs in here as another arm.
pub fn embedder(kind: &str, model: &str) -> anyhow::Result<AnyEmbedder> {
    match kind {
        ENDPOINT_EMBEDDER => openai_embedder(model),
        other => bail!(
            "the index was embedded by a `{other}` backend, which this build cannot load; use --ranking bm25"
        ),
    }
}

/// The embedder a ranking needs for this index: the model the index was built with.
pub fn embedder_for(index: &LocalIndex, ranking: Ranking) -> anyhow::Result<Option<AnyEmbedder>> {
    if ranking == Ranking::Bm25 {
        return Ok(None);
    }
    match &index.manifest().embedding {
        Some(embedding) => embedder(&embedding.kind, &embedding.model).map(Some),
        // The index explains this itself when searched.
        None => Ok(None),
    }
}

/// A line on stderr.
pub fn note(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}
