//! `rageval merge RUN_DIR… --out DIR`: the run directories of `eval --shard i/n` joined into
//! the one run a single machine would have written.
//!
//! The shards must be complete runs of the same run — the same data, metrics, settings,
//! judge and prompt versions (their [`RunIdentity`] equal but for the shard) and the same
//! bootstrap settings — and together hold every shard of `n` exactly once. Every sample
//! must sit in the shard its id belongs to and in no other, and, when the dataset is still
//! readable with the same hash, every sample of the dataset must be in one. Anything else
//! is refused with the reason ([`MergeRefused`]) and nothing is left behind.
//!
//! The merged directory holds the shards' results (one line per cell, shard by shard), a
//! summary computed over all of them (intervals drawn over every sample, as the unsharded
//! run draws them), a manifest whose identity is the unsharded run's (so `eval` without
//! `--shard` on it finds nothing left to do) with every shard's sessions and judge
//! accounts, and the reports. Journals are streamed: memory holds a digest per sample and
//! the values the bootstrap needs.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use rageval_report::{
    Gate, JudgeAccount, Manifest, RESULTS_FILE, RunDir, RunInfo, RunStatus, SUMMARY_FILE, Summary,
    sha256_file,
};
use serde_json::{Value, json};

use crate::commands::eval::SHARD_SETTING;
use crate::engine::cells::SampleKey;
pub use crate::engine::error::MergeRefused;
use crate::engine::error::{Result, RunError};
use crate::engine::identity::RunIdentity;
use crate::engine::observe::Observer;
use crate::engine::reports::{Finished, finish_reports, open_dataset, texts_of};
use crate::engine::results::{SamplesRead, Summarising, for_each_record, noting_positions};
use crate::engine::resume::{read_manifest, stored_identity};
use crate::engine::session;
use crate::engine::shard::Shard;

fn refused(why: impl Into<String>) -> RunError {
    RunError::MergeRefused(MergeRefused { why: why.into() })
}

/// What `merge` is asked to do.
#[derive(Debug, Clone)]
pub struct MergeOptions {
    /// The shards' run directories, in any order.
    pub runs: Vec<PathBuf>,
    /// The run directory to write.
    pub out: PathBuf,
    /// Replace a run already at `out`.
    pub overwrite: bool,
    /// `--fail-under` thresholds, checked on the merged run.
    pub gate: Gate,
    /// Where to write the gate's JUnit file.
    pub junit: Option<PathBuf>,
}

/// A merged run.
#[derive(Debug)]
pub struct Merged {
    pub path: PathBuf,
    pub summary: Summary,
    /// The judge's accounts over every shard's sessions, in one line.
    pub footer: String,
    pub finished: Finished,
    /// Shards merged.
    pub shards: u32,
}

/// One shard as found on disk.
struct ShardRun {
    path: PathBuf,
    shard: Shard,
    manifest: Manifest,
    identity: RunIdentity,
}

/// Merges the shards of `options.runs` into `options.out`.
pub fn merge(options: &MergeOptions, observer: &dyn Observer) -> Result<Merged> {
    let shards = read_shards(&options.runs)?;
    let first = &shards[0];
    if options.runs.iter().any(|run| same_path(run, &options.out)) {
        return Err(refused(format!(
            "--out {} is one of the shards: write the merged run elsewhere",
            options.out.display()
        )));
    }
    let run = RunDir::create(&options.out, options.overwrite)?;
    let written = write_merged(&run, &shards, observer);
    let (summary, manifest) = match written {
        Ok(done) => done,
        Err(error) => {
            if let Err(cleanup) = run.abandon() {
                observer.note(format!("could not remove the partial merge: {cleanup}"));
            }
            return Err(error);
        }
    };
    let data = RunInfo::load(&options.out)?;
    let texts = texts_of(&data.manifest, &data.path, observer);
    let finished = finish_reports(&data, &texts, &options.gate, options.junit.as_deref())?;
    let footer = match &summary.judge {
        Some(account) => format!(
            "judge, all shards ({} sessions): {}",
            account.sessions,
            session::describe(&account.usage)
        ),
        None => "judge: no account recorded".into(),
    };
    observer.note(format!(
        "merged {} shards of {} ({} samples)",
        shards.len(),
        manifest.dataset.path,
        summary.samples
    ));
    Ok(Merged {
        path: options.out.clone(),
        summary,
        footer,
        finished,
        shards: first.shard.count,
    })
}

