//! What an `eval` run is, as its directory records it: the fresh manifest (dataset, metric
//! records, settings) and the typed identity that decides whether a run there resumes.

use std::path::Path;

use rageval_core::dataset;
use rageval_metrics::Metric;
use rageval_report::{DatasetInfo, Manifest, MetricRecord, sha256_file};
use rageval_tasks::TaskKind;
use serde_json::json;

use super::{EvalOptions, ROLLING_DATA, SHARD_SETTING};
use crate::engine::error::Result;
use crate::engine::identity::{RunIdentity, TOP_K_SETTING, top_k_setting};
use crate::engine::judges::JudgeSetup;
use crate::engine::score::tasks_of;

/// What the run of `options` is: data, metrics, the settings that change results (top-k,
/// the sample limit, the shard) and the judge.
pub(super) fn identity(
    options: &EvalOptions,
    fresh: &Manifest,
    names: &[String],
    metrics: &[Box<dyn Metric>],
    setup: &JudgeSetup,
) -> Result<RunIdentity> {
    let mut settings: std::collections::BTreeMap<String, String> = [
        (TOP_K_SETTING.to_string(), top_k_setting(options.top_k)),
        ("samples".to_string(), format!("{:?}", options.samples)),
    ]
    .into();
    // Only a sharded run names its shard, so unsharded runs keep the identity they had.
    if let Some(shard) = options.shard {
        settings.insert(SHARD_SETTING.into(), shard.to_string());
    }
    if options.rolling {
        settings.insert(ROLLING_DATA.into(), "true".into());
    }
    settings.extend(metric_definitions(metrics));
    let mut tasks = tasks_of(metrics);
    // The question rewrite is asked only of turns with a history: it is part of who judges
    // a run whose data has one (its template's version, as every task's), and no part of
    // one whose data has none, which keeps the identity it always had.
    if metrics
        .iter()
        .any(|metric| metric.requirements().resolves_question)
        && data_has_history(options)?
    {
        tasks.push(TaskKind::ResolveQuestion);
    }
    let mut judge = setup.identity()?.for_tasks(&tasks);
    if !metrics
        .iter()
        .any(|metric| metric.requirements().embeddings)
    {
        judge = judge.without_embedder();
    }
    Ok(RunIdentity {
        command: "eval".into(),
        dataset_sha256: if options.rolling {
            ROLLING_DATA.into()
        } else {
            fresh.dataset.sha256.clone()
        },
        metrics: names.to_vec(),
        judge,
        labels_sha256: None,
        labels_file: None,
        settings,
    })
}

/// Whether a sample the run reads continues a conversation; a sample that does not read
/// is left to the scoring pass, which reports it.
fn data_has_history(options: &EvalOptions) -> Result<bool> {
    Ok(super::run_samples(options)?
        .any(|sample| sample.is_ok_and(|sample| !sample.history.is_empty())))
}

pub(super) fn fresh_manifest(
    options: &EvalOptions,
    metrics: &[Box<dyn Metric>],
    names: &[String],
    setup: &JudgeSetup,
) -> Result<Manifest> {
    let dataset_info = DatasetInfo {
        path: options.data.display().to_string(),
        sha256: sha256_file(&options.data)?,
        format: describe_format(&options.data, options.format),
        samples: None,
    };
    let records = metrics
        .iter()
        .map(|metric| MetricRecord {
            name: metric.name(),
            formula: metric.formula().0.to_string(),
            source: metric.formula().1.to_string(),
            judges: setup.metric_judges(metric.as_ref()),
        })
        .collect();
    let settings = json!({
        "metrics": names,
        "field_map": options.field_map,
        "sheet": options.sheet,
        "samples": options.samples,
        "seed": options.seed,
        "bootstrap_resamples": options.bootstrap_resamples,
        "top_k": options.top_k,
        "shard": options.shard.map(|shard| shard.to_string()),
        "judge": setup.description,
    });
    let mut manifest = Manifest::start("eval", dataset_info, records, settings);
    manifest.version_name.clone_from(&options.version_name);
    Ok(manifest)
}

fn describe_format(path: &Path, given: Option<dataset::Format>) -> String {
    match given {
        Some(format) => format!("{format:?}").to_lowercase(),
        None if path.is_dir() => "seed-files".into(),
        None => path
            .extension()
            .map(|e| e.to_string_lossy().to_lowercase())
            .unwrap_or_default(),
    }
}

/// The definitions of metrics whose name does not say it all (rubrics), as identity
/// settings; none for the catalogue's metrics, so their runs keep the identity they had.
pub(crate) fn metric_definitions(
    metrics: &[Box<dyn Metric>],
) -> impl Iterator<Item = (String, String)> + '_ {
    metrics.iter().filter_map(|metric| {
        let definition = metric.definition()?;
        Some((format!("metric:{}", metric.name()), definition))
    })
}
