//! Shards: four `eval --shard i/4` runs merged equal the unsharded run, the merged run is
//! the unsharded run (resuming it finds nothing to do), and merge refuses shards that do
//! not make one run.

use std::path::{Path, PathBuf};

use rageval_report::Gate;
use rageval_run::commands::eval::EvalOptions;
use rageval_run::commands::merge::{MergeOptions, merge};
use rageval_run::engine::observe::Silent;
use rageval_run::engine::shard::Shard;

use crate::{assert_same_summary, complete, endpoint, options, results, summary, write_dataset};

/// Merges `runs` into `out`; the error as its message.
fn merge_into(runs: &[PathBuf], out: &Path) -> Result<(), String> {
    let options = MergeOptions {
        runs: runs.to_vec(),
        out: out.to_path_buf(),
        overwrite: false,
        gate: Gate::default(),
        junit: None,
    };
    merge(&options, &Silent)
        .map(|_| ())
        .map_err(|error| error.to_string())
}

fn sharded(options: &EvalOptions, index: u32, count: u32, out: &Path) -> EvalOptions {
    let mut shard = options.clone();
    shard.shard = Some(Shard::new(index, count).unwrap());
    shard.out = Some(out.to_path_buf());
    shard
}

/// Runs `data` whole into `dir/whole` and as `count` shards (one shared cache) merged into
/// `dir/merged`; the whole run's directory, the shards' and the merged run's.
fn whole_and_merged(dir: &Path, data: &Path, count: u32) -> (PathBuf, Vec<PathBuf>, PathBuf) {
    let endpoint = endpoint();
    let whole = dir.join("whole");
    let cache = dir.join("a.sqlite");
    complete(&options(&endpoint, data, &whole, &cache));
    let shards: Vec<PathBuf> = (1..=count)
        .map(|i| dir.join(format!("shard-{i}")))
        .collect();
    for (i, path) in shards.iter().enumerate() {
        complete(&sharded(
            &options(&endpoint, data, path, &cache),
            i as u32 + 1,
            count,
            path,
        ));
    }
    let merged = dir.join("merged");
    merge_into(&shards, &merged).unwrap();
    (whole, shards, merged)
}

#[test]
fn four_shards_merged_equal_the_unsharded_run() {
    let endpoint = endpoint();
    let dir = tempfile::tempdir().unwrap();
    let data = write_dataset(dir.path(), 200);
    let whole = dir.path().join("whole");
    let unsharded = options(&endpoint, &data, &whole, &dir.path().join("a.sqlite"));
    complete(&unsharded);
    let calls = endpoint.mock.stats().requests;

    // Each shard on its own "machine": its own cache.
    let shards: Vec<PathBuf> = (1..=4)
        .map(|i| dir.path().join(format!("shard-{i}")))
        .collect();
    let mut sizes = Vec::new();
    for (i, path) in shards.iter().enumerate() {
        let cache = dir.path().join(format!("cache-{i}.sqlite"));
        let base = options(&endpoint, &data, path, &cache);
        let done = complete(&sharded(&base, i as u32 + 1, 4, path));
        sizes.push(done.summary.samples);
    }
    assert_eq!(sizes.iter().sum::<usize>(), 200, "{sizes:?}");
    assert!(sizes.iter().all(|&n| n > 20), "{sizes:?}");
    // The shards together asked what the unsharded run asked.
    assert_eq!(endpoint.mock.stats().requests, 2 * calls);

    let merged = dir.path().join("merged");
    // Shards in any order.
    let mut given = shards.clone();
    given.reverse();
    merge_into(&given, &merged).unwrap();
    assert_eq!(results(&whole), results(&merged));
    assert_same_summary(&summary(&whole), &summary(&merged));
    let account = rageval_report::RunData::load(&merged)
        .unwrap()
        .summary
        .judge
        .unwrap();
    assert_eq!(account.sessions, 4);
    assert_eq!(account.usage.total.calls, calls);
    assert!(merged.join("report.html").is_file() && merged.join("report.md").is_file());

    // The merged directory is the unsharded run: `eval` without --shard finds it done.
    let mut again = options(&endpoint, &data, &merged, &dir.path().join("a.sqlite"));
    again.out = Some(merged.clone());
    let before = endpoint.mock.stats().requests;
    let done = complete(&again);
    assert_eq!(done.scored.cells, 0);
    assert_eq!(endpoint.mock.stats().requests, before);
    assert_eq!(results(&whole), results(&merged));
}

