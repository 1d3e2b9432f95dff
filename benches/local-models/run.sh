#!/usr/bin/env bash
# Benchmarks the embedded models (release profile): GGUF model load, decode speed and
# verdict-sized structured calls at 1 and 2 threads; MiniLM texts/s at batch 32 — and
# sentence-transformers (torch, CPU, 2 threads) on the same texts. The two sides alternate
# for ROUNDS rounds (default 3) so that both meet the same neighbours on a shared machine;
# each line is already a median of 3 timed runs. Needs the models (scripts/fetch-models.sh)
# and, for the peer, the throwaway venv of scripts/reference/minilm_reference.py (VENV,
# default /tmp/st).
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=${VENV:-/tmp/st}
ROUNDS=${ROUNDS:-3}

./scripts/fetch-models.sh
cargo test --release -p rageval-judge --test it --no-run 2>/dev/null
echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
for round in $(seq "$ROUNDS"); do
  echo "== round $round, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  cargo test --release -p rageval-judge --test it -- --ignored --nocapture --test-threads 1 \
    local_bench 2>&1 | grep -o 'bench: .*'
  "$VENV/bin/python" benches/local-models/bench_sentence_transformers.py 2 2>&1 \
    | grep -o 'bench: .*'
done
echo "== load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
