#!/usr/bin/env bash
# Benchmark the local index (`rageval index` / `rageval search`'s library) against the Python
# pipeline of seed S4 (LangChain splitter + jieba + rank_bm25), side by side, on the
# kids-coding report and on 10,000 seeded synthetic documents. Indexing and query latency are
# timed in-process by both (dictionary loading excluded from both).
# Needs: cargo, python3; the Python peer in a throwaway venv
# (VENV, default /tmp/venv-sources: pip install rank_bm25 jieba langchain-text-splitters numpy).
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=${VENV:-/tmp/venv-sources}
DATA=benches/sources/data
OUT=benches/sources/results
ROUNDS=${ROUNDS:-10}
K=${K:-5}
mkdir -p "$OUT"

cargo build --release -p rageval-sources --example local_index_bench
python3 benches/sources/generate.py --out "$DATA"
BENCH=target/release/examples/local_index_bench

for corpus in kids synthetic; do
  echo "== $corpus"
  $BENCH "$OUT/$corpus.index" "$DATA/queries.txt" "$ROUNDS" "$K" "$DATA/$corpus" | tee "$OUT/rageval-$corpus.json"
  "$VENV/bin/python" benches/sources/bench_rank_bm25.py "$DATA/queries.txt" "$ROUNDS" "$K" "$DATA/$corpus" 2>/dev/null \
    | tee "$OUT/rank_bm25-$corpus.json"
done