#[test]
fn merge_refuses_missing_doubled_and_mismatched_shards() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_dataset(dir.path(), 60);
    let endpoint = endpoint();
    let mut base = options(&endpoint, &data, dir.path(), &dir.path().join("c.sqlite"));
    // Model-free metrics: shards in milliseconds.
    base.metrics = vec!["rouge_l".into(), "exact_match".into()];
    let shard = |index: u32, name: &str, options: &EvalOptions| {
        let path = dir.path().join(name);
        complete(&sharded(options, index, 4, &path));
        path
    };
    let shards: Vec<PathBuf> = (1..=4).map(|i| shard(i, &format!("s{i}"), &base)).collect();
    let out = dir.path().join("merged");
    let refusal = |runs: &[PathBuf]| {
        let error = merge_into(runs, &out).unwrap_err();
        assert!(!out.exists(), "a refused merge left {}", out.display());
        error
    };

    let error = refusal(&[shards[0].clone(), shards[1].clone(), shards[3].clone()]);
    assert!(
        error.contains("shard 3/4 is missing (given: 1/4, 2/4, 4/4)"),
        "{error}"
    );
    let mut doubled = shards.clone();
    doubled.push(shards[1].clone());
    let error = refusal(&doubled);
    assert!(error.contains("shard 2/4 is given twice"), "{error}");

    let mut other = base.clone();
    other.metrics = vec!["rouge_l".into()];
    let mismatched = shard(3, "other-metrics", &other);
    let error = refusal(&[
        shards[0].clone(),
        shards[1].clone(),
        mismatched,
        shards[3].clone(),
    ]);
    assert!(
        error.contains("is not a shard of the same run") && error.contains("metrics"),
        "{error}"
    );
    let mut seeded = base.clone();
    seeded.seed += 1;
    let reseeded = shard(4, "other-seed", &seeded);
    let error = refusal(&[
        shards[0].clone(),
        shards[1].clone(),
        shards[2].clone(),
        reseeded,
    ]);
    assert!(error.contains("its seed was"), "{error}");

    let whole = dir.path().join("whole");
    let mut unsharded = base.clone();
    unsharded.out = Some(whole.clone());
    complete(&unsharded);
    let error = refusal(&[whole]);
    assert!(error.contains("is not a shard"), "{error}");

    // A sample copied into another shard's journal: doubled, and in the wrong shard.
    let copied = dir.path().join("copied");
    copy_dir(&shards[1], &copied);
    let first_line = std::fs::read_to_string(shards[0].join("results.jsonl"))
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_owned();
    let journal = copied.join("results.jsonl");
    let mut text = std::fs::read_to_string(&journal).unwrap();
    text.push_str(&first_line);
    text.push('\n');
    std::fs::write(&journal, text).unwrap();
    let error = refusal(&[
        shards[0].clone(),
        copied.clone(),
        shards[2].clone(),
        shards[3].clone(),
    ]);
    assert!(error.contains("belongs to shard 1/4, not 2/4"), "{error}");

    // An unfinished shard.
    let manifest = copied.join("manifest.json");
    copy_dir(&shards[1], &copied);
    let text = std::fs::read_to_string(&manifest)
        .unwrap()
        .replace("\"status\": \"complete\"", "\"status\": \"running\"");
    std::fs::write(&manifest, text).unwrap();
    let error = refusal(&[
        shards[0].clone(),
        copied,
        shards[2].clone(),
        shards[3].clone(),
    ]);
    assert!(
        error.contains("shard 2/4 in") && error.contains("is not finished"),
        "{error}"
    );

    // All four, finally.
    merge_into(&shards, &out).unwrap();
    assert_eq!(summary(&out).samples, 60);
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

