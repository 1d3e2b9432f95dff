#!/usr/bin/env bash
# The cascade's chat calls and tokens against the chat judge alone, on the same testkit mock
# (BENCHMARKS.md, "the cascade"). Each configuration gets a fresh `rageval-mock` (answers
# drawn from seed 0) and `--no-cache`, so every call reaches the mock; the mock's /stats
# counters are the figures. Needs `cargo build --locked -p rageval --bin rageval -p
# rageval-testkit --bin rageval-mock`. Usage: benches/cascade/run.sh [DATA] [METRICS]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
data="${1:-$root/../shared/validation/ragas-fiqa-sample/fiqa_ragas_30.jsonl}"
metrics="${2:-faithfulness}"
checker="$root/crates/rageval-judge/tests/fixtures/checkers/modernbert-tokens"
work="$(mktemp -d)"
export RAGEVAL_CACHE_DIR="$work/cache"

measure() {
  local name="$1"
  shift
  "$root/target/debug/rageval-mock" >"$work/$name.url" 2>/dev/null &
  local mock=$!
  while [ ! -s "$work/$name.url" ]; do sleep 0.1; done
  local url
  url="$(head -1 "$work/$name.url")"
  "$root/target/debug/rageval" eval "$data" --metrics "$metrics" --no-cache \
    --judge-base-url "$url" --judge-model mock-chat --out "$work/$name" "$@" \
    >"$work/$name.out" 2>"$work/$name.err"
  local stats
  stats="$(curl -s "${url%/v1}/stats")"
  kill "$mock"
  printf '%s\t%s\t%s\n' "$name" "$stats" "$(grep -o 'cascade: [^(]*' "$work/$name.out" || true)"
}

measure chat-alone
measure cascade-0.2-0.8 --judge "checker:$checker" --escalate 0.2,0.8
measure cascade-0.08-1 --judge "checker:$checker" --escalate 0.08,1
echo "runs in $work" >&2
