#!/usr/bin/env bash
# Benchmark `rageval trec` against pytrec_eval and ranx on seeded 10,000 x 100 inputs.
# Wall time: hyperfine (no shell), 1 warm-up + 5 runs, median. Peak RSS: /usr/bin/time -v, one run.
# Needs: cargo, hyperfine, GNU time, python3; the Python tools in a throwaway venv
# (VENV, default /tmp/venv-trec: pip install pytrec-eval-terrier ranx).
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=${VENV:-/tmp/venv-trec}
DATA=benches/trec/data
OUT=benches/trec/results
mkdir -p "$OUT"

cargo build --release -p rageval
python3 benches/trec/generate.py --out "$DATA"
QRELS=$DATA/qrels.txt
RUN=$DATA/run.txt

RAGEVAL="target/release/rageval trec -m map -m ndcg_cut.10 -m recip_rank $QRELS $RUN"
PYTREC="$VENV/bin/python benches/trec/bench_pytrec_eval.py $QRELS $RUN"
RANX="$VENV/bin/python benches/trec/bench_ranx.py $QRELS $RUN"

echo "== outputs (must agree on map and ndcg_cut_10 / recip_rank)"
$RAGEVAL; $PYTREC; $RANX

hyperfine -N --warmup 1 --runs 5 --export-json "$OUT/hyperfine.json" \
  -n rageval "$RAGEVAL" -n pytrec_eval "$PYTREC" -n ranx "$RANX"

for name in rageval pytrec_eval ranx; do
  case $name in rageval) cmd=$RAGEVAL;; pytrec_eval) cmd=$PYTREC;; ranx) cmd=$RANX;; esac
  /usr/bin/time -v $cmd > /dev/null 2> "$OUT/time-$name.txt"
done

python3 - "$OUT" "$QRELS" "$RUN" <<'PY'
import json, os, re, statistics, sys
out, qrels, run = sys.argv[1:]
input_mb = (os.path.getsize(qrels) + os.path.getsize(run)) / 2**20
runs = json.load(open(f"{out}/hyperfine.json"))["results"]
median = {r["command"]: statistics.median(r["times"]) for r in runs}
def rss(name):
    text = open(f"{out}/time-{name}.txt").read()
    return int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1)) / 1024
print(f"input: {input_mb:.1f} MiB (qrels + run)")
print("| tool | median wall time (s) | peak RSS (MiB) | time vs rageval |")
print("|---|---:|---:|---:|")
for name in ("rageval", "pytrec_eval", "ranx"):
    print(f"| {name} | {median[name]:.3f} | {rss(name):.1f} | {median[name] / median['rageval']:.1f}x |")
PY
