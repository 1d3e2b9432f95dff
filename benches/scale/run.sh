#!/usr/bin/env bash
# eval at scale (BENCHMARKS.md, "eval at scale"): wall time and peak RSS of `rageval eval`
# at 10,000 and 100,000 samples, with model-free metrics and with mock-judged ones, with and
# without the reports; then batch jobs against synchronous calls on one price table.
# Needs cargo, python3 and GNU time (/usr/bin/time). WORK (default /tmp/rageval-scale) holds
# the generated data and the runs. SIZES (default "10000 100000") may be set.
set -euo pipefail
cd "$(dirname "$0")/../.."
WORK=${WORK:-/tmp/rageval-scale}
SIZES=${SIZES:-"10000 100000"}
mkdir -p "$WORK"
cargo build --release -p rageval
cargo build --release -p rageval-testkit --example mock_endpoint
BIN=$PWD/target/release/rageval
MOCK=$PWD/target/release/examples/mock_endpoint
for n in $SIZES; do
  [ -f "$WORK/data-$n.jsonl" ] || python3 benches/scale/generate.py "$n" "$WORK/data-$n.jsonl"
done

"$MOCK" 0 > "$WORK/mock.out" &
mock=$!
trap 'kill $mock 2>/dev/null || true' EXIT
for _ in $(seq 50); do grep -q listening "$WORK/mock.out" 2>/dev/null && break; sleep 0.1; done
URL=$(sed -n 's/listening on //p' "$WORK/mock.out")
JUDGE=(--judge-base-url "$URL" --judge-model mock-chat)
# A price for the mock model, so the books show a cost (gpt-4o-mini's list price).
cat > "$WORK/rageval.toml" <<'TOML'
[judge.prices."mock-chat"]
prompt_per_million = 0.15
completion_per_million = 0.60
TOML
export RAGEVAL_CONFIG="$WORK/rageval.toml"

measure() { # label, then the eval arguments
  local label=$1; shift
  rm -rf "$WORK/cache"
  RAGEVAL_CACHE_DIR="$WORK/cache" /usr/bin/time -v "$BIN" eval "$@" -q --overwrite \
    > "$WORK/$label.stdout" 2> "$WORK/$label.time"
  local wall rss
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$WORK/$label.time")
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$WORK/$label.time")
  awk -v l="$label" -v w="$wall" -v r="$rss" 'BEGIN { printf "%-28s wall %8s  peak RSS %7.1f MiB\n", l, w, r / 1024 }'
}

echo "load before: $(uptime)"
for n in $SIZES; do
  data="$WORK/data-$n.jsonl"
  measure "free-$n-no-reports" "$data" --metrics exact_match,rouge_l,id_average_precision \
    --out "$WORK/free-$n" --no-reports
  measure "judged-$n-no-reports" "$data" --metrics faithfulness,answer_relevance:rubric \
    --out "$WORK/judged-$n" --no-reports "${JUDGE[@]}"
  measure "free-$n-reports" "$data" --metrics exact_match,rouge_l,id_average_precision \
    --out "$WORK/free-$n-r"
  ls -l "$WORK/free-$n-r/report.html" | awk '{printf "  report.html %.1f MB\n", $5 / 1e6}'
  # The reports of the mock-judged run, written afterwards: the journal carries evidence.
  /usr/bin/time -v "$BIN" report "$WORK/judged-$n" > /dev/null 2> "$WORK/report-judged-$n.time"
  sed -n 's/.*Maximum resident set size (kbytes): //p' "$WORK/report-judged-$n.time" |
    awk -v n="$n" '{ printf "report of judged-%-10s peak RSS %7.1f MiB\n", n, $1 / 1024 }'
done

# Batch jobs against synchronous calls: the same 1,000 samples, the same price table.
head -1000 "$WORK/data-10000.jsonl" > "$WORK/data-1000.jsonl"
for mode in sync batch; do
  extra=(); [ "$mode" = batch ] && extra=(--batch --batch-poll 0.05)
  measure "judged-1000-$mode" "$WORK/data-1000.jsonl" \
    --metrics context_precision,context_recall,faithfulness,answer_relevance:rubric \
    --out "$WORK/judged-1000-$mode" --no-reports "${JUDGE[@]}" "${extra[@]}"
  grep "^judge:.*calls" "$WORK/judged-1000-$mode.stdout"
done
echo "load after: $(uptime)"
