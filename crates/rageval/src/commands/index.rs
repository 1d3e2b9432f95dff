//! `rageval index DOCS… --out INDEX`: load documents, split them, write a local index (and,
//! with `--embed-model`, the chunks' embeddings from an OpenAI-compatible endpoint or the
//! embedded model, with progress as they come).
//!
//! A file whose content cannot be read (text in no known encoding, a malformed PDF) is
//! skipped with a warning; a file with no text is kept with 0 chunks; both are counted in the
//! summary line. Text read in an encoding other than UTF-8 gets a note.

use std::io::Write;
use std::time::Instant;

use anyhow::bail;
use rageval_run::engine::observe::{Event, Observer, Progress};
use rageval_sources::local::{FileOutcome, expand_inputs};
use rageval_sources::{IndexBuilder, Splitter};

use super::Exit;
use super::sources::{embedder_for_flag, runtime};
use crate::cli::IndexArgs;
use crate::ui::Ui;

pub fn run(args: &IndexArgs, ui: &Ui, out: &mut dyn Write) -> anyhow::Result<Exit> {
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
    let (mut empty, mut skipped) = (0, 0);
    for file in &files {
        match builder.add_file(&file.path, &file.name)? {
            FileOutcome::Indexed {
                encoding: Some(encoding),
                ..
            } if encoding != "UTF-8" => {
                ui.note(&format!("note: read {} as {encoding}", file.path.display()));
            }
            FileOutcome::Indexed { .. } => {}
            FileOutcome::Empty => {
                empty += 1;
                ui.warn(&format!(
                    "warning: {} has no text{}",
                    file.path.display(),
                    empty_hint(&file.path)
                ));
            }
            FileOutcome::Skipped { reason } => {
                skipped += 1;
                ui.warn(&format!(
                    "warning: skipped {}: {reason}",
                    file.path.display()
                ));
            }
        }
    }
    if builder.chunks().is_empty() {
        bail!(
            "nothing to index: of {} files, {empty} have no text and {skipped} cannot be read",
            files.len()
        );
    }
    let embedder = args
        .embed_model
        .as_deref()
        .map(embedder_for_flag)
        .transpose()?;
    let chunks = builder.chunks().len() as u64;
    if let Some(embedder) = &embedder {
        ui.note(&format!(
            "embedding {chunks} chunks with {}",
            rageval_judge::Embedder::embedding_model(embedder)
        ));
        ui.event(&Event::Stage {
            name: "embedding",
            total: Some(chunks),
        });
    }
    // One call per batch of chunks.
    let calls = std::sync::atomic::AtomicU64::new(0);
    let embedded = |done: usize, total: usize| {
        let calls = calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        ui.event(&Event::Progress(Progress {
            stage: "embedding",
            done: done as u64,
            total: Some(total as u64),
            calls,
            ..Progress::default()
        }));
    };
    let written = runtime()?.block_on(builder.write_observed(
        &args.out,
        args.overwrite,
        embedder.as_ref(),
        &embedded,
    ));
    if embedder.is_some() {
        ui.event(&Event::StageEnd);
    }
    let manifest = written?;
    let seconds = started.elapsed().as_secs_f64();
    writeln!(
        out,
        "indexed {} documents into {} chunks in {} ({:.2} s, {:.0} chunks/s); {empty} empty, {skipped} skipped{}",
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
    Ok(Exit::Success)
}

/// Why a file of this kind may have no text.
fn empty_hint(file: &std::path::Path) -> &'static str {
    let pdf = file
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("pdf"));
    if pdf {
        " (a pdf of scanned pages has no text layer: run OCR on it first)"
    } else {
        ""
    }
}
