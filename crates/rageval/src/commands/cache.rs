//! `rageval cache export|import`: the judge cache's answers as JSON lines, to move them
//! between machines (the SQLite file itself must stay on a local disk).

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};

use anyhow::Context as _;
use rageval_judge::Cache;
use rageval_judge::config::{JudgeFlags, JudgeSettings};

use super::Exit;
use crate::cli::{CacheAction, CacheArgs, CacheLocation};
use crate::judge;
use crate::ui::Ui;

pub fn run(args: &CacheArgs, ui: &Ui) -> anyhow::Result<Exit> {
    match &args.action {
        CacheAction::Export { file, cache } => {
            let cache = open(cache)?;
            let name = file.display().to_string();
            let moved = if name == "-" {
                let mut stdout = std::io::stdout().lock();
                cache.export_to(&mut stdout, "stdout")?
            } else {
                let mut out = BufWriter::new(
                    File::create(file).with_context(|| format!("cannot create {name}"))?,
                );
                let moved = cache.export_to(&mut out, &name)?;
                out.flush()
                    .with_context(|| format!("cannot write {name}"))?;
                moved
            };
            ui.note(&format!(
                "exported {} answers and {} embeddings from {} to {name}",
                moved.answers,
                moved.embeddings,
                cache.path().display()
            ));
        }
        CacheAction::Import { file, cache } => {
            let cache = open(cache)?;
            let name = file.display().to_string();
            let moved = if name == "-" {
                let mut stdin = std::io::stdin().lock();
                cache.import_from(&mut stdin, "stdin")?
            } else {
                let mut input = BufReader::new(
                    File::open(file).with_context(|| format!("cannot read {name}"))?,
                );
                cache.import_from(&mut input, &name)?
            };
            ui.note(&format!(
                "imported {} answers and {} embeddings into {} ({} entries it held already \
                 were kept)",
                moved.answers,
                moved.embeddings,
                cache.path().display(),
                moved.kept
            ));
        }
    }
    Ok(Exit::Success)
}

/// The cache file the judge settings name (flag, `rageval.toml`, environment, default).
fn open(location: &CacheLocation) -> anyhow::Result<Cache> {
    let flags = JudgeFlags {
        config: location.config.clone(),
        cache: location.cache.clone(),
        ..JudgeFlags::default()
    };
    let settings = JudgeSettings::resolve(&flags, judge::env)?;
    let path = settings.cache_path.context(format!(
        "no cache location: pass --cache PATH, or set {} or HOME",
        rageval_judge::settings::ENV_CACHE_DIR
    ))?;
    Ok(Cache::open(&path)?)
}
