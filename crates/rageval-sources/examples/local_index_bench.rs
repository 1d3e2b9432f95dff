//! Benchmark harness of the local index (used by `benches/sources/run.sh`): indexes the
//! documents, then times BM25 queries in-process, and prints one JSON object.
//!
//! Usage: `local_index_bench OUT_DIR QUERIES.txt ROUNDS K DOCS…`

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use rageval_judge::AnyEmbedder;
use rageval_sources::local::{LocalIndex, expand_inputs};
use rageval_sources::{IndexBuilder, Splitter};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [out, queries, rounds, k, docs @ ..] = args.as_slice() else {
        return Err("usage: local_index_bench OUT_DIR QUERIES.txt ROUNDS K DOCS…".into());
    };
    let out = PathBuf::from(out);
    let rounds: usize = rounds.parse()?;
    let k: usize = k.parse()?;
    let queries: Vec<String> = std::fs::read_to_string(queries)?
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect();

    // Warm the shared jieba dictionary first: it loads once per process (~150 ms), which
    // is start-up, not indexing.
    rageval_core::text::words("预热");
    let started = Instant::now();
    let files = expand_inputs(&docs.iter().map(PathBuf::from).collect::<Vec<_>>())?;
    let mut builder = IndexBuilder::new(Splitter::default());
    for file in &files {
        builder.add_file(&file.path, &file.name)?;
    }
    let split_s = started.elapsed().as_secs_f64();
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    let manifest = runtime.block_on(builder.write(&out, true, None::<&AnyEmbedder>))?;
    let index_s = started.elapsed().as_secs_f64();

    let opened = Instant::now();
    let index = LocalIndex::open(&out)?;
    let open_ms = opened.elapsed().as_secs_f64() * 1e3;
    for query in &queries {
        index.search_bm25(query, k)?;
    }
    let mut latencies = Vec::with_capacity(queries.len() * rounds);
    for _ in 0..rounds {
        for query in &queries {
            let t = Instant::now();
            let hits = index.search_bm25(query, k)?;
            latencies.push(t.elapsed().as_secs_f64() * 1e3);
            std::hint::black_box(hits);
        }
    }
    latencies.sort_by(f64::total_cmp);
    let pct = |p: f64| latencies[((latencies.len() - 1) as f64 * p).round() as usize];
    let mean = latencies.iter().sum::<f64>() / latencies.len() as f64;
    let report = serde_json::json!({
        "documents": files.len(),
        "chunks": manifest.chunks,
        "load_split_s": split_s,
        "index_s": index_s,
        "docs_per_s": files.len() as f64 / index_s,
        "chunks_per_s": manifest.chunks as f64 / index_s,
        "open_ms": open_ms,
        "queries": latencies.len(),
        "k": k,
        "latency_ms": {"mean": mean, "p50": pct(0.5), "p95": pct(0.95), "max": pct(1.0)},
    });
    writeln!(std::io::stdout(), "{report}")?;
    Ok(())
}