/// `count` three-turn chats (OpenAI `messages`, each reply with its passages).
fn write_chats(dir: &Path, count: usize) -> PathBuf {
    let mut text = String::new();
    for i in 0..count {
        let mut messages = Vec::new();
        for turn in 1..=3 {
            messages.push(serde_json::json!({"role": "user",
                "content": format!("What did report {i} say in part {turn}?")}));
            messages.push(serde_json::json!({"role": "assistant",
                "content": format!("Part {turn} of report {i} covers year {}.", 1990 + (i + turn) % 30),
                "contexts": [format!("Report {i}, part {turn}, is about year {}.", 1990 + i % 30)]}));
        }
        let line = serde_json::json!({"id": format!("chat{i:02}"), "messages": messages});
        text.push_str(&format!("{line}\n"));
    }
    let path = dir.join("chats.jsonl");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn shards_of_conversations_merge_to_the_unsharded_conversation_figures() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_chats(dir.path(), 16);
    let (whole, shards, merged) = whole_and_merged(dir.path(), &data, 2);
    let (whole, merged) = (
        summary(&whole).conversations.unwrap(),
        summary(&merged).conversations.unwrap(),
    );
    assert_eq!(whole.conversations, 16);
    assert_eq!(merged.conversations, 16);
    assert_eq!(whole.with_lapse, merged.with_lapse);
    assert_eq!(
        whole.metrics.keys().collect::<Vec<_>>(),
        merged.metrics.keys().collect::<Vec<_>>()
    );
    for (name, a) in &whole.metrics {
        let b = &merged.metrics[name];
        assert_eq!(a.conversations, b.conversations, "{name}");
        assert!((a.mean - b.mean).abs() <= 1e-12, "{name}: {a:?} {b:?}");
    }

    // Without the data, the merge still joins the cells, with no conversation figures.
    std::fs::remove_file(&data).unwrap();
    let blind = dir.path().join("merged-blind");
    merge_into(&shards, &blind).unwrap();
    assert!(summary(&blind).conversations.is_none());
}

/// `count` traces as flat rows: each an answer row `tN` and two hop rows `tN:hop:1` and
/// `tN:hop:2` (their sub-queries and contexts), as the trace readers write them.
fn write_hops(dir: &Path, count: usize) -> PathBuf {
    let mut text = String::new();
    for i in 0..count {
        let year = 1990 + i % 30;
        let answer = serde_json::json!({"id": format!("t{i}"),
            "question": format!("What did report {i} say?"),
            "contexts": [format!("Report {i} is about year {year}.")],
            "answer": format!("Report {i} covers year {year}.")});
        text.push_str(&format!("{answer}\n"));
        for hop in 1..=2 {
            let row = serde_json::json!({"id": format!("t{i}:hop:{hop}"),
                "question": format!("report {i} part {hop}"),
                "contexts": [format!("Report {i}, part {hop}, is about year {year}.")],
                "hop": {"index": hop, "used_by_answer": hop == 2}});
            text.push_str(&format!("{row}\n"));
        }
    }
    let path = dir.join("hops.jsonl");
    std::fs::write(&path, text).unwrap();
    path
}

/// Shards of a run with hop rows merge to the unsharded run's hop figures: `merge` reads
/// each row's hop from the data, as `eval` does (a trace's hops may sit in different
/// shards).
#[test]
fn shards_with_hop_rows_merge_to_the_unsharded_hop_figures() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_hops(dir.path(), 12);
    let (whole, _, merged) = whole_and_merged(dir.path(), &data, 3);
    let (whole, merged) = (
        summary(&whole).hops.unwrap(),
        summary(&merged).hops.unwrap(),
    );
    assert_eq!(whole.rows, 24);
    assert_eq!(merged.rows, 24);
    assert!(!whole.metrics.is_empty());
    assert_eq!(
        whole.metrics.keys().collect::<Vec<_>>(),
        merged.metrics.keys().collect::<Vec<_>>()
    );
    for (name, a) in &whole.metrics {
        let b = &merged.metrics[name];
        for (x, y) in [(&a.first, &b.first), (&a.later, &b.later)] {
            assert_eq!(
                (x.scored, x.undefined, x.failed),
                (y.scored, y.undefined, y.failed),
                "{name}"
            );
            let close = match (x.mean, y.mean) {
                (Some(p), Some(q)) => (p - q).abs() <= 1e-12,
                (p, q) => p == q,
            };
            assert!(close, "{name}: {a:?} {b:?}");
        }
    }
    assert!(
        std::fs::read_to_string(dir.path().join("merged/report.md"))
            .unwrap()
            .contains("## Retrieval hops")
    );
}