/// Reads every shard and checks they make one run, each shard once; returns them in shard
/// order.
fn read_shards(paths: &[PathBuf]) -> Result<Vec<ShardRun>> {
    if paths.is_empty() {
        return Err(refused("no run directory given"));
    }
    let mut shards = Vec::with_capacity(paths.len());
    for path in paths {
        shards.push(read_shard(path)?);
    }
    let first = &shards[0];
    let base = unsharded(&first.identity);
    for other in &shards[1..] {
        if other.shard.count != first.shard.count {
            return Err(refused(format!(
                "{} is shard {} but {} is shard {}: shards of one run share n",
                first.path.display(),
                first.shard,
                other.path.display(),
                other.shard
            )));
        }
        let mut why = base.differences(&unsharded(&other.identity));
        for setting in ["seed", "bootstrap_resamples"] {
            let (a, b) = (
                &first.manifest.settings[setting],
                &other.manifest.settings[setting],
            );
            if a != b {
                why.push(format!("its {setting} was {b}, not {a}"));
            }
        }
        if !why.is_empty() {
            return Err(refused(format!(
                "{} (shard {}) is not a shard of the same run as {} (shard {}): {}",
                other.path.display(),
                other.shard,
                first.path.display(),
                first.shard,
                why.join("; ")
            )));
        }
    }
    let mut by_index: BTreeMap<u32, &ShardRun> = BTreeMap::new();
    for shard in &shards {
        if let Some(earlier) = by_index.insert(shard.shard.index, shard) {
            return Err(refused(format!(
                "shard {} is given twice: {} and {}",
                shard.shard,
                earlier.path.display(),
                shard.path.display()
            )));
        }
    }
    let count = first.shard.count;
    let missing: Vec<String> = (1..=count)
        .filter(|index| !by_index.contains_key(index))
        .map(|index| format!("{index}/{count}"))
        .collect();
    if !missing.is_empty() {
        let given: Vec<String> = by_index.values().map(|s| s.shard.to_string()).collect();
        return Err(refused(format!(
            "shard {} {} missing (given: {})",
            missing.join(", "),
            if missing.len() == 1 { "is" } else { "are" },
            given.join(", ")
        )));
    }
    shards.sort_by_key(|shard| shard.shard.index);
    Ok(shards)
}

/// One shard's manifest and identity, refused unless it is a complete sharded `eval` run.
fn read_shard(path: &Path) -> Result<ShardRun> {
    let Some(manifest) = read_manifest(path, false)? else {
        return Err(refused(format!(
            "{} holds no run (no manifest.json)",
            path.display()
        )));
    };
    if manifest.command != "eval" {
        return Err(refused(format!(
            "{} holds a `{}` run; only `eval` runs are merged",
            path.display(),
            manifest.command
        )));
    }
    let Some(identity) = stored_identity(&manifest) else {
        return Err(refused(format!(
            "{} was written by a version that did not record its identity",
            path.display()
        )));
    };
    let Some(shard) = identity.settings.get(SHARD_SETTING) else {
        return Err(refused(format!(
            "{} is not a shard: it was run without --shard",
            path.display()
        )));
    };
    let shard: Shard = shard
        .parse()
        .map_err(|why| refused(format!("{}: {why}", path.display())))?;
    if manifest.status != RunStatus::Complete {
        return Err(refused(format!(
            "shard {shard} in {} is not finished: run its command again to finish it",
            path.display()
        )));
    }
    Ok(ShardRun {
        path: path.to_path_buf(),
        shard,
        manifest,
        identity,
    })
}

/// The identity without its shard: what every shard of one run shares.
fn unsharded(identity: &RunIdentity) -> RunIdentity {
    let mut identity = identity.clone();
    identity.settings.remove(SHARD_SETTING);
    identity
}

/// Writes the journal, checks the samples, and finishes the run: its summary and manifest.
fn write_merged(
    run: &RunDir,
    shards: &[ShardRun],
    observer: &dyn Observer,
) -> Result<(Summary, Manifest)> {
    let first = &shards[0];
    let names: Vec<String> = first
        .manifest
        .metrics
        .iter()
        .map(|m| m.name.clone())
        .collect();
    let data = read_data(&first.manifest, observer)?;
    let mut summarising = match &data {
        Some(read) => Summarising::new(&names).with_positions(&read.positions),
        None => Summarising::new(&names),
    };
    let mut owner: HashMap<SampleKey, u32> = HashMap::new();
    let mut journal = run.journal()?;
    for shard in shards {
        let path = shard.path.join(RESULTS_FILE);
        for_each_record(&path, |_, record| {
            let key = SampleKey::of(&record.sample_id);
            let belongs = Shard::of(&record.sample_id, shard.shard.count);
            if belongs != shard.shard.index {
                return Err(refused(format!(
                    "sample `{}` in {} belongs to shard {belongs}/{}, not {}",
                    record.sample_id,
                    shard.path.display(),
                    shard.shard.count,
                    shard.shard
                )));
            }
            match owner.insert(key, shard.shard.index) {
                Some(index) if index != shard.shard.index => {
                    return Err(refused(format!(
                        "sample `{}` is in shard {index} and in shard {}",
                        record.sample_id, shard.shard
                    )));
                }
                _ => {}
            }
            summarising.add(&record);
            journal.append(&record)?;
            Ok(())
        })?;
    }
    journal.flush()?;
    drop(journal);
    if let Some(read) = &data {
        check_coverage(&first.manifest, read, &owner)?;
    }
    let resamples = setting_number(&first.manifest, "bootstrap_resamples")?;
    let seed = setting_number(&first.manifest, "seed")?;
    let mut summary = summarising.finish(resamples as usize, seed);
    let mut manifest = merged_manifest(shards, summary.samples);
    summary.judge = account(shards, &manifest);
    run.finish(&mut manifest, &summary)?;
    Ok((summary, manifest))
}

