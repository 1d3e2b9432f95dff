#!/usr/bin/env bash
# `rageval rank` on one question with 200 contexts: the default (batched grading, listwise
# ordering) against `--algorithm bradley-terry` and `--algorithm insertion`, each also with
# `--grade-batch 1` (one context per grading call, as before batching) to separate what
# batched grading and what listwise ordering gain; each against a judge mock at LATENCY_MS
# (200) with --concurrency CONCURRENCY (32). Prints wall time, calls, rounds and accuracy
# against the true order for each, as markdown rows.
#
# Two judges:
# - `ranking_judge` (crates/rageval-testkit/examples): grades (alone or in batches), compares
#   and orders windows by a hidden quality with noise and a position bias, so about 60 of the
#   200 contexts are useful;
# - ../shared/bench/mock_llm.py, the neutral referee: it answers every grade with 0 (integer
#   fields whose name is not verdict-like get their minimum), so only round 0 runs there.
#
# Needs: cargo, python3. Builds release binaries; remove target/release afterwards.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LATENCY_MS=${LATENCY_MS:-200}
CONCURRENCY=${CONCURRENCY:-32}
WORK=$(mktemp -d)
PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT

cd "$ROOT"
cargo build --release -q -p rageval
cargo build --release -q -p rageval-testkit --example ranking_judge
BIN="$ROOT/target/release/rageval"

python3 "$ROOT/benches/rank/generate.py" "$WORK/data.jsonl" "$WORK/truth.json"

# start_server LOG CMD... : runs CMD in the background, waits for its address line.
start_server() {
    local log=$1; shift
    "$@" > "$log" 2>&1 &
    PIDS+=($!)
    for _ in $(seq 100); do
        if grep -q "listening on" "$log"; then
            grep -o "http://127.0.0.1:[0-9]*" "$log" | head -1
            return
        fi
        sleep 0.1
    done
    echo "server did not start: $(cat "$log")" >&2
    exit 1
}

RUNS=0
run_rank() {  # judge-name url algorithm [flags...]
    local judge=$1 url=$2 algorithm=$3
    shift 3
    local label="$algorithm${*:+ $*}"
    RUNS=$((RUNS + 1))
    local out="$WORK/run-$RUNS"
    local start end
    start=$(date +%s.%N)
    (cd "$WORK" && "$BIN" rank "$WORK/data.jsonl" --out "$out" --algorithm "$algorithm" "$@" \
        --judge-base-url "$url/v1" --judge-model mock-chat --concurrency "$CONCURRENCY" \
        --no-cache >/dev/null 2>"$WORK/stderr")
    end=$(date +%s.%N)
    python3 "$ROOT/benches/rank/score.py" "$out/rankings.jsonl" "$WORK/truth.json" \
        "$judge" "$label" "$(echo "$end - $start" | bc)"
}

echo "| judge | algorithm | wall s | calls (grade + compare + order) | rounds | useful | τ-b vs truth | nDCG@10 vs truth |"
echo "|---|---|---|---|---|---|---|---|"
URL=$(start_server "$WORK/judge.log" "$ROOT/target/release/examples/ranking_judge" "$LATENCY_MS")
URL=${URL%/v1}
for algorithm in listwise bradley-terry insertion; do
    run_rank ranking_judge "$URL" "$algorithm"
    run_rank ranking_judge "$URL" "$algorithm" --grade-batch 1
done

URL=$(start_server "$WORK/mock.log" python3 "$ROOT/../shared/bench/mock_llm.py" --port 0 \
    --latency-ms "$LATENCY_MS")
for algorithm in listwise insertion; do run_rank mock_llm.py "$URL" "$algorithm"; done
run_rank mock_llm.py "$URL" listwise --grade-batch 1
