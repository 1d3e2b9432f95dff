//! `rageval index DOCS… --out INDEX`: load documents, split them, write a local index (and,
//! with `--embed-model`, the chunks' embeddings from an OpenAI-compatible endpoint).

use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context as _, bail};
use rageval_sources::local::{expand_inputs, load};
use rageval_sources::{IndexBuilder, Splitter};

use super::sources::{embedder_for_flag, runtime};
use crate::cli::IndexArgs;

pub fn run(args: &IndexArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let Some(splitter) = Splitter::new(args.chunk_size, args.chunk_overlap) else {
        bail!(
            "--chunk-overlap ({}) must be smaller than --chunk-size ({}), which must be positive",
            args.chunk_overlap,
            args.chunk_size
        );
    };
    if args.out.exists() && !args.overwrite {
        return Err(rageval_sources::SourceError::Exists {
            path: args.out.clone(),
        }
        .into());
    }
    let started = Instant::now();
    let files = expand_inputs(&args.docs)?;
    if files.is_empty() {
        bail!("no documents with a known extension under the given paths");
    }
    let mut builder = IndexBuilder::new(splitter);
    for file in &files {
        let document = load(file)?;
        builder
            .add(&document)
            .with_context(|| format!("indexing {}", file.display()))?;
    }
    let embedder = args
        .embed_model
        .as_deref()
        .map(embedder_for_flag)
        .transpose()?;
    let manifest =
        runtime()?.block_on(builder.write(&args.out, args.overwrite, embedder.as_ref()))?;
    let seconds = started.elapsed().as_secs_f64();
    writeln!(
        out,
        "indexed {} documents into {} chunks in {} ({:.2} s, {:.0} chunks/s){}",
        manifest.documents.len(),
        manifest.chunks,
        args.out.display(),
        seconds,
        manifest.chunks as f64 / seconds.max(1e-9),
        match &manifest.embedding {
            Some(e) => format!("; embedded with {} ({} dimensions)", e.model, e.dims),
            None => String::new(),
        }
    )?;
    Ok(ExitCode::SUCCESS)
}