/// The run's data as the shards read it — each sample's key, and the conversation of each
/// turn — when the dataset is still readable with the hash the run recorded; otherwise a
/// note says what is not checked or computed, and `None`.
fn read_data(manifest: &Manifest, observer: &dyn Observer) -> Result<Option<SamplesRead>> {
    let path = Path::new(&manifest.dataset.path);
    let unread = |why: &str| {
        observer.note(format!(
            "note: {} {why}: each shard's samples were checked, not that the shards hold every \
             sample, and per-conversation and per-hop figures are not computed",
            path.display()
        ));
        Ok(None)
    };
    match sha256_file(path) {
        Ok(sha) if sha == manifest.dataset.sha256 => {}
        Ok(_) => return unread("changed since the shards ran"),
        Err(_) => return unread("is not readable here"),
    }
    let mut read = SamplesRead::default();
    for sample in noting_positions(open_dataset(manifest, path)?, &mut read.positions) {
        read.keys.insert(SampleKey::of(&sample?.id));
    }
    Ok(Some(read))
}

/// Refuses a sample of the dataset (`read` from it) that no shard holds, naming the first
/// (the data is read again for its id only then).
fn check_coverage(
    manifest: &Manifest,
    read: &SamplesRead,
    owner: &HashMap<SampleKey, u32>,
) -> Result<()> {
    if read.keys.iter().all(|key| owner.contains_key(key)) {
        return Ok(());
    }
    let path = Path::new(&manifest.dataset.path);
    for sample in open_dataset(manifest, path)? {
        let sample = sample?;
        if !owner.contains_key(&SampleKey::of(&sample.id)) {
            return Err(refused(format!(
                "sample `{}` of {} is in no shard's results",
                sample.id,
                path.display()
            )));
        }
    }
    Ok(())
}

fn setting_number(manifest: &Manifest, name: &str) -> Result<u64> {
    manifest.settings[name]
        .as_u64()
        .ok_or_else(|| refused(format!("the shards' manifests have no `{name}` setting")))
}

/// The unsharded run's manifest: the first shard's, without its shard, with every shard's
/// sessions (shard by shard) and the shards it was merged from.
fn merged_manifest(shards: &[ShardRun], samples: usize) -> Manifest {
    let first = &shards[0];
    let mut manifest = first.manifest.clone();
    manifest.status = RunStatus::Running;
    manifest.finished_at = None;
    manifest.dataset.samples = Some(samples);
    manifest.started_at = shards
        .iter()
        .map(|shard| shard.manifest.started_at.clone())
        .min()
        .unwrap_or_default();
    manifest.sessions = shards
        .iter()
        .flat_map(|shard| shard.manifest.sessions.clone())
        .collect();
    let settings = &mut manifest.settings;
    settings[SHARD_SETTING] = Value::Null;
    settings["identity"] = serde_json::to_value(unsharded(&first.identity)).unwrap_or_default();
    if let Some(judge) = settings.get_mut("judge").filter(|j| j.is_object()) {
        // Each shard's counters were its own process's; the sessions keep them all.
        judge["stats"] = Value::Null;
    }
    settings["merged_from"] = json!(
        shards
            .iter()
            .map(|shard| json!({
                "path": shard.path.display().to_string(),
                "shard": shard.shard.to_string(),
                "samples": shard.manifest.dataset.samples,
            }))
            .collect::<Vec<_>>()
    );
    manifest
}

/// The judge's account over every shard's sessions, with the first shard's judge (the
/// shards have one judge: their identities are equal).
fn account(shards: &[ShardRun], manifest: &Manifest) -> Option<JudgeAccount> {
    let summary = std::fs::read(shards[0].path.join(SUMMARY_FILE)).ok()?;
    let summary: Summary = serde_json::from_slice(&summary).ok()?;
    let judge = summary.judge?;
    let mut endpoints = Vec::new();
    for shard in shards {
        let summary = std::fs::read(shard.path.join(SUMMARY_FILE)).ok();
        let account = summary
            .and_then(|bytes| serde_json::from_slice::<Summary>(&bytes).ok())
            .and_then(|summary| summary.judge);
        for endpoint in account.map(|a| a.endpoints).unwrap_or_default() {
            if !endpoints.contains(&endpoint) {
                endpoints.push(endpoint);
            }
        }
    }
    Some(JudgeAccount::over_sessions(
        &judge.kind,
        judge.models,
        endpoints,
        &manifest.sessions,
    ))
}

/// Whether two paths name the same directory (or the same missing one).
fn same_path(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}
