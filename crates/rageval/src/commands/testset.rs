//! `rageval testset SOURCE`: the corpus's chunks read (`rageval_sources::local::
//! corpus_chunks`), the flags as `rageval_run::commands::testset`'s options; the summary on stdout.

use std::io::Write;

use anyhow::{Context as _, bail};
use rageval_core::testset::plan::{PlanSettings, Shares};
use rageval_run::commands::testset::{self, ClosedBookRule, TestsetOptions};
use rageval_run::engine::questions::Restart;
use rageval_sources::Splitter;
use rageval_sources::local::corpus_chunks;

use crate::cli::{ClosedBookArg, TestsetArgs};
use crate::commands::{Exit, completed, estimate};
use crate::judge;
use crate::ui::Ui;

pub fn run(args: &TestsetArgs, ui: &Ui, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let options = options(args, ui)?;
    if args.run_dir.dry_run {
        return estimate(
            rageval_run::commands::testset::plan::estimate(&options, &judge::env, ui)?,
            ui,
            out,
        );
    }
    let cancel = crate::signals::cancel_on_ctrl_c();
    let done = match completed(testset::run(&options, &judge::env, ui, &cancel)?, ui) {
        Ok(done) => done,
        Err(exit) => return Ok(exit),
    };
    out.write_all(done.summary.render().as_bytes())
        .context("cannot write to stdout")?;
    writeln!(out, "{}", done.footer).context("cannot write to stdout")?;
    let written = done.path.join(testset::TESTSET_FILE);
    if done.summary.written == 0 {
        // An empty set is no test set: a script must not go on to collect and eval nothing.
        ui.warn(&format!(
            "error: no item passed the gates, so {} is empty; the drops per gate above say \
             which gate took them, and {} gives each item's reason",
            written.display(),
            done.path.join(testset::ITEMS_FILE).display()
        ));
        return Ok(Exit::GateFailed);
    }
    ui.note(&format!("wrote {}", written.display()));
    Ok(Exit::Success)
}

/// The corpus read and the flags resolved; bad shares or a corpus without text are errors.
fn options(args: &TestsetArgs, ui: &Ui) -> anyhow::Result<TestsetOptions> {
    let Some(splitter) = Splitter::new(args.chunk_size, args.chunk_overlap) else {
        bail!(
            "--chunk-overlap ({}) must be smaller than --chunk-size ({}), which must be positive",
            args.chunk_overlap,
            args.chunk_size
        );
    };
    let shares = match &args.shares {
        Some(text) => Shares::parse(text).map_err(|why| anyhow::anyhow!("--shares: {why}"))?,
        None => Shares::default(),
    };
    let corpus = corpus_chunks(&args.source, splitter)?;
    for skipped in &corpus.skipped {
        ui.warn(&format!(
            "warning: skipped {}: {}",
            skipped.path, skipped.reason
        ));
    }
    Ok(TestsetOptions {
        source: args.source.clone(),
        corpus: corpus.kind.name().into(),
        chunks: corpus.chunks,
        plan: PlanSettings {
            size: args.size,
            seed: args.run_dir.seed,
            per_document: args.per_document,
            min_chunk_chars: args.min_chunk_chars,
            shares,
        },
        closed_book: match args.closed_book {
            ClosedBookArg::Drop => ClosedBookRule::Drop,
            ClosedBookArg::Mark => ClosedBookRule::Mark,
        },
        near_duplicate: args.near_duplicate,
        out: args.run_dir.out.clone(),
        restart: Restart {
            overwrite: args.run_dir.overwrite,
            retry_failed: args.run_dir.retry_failed,
        },
        judge: judge::options(&args.judge),
    })
}
