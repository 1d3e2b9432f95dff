#!/usr/bin/env bash
# rageval and ragas side by side on the neutral mock (shared/bench): the FiQA 30-row sample,
# 200 ms latency, 16 workers, context_precision, context_recall, faithfulness and
# answer_relevancy; once clean and once with 10% garbage answers. Each tool gets a freshly
# started mock per run (so fault draws and max_in_flight are per run). RUNS runs each
# (default 3). JSON lines go to benches/ragas/results/<config>.jsonl and to stdout.
# Needs: cargo, python3; ragas's venv is built by shared/bench/setup.sh.
# RUNS, PROFILE (release or dev), PORT and SHARED may be set. BASELINE=PATH adds a third tool, another
# rageval binary (say, a build of the commit before a change), interleaved with the two and
# labelled `rageval-baseline`, so that before and after are measured in one run.
set -euo pipefail
cd "$(dirname "$0")/../.."
SHARED=${SHARED:-../shared}  # the shared folder beside the checkout (set it from a worktree)
BENCH=$SHARED/bench
DATA=$SHARED/validation/ragas-fiqa-sample/fiqa_ragas_30.jsonl
OUT=benches/ragas/results
RUNS=${RUNS:-3}
PORT=${PORT:-8189}
VENV=${BENCH_VENV:-/tmp/rageval-bench-venv}
mkdir -p "$OUT"

# PROFILE=dev builds target/debug instead (the workspace optimises dependencies even there;
# rageval's own crates are then unoptimised, which errs against rageval).
PROFILE=${PROFILE:-release}
if [ "$PROFILE" = dev ]; then
  cargo build -p rageval; BIN=target/debug/rageval
else
  cargo build --release -p rageval; BIN=target/release/rageval
fi
BENCH_VENV=$VENV "$BENCH/setup.sh" >&2

run_one() { # config-name tool mock-flags...
  local config=$1 tool=$2; shift 2
  if curl -sf "http://127.0.0.1:$PORT/health" >/dev/null; then
    echo "port $PORT is taken by another server; set PORT" >&2; exit 1
  fi
  python3 "$BENCH/mock_llm.py" --port "$PORT" "$@" > "$OUT/mock-$config-$tool.log" 2>&1 &
  local mock=$!
  for _ in $(seq 50); do curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && break; sleep 0.1; done
  local url="http://127.0.0.1:$PORT/v1"
  if [ "$tool" = ragas ]; then
    "$VENV/bin/python" "$BENCH/ragas_run.py" --dataset "$DATA" --base-url "$url" --reset-stats \
      --max-workers 16 2>> "$OUT/ragas-$config.stderr"
  elif [ "$tool" = rageval-baseline ]; then
    python3 benches/ragas/rageval_run.py --dataset "$DATA" --base-url "$url" --reset-stats \
      --max-workers 16 --binary "$BASELINE" | sed 's/"tool": "rageval"/"tool": "rageval-baseline"/'
  else
    python3 benches/ragas/rageval_run.py --dataset "$DATA" --base-url "$url" --reset-stats \
      --max-workers 16 --binary "$BIN"
  fi | tee -a "$OUT/$config.jsonl"
  kill "$mock"; wait "$mock" 2>/dev/null || true
}

echo "load before: $(uptime)" >&2
for config in clean garbage10; do
  : > "$OUT/$config.jsonl"; : > "$OUT/ragas-$config.stderr"
  flags=(--latency-ms 200)
  [ "$config" = garbage10 ] && flags+=(--garbage-rate 0.1)
  for _ in $(seq "$RUNS"); do
    run_one "$config" ragas "${flags[@]}"
    run_one "$config" rageval "${flags[@]}"
    if [ -n "${BASELINE:-}" ]; then run_one "$config" rageval-baseline "${flags[@]}"; fi
  done
done
echo "load after: $(uptime)" >&2
