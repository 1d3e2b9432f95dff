//! `rageval label TESTSET.jsonl`: a person's review of a generated test set. Without
//! `--summary` it serves the review page (`rageval_server::review_server`), which saves
//! each decision to the review file; with `--summary` it reads the review back, prints the
//! rejection rates per category and writes them, with the final set, beside the review
//! file. It never changes the test set or the review file.

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use rageval_server::{Rates, ReviewFile, Testset, default_review_path, final_rows, review_server};

use super::Exit;
use crate::cli::LabelArgs;
use crate::ui::Ui;

pub fn run(args: &LabelArgs, ui: &Ui, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let run_only = [
        ("--metric", args.metric.is_some()),
        ("--stratify", args.stratify.is_some()),
        ("--scale", args.scale.is_some()),
        ("--lang", args.lang.is_some()),
    ];
    if let Some((flag, _)) = run_only.iter().find(|(_, given)| *given) {
        anyhow::bail!(
            "{flag} is for labelling a run's samples; {} is reviewed item by item (hint: leave \
             out {flag})",
            args.run.display()
        );
    }
    let set = Testset::read(&args.run)?;
    let path = args
        .labels
        .clone()
        .unwrap_or_else(|| default_review_path(&args.run, &args.labeller));
    let review = ReviewFile::open(&path, &set, &args.labeller)?;
    if args.summary {
        return summarise(&set, &review, ui, out);
    }
    let bind = SocketAddr::from((Ipv4Addr::LOCALHOST, args.port));
    let server = review_server(set, review, &args.labeller, bind)?;
    let info = server.info();
    ui.note(&format!(
        "reviewing {} as {}: {} items, {} decided already",
        args.run.display(),
        args.labeller,
        info.items,
        info.decided
    ));
    ui.note(&format!(
        "decisions are saved as you go to {}",
        info.review_file.display()
    ));
    ui.note(&format!("then: {}", info.summary_command));
    writeln!(out, "{}", info.url)
        .and_then(|()| out.flush())
        .context("cannot write to stdout")?;
    ui.note("open the address above in a browser; Ctrl-C stops");
    server.run()?;
    Ok(Exit::Success)
}

/// `REVIEW_STEM.SUFFIX` beside the review file.
fn beside(review: &Path, suffix: &str) -> PathBuf {
    let stem = review
        .file_stem()
        .map_or_else(|| "review".into(), |s| s.to_string_lossy().into_owned());
    review.with_file_name(format!("{stem}.{suffix}"))
}

fn write(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    rageval_core::files::write_atomically(path, bytes)
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Prints the rates, writes them and the final set: `.final.jsonl` once every item has a
/// decision, else `.final.partial.jsonl` (a complete one is never written early).
fn summarise(
    set: &Testset,
    review: &ReviewFile,
    ui: &Ui,
    out: &mut dyn Write,
) -> anyhow::Result<Exit> {
    let rates = Rates::of(set, review);
    write!(out, "{}", rates.table())
        .and_then(|()| out.flush())
        .context("cannot write to stdout")?;
    let rates_path = beside(review.path(), "rates.json");
    write(&rates_path, &serde_json::to_vec_pretty(&rates)?)?;
    let rows = final_rows(set, review);
    let mut bytes = Vec::new();
    for row in &rows {
        serde_json::to_writer(&mut bytes, row)?;
        bytes.push(b'\n');
    }
    let complete = beside(review.path(), "final.jsonl");
    let partial = beside(review.path(), "final.partial.jsonl");
    if rates.unreviewed == 0 {
        write(&complete, &bytes)?;
        if partial.exists() {
            std::fs::remove_file(&partial)
                .with_context(|| format!("cannot remove {}", partial.display()))?;
        }
        ui.note(&format!(
            "the final set: {} accepted items of {} in {}",
            rows.len(),
            set.items.len(),
            complete.display()
        ));
    } else {
        write(&partial, &bytes)?;
        ui.warn(&format!(
            "{} of {} items have no decision yet: the rates are over the decided ones, and the \
             {} accepted so far are in {} (the final set is written once every item is decided)",
            rates.unreviewed,
            set.items.len(),
            rows.len(),
            partial.display()
        ));
    }
    ui.note(&format!("rates written to {}", rates_path.display()));
    Ok(Exit::Success)
}
