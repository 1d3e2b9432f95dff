#!/usr/bin/env bash
# What one request may cost `rageval serve` (docs/guarantees.md, "What `rageval serve`
# defends against"): two model-free runs of N samples (default 100,000) are served, and the
# script reads the server's peak RSS after a page of 1,000 samples, checks that a page of
# 100,000 is refused, and times a comparison at the work budget (2 metrics × N samples ×
# 5,000 draws = 10^9 for N = 100,000) and one past it (refused before it starts).
# Needs cargo, python3 and curl. PROFILE (default dev; release for the release build), WORK
# (default /tmp/rageval-serve) and N may be set.
set -euo pipefail
cd "$(dirname "$0")/../.."
PROFILE=${PROFILE:-dev}
WORK=${WORK:-/tmp/rageval-serve}
N=${N:-100000}
mkdir -p "$WORK/runs"
cargo build --profile "$PROFILE" -p rageval
BIN=$PWD/target/$([ "$PROFILE" = dev ] && echo debug || echo "$PROFILE")/rageval
[ -f "$WORK/data-$N.jsonl" ] || python3 benches/scale/generate.py "$N" "$WORK/data-$N.jsonl"
for run in a b; do
  [ -f "$WORK/runs/$run/summary.json" ] || "$BIN" eval "$WORK/data-$N.jsonl" -q --no-reports \
    --metrics exact_match,id_average_precision --out "$WORK/runs/$run" --overwrite > /dev/null
done

"$BIN" serve "$WORK/runs" --bind 127.0.0.1:0 2> "$WORK/serve.err" &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q listening "$WORK/serve.err" 2>/dev/null && break; sleep 0.1; done
URL=$(sed -n 's/.*listening on \(http[^ ]*\)\/$/\1/p' "$WORK/serve.err")
rss() { sed -n 's/^VmHWM:[[:space:]]*//p' "/proc/$server/status"; }
ask() { curl -s -o "$WORK/answer.json" -w '%{http_code} %{time_total}s' "$URL$1"; }

echo "serving $N samples × 2 metrics in runs a and b ($PROFILE build); peak RSS at start: $(rss)"
echo "page of 1,000:        $(ask "/api/runs/a/samples?limit=1000"), peak RSS now $(rss)"
echo "page of 100,000:      $(ask "/api/runs/a/samples?limit=100000") (refused)"
echo "compare at budget:    $(ask "/api/compare?run=a&run=b&resamples=1000&permutations=4000"), peak RSS now $(rss)"
echo "compare past budget:  $(ask "/api/compare?run=a&run=b&resamples=100000&permutations=100000") (refused)"
